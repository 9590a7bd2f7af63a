"""A pScheduler run turned into wanmon's wire records (:func:`records_build`), one builder per test type."""

from __future__ import annotations

import json
import math
import re
import statistics
from collections.abc import Mapping
from typing import Any

from collectors.delay import histogram_jitter, round_ms
from wanmon.perfsonar.pscheduler.runs import (
    MAX_DIAGS_CHARS,
    MAX_EXCERPT_CHARS,
    MS_PER_S,
    US_PER_MS,
    PsRun,
    RecordSource,
    common_paths,
    endpoint_normalise,
    iso_duration_s,
)

DEFAULT_BUCKET_MS = 1.0  # the latency test's bucket-width, 0.001 s: histogram keys are then milliseconds

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
    return [RecordSource(source.data, {**common_paths(run.prefix), **source.paths})]


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
    # The MSS the tool reported (iperf2's `mss`) is what the connection used; the one asked for comes next.
    for mss_path, mss in (
        ("result.mss", _count(result.get("mss"))),
        ("test.spec.mss", _count(spec.get("mss"))),
        ("result.diags", _iperf3_mss(run.diags or result.get("diags"))),
    ):
        if mss:
            data["mss_bytes"] = mss
            paths["mss_bytes"] = f"{p}{mss_path}"
            break
    # iperf3 reports RTTs in microseconds: the streams' mean over the test, else the intervals' mean.
    rtts_us = [r for r in (_num(s.get("rtt")) for s in streams) if r] or [
        r for r in (_num(s.get("rtt")) for s in interval_streams) if r
    ]
    if rtts_us:
        data["rtt_ms"] = statistics.fmean(rtts_us) / US_PER_MS
        paths["rtt_ms"] = f"{p}result.summary.streams"
    # Stream congestion windows: iperf3's snd_cwnd, iperf2's and nuttcp's cwnd (bytes); nuttcp may have no intervals.
    windows = [w for w in (_count(s.get("tcp-window-size")) for s in interval_streams or streams) if w]
    if udp:
        for field, key in (("packets_sent", "sent"), ("packets_lost", "lost")):
            count, where = _udp_count(summary, streams, key)
            if count is not None:
                data[field] = count
                paths[field] = f"{p}result.summary.{where}"
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
        socket_buffer_bytes=_count(result.get("tcp-window-size")),
        socket_buffer_asked_bytes=_count(result.get("requested-tcp-window-size")),
        jitter_ms=jitter,
        reverse=run.reversed or None,
    )
    return RecordSource({k: v for k, v in data.items() if v is not None}, paths)


def _udp_count(summary: Mapping[str, Any], streams: list[Mapping[str, Any]], key: str) -> tuple[int | None, str]:
    """A UDP run's packets ``sent`` or ``lost`` (pScheduler's throughput result schema, ``throughput-data``) and where
    it was read: the run's summary, else the sum of its streams when every stream reports it.

    The iperf3 parser writes them from iperf3's ``packets``/``lost_packets``, nuttcp's from its ``drop/pkt``; iperf2's
    ``sent`` is its client's writes, one datagram each, and iperf2 has no ``lost`` (its client never sees the loss).
    """
    count = _count(summary.get(key))
    if count is not None:
        return count, f"summary.{key}"
    per_stream = [_count(s.get(key)) for s in streams]
    if per_stream and None not in per_stream:
        return sum(per_stream), f"streams[].{key}"
    return None, f"summary.{key}"


def _iperf3_mss(diags: Any) -> int | None:
    """The MSS iperf3 printed in its JSON (``start.tcp_mss_default``), found in the run's diagnostics."""
    if not isinstance(diags, str):
        return None
    found = re.findall(r'"tcp_mss(?:_default)?"\s*:\s*(\d+)', diags)
    positive = [int(v) for v in found if 0 < int(v) <= 65535]
    return positive[0] if positive else None


