"""pScheduler runs as its ``http`` archiver sends them -> the wire records an agent would send (pure, no Django).

One body is one run of one pScheduler task: ``id`` (the run's UUID), ``schedule``, ``test{type, spec}``,
``tool{name, version}``, ``participants``, ``run``, ``result`` and ``reference``. ``parse_run`` checks what
the conversion needs and names the offending field (``test.spec.dest``, ``result.summary.summary.throughput-bits``);
everything else of the body is ignored, so a newer pScheduler keeps being accepted.

What each test type becomes (docs/perfsonar.md):

- ``throughput`` (iperf3, nuttcp, ethr) -> one ``throughput`` record in the direction data flowed (``reverse``
  swaps source and dest): sender throughput, retransmissions, streams, the socket window asked for, MSS, the
  mean RTT of the streams (iperf3 reports microseconds); UDP: packets sent and lost, the rate asked for;
- ``latency`` and ``latencybg`` (owping, twping, powstream) -> one ``owamp`` record: packets sent, lost,
  duplicated and reordered, min/median/max of ``histogram-latency``, ``max-clock-error``, and ``jitter_ms``,
  P95 - P50 of the histogram's delays (the one definition, collectors/delay.py);
- ``rtt`` (ping, twping, tcpping) -> one ``owamp`` record whose tool is the rtt tool (``ping``...) and whose
  delays are half the round-trip times (min, median of the round trips or else the mean, max): a symmetric
  one-way estimate, so that forward plus reverse gives the round trip as owamp would and no rule reads a
  doubled delay (or an unsynchronised clock) into it. The round trips themselves are in the excerpt, marked
  ``"round_trip": true``; the loss it measures is the path's loss (both directions), which the loss rules use;
- ``trace`` (traceroute, tracepath, paris-traceroute) -> one ``traceroute`` record: hops by address, or by
  name when the hop gave no address, non-answering hops null; ``pmtu_bytes`` is the smallest MTU reported.

Every record keeps the tool's version (``tool_version``) and, in ``raw_excerpt``, a JSON excerpt naming the
pScheduler run (``{"pscheduler": {"run": ..., "test": ..., "tool": ...}}``) plus the numbers that have no
column (receiver throughput, largest TCP window, UDP jitter, hop names and AS numbers). A failed run
(``succeeded: false``) is a record with ``error`` (and the diagnostics in ``stderr_excerpt``).
"""

from __future__ import annotations

import json
import math
import re
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

from collectors.delay import histogram_jitter, round_ms

__all__ = [
    "MEASURED_TEST_TYPES",
    "BodyProblem",
    "PsRun",
    "RecordSource",
    "endpoint_normalise",
    "iso_duration_s",
    "parse_run",
    "records_build",
]

MEASURED_TEST_TYPES: Final = frozenset({"throughput", "latency", "latencybg", "rtt", "trace"})
"""Test types that become records; runs of other types (clock, dns, http, idle...) are acknowledged and ignored."""

MAX_EXCERPT_CHARS: Final = 8000  # records.Text allows 8192
MAX_DIAGS_CHARS: Final = 4000
US_PER_MS: Final = 1000.0

_DURATION = re.compile(
    r"^P(?:(?P<w>\d+(?:\.\d+)?)W)?(?:(?P<d>\d+(?:\.\d+)?)D)?"
    r"(?:T(?:(?P<h>\d+(?:\.\d+)?)H)?(?:(?P<m>\d+(?:\.\d+)?)M)?(?:(?P<s>\d+(?:\.\d+)?)S)?)?\Z"
)
_DURATION_S = {"w": 604800.0, "d": 86400.0, "h": 3600.0, "m": 60.0, "s": 1.0}


