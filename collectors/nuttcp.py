"""nuttcp throughput collector: argv builder, pure output parser, test runner.

Three output styles are understood by :func:`parse`, all as printed by nuttcp
8.2.2 (what perfSONAR ships) and 6.1.2 (Debian bookworm's package):

* ``-fparse`` key=value lines (what :func:`run_test` asks for);
* the default "brief" human format (what pScheduler's nuttcp tool parses);
* the verbose ``-v`` report (``nuttcp-t:``/``nuttcp-r:`` lines), human or
  ``-fparse``.

Units, from the nuttcp source: "MB" and ``megabytes`` are MiB (2**20 bytes),
"KB" (windows, cwnd) is KiB, ``Mbps`` is 10**6 bit/s. Conversions go through
:class:`~decimal.Decimal` so ``12290.3580 Mbps`` becomes exactly
``12290358000.0`` bit/s.

Retransmits: nuttcp before 6.2.9 ("Make retrans info reporting work again on
newer Linux distros", nuttcp changelog) reads the kernel's TCP_INFO with an
outdated layout and prints ``retrans=0`` whatever happened; Debian's 6.1.2 is
such a version. Those zeros are reported as unknown (``None``), never as "no
loss". :func:`run_test` can then measure them from the host's kernel counter
(``TcpRetransSegs``) through an injected :class:`RetransCounter`.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, fields
from datetime import datetime, timedelta
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path
from typing import Any, Protocol

from collectors.runner import (
    EXIT_NOT_FOUND,
    CommandResult,
    CommandRunner,
    excerpt,
    first_matching_line,
    utc_time,
)

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


@dataclass(frozen=True)
class NuttcpInterval:
    """One ``-i`` interval report line."""

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


@dataclass(frozen=True)
class NuttcpResult:
    """The summary of one nuttcp run (one direction).

    ``retransmits`` is the trustworthy count or ``None`` (unknown);
    ``retransmits_reported`` is what nuttcp printed, kept for the record.
    ``notes`` explain values that were deliberately set to ``None``.
    """

    protocol: str
    output_format: str  # "parse", "brief" or "verbose"
    throughput_bps: float
    transferred_bytes: int
    duration_s: float
    retransmits: int | None = None
    retransmits_reported: int | None = None
    retransmits_by_stream: tuple[int, ...] | None = None
    cwnd_bytes: int | None = None
    rtt_ms: float | None = None
    tx_cpu_pct: int | None = None
    rx_cpu_pct: int | None = None
    packets_sent: int | None = None
    packets_lost: int | None = None
    loss_pct: float | None = None
    jitter_max_ms: float | None = None
    jitter_avg_ms: float | None = None
    jitter_min_ms: float | None = None
    owd_avg_ms: float | None = None
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


def _interval(values: Mapping[str, str]) -> NuttcpInterval:
    return NuttcpInterval(
        transferred_bytes=mib_to_bytes(values["megabytes"]),
        duration_s=float(values["seconds"]),
        throughput_bps=mbps_to_bps(values["mbps"]),
        retransmits_reported=_int(values, "retrans"),
        cwnd_bytes=_kib(values, "cwnd_kb"),
        packets_sent=_int(values, "pkt"),
        packets_lost=_int(values, "drop"),
        loss_pct=_float(values, "loss_pct"),
        jitter_max_ms=_float(values, "jitter_max_ms"),
        owd_avg_ms=_float(values, "owd_avg_ms"),
    )


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
    intervals = tuple(_interval(values) for values in interval_values)
    reported = _int(summary, "retrans")
    by_stream = summary.get("retrans_by_stream")
    retrans_by_stream = tuple(int(n) for n in by_stream.split("+")) if by_stream else None
    cwnd_seen = "cwnd_kb" in summary or any(i.cwnd_bytes is not None for i in intervals)
    any_nonzero = bool(reported) or any(i.retransmits_reported for i in intervals)
    retransmits, note = _decide_retransmits(
        reported, protocol=protocol, version=version, cwnd_seen=cwnd_seen, any_nonzero=any_nonzero
    )
    return NuttcpResult(
        protocol=protocol,
        output_format=output_format,
        throughput_bps=mbps_to_bps(summary["mbps"]),
        transferred_bytes=mib_to_bytes(summary["megabytes"]),
        duration_s=float(summary["seconds"]),
        retransmits=retransmits,
        retransmits_reported=reported,
        retransmits_by_stream=retrans_by_stream if retransmits is not None else None,
        cwnd_bytes=_kib(summary, "cwnd_kb"),
        rtt_ms=_float(summary, "rtt_ms"),
        tx_cpu_pct=_int(summary, "tx_cpu"),
        rx_cpu_pct=_int(summary, "rx_cpu"),
        packets_sent=_int(summary, "pkt"),
        packets_lost=_int(summary, "drop"),
        loss_pct=_float(summary, "loss_pct"),
        jitter_max_ms=_float(summary, "jitter_max_ms"),
        jitter_avg_ms=_float(summary, "jitter_avg_ms"),
        jitter_min_ms=_float(summary, "jitter_min_ms"),
        owd_avg_ms=_float(summary, "owd_avg_ms"),
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


# ---------------------------------------------------------------------------
# Kernel retransmit counters
# ---------------------------------------------------------------------------


class RetransCounter(Protocol):
    """Reads the host's cumulative TCP retransmitted-segment counter."""

    def read_retrans_segs(self) -> int | None:
        """Current ``TcpRetransSegs`` value, or ``None`` when it cannot be read."""
        ...


