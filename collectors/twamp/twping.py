"""Parsers of ``twping`` output (TWAMP, OWAMP 5.2.3), all pure: the default text report, ``-M`` and ``-R``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from collectors.delay import jitter, median, round_ms
from collectors.ntp import NTP_FRACTION
from collectors.owamp import common


@dataclass(frozen=True)
class DelayStats:
    """min/median/max/jitter of one kind of delay, milliseconds."""

    min_ms: float | None = None
    median_ms: float | None = None
    max_ms: float | None = None
    jitter_ms: float | None = None
    error_ms: float | None = None


@dataclass(frozen=True)
class TwampSession:
    """A twping (TWAMP) session: round trip plus its send and reflect halves.

    TWAMP cannot tell in which direction a packet was lost, so there is no
    per-direction loss: this is kept apart from :class:`OwampSession`.
    """

    output_format: str
    packets_sent: int
    packets_lost: int
    send_duplicates: int | None = None
    reflect_duplicates: int | None = None
    round_trip: DelayStats = field(default_factory=DelayStats)
    send: DelayStats = field(default_factory=DelayStats)
    reflect: DelayStats = field(default_factory=DelayStats)
    processing_min_ms: float | None = None
    processing_max_ms: float | None = None
    clock_synced: bool | None = None
    clocks_offset: bool = False
    send_hops_min: int | None = None
    send_hops_max: int | None = None
    reflect_hops_min: int | None = None
    reflect_hops_max: int | None = None
    sid: str | None = None
    from_host: str | None = None
    to_host: str | None = None
    percentiles_ms: Mapping[float, float | None] = field(default_factory=dict)


def parse_twamp_summary(text: str) -> list[TwampSession]:
    """Sessions of a ``twping`` default text report."""
    sessions: list[TwampSession] = []
    for header, lines, offset_warning in common.split_text_sessions(text):
        if header["tool"] != "twping":
            continue
        stats: dict[str, dict[str, float | None]] = {"round-trip time": {}, "send time": {}, "reflect time": {}}
        jitter: dict[str, float | None] = {}
        hops: dict[str, tuple[int, int]] = {}
        percentiles: dict[float, float | None] = {}
        counts = None
        values: dict[str, Any] = {"sid": None, "clock_synced": None}
        in_percentiles = False
        for line in lines:
            stripped = line.strip()
            if in_percentiles:
                if match := common.PERCENTILE.match(line):
                    percentiles[float(match["pct"])] = common.to_ms(match["value"], match["unit"])
                    continue
                in_percentiles = False
            if match := common.SID.match(stripped):
                values["sid"] = match["sid"]
            elif match := common.TW_COUNTS.match(stripped):
                counts = match
            elif match := common.DELAY.match(stripped):
                unit = match["unit"]
                stats[match["kind"]] = {
                    "min_ms": common.to_ms(match["min"], unit),
                    "median_ms": common.to_ms(match["median"], unit),
                    "max_ms": common.to_ms(match["max"], unit),
                    "error_ms": common.to_ms(match["err"], match["err_unit"]) if match["err"] else None,
                }
                values["clock_synced"] = not match["unsync"]
            elif match := common.PROC.match(stripped):
                values["processing_min_ms"] = common.to_ms(match["min"], match["unit"])
                values["processing_max_ms"] = common.to_ms(match["max"], match["unit"])
            elif match := common.JITTER.match(stripped):
                jitter[match["kind"]] = common.to_ms(match["value"], match["unit"])
            elif stripped == "Percentiles:":
                in_percentiles = True
            elif match := common.HOPS_ONE.match(stripped):
                hops[(match["kind"] or "").strip()] = (int(match["hops"]), int(match["hops"]))
            elif match := common.HOPS_MANY.match(stripped):
                hops[(match["kind"] or "").strip()] = (int(match["min"]), int(match["max"]))
        if counts is None:
            continue
        send_hops = hops.get("send", (None, None))
        reflect_hops = hops.get("reflect", (None, None))
        sessions.append(
            TwampSession(
                output_format="summary",
                packets_sent=int(counts["sent"]),
                packets_lost=int(counts["lost"]),
                send_duplicates=int(counts["send_dups"]),
                reflect_duplicates=int(counts["reflect_dups"]),
                round_trip=DelayStats(**stats["round-trip time"], jitter_ms=jitter.get("two-way")),
                send=DelayStats(**stats["send time"], jitter_ms=jitter.get("send")),
                reflect=DelayStats(**stats["reflect time"], jitter_ms=jitter.get("reflect")),
                clocks_offset=offset_warning,
                send_hops_min=send_hops[0],
                send_hops_max=send_hops[1],
                reflect_hops_min=reflect_hops[0],
                reflect_hops_max=reflect_hops[1],
                from_host=header["from_host"],
                to_host=header["to_host"],
                percentiles_ms=percentiles,
                **values,
            )
        )
    return sessions


def parse_twamp_machine(text: str) -> list[TwampSession]:
    """Sessions of a ``twping -M`` report (``*_FWD``/``*_BCK``/``*common.PROC`` keys, seconds)."""
    sessions: list[TwampSession] = []
    for keys, _tables in common.machine_blocks(text):
        synced = keys.get("SYNC") == "1"

        def stats(suffix: str, error_key: str, keys: Mapping[str, str] = keys, synced: bool = synced) -> DelayStats:
            error_ms = common.seconds_to_ms(keys, error_key)
            return DelayStats(
                min_ms=common.seconds_to_ms(keys, f"MIN{suffix}"),
                median_ms=common.seconds_to_ms(keys, f"MEDIAN{suffix}"),
                max_ms=common.seconds_to_ms(keys, f"MAX{suffix}"),
                jitter_ms=common.seconds_to_ms(keys, f"PDV{suffix}"),
                error_ms=error_ms if synced else None,
            )

        send_ttl = common.ttl_range(keys, "_FWD")
        reflect_ttl = common.ttl_range(keys, "_BCK")
        send_hops = common.hops_from_ttl(*send_ttl)
        reflect_hops = common.hops_from_ttl(*reflect_ttl)
        sessions.append(
            TwampSession(
                output_format="machine",
                packets_sent=int(keys["SENT"]),
                packets_lost=int(keys.get("LOST", "0")),
                send_duplicates=common.int_key(keys, "DUPS_FWD"),
                reflect_duplicates=common.int_key(keys, "DUPS_BCK"),
                round_trip=stats("", "MAXERR"),
                send=stats("_FWD", "MAXERR_FWD"),
                reflect=stats("_BCK", "MAXERR_BCK"),
                processing_min_ms=common.seconds_to_ms(keys, "MIN_PROC"),
                processing_max_ms=common.seconds_to_ms(keys, "MAX_PROC"),
                clock_synced=synced,
                send_hops_min=send_hops[0],
                send_hops_max=send_hops[1],
                reflect_hops_min=reflect_hops[0],
                reflect_hops_max=reflect_hops[1],
                sid=keys.get("SID"),
                from_host=keys.get("FROM_HOST"),
                to_host=keys.get("TO_HOST"),
            )
        )
    return sessions


def _delay_stats(delays: list[float], error_ms: float | None) -> DelayStats:
    if not delays:
        return DelayStats(error_ms=error_ms)
    delays = sorted(delays)
    return DelayStats(
        min_ms=delays[0],
        median_ms=median(delays),
        max_ms=delays[-1],
        jitter_ms=round_ms(jitter(delays)),
        error_ms=error_ms,
    )


def parse_twamp_raw(text: str) -> TwampSession:
    """One session from ``twping -R`` (16 fields: the sent half then the reflected half).

    Fields: ``SSEQ STIME SS SERR SRTIME SRS SRERR STTL`` (sender -> reflector)
    then ``RSEQ RSTIME RSS RSERR RTIME RS RERR RTTL`` (reflector -> sender).
    Round trip = (RTIME - STIME) - (RSTIME - SRTIME), as owamp computes it.
    """
    sent: list[common.OneWayPacket] = []
    reflected: list[common.OneWayPacket] = []
    for number, line in enumerate(text.splitlines(), start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 16:
            raise common.OwampParseError(f"line {number}: not a twping raw record: {line.strip()!r}")
        sent.append(common.one_way_packet(parts[:8]))
        reflected.append(common.one_way_packet(parts[8:]))
    lost = {fwd.seq for fwd, back in zip(sent, reflected, strict=True) if fwd.lost or back.lost}
    fwd_delays, back_delays, rtts, processing = [], [], [], []
    for fwd, back in zip(sent, reflected, strict=True):
        if fwd.seq in lost:
            continue
        fwd_delays.append(fwd.delay_ms)
        back_delays.append(back.delay_ms)
        processing.append(round_ms((back.send.ntp - fwd.recv.ntp) * 1000 / NTP_FRACTION))
        rtts.append(round_ms(fwd.delay_ms + back.delay_ms))
    packets = sent + reflected
    synced = all(p.send.synced and (p.lost or p.recv.synced) for p in packets)

    def error(pairs: list[common.OneWayPacket]) -> float | None:
        return float(max((p.send.error_s + p.recv.error_s) * 1000 for p in pairs)) if pairs and synced else None

    send_ttls = [p.ttl for p in sent if p.seq not in lost]
    back_ttls = [p.ttl for p in reflected if p.seq not in lost]
    send_hops = common.hops_from_ttl(min(send_ttls), max(send_ttls)) if send_ttls else (None, None)
    back_hops = common.hops_from_ttl(min(back_ttls), max(back_ttls)) if back_ttls else (None, None)
    fwd_error, back_error = error(sent), error(reflected)
    return TwampSession(
        output_format="raw",
        packets_sent=len({p.seq for p in sent}),
        packets_lost=len(lost),
        round_trip=_delay_stats(rtts, None if fwd_error is None or back_error is None else fwd_error + back_error),
        send=_delay_stats(fwd_delays, fwd_error),
        reflect=_delay_stats(back_delays, back_error),
        processing_min_ms=min(processing) if processing else None,
        processing_max_ms=max(processing) if processing else None,
        clock_synced=synced,
        clocks_offset=any(d < 0 for d in fwd_delays + back_delays),
        send_hops_min=send_hops[0],
        send_hops_max=send_hops[1],
        reflect_hops_min=back_hops[0],
        reflect_hops_max=back_hops[1],
    )