def iso_duration_s(text: str) -> float | None:
    """Seconds of an ISO 8601 duration as pScheduler writes them (``PT0.001301S``, ``PT19S``, ``P0D``), or None."""
    if not isinstance(text, str):
        return None
    match = _DURATION.match(text.strip())
    if match is None or text.strip() in ("P", "PT"):
        return None
    return sum(float(value) * _DURATION_S[unit] for unit, value in match.groupdict().items() if value)


def endpoint_normalise(text: Any) -> str | None:
    """The comparable form of a pScheduler endpoint: lower case, no port, no brackets, no trailing dot.

    ``[2001:db8::1]:861`` -> ``2001:db8::1``; ``PS1.Example.org.:443`` -> ``ps1.example.org``; an IPv6
    address without brackets keeps its colons. None for anything that is not a usable name or address.
    """
    if not isinstance(text, str):
        return None
    value = text.strip()
    if value.startswith("["):
        value = value[1:].partition("]")[0]
    elif value.count(":") == 1:  # name:port or IPv4:port (an IPv6 address has two colons or more)
        value = value.partition(":")[0]
    value = value.rstrip(".").lower()
    if not value or len(value) > 255 or any(c.isspace() or ord(c) < 32 for c in value):
        return None
    return value


class BodyProblem(ValueError):
    """A body that is not a usable pScheduler run; ``errors`` are ``{path, message}`` items naming the fields."""

    def __init__(self, errors: list[dict[str, str]]) -> None:
        self.errors = errors
        super().__init__("; ".join(f"{e['path'] or '(body)'}: {e['message']}" for e in errors[:5]))


@dataclass(frozen=True)
class PsRun:
    """What the conversion needs of one archived run, with ``prefix`` ("" or "result." for a plugin input)."""

    run_id: str
    test_type: str
    spec: Mapping[str, Any]
    tool: str | None
    tool_version: str | None
    start: datetime
    duration_s: float | None
    participants: tuple[str, ...]
    result: Mapping[str, Any]
    succeeded: bool
    error: str | None
    diags: str | None
    href: str | None
    repeat_s: float | None
    prefix: str = ""

    @property
    def measured(self) -> bool:
        return self.test_type in MEASURED_TEST_TYPES

    @property
    def reversed(self) -> bool:
        """Throughput with ``reverse``: the dest sends, so data flows dest -> source."""
        return self.test_type == "throughput" and self.spec.get("reverse") is True

    def _candidates(self, keys: Iterable[str], participant: int) -> tuple[str, ...]:
        found = [endpoint_normalise(self.spec.get(k)) for k in keys]
        # A spec without a source (rtt, trace, latency from the local host) means the lead participant.
        if participant < len(self.participants) and not any(found):
            found.append(endpoint_normalise(self.participants[participant]))
        return tuple(dict.fromkeys(f for f in found if f))

    @property
    def source_names(self) -> tuple[str, ...]:
        """The names or addresses the measuring source goes by, most specific first (before ``reverse``)."""
        return self._candidates(("source", "source-node"), 0)

    @property
    def dest_names(self) -> tuple[str, ...]:
        return self._candidates(("dest", "dest-node"), 1)


def _common_paths(prefix: str) -> dict[str, str]:
    """Where the fields every record has come from in the body."""
    return {
        "time": f"{prefix}schedule.start",
        "tool": f"{prefix}tool.name",
        "tool_version": f"{prefix}tool.version",
        "error": f"{prefix}result.error",
        "stderr_excerpt": f"{prefix}result.diags",
        "schedule_interval_s": f"{prefix}task.schedule.repeat",
    }


@dataclass(frozen=True)
class RecordSource:
    """One record as plain data (validated later by collectors.records) and where each field came from."""

    data: dict[str, Any]
    paths: dict[str, str] = field(default_factory=dict)  # record field -> body path