def parse_proc_net_snmp_retrans(text: str) -> int | None:
    """``RetransSegs`` from ``/proc/net/snmp`` (a ``Tcp:`` header line, then a ``Tcp:`` values line)."""
    tcp_lines = [line.split()[1:] for line in text.splitlines() if line.startswith("Tcp:")]
    if len(tcp_lines) < 2:
        return None
    header, values = tcp_lines[0], tcp_lines[1]
    if "RetransSegs" not in header or len(values) != len(header):
        return None
    raw = values[header.index("RetransSegs")]
    return int(raw) if raw.isdigit() else None


def parse_nstat_retrans(text: str) -> int | None:
    """``TcpRetransSegs`` from ``nstat -a -s -z TcpRetransSegs`` output (``#kernel`` then ``name value rate``)."""
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] == "TcpRetransSegs":
            return int(parts[1]) if parts[1].isdigit() else None
    return None


@dataclass(frozen=True)
class ProcNetSnmpRetransCounter:
    """:class:`RetransCounter` reading ``<proc_root>/net/snmp`` (the agent's network namespace)."""

    proc_root: Path = Path("/proc")

    def read_retrans_segs(self) -> int | None:
        """Read and parse ``net/snmp``; ``None`` if unreadable."""
        try:
            text = (self.proc_root / "net" / "snmp").read_text()
        except OSError:
            return None
        return parse_proc_net_snmp_retrans(text)


@dataclass(frozen=True)
class NstatRetransCounter:
    """:class:`RetransCounter` running ``nstat`` through a :class:`CommandRunner`.

    ``-a`` absolute values (not deltas since nstat's last run), ``-s`` do not
    update nstat's history file, ``-z`` print the counter even when zero.
    """

    runner: CommandRunner
    binary: str = "nstat"
    timeout_s: float = 10.0

    def read_retrans_segs(self) -> int | None:
        """Run nstat once; ``None`` on any failure."""
        result = self.runner.run([self.binary, "-a", "-s", "-z", "TcpRetransSegs"], self.timeout_s)
        if not result.ok:
            return None
        return parse_nstat_retrans(result.stdout)


