"""Pure parser of nuttcp output: the result types, exact unit conversions, versions, and :func:`parse`.

Three output styles are understood by :func:`parse`, all as printed by nuttcp 8.2.2 (what perfSONAR ships)
and 6.1.2 (Debian bookworm's package):

* ``-fparse`` key=value lines (what :func:`~collectors.nuttcp.collector.run_test` asks for);
* the default "brief" human format (what pScheduler's nuttcp tool parses);
* the verbose ``-v`` report (``nuttcp-t:``/``nuttcp-r:`` lines), human or ``-fparse``.

Units, from the nuttcp source: "MB" and ``megabytes`` are MiB (2**20 bytes), "KB" (windows, cwnd) is KiB,
``Mbps`` is 10**6 bit/s. Conversions go through :class:`~decimal.Decimal` so ``12290.3580 Mbps`` becomes
exactly ``12290358000.0`` bit/s.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from collectors.runner import first_matching_line

TOOL = "nuttcp"

BYTES_PER_MIB = 1_048_576  # nuttcp "MB" / megabytes=
BYTES_PER_KIB = 1024  # nuttcp "KB" (cwnd, -w)
BPS_PER_MBPS = 1_000_000  # nuttcp Mbps / rate_Mbps=
BPS_PER_KBPS = 1000  # unit of nuttcp's -R option

# First version whose retransmit count is right on current Linux kernels.
RETRANS_RELIABLE_SINCE = (6, 2, 9)
# First version with -j (jitter). Older clients print their usage text and
# leave a one-shot server hanging when given -j.
JITTER_OPTION_SINCE = (7, 0, 1)

# nuttcp gives up on its own after --idle-data-timeout (30 s by default) and
# needs a few seconds for the control connection and the final report.
DEFAULT_TIMEOUT_MARGIN_S = 45.0

FORWARD = "forward"  # src -> dst: the agent's nuttcp transmits (-t)
REVERSE = "reverse"  # dst -> src: the server transmits (-r)

PROTOCOLS = ("tcp", "udp")


class NuttcpParseError(ValueError):
    """The text holds no nuttcp summary (no result to report)."""


# ---------------------------------------------------------------------------
# Parsed result
# ---------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class NuttcpFigures:
    """What nuttcp prints for a span of a run, an ``-i`` interval or the whole run (the UDP figures only for UDP)."""

    transferred_bytes: int
    duration_s: float
    throughput_bps: float
    retransmits_reported: int | None = None
    cwnd_bytes: int | None = None
    packets_sent: int | None = None
    packets_lost: int | None = None
    loss_pct: float | None = None
    jitter_max_ms: float | None = None
    owd_avg_ms: float | None = None


@dataclass(frozen=True, kw_only=True)
class NuttcpInterval(NuttcpFigures):
    """One ``-i`` interval report line."""


@dataclass(frozen=True, kw_only=True)
class NuttcpResult(NuttcpFigures):
    """The summary of one nuttcp run (one direction).

    ``retransmits`` is the trustworthy count or ``None`` (unknown);
    ``retransmits_reported`` is what nuttcp printed, kept for the record.
    ``notes`` explain values that were deliberately set to ``None``.
    """

    protocol: str
    output_format: str  # "parse", "brief" or "verbose"
    retransmits: int | None = None
    retransmits_by_stream: tuple[int, ...] | None = None
    rtt_ms: float | None = None
    tx_cpu_pct: int | None = None
    rx_cpu_pct: int | None = None
    jitter_avg_ms: float | None = None
    jitter_min_ms: float | None = None
    owd_min_ms: float | None = None
    owd_max_ms: float | None = None
    mss_bytes: int | None = None
    send_window_bytes: int | None = None
    receive_window_bytes: int | None = None
    streams: int | None = None
    tool_version: str | None = None
    intervals: tuple[NuttcpInterval, ...] = ()
    notes: tuple[str, ...] = ()


# ---------------------------------------------------------------------------
# Number conversions (exact)
# ---------------------------------------------------------------------------


def mib_to_bytes(megabytes: str) -> int:
    """nuttcp ``MB`` text (MiB, 4 decimals) to bytes, rounded to the nearest byte."""
    return int((Decimal(megabytes) * BYTES_PER_MIB).to_integral_value(rounding=ROUND_HALF_EVEN))


def mbps_to_bps(mbps: str) -> float:
    """nuttcp ``Mbps`` text to bit/s without binary floating-point noise."""
    return float(Decimal(mbps) * BPS_PER_MBPS)


def parse_version(text: str | None) -> tuple[int, int, int] | None:
    """``"8.2.2"``, ``"v6.1.2"`` or ``"nuttcp-8.2.2"`` to a comparable tuple."""
    if not text:
        return None
    match = re.search(r"(\d+)\.(\d+)\.(\d+)", text)
    if not match:
        return None
    return int(match.group(1)), int(match.group(2)), int(match.group(3))


def retransmits_reliable(version: str | None) -> bool | None:
    """Whether this nuttcp version counts retransmits correctly (None: unknown version)."""
    parsed = parse_version(version)
    if parsed is None:
        return None
    return parsed >= RETRANS_RELIABLE_SINCE


# ---------------------------------------------------------------------------
# Line parsers. Each returns a dict of canonical keys with *text* values, so
# the exact conversions above see the digits nuttcp printed.
# ---------------------------------------------------------------------------

_NUM = r"-?\d+(?:\.\d+)?"

_BRIEF_LINE = re.compile(
    r"^\s*(?P<megabytes>\d+\.\d+)\s+MB\s*/\s*(?P<seconds>\d+\.\d+)\s+sec\s*=\s*(?P<mbps>\d+\.\d+)\s+Mbps(?P<rest>.*)$"
)
# Labels that follow a number in brief lines: "<number> <label>".
_BRIEF_LABELS: dict[str, str] = {
    "%TX": "tx_cpu",
    "%RX": "rx_cpu",
    "retrans": "retrans",
    "host-retrans": "retrans",
    "KB-cwnd": "cwnd_kb",
    "msRTT": "rtt_ms",
    "%loss": "loss_pct",
    "~%loss": "loss_pct",
    "msMaxJitter": "jitter_max_ms",
    "msAvgJitter": "jitter_avg_ms",
    "msMinJitter": "jitter_min_ms",
    "msAvgOWD": "owd_avg_ms",
    "msMinOWD": "owd_min_ms",
    "msMaxOWD": "owd_max_ms",
}
# "<n> retrans", or with -br per stream "<total> = <a>+<b> retrans"
_BRIEF_VALUE = re.compile(
    r"(?P<value>" + _NUM + r")(?:\s*=\s*[\d+]+)?\s+(?P<label>~?%loss|%TX|%RX|host-retrans|retrans|KB-cwnd|ms\w+)"
)
_BRIEF_DROP = re.compile(r"(?P<drop>-?\d+)\s*/\s*(?P<pkt>\d+)\s+~?drop/pkt")

# key=value tokens of -fparse output ("stats=cpu user=0.0 ... cpu=34%")
_KV = re.compile(r"([A-Za-z_][\w()%-]*)=(\S+)")
_PARSE_KEYS: dict[str, str] = {
    "megabytes": "megabytes",
    "real_seconds": "seconds",
    "real_sec": "seconds",
    "rate_Mbps": "mbps",
    "tx_cpu": "tx_cpu",
    "rx_cpu": "rx_cpu",
    "retrans": "retrans",
    "host-retrans": "retrans",
    "retrans_by_stream": "retrans_by_stream",
    "cwnd": "cwnd_kb",
    "rtt_ms": "rtt_ms",
    "drop": "drop",
    "pkt": "pkt",
    "data_loss": "loss_pct",
    "msmaxjitter": "jitter_max_ms",
    "msavgjitter": "jitter_avg_ms",
    "msminjitter": "jitter_min_ms",
    "msavgOWD": "owd_avg_ms",
    "msminOWD": "owd_min_ms",
    "msmaxOWD": "owd_max_ms",
    "mss": "mss",
    "send_window_size": "send_window",
    "receive_window_size": "receive_window",
    "nstream": "nstream",
    "mode": "mode",
    "cpu": "cpu",
}

_VERBOSE_PREFIX = re.compile(r"^nuttcp-(?P<side>[tr])(?:\S*)?:\s*(?P<body>.*)$")
_VERSION_IN_BODY = re.compile(r"^v(?P<version>\d+\.\d+\.\d+\S*?):\s*")
# Human verbose lines (PERF_FMT_OUT, RETRANS_FMT, CWND_FMT, ...)
_V_PERF = re.compile(
    r"(?P<megabytes>\d+\.\d+) MB in (?P<seconds>\d+\.\d+) real seconds = [\d.]+ KB/sec = (?P<mbps>\d+\.\d+) Mbps"
)
_V_RETRANS = re.compile(r"(?:host-)?retrans = (?P<retrans>\d+)(?: \( (?P<by_stream>[\d+]+) \))?")
_V_CWND = re.compile(r"cwnd = (?P<cwnd_kb>\d+) KB")
_V_CONNECT = re.compile(r"mss=(?P<mss>\d+), RTT=(?P<rtt_ms>\d+\.\d+) ms")
_V_WINDOWS = re.compile(r"send window size = (?P<send_window>\d+), receive window size = (?P<receive_window>\d+)")
_V_STREAMS = re.compile(r"nstream=(?P<nstream>\d+)")
_V_MODE = re.compile(r"\b(?P<mode>tcp|udp)\b")
_V_CPU = re.compile(r"real\s+(?P<cpu>\d+)%")
_V_DROP = re.compile(r"(?P<drop>-?\d+) / (?P<pkt>\d+) drop/pkt")
_V_LOSS = re.compile(r"(?P<loss_pct>\d+\.\d+)% data loss")
_V_JITTER = re.compile(
    r"jitter = (?P<jitter_min_ms>[\d.]+) ms, avg-jitter = (?P<jitter_avg_ms>[\d.]+) ms, "
    r"max-jitter = (?P<jitter_max_ms>[\d.]+) ms"
)


def _brief_fields(line: str) -> dict[str, str] | None:
    match = _BRIEF_LINE.match(line)
    if not match:
        return None
    values = {"megabytes": match["megabytes"], "seconds": match["seconds"], "mbps": match["mbps"]}
    rest = match["rest"]
    # -frunningtotal appends " Tot: ... Mbps" to interval lines: not ours.
    rest = rest.split(" Tot:", 1)[0].split(" Trans:", 1)[0]
    drop = _BRIEF_DROP.search(rest)
    if drop:
        values["drop"], values["pkt"] = drop["drop"], drop["pkt"]
        rest = rest[: drop.start()] + rest[drop.end() :]
    for value in _BRIEF_VALUE.finditer(rest):
        key = _BRIEF_LABELS.get(value["label"])
        if key:
            values[key] = value["value"]
    return values


def _parse_fields(line: str) -> dict[str, str]:
    values: dict[str, str] = {}
    for key, value in _KV.findall(line):
        canonical = _PARSE_KEYS.get(key)
        if canonical:
            values[canonical] = value
    return values


def _verbose_human_fields(body: str) -> dict[str, str]:
    values: dict[str, str] = {}
    for pattern in (_V_PERF, _V_RETRANS, _V_CWND, _V_CONNECT, _V_WINDOWS, _V_STREAMS, _V_DROP, _V_LOSS, _V_JITTER):
        match = pattern.search(body)
        if match:
            values.update({k: v for k, v in match.groupdict().items() if v is not None})
    if "by_stream" in values:
        values["retrans_by_stream"] = values.pop("by_stream")
    if "buflen=" in body:
        mode = _V_MODE.search(body)
        if mode:
            values["mode"] = mode["mode"]
    cpu = _V_CPU.search(body)
    if cpu:
        values["cpu"] = cpu["cpu"]
    return values


# ---------------------------------------------------------------------------
# parse()
# ---------------------------------------------------------------------------


def _int(values: Mapping[str, str], key: str) -> int | None:
    raw = values.get(key)
    if raw is None:
        return None
    return int(Decimal(raw.rstrip("%")))


def _float(values: Mapping[str, str], key: str) -> float | None:
    raw = values.get(key)
    return None if raw is None else float(raw.rstrip("%"))


def _kib(values: Mapping[str, str], key: str) -> int | None:
    kib = _int(values, key)
    return None if kib is None else kib * BYTES_PER_KIB


def _figures(values: Mapping[str, str]) -> dict[str, Any]:
    """The :class:`NuttcpFigures` of an interval line's or the summary's values."""
    return {
        "transferred_bytes": mib_to_bytes(values["megabytes"]),
        "duration_s": float(values["seconds"]),
        "throughput_bps": mbps_to_bps(values["mbps"]),
        "retransmits_reported": _int(values, "retrans"),
        "cwnd_bytes": _kib(values, "cwnd_kb"),
        "packets_sent": _int(values, "pkt"),
        "packets_lost": _int(values, "drop"),
        "loss_pct": _float(values, "loss_pct"),
        "jitter_max_ms": _float(values, "jitter_max_ms"),
        "owd_avg_ms": _float(values, "owd_avg_ms"),
    }


def _merge_verbose(lines: list[str], parse_style: bool) -> tuple[dict[str, str], str | None]:
    """Combine ``nuttcp-t:``/``nuttcp-r:`` lines into one summary dict.

    Rates and byte counts come from the receiver (what arrived), retransmits
    and cwnd from the transmitter (its socket), CPU from each side.
    """
    sides: dict[str, dict[str, str]] = {"t": {}, "r": {}}
    transmitter_version: str | None = None
    for line in lines:
        match = _VERBOSE_PREFIX.match(line.strip())
        if not match:
            continue
        side, body = match["side"], match["body"]
        version = _VERSION_IN_BODY.match(body)
        if version:
            if side == "t":
                transmitter_version = version["version"]
            body = body[version.end() :]
        values = _parse_fields(body) if parse_style else _verbose_human_fields(body)
        sides[side].update(values)
    tx, rx = sides["t"], sides["r"]
    merged: dict[str, str] = {}
    merged.update(tx)
    for key in ("megabytes", "seconds", "mbps", "drop", "pkt", "loss_pct", "jitter_max_ms", "jitter_avg_ms"):
        if key in rx:
            merged[key] = rx[key]
    if "cpu" in tx:
        merged["tx_cpu"] = tx["cpu"]
    if "cpu" in rx:
        merged["rx_cpu"] = rx["cpu"]
    for key in ("mss", "rtt_ms", "nstream", "mode"):
        if key not in merged and key in rx:
            merged[key] = rx[key]
    return merged, transmitter_version


def _detect_format(lines: list[str]) -> str:
    if any(_VERBOSE_PREFIX.match(line.strip()) and "megabytes=" in line for line in lines):
        return "verbose-parse"
    if any(_V_PERF.search(line) and _VERBOSE_PREFIX.match(line.strip()) for line in lines):
        return "verbose"
    if any("megabytes=" in line for line in lines):
        return "parse"
    return "brief"


def _decide_retransmits(
    reported: int | None,
    *,
    protocol: str,
    version: str | None,
    cwnd_seen: bool,
    any_nonzero: bool,
) -> tuple[int | None, str | None]:
    """Turn nuttcp's printed retransmit count into a trustworthy one or None."""
    if protocol != "tcp" or reported is None:
        return None, None
    reliable = retransmits_reliable(version)
    if reliable is True:
        return reported, None
    if reliable is False:
        return None, (
            f"nuttcp {version} prints retrans={reported} but its count is broken on current Linux kernels "
            f"(fixed in {'.'.join(map(str, RETRANS_RELIABLE_SINCE))}); retransmits unknown"
        )
    # Unknown version. A non-zero count cannot come from the broken code path
    # (it always reads 0), and only nuttcp >= 8 prints cwnd: both prove a
    # working counter. A bare zero could be the old bug.
    if cwnd_seen or any_nonzero:
        return reported, None
    return None, (
        "retrans=0 from an nuttcp that neither names its version nor prints cwnd (as 6.1.2 does, whose count "
        "is always 0); retransmits unknown"
    )