def _problem(errors: list[dict[str, str]], path: str, message: str) -> None:
    errors.append({"path": path, "message": message})


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    # Old pScheduler versions wrote local times without a zone; the toolkit runs in UTC by default.
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def parse_run(body: Any) -> PsRun:
    """Check a decoded archiver body and return the run, or raise BodyProblem naming every offending field.

    Also accepted: an archiver plugin's input (``{"data", "result", "attempts"}``), whose ``result`` is the run,
    and the older shapes (``tool`` a plain name, ``participants`` objects with a ``host``).
    """
    errors: list[dict[str, str]] = []
    prefix = ""
    if not isinstance(body, Mapping):
        raise BodyProblem([{"path": "", "message": f"expected a JSON object (a pScheduler run), got {_kind(body)}"}])
    if "id" not in body and isinstance(body.get("result"), Mapping) and "test" in body["result"]:
        body, prefix = body["result"], "result."
    run_id = body.get("id")
    if not isinstance(run_id, str) or not run_id.strip() or len(run_id) > 200 or not _printable(run_id):
        _problem(errors, f"{prefix}id", "required: the run's id (at most 200 printable characters)")
    test = body.get("test")
    test_type, spec = "", {}
    if not isinstance(test, Mapping):
        _problem(errors, f"{prefix}test", "required: an object with `type` and `spec`")
    else:
        test_type = test.get("type")
        if not isinstance(test_type, str) or not test_type:
            _problem(errors, f"{prefix}test.type", "required: the test type (throughput, latency, rtt, trace...)")
            test_type = ""
        spec = test.get("spec")
        if not isinstance(spec, Mapping):
            _problem(errors, f"{prefix}test.spec", "required: the test's specification (an object)")
            spec = {}
    tool, tool_version = _tool(body.get("tool"), prefix, errors)
    run = body.get("run") if isinstance(body.get("run"), Mapping) else {}
    schedule = body.get("schedule") if isinstance(body.get("schedule"), Mapping) else {}
    start = _time(run.get("start-time")) or _time(schedule.get("start"))
    if start is None:
        _problem(errors, f"{prefix}schedule.start", "required: when the run started (ISO 8601 with a time zone)")
    participants = _participants(body.get("participants"), prefix, errors)
    result = body.get("result")
    if not isinstance(result, Mapping):
        _problem(errors, f"{prefix}result", "required: the run's result (an object)")
        result = {}
    if test_type in MEASURED_TEST_TYPES and spec is not None:
        if not endpoint_normalise(spec.get("dest")) and not endpoint_normalise(spec.get("dest-node")):
            _problem(errors, f"{prefix}test.spec.dest", "required: the test's destination (a host name or address)")
        if "source" in spec and not endpoint_normalise(spec.get("source")):
            _problem(errors, f"{prefix}test.spec.source", "expected a host name or address")
        if "source" not in spec and not participants:
            _problem(errors, f"{prefix}participants", "required when test.spec has no source: the lead's name")
    if errors:
        raise BodyProblem(errors)
    succeeded = result.get("succeeded", True) is not False
    error = result.get("error") or run.get("errors")
    if not succeeded and not error:
        error = "the pScheduler run failed (succeeded: false) without saying why"
    diags = result.get("diags") if isinstance(result.get("diags"), str) else None
    duration_s = iso_duration_s(schedule.get("duration")) or iso_duration_s(run.get("duration"))
    task = body.get("task") if isinstance(body.get("task"), Mapping) else {}
    task_schedule = task.get("schedule") if isinstance(task.get("schedule"), Mapping) else {}
    return PsRun(
        run_id=run_id.strip(),
        test_type=test_type,
        spec=spec,
        tool=tool,
        tool_version=tool_version,
        start=start,
        duration_s=duration_s,
        participants=participants,
        result=result,
        succeeded=succeeded and not error,
        error=str(error)[:MAX_DIAGS_CHARS] if error else None,
        diags=diags,
        href=run.get("href") if isinstance(run.get("href"), str) else None,
        repeat_s=iso_duration_s(task_schedule.get("repeat")),
        prefix=prefix,
    )