def _histogram(histogram: Any, bucket_ms: float = DEFAULT_BUCKET_MS) -> tuple[float, float, float, float] | None:
    """(min, median, max, jitter) in ms of a pScheduler ``histogram-latency`` ``{"delay / bucket width": count}``;
    None when empty or unreadable.

    The latency tools (owping, twping, powstream) write each delay divided by the spec's ``bucket-width`` (seconds,
    0.001 unless the task says otherwise), rounded to two decimals: a key times the width in ms is the delay.
    """
    if not isinstance(histogram, Mapping):
        return None
    bins: list[tuple[float, int]] = []
    for key, count in histogram.items():
        try:
            value = round_ms(float(key) * bucket_ms)
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


_LATENCY_COUNTS = ("packets-sent", "packets-lost", "packets-received", "packets-duplicated", "packets-reordered")
_RTT_COUNTS = ("sent", "lost", "received", "duplicates", "reorders")


def _packet_counts(run: PsRun, common: dict[str, Any], keys: tuple[str, ...]) -> tuple[dict[str, Any], dict[str, str]]:
    """An ``owamp`` record's packet counts from the result's ``keys`` (sent, lost, received, duplicated, reordered),
    lost as sent - received when the run does not say; (the record's data so far, the paths they come from)."""
    sent_key, lost_key, received_key, duplicates_key, reordered_key = keys
    result = run.result
    sent, lost, received = (_count(result.get(key)) for key in (sent_key, lost_key, received_key))
    if lost is None and sent is not None and received is not None:
        lost = sent - received
    data = {
        **common, "type": "owamp", "tool": run.tool, "packets_sent": sent, "packets_lost": lost,
        "duplicates": _count(result.get(duplicates_key)), "reordered": _count(result.get(reordered_key)),
    }
    fields = ("packets_sent", "packets_lost", "duplicates", "reordered")
    keys_used = (sent_key, lost_key, duplicates_key, reordered_key)
    return data, {field: f"{run.prefix}result.{key}" for field, key in zip(fields, keys_used, strict=True)}


def _latency(run: PsRun, common: dict[str, Any]) -> RecordSource:
    p = run.prefix
    result = run.result
    data, paths = _packet_counts(run, common, _LATENCY_COUNTS)
    sent, lost = data["packets_sent"], data["packets_lost"]
    for field in ("delay_min_ms", "delay_median_ms", "delay_max_ms", "jitter_ms"):
        paths[field] = f"{p}result.histogram-latency"
    paths["clock_error_ms"] = f"{p}result.max-clock-error"
    data["clock_error_ms"] = _num(result.get("max-clock-error"))
    data["packet_interval_s"] = _num(run.spec.get("packet-interval")) or None
    bucket_s = _num(run.spec.get("bucket-width"))
    bucket_ms = bucket_s * MS_PER_S if bucket_s and 0 < bucket_s < 1 else DEFAULT_BUCKET_MS
    delays = _histogram(result.get("histogram-latency"), bucket_ms)
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
    return round(seconds * MS_PER_S, 6) if seconds is not None else None


def _rtt(run: PsRun, common: dict[str, Any]) -> RecordSource:
    p = run.prefix
    result = run.result
    data, paths = _packet_counts(run, common, _RTT_COUNTS)
    sent, lost = data["packets_sent"], data["packets_lost"]
    trip_s = (iso_duration_s(t.get("rtt")) for t in _list(result.get("roundtrips")) if isinstance(t, Mapping))
    trips = [_ms(s) for s in trip_s if s is not None]
    low, mean, high = (iso_duration_s(result.get(k)) for k in ("min", "mean", "max"))
    paths["delay_min_ms"] = f"{p}result.min"
    paths["delay_median_ms"] = f"{p}result.roundtrips" if trips else f"{p}result.mean"
    paths["delay_max_ms"] = f"{p}result.max"
    data["packet_interval_s"] = _num(run.spec.get("interval")) or iso_duration_s(run.spec.get("interval")) or None
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
            "rtt_ms": round(rtt * MS_PER_S, 3) if rtt is not None else None,
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