# ---------------------------------------------------------------------------
# Configuration and argv
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class NuttcpConfig:
    """One ``[[nuttcp]]`` block of the agent configuration (docs/agent.md#configuration-toml).

    ``dst`` is the site code of the far end, ``host`` its nuttcp server.
    ``reverse`` also measures dst -> src with ``-r`` (the server transmits);
    for TCP ``flip_reverse`` adds ``-F`` so that the agent, not the server,
    opens the data connection (site firewalls usually allow outbound only).
    ``rate_bps`` is the UDP offered rate (required for UDP: nuttcp's own
    default is 1 Mbit/s) or an optional TCP rate cap.
    ``jitter``: ``None`` adds ``-j`` to UDP tests when the local nuttcp
    supports it.
    """

    dst: str
    host: str
    protocol: str = "tcp"
    duration_s: float = 10.0
    window_bytes: int | None = None
    streams: int = 1
    reverse: bool = False
    rate_bps: float | None = None
    mss_bytes: int | None = None
    control_port: int | None = None
    data_port: int | None = None
    flip_reverse: bool = True
    jitter: bool | None = None
    interval_report_s: float | None = None
    interval_s: float | None = None  # scheduling period, used by the agent's scheduler
    binary: str = "nuttcp"
    timeout_margin_s: float = DEFAULT_TIMEOUT_MARGIN_S

    def __post_init__(self) -> None:
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"nuttcp protocol must be one of {PROTOCOLS}, got {self.protocol!r}")
        if self.duration_s <= 0:
            raise ValueError("nuttcp duration_s must be > 0")
        if self.streams < 1:
            raise ValueError("nuttcp streams must be >= 1")
        if self.window_bytes is not None and self.window_bytes < BYTES_PER_KIB:
            raise ValueError("nuttcp window_bytes must be >= 1024 (nuttcp sets windows in KiB)")
        if self.protocol == "udp" and not self.rate_bps:
            raise ValueError("nuttcp UDP tests need rate_bps (nuttcp's default rate is only 1 Mbit/s)")
        if self.rate_bps is not None and self.rate_bps <= 0:
            raise ValueError("nuttcp rate_bps must be > 0")

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> NuttcpConfig:
        """Build from a TOML table; unknown keys are an error (typos must not pass silently)."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown nuttcp option(s): {', '.join(unknown)}")
        return cls(**dict(data))

    @property
    def timeout_s(self) -> float:
        """Deadline for one nuttcp run."""
        return self.duration_s + self.timeout_margin_s

    def directions(self) -> tuple[str, ...]:
        """Directions one test cycle measures."""
        return (FORWARD, REVERSE) if self.reverse else (FORWARD,)


def _plain_number(value: float) -> str:
    """``10`` not ``10.0``, ``0.5`` not ``5e-01``: nuttcp reads numbers with sscanf."""
    text = format(Decimal(str(value)).normalize(), "f")
    return text


def window_kib(window_bytes: int) -> int:
    """nuttcp's ``-w`` takes KiB: the nearest whole KiB (at least 1)."""
    return max(1, int((Decimal(window_bytes) / BYTES_PER_KIB).to_integral_value(rounding=ROUND_HALF_EVEN)))


def jitter_supported(version: str | None) -> bool:
    """Whether this nuttcp understands ``-j`` (unknown version: assume not, it would hang 6.1.2)."""
    parsed = parse_version(version)
    return parsed is not None and parsed >= JITTER_OPTION_SINCE


def build_argv(config: NuttcpConfig, *, direction: str = FORWARD, version: str | None = None) -> list[str]:
    """nuttcp client argv for one direction of ``config``.

    Options use nuttcp's classic attached form (``-T10``), understood by
    every version. ``version`` is the local nuttcp's version (for ``-j``).
    """
    if direction not in (FORWARD, REVERSE):
        raise ValueError(f"direction must be {FORWARD!r} or {REVERSE!r}")
    argv = [config.binary, "-fparse", f"-T{_plain_number(config.duration_s)}"]
    if direction == FORWARD:
        argv.append("-t")
    else:
        argv.append("-r")
        if config.protocol == "tcp" and config.flip_reverse:
            argv.append("-F")  # nuttcp refuses -F with UDP
    if config.protocol == "udp":
        argv.append("-u")
        if config.jitter or (config.jitter is None and jitter_supported(version)):
            argv.append("-j")
    if config.window_bytes is not None:
        argv.append(f"-w{window_kib(config.window_bytes)}")
    if config.streams > 1:
        argv.append(f"-N{config.streams}")
    if config.rate_bps is not None:
        argv.append(f"-R{_plain_number(config.rate_bps / BPS_PER_KBPS)}")
    if config.mss_bytes is not None and config.protocol == "tcp":
        argv.append(f"-M{config.mss_bytes}")
    if config.interval_report_s is not None:
        argv.append(f"-i{_plain_number(config.interval_report_s)}")
    if config.control_port is not None:
        argv.append(f"-P{config.control_port}")
    if config.data_port is not None:
        argv.append(f"-p{config.data_port}")
    argv.append(config.host)
    return argv