def _printable(text: str) -> bool:
    """No control characters or lone surrogates (PostgreSQL stores neither NUL nor unpaired surrogates)."""
    return not any(ord(c) < 32 or 0xD800 <= ord(c) <= 0xDFFF or c == "\x7f" for c in text)


def _kind(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}.get(type(value), "a number")


def _tool(value: Any, prefix: str, errors: list) -> tuple[str | None, str | None]:
    if value is None:
        return None, None
    if isinstance(value, str):
        return value, None
    if isinstance(value, Mapping):
        name, version = value.get("name"), value.get("version")
        if name is not None and not isinstance(name, str):
            _problem(errors, f"{prefix}tool.name", "expected the tool's name (a string)")
            name = None
        return name, str(version) if isinstance(version, str | int | float) else None
    _problem(errors, f"{prefix}tool", "expected {name, version} or the tool's name")
    return None, None


def _participants(value: Any, prefix: str, errors: list) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        _problem(errors, f"{prefix}participants", "expected an array of host names")
        return ()
    out = []
    for i, item in enumerate(value):
        host = item.get("host") if isinstance(item, Mapping) else item
        if host is None:  # pScheduler writes null for "the local host"
            out.append("")
        elif isinstance(host, str):
            out.append(host)
        else:
            _problem(errors, f"{prefix}participants[{i}]", "expected a host name")
    return tuple(out)


# --- records -----------------------------------------------------------------------------------------


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _list(value: Any) -> list:
    """``value`` when it is an array, else empty: a field of the wrong type never breaks the conversion."""
    return value if isinstance(value, list) else []


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _count(value: Any) -> int | None:
    number = _num(value)
    return int(number) if number is not None and number == int(number) else None


def _excerpt(run: PsRun, **numbers: Any) -> str:
    """The JSON excerpt naming the run (``raw_excerpt``): run id, test, tool, and numbers without a column."""
    data = {"run": run.run_id, "test": run.test_type, "tool": run.tool, "tool_version": run.tool_version}
    if run.href:
        data["href"] = run.href
    data.update({k: v for k, v in numbers.items() if v is not None})
    text = json.dumps({"pscheduler": data}, separators=(",", ":"), sort_keys=True)
    if len(text) > MAX_EXCERPT_CHARS:  # hop details of a very long trace: keep the identity only
        data = {k: data[k] for k in ("run", "test", "tool", "tool_version", "href") if k in data}
        data["truncated"] = True
        text = json.dumps({"pscheduler": data}, separators=(",", ":"), sort_keys=True)
    return text


def _common(run: PsRun, *, src: str, dst: str, src_host: str | None, dst_host: str | None) -> dict[str, Any]:
    data: dict[str, Any] = {"time": run.start.isoformat(), "src": src, "dst": dst}
    if src_host:
        data["src_host"] = src_host
    if dst_host:
        data["dst_host"] = dst_host
    if run.tool_version:
        data["tool_version"] = run.tool_version[:128]
    if run.repeat_s:
        data["schedule_interval_s"] = run.repeat_s
    if run.error:
        data["error"] = run.error
    if run.diags and (run.error or not run.succeeded):
        data["stderr_excerpt"] = run.diags[-MAX_DIAGS_CHARS:]
    return data


def records_build(
    run: PsRun, *, src: str, dst: str, src_host: str | None = None, dst_host: str | None = None
) -> list[RecordSource]:
    """The records of a measured run between sites ``src`` and ``dst`` (in the direction measured).

    The caller has already applied ``reverse`` to the sites and hosts. The records are plain data: the
    caller validates them with the wire schema and maps a record field's error back to ``paths``.
    """
    common = _common(run, src=src, dst=dst, src_host=src_host, dst_host=dst_host)
    build = {
        "throughput": _throughput,
        "latency": _latency,
        "latencybg": _latency,
        "rtt": _rtt,
        "trace": _trace,
    }[run.test_type]
    source = build(run, common)
    return [RecordSource(source.data, {**_common_paths(run.prefix), **source.paths})]