def parse(text: str, *, tool_version: str | None = None) -> NuttcpResult:
    """Parse nuttcp client stdout (``-fparse``, brief or verbose) into a :class:`NuttcpResult`.

    ``tool_version`` is the version of the nuttcp that *transmitted* (the
    agent's own for a forward test); it decides whether a retransmit count can
    be trusted. Verbose output names the transmitter's version itself.
    Raises :class:`NuttcpParseError` when the text has no summary.
    """
    lines = text.splitlines()
    output_format = _detect_format(lines)
    interval_values: list[dict[str, str]] = []
    summary: dict[str, str] | None = None
    text_version: str | None = None

    if output_format in ("verbose", "verbose-parse"):
        summary, text_version = _merge_verbose(lines, parse_style=output_format == "verbose-parse")
        if "megabytes" not in summary:
            summary = None
        output_format = "verbose"
    else:
        for line in lines:
            if output_format == "parse":
                if "megabytes=" not in line or _VERBOSE_PREFIX.match(line.strip()):
                    continue
                values = _parse_fields(line)
                is_summary = "real_seconds=" in line
            else:
                brief = _brief_fields(line)
                if brief is None:
                    continue
                values = brief
                is_summary = "tx_cpu" in values or "rx_cpu" in values
            if not {"megabytes", "seconds", "mbps"} <= values.keys():
                continue
            if is_summary:
                summary = values
            else:
                interval_values.append(values)

    if summary is None or not {"megabytes", "seconds", "mbps"} <= summary.keys():
        raise NuttcpParseError("no nuttcp summary line found")

    protocol = "udp" if ("pkt" in summary or summary.get("mode") == "udp") else "tcp"
    version = tool_version or text_version
    intervals = tuple(NuttcpInterval(**_figures(values)) for values in interval_values)
    reported = _int(summary, "retrans")
    by_stream = summary.get("retrans_by_stream")
    retrans_by_stream = tuple(int(n) for n in by_stream.split("+")) if by_stream else None
    cwnd_seen = "cwnd_kb" in summary or any(i.cwnd_bytes is not None for i in intervals)
    any_nonzero = bool(reported) or any(i.retransmits_reported for i in intervals)
    retransmits, note = _decide_retransmits(
        reported, protocol=protocol, version=version, cwnd_seen=cwnd_seen, any_nonzero=any_nonzero
    )
    return NuttcpResult(
        **_figures(summary),
        protocol=protocol,
        output_format=output_format,
        retransmits=retransmits,
        retransmits_by_stream=retrans_by_stream if retransmits is not None else None,
        rtt_ms=_float(summary, "rtt_ms"),
        tx_cpu_pct=_int(summary, "tx_cpu"),
        rx_cpu_pct=_int(summary, "rx_cpu"),
        jitter_avg_ms=_float(summary, "jitter_avg_ms"),
        jitter_min_ms=_float(summary, "jitter_min_ms"),
        owd_min_ms=_float(summary, "owd_min_ms"),
        owd_max_ms=_float(summary, "owd_max_ms"),
        mss_bytes=_int(summary, "mss"),
        send_window_bytes=_int(summary, "send_window"),
        receive_window_bytes=_int(summary, "receive_window"),
        streams=_int(summary, "nstream"),
        tool_version=version,
        intervals=intervals,
        notes=(note,) if note else (),
    )


def parse_error(stderr: str, stdout: str = "") -> str | None:
    """The error nuttcp reported, e.g. ``"connect: Connection refused (errno=111)"``.

    nuttcp prints ``nuttcp-t: v8.2.2: Error: <what>`` and, for system call
    failures, ``errno=<n>`` on the next line. ``Info:`` lines are not errors.
    """
    lines = (stderr + "\n" + stdout).splitlines()
    error_line = first_matching_line(lines, ["Error:"])
    if error_line is None:
        return None
    message = error_line.split("Error:", 1)[1].strip()
    errno_line = first_matching_line(lines, ["errno="])
    if errno_line:
        message = f"{message} ({errno_line})"
    return message


def parse_version_output(text: str) -> str | None:
    """Version from ``nuttcp -V`` (``nuttcp-6.1.2``) or from a ``v8.2.2:`` prefix."""
    match = re.search(r"nuttcp-(\d+\.\d+\.\d+)", text) or re.search(r"\bv(\d+\.\d+\.\d+):", text)
    return match.group(1) if match else None