def detect_version(runner: CommandRunner, binary: str = "nuttcp", timeout_s: float = 10.0) -> CommandResult:
    """Run ``nuttcp -V``; the version is ``parse_version_output(result.stdout)``."""
    return runner.run([binary, "-V"], timeout_s)


# ---------------------------------------------------------------------------
# Records
# ---------------------------------------------------------------------------


def _endpoints(direction: str, *, src_site: str, dst_site: str, host: str) -> dict[str, str]:
    if direction == FORWARD:
        return {"src": src_site, "dst": dst_site, "dst_host": host}
    return {"src": dst_site, "dst": src_site, "src_host": host}


def _base_record(
    config: NuttcpConfig, direction: str, *, src_site: str, dst_site: str, time: datetime
) -> dict[str, Any]:
    endpoints = _endpoints(direction, src_site=src_site, dst_site=dst_site, host=config.host)
    record: dict[str, Any] = {
        "type": "throughput",
        "time": time,
        "src": endpoints["src"],
        "dst": endpoints["dst"],
        "tool": TOOL,
        "protocol": config.protocol,
        "duration_s": config.duration_s,
    }
    if config.protocol == "tcp":
        record["streams"] = config.streams
        record["window_bytes"] = config.window_bytes
        record["mss_bytes"] = config.mss_bytes
    else:
        record["offered_bps"] = float(config.rate_bps) if config.rate_bps is not None else None
        if config.streams > 1:
            record["streams"] = config.streams
    for key in ("src_host", "dst_host"):
        if key in endpoints:
            record[key] = endpoints[key]
    record["direction"] = direction
    return record


def result_to_record(
    result: NuttcpResult,
    config: NuttcpConfig,
    *,
    direction: str,
    src_site: str,
    dst_site: str,
    time: datetime,
    host_retrans_segs: int | None = None,
) -> dict[str, Any]:
    """A ``throughput`` record (docs/scenario-format.md#measurement-records) from a parsed run.

    ``host_retrans_segs`` is the host-wide ``TcpRetransSegs`` increase during
    the test; it stands in for ``retransmits`` when nuttcp's count is unknown.
    It counts every TCP flow of the host, so it is an upper bound.
    """
    record = _base_record(config, direction, src_site=src_site, dst_site=dst_site, time=utc_time(time))
    record["duration_s"] = result.duration_s
    record["throughput_bps"] = result.throughput_bps
    record["transferred_bytes"] = result.transferred_bytes
    if result.protocol == "tcp":
        retransmits, source = result.retransmits, "nuttcp" if result.retransmits is not None else None
        if retransmits is None and host_retrans_segs is not None:
            retransmits, source = host_retrans_segs, "host_counter"
        record["retransmits"] = retransmits
        record["rtt_ms"] = result.rtt_ms
        if result.mss_bytes is not None:
            record["mss_bytes"] = result.mss_bytes
        extras: dict[str, Any] = {
            "retransmits_source": source,
            "retransmits_reported": result.retransmits_reported,
            "host_retrans_segs": host_retrans_segs,
            "cwnd_bytes": result.cwnd_bytes,
            "rate_limit_bps": float(config.rate_bps) if config.rate_bps is not None else None,
        }
    else:
        record["packets_sent"] = result.packets_sent
        record["packets_lost"] = result.packets_lost
        extras = {
            "loss_pct": result.loss_pct,
            "jitter_max_ms": result.jitter_max_ms,
            "owd_avg_ms": result.owd_avg_ms,
        }
    extras.update({"tx_cpu_pct": result.tx_cpu_pct, "rx_cpu_pct": result.rx_cpu_pct})
    record.update({key: value for key, value in extras.items() if value is not None})
    if result.tool_version:
        record["tool_version"] = result.tool_version
    if result.notes:
        record["notes"] = list(result.notes)
    return record


def error_record(
    config: NuttcpConfig,
    *,
    direction: str,
    src_site: str,
    dst_site: str,
    time: datetime,
    error: str,
    command: CommandResult | None = None,
    argv: list[str] | None = None,
    tool_version: str | None = None,
) -> dict[str, Any]:
    """A ``throughput`` record for a test that produced no measurement.

    It carries the test parameters and ``error``; measurement fields are
    absent. ``PATH_DOWN`` needs these: a test that cannot connect is evidence.
    """
    record = _base_record(config, direction, src_site=src_site, dst_site=dst_site, time=utc_time(time))
    record["error"] = error
    if command is not None:
        record["exit_code"] = command.exit_code
        stderr_excerpt = excerpt(command.stderr)
        if stderr_excerpt:
            record["stderr_excerpt"] = stderr_excerpt
        raw = excerpt(command.stdout)
        if raw:
            record["raw_excerpt"] = raw
    if argv:
        record["command"] = shlex.join(argv)
    if tool_version:
        record["tool_version"] = tool_version
    return record