def _throughput(run: PsRun, common: dict[str, Any]) -> RecordSource:
    p = run.prefix
    spec, result = run.spec, run.result
    outer = _map(result.get("summary"))
    summary = _map(outer.get("summary"))
    streams = [s for s in _list(outer.get("streams")) if isinstance(s, Mapping)]
    intervals = [i for i in _list(result.get("intervals")) if isinstance(i, Mapping)]
    interval_streams = [
        s for i in intervals for s in _list(i.get("streams")) if isinstance(s, Mapping) and not s.get("omitted")
    ]
    udp = spec.get("udp") is True
    paths = {"throughput_bps": f"{p}result.summary.summary.throughput-bits", "duration_s": f"{p}result.summary.summary"}
    start, end = _num(summary.get("start")), _num(summary.get("end"))
    duration_s = (end - start) if start is not None and end is not None and end > start else None
    duration_s = duration_s or iso_duration_s(spec.get("duration")) or run.duration_s
    data = {
        **common,
        "type": "throughput",
        "tool": run.tool or "unknown",
        "protocol": "udp" if udp else "tcp",
        "duration_s": duration_s,
        "throughput_bps": _num(summary.get("throughput-bits")),
    }
    if data["throughput_bps"] is None and not run.error:
        data["error"] = "the run reported no throughput (result.summary.summary.throughput-bits)"
    count = len(streams) or _count(spec.get("parallel"))
    if count:
        data["streams"] = count
    window = _count(spec.get("window"))
    if window is not None:
        data["window_bytes"] = window
        paths["window_bytes"] = f"{p}test.spec.window"
    mss = _count(spec.get("mss")) or _iperf3_mss(run.diags or result.get("diags"))
    if mss:
        data["mss_bytes"] = mss
        paths["mss_bytes"] = f"{p}test.spec.mss" if spec.get("mss") else f"{p}result.diags"
    # iperf3 reports RTTs in microseconds: the streams' mean over the test, else the intervals' mean.
    rtts_us = [r for r in (_num(s.get("rtt")) for s in streams) if r] or [
        r for r in (_num(s.get("rtt")) for s in interval_streams) if r
    ]
    if rtts_us:
        data["rtt_ms"] = statistics.fmean(rtts_us) / US_PER_MS
        paths["rtt_ms"] = f"{p}result.summary.streams"
    windows = [w for w in (_count(s.get("tcp-window-size")) for s in interval_streams) if w]
    if udp:
        sent, lost = _count(summary.get("sent-packets")), _count(summary.get("lost-packets"))
        if sent is not None:
            data["packets_sent"] = sent
            paths["packets_sent"] = f"{p}result.summary.summary.sent-packets"
        if lost is not None:
            data["packets_lost"] = lost
            paths["packets_lost"] = f"{p}result.summary.summary.lost-packets"
        offered = _num(spec.get("bandwidth"))
        if offered:
            data["offered_bps"] = offered
    else:
        retransmits = _count(summary.get("retransmits"))
        if retransmits is not None:
            data["retransmits"] = retransmits
            paths["retransmits"] = f"{p}result.summary.summary.retransmits"
    jitter = _num(summary.get("jitter"))
    data["raw_excerpt"] = _excerpt(
        run,
        receiver_throughput_bps=_num(summary.get("receiver-throughput-bits")),
        tcp_window_max_bytes=max(windows) if windows else None,
        jitter_ms=jitter,
        reverse=run.reversed or None,
    )
    return RecordSource({k: v for k, v in data.items() if v is not None}, paths)


def _iperf3_mss(diags: Any) -> int | None:
    """The MSS iperf3 printed in its JSON (``start.tcp_mss_default``), found in the run's diagnostics."""
    if not isinstance(diags, str):
        return None
    found = re.findall(r'"tcp_mss(?:_default)?"\s*:\s*(\d+)', diags)
    positive = [int(v) for v in found if 0 < int(v) <= 65535]
    return positive[0] if positive else None


def _histogram(histogram: Any) -> tuple[float, float, float, float] | None:
    """(min, median, max, jitter) of a pScheduler histogram ``{"value in ms": count}``; None when empty or
    unreadable."""
    if not isinstance(histogram, Mapping):
        return None
    bins: list[tuple[float, int]] = []
    for key, count in histogram.items():
        try:
            value = float(key)
        except (TypeError, ValueError):
            return None
        n = _count(count)
        if n is None or n < 0 or not math.isfinite(value):
            return None
        if n:
            bins.append((value, n))
    if not bins:
        return None
    bins.sort()
    total = sum(n for _, n in bins)
    # The median of the expanded sample: the middle value, or the mean of the two middle ones.
    lower, upper = (total - 1) // 2, total // 2
    seen, low_value, high_value = 0, None, None
    for value, n in bins:
        if low_value is None and lower < seen + n:
            low_value = value
        if upper < seen + n:
            high_value = value
            break
        seen += n
    return bins[0][0], (low_value + high_value) / 2, bins[-1][0], round_ms(histogram_jitter(bins))


def _latency(run: PsRun, common: dict[str, Any]) -> RecordSource:
    p = run.prefix
    result = run.result
    sent = _count(result.get("packets-sent"))
    lost = _count(result.get("packets-lost"))
    received = _count(result.get("packets-received"))
    if lost is None and sent is not None and received is not None:
        lost = sent - received
    paths = {
        "packets_sent": f"{p}result.packets-sent",
        "packets_lost": f"{p}result.packets-lost",
        "duplicates": f"{p}result.packets-duplicated",
        "reordered": f"{p}result.packets-reordered",
        "delay_min_ms": f"{p}result.histogram-latency",
        "delay_median_ms": f"{p}result.histogram-latency",
        "delay_max_ms": f"{p}result.histogram-latency",
        "jitter_ms": f"{p}result.histogram-latency",
        "clock_error_ms": f"{p}result.max-clock-error",
    }
    data = {
        **common,
        "type": "owamp",
        "tool": run.tool,
        "packets_sent": sent,
        "packets_lost": lost,
        "duplicates": _count(result.get("packets-duplicated")),
        "reordered": _count(result.get("packets-reordered")),
        "clock_error_ms": _num(result.get("max-clock-error")),
        "packet_interval_s": _num(run.spec.get("packet-interval")) or None,
    }
    delays = _histogram(result.get("histogram-latency"))
    if delays is not None and (sent is None or lost is None or sent > lost):
        data["delay_min_ms"], data["delay_median_ms"], data["delay_max_ms"], data["jitter_ms"] = delays
    if sent is None and not run.error:
        data["error"] = "the run reported no packet counts (result.packets-sent)"
    data["raw_excerpt"] = _excerpt(
        run, protocol=run.spec.get("protocol") if isinstance(run.spec.get("protocol"), str) else None
    )
    return RecordSource({k: v for k, v in data.items() if v is not None}, paths)


def _ms(seconds: float | None) -> float | None:
    """Seconds -> milliseconds, rounded to the nanosecond (pScheduler durations have at most 9 decimals)."""
    return round(seconds * 1000.0, 6) if seconds is not None else None