@dataclass
class _Clock:
    """Start time of successive tests within one cycle: each starts when the previous ended."""

    start: datetime
    elapsed_s: float = 0.0

    def now(self) -> datetime:
        return self.start + timedelta(seconds=self.elapsed_s)


def run_test(
    runner: CommandRunner,
    config: NuttcpConfig,
    *,
    src_site: str,
    dst_site: str,
    now: datetime,
    retrans_counter: RetransCounter | None = None,
) -> list[dict[str, Any]]:
    """Run the configured nuttcp test(s) and return one record per direction.

    Never raises for anything the tool, the network or the far end does:
    failures become error records. ``now`` is the start of the first test;
    the reverse test's ``time`` is when it started (after the first ended).
    ``retrans_counter`` (optional) reads the host's ``TcpRetransSegs`` before
    and after forward TCP tests, where this host is the transmitter.
    """
    clock = _Clock(utc_time(now))
    version_result = detect_version(runner, config.binary)
    local_version = parse_version_output(version_result.stdout + version_result.stderr)
    records: list[dict[str, Any]] = []
    for direction in config.directions():
        started = clock.now()
        if version_result.exit_code == EXIT_NOT_FOUND and version_result.error:
            records.append(
                error_record(
                    config,
                    direction=direction,
                    src_site=src_site,
                    dst_site=dst_site,
                    time=started,
                    error=f"nuttcp is not installed ({version_result.error})",
                    command=version_result,
                )
            )
            continue
        argv = build_argv(config, direction=direction, version=local_version)
        measure_host = retrans_counter is not None and config.protocol == "tcp" and direction == FORWARD
        before = retrans_counter.read_retrans_segs() if measure_host and retrans_counter else None
        result = runner.run(argv, config.timeout_s)
        after = retrans_counter.read_retrans_segs() if measure_host and retrans_counter else None
        clock.elapsed_s += result.duration_s
        host_retrans = after - before if before is not None and after is not None and after >= before else None
        records.append(
            _record_from_run(
                config,
                result,
                argv,
                direction=direction,
                src_site=src_site,
                dst_site=dst_site,
                time=started,
                # Only the transmitter's version decides whether retrans can be
                # trusted; in reverse the transmitter is the (unknown) server.
                transmitter_version=local_version if direction == FORWARD else None,
                local_version=local_version,
                host_retrans_segs=host_retrans,
            )
        )
    return records


def _record_from_run(
    config: NuttcpConfig,
    result: CommandResult,
    argv: list[str],
    *,
    direction: str,
    src_site: str,
    dst_site: str,
    time: datetime,
    transmitter_version: str | None,
    local_version: str | None,
    host_retrans_segs: int | None,
) -> dict[str, Any]:
    common = {"direction": direction, "src_site": src_site, "dst_site": dst_site, "time": time}
    if result.error is not None or result.exit_code != 0:
        message = result.error or parse_error(result.stderr, result.stdout)
        message = message or f"nuttcp exited with status {result.exit_code}"
        return error_record(config, **common, error=message, command=result, argv=argv, tool_version=local_version)
    try:
        parsed = parse(result.stdout, tool_version=transmitter_version)
    except NuttcpParseError as exc:
        message = parse_error(result.stderr, result.stdout) or f"unparseable nuttcp output: {exc}"
        return error_record(config, **common, error=message, command=result, argv=argv, tool_version=local_version)
    record = result_to_record(parsed, config, **common, host_retrans_segs=host_retrans_segs)
    if local_version and "tool_version" not in record:
        record["tool_version"] = local_version
    record["command"] = shlex.join(argv)
    raw = excerpt(result.stdout)
    if raw:
        record["raw_excerpt"] = raw
    stderr_excerpt = excerpt(result.stderr)
    if stderr_excerpt:
        record["stderr_excerpt"] = stderr_excerpt
    return record