def _rtt(run: PsRun, common: dict[str, Any]) -> RecordSource:
    p = run.prefix
    result = run.result
    sent, received = _count(result.get("sent")), _count(result.get("received"))
    lost = _count(result.get("lost"))
    if lost is None and sent is not None and received is not None:
        lost = sent - received
    trip_s = (iso_duration_s(t.get("rtt")) for t in _list(result.get("roundtrips")) if isinstance(t, Mapping))
    trips = [_ms(s) for s in trip_s if s is not None]
    low, mean, high = (iso_duration_s(result.get(k)) for k in ("min", "mean", "max"))
    paths = {
        "packets_sent": f"{p}result.sent",
        "packets_lost": f"{p}result.lost",
        "duplicates": f"{p}result.duplicates",
        "reordered": f"{p}result.reorders",
        "delay_min_ms": f"{p}result.min",
        "delay_median_ms": f"{p}result.roundtrips" if trips else f"{p}result.mean",
        "delay_max_ms": f"{p}result.max",
    }
    data = {
        **common,
        "type": "owamp",
        "tool": run.tool,
        "packets_sent": sent,
        "packets_lost": lost,
        "duplicates": _count(result.get("duplicates")),
        "reordered": _count(result.get("reorders")),
        "packet_interval_s": _num(run.spec.get("interval")) or iso_duration_s(run.spec.get("interval")) or None,
    }
    if sent is None and not run.error:
        data["error"] = "the run reported no packet counts (result.sent)"
    rtt_min_ms = rtt_median_ms = rtt_max_ms = None
    if not (sent is not None and lost is not None and lost >= sent):
        rtt_median_ms = statistics.median(trips) if trips else _ms(mean)
        rtt_min_ms = _ms(low) if low is not None else (min(trips) if trips else None)
        rtt_max_ms = _ms(high) if high is not None else (max(trips) if trips else None)
        for name, rtt_ms in (
            ("delay_min_ms", rtt_min_ms),
            ("delay_median_ms", rtt_median_ms),
            ("delay_max_ms", rtt_max_ms),
        ):
            data[name] = rtt_ms / 2 if rtt_ms is not None else None
    stddev = iso_duration_s(result.get("stddev"))
    data["raw_excerpt"] = _excerpt(
        run,
        round_trip=True,
        rtt_min_ms=rtt_min_ms,
        rtt_median_ms=rtt_median_ms,
        rtt_max_ms=rtt_max_ms,
        rtt_mean_ms=_ms(mean),
        rtt_stddev_ms=_ms(stddev),
        loss_fraction=_num(result.get("loss")),
    )
    return RecordSource({k: v for k, v in data.items() if v is not None}, paths)


def _trace(run: PsRun, common: dict[str, Any]) -> RecordSource:
    p = run.prefix
    result = run.result
    all_paths = _list(result.get("paths"))
    hops_in = _list(all_paths[0]) if all_paths else []
    hops: list[str | None] = []
    details: list[dict[str, Any]] = []
    mtus: list[int] = []
    for hop in hops_in:
        hop = hop if isinstance(hop, Mapping) else {}
        ip = endpoint_normalise(hop.get("ip"))
        name = hop.get("hostname") if isinstance(hop.get("hostname"), str) else None
        hops.append(ip or endpoint_normalise(name))
        mtu = _count(hop.get("mtu"))
        if mtu:
            mtus.append(mtu)
        as_info = _map(hop.get("as"))
        rtt = iso_duration_s(hop.get("rtt"))
        detail = {
            "ip": ip,
            "hostname": name,
            "as": _count(as_info.get("number")),
            "rtt_ms": round(rtt * 1000.0, 3) if rtt is not None else None,
            "mtu": mtu,
            "error": hop.get("error") if isinstance(hop.get("error"), str) else None,
        }
        details.append({k: v for k, v in detail.items() if v is not None})
    data = {**common, "type": "traceroute", "tool": run.tool, "hops": hops}
    if mtus:
        data["pmtu_bytes"] = min(mtus)
    if not hops and not run.error:
        data["error"] = "the run reported no hops (result.paths)"
    data["raw_excerpt"] = _excerpt(run, hops=details or None, paths=len(all_paths) if len(all_paths) > 1 else None)
    paths = {"hops": f"{p}result.paths[0]", "pmtu_bytes": f"{p}result.paths[0]"}
    return RecordSource({k: v for k, v in data.items() if v is not None}, paths)
