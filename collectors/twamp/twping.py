"""Parsers of ``twping`` output (TWAMP, OWAMP 5.2.3), all pure: the default text report, ``-M`` and ``-R``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from collectors.delay import DelaySummary, round_ms, summary_fields
from collectors.ntp import NTP_FRACTION
from collectors.owamp import common


@dataclass(frozen=True)
class DelayStats(DelaySummary):
    """One kind of delay of a twping session (round trip, send or reflect half) and its error estimate, ms."""

    error_ms: float | None = None


@dataclass(frozen=True, kw_only=True)
class TwampSession(common.SessionReport):
    """A twping (TWAMP) session: round trip plus its send and reflect halves.

    TWAMP cannot tell in which direction a packet was lost, so there is no
    per-direction loss: this is kept apart from :class:`OwampSession`.
    """

    packets_sent: int
    packets_lost: int
    send_duplicates: int | None = None
    reflect_duplicates: int | None = None
    round_trip: DelayStats = field(default_factory=DelayStats)
    send: DelayStats = field(default_factory=DelayStats)
    reflect: DelayStats = field(default_factory=DelayStats)
    processing_min_ms: float | None = None
    processing_max_ms: float | None = None
    clocks_offset: bool = False
    send_hops_min: int | None = None
    send_hops_max: int | None = None
    reflect_hops_min: int | None = None
    reflect_hops_max: int | None = None


def _hop_fields(send: tuple[int | None, int | None], reflect: tuple[int | None, int | None]) -> dict[str, int | None]:
    """A session's hop-count fields from the (min, max) hops of its send and reflect halves."""
    return {
        "send_hops_min": send[0],
        "send_hops_max": send[1],
        "reflect_hops_min": reflect[0],
        "reflect_hops_max": reflect[1],
    }


def _printed_stats(block: common.TextBlock, kind: str, jitter_kind: str) -> DelayStats:
    delay = block.delays.get(kind)
    return DelayStats(
        **(common.printed_delays(delay) if delay else {}),
        jitter_ms=block.jitter_ms.get(jitter_kind),
        error_ms=common.printed_error_ms(delay) if delay else None,
    )


def parse_twamp_summary(text: str) -> list[TwampSession]:
    """Sessions of a ``twping`` default text report."""
    sessions: list[TwampSession] = []
    for header, lines, offset_warning in common.split_text_sessions(text):
        if header["tool"] != "twping":
            continue
        block = common.read_text_block(lines, common.TW_COUNTS)
        if block.counts is None:
            continue
        values: dict[str, Any] = {}
        if block.delays:
            # the last delay line printed says whether the clocks were synchronised
            values["clock_synced"] = not list(block.delays.values())[-1]["unsync"]
        if proc := block.processing:
            values["processing_min_ms"] = common.to_ms(proc["min"], proc["unit"])
            values["processing_max_ms"] = common.to_ms(proc["max"], proc["unit"])
        send_hops = block.hops.get("send", (None, None))
        reflect_hops = block.hops.get("reflect", (None, None))
        sessions.append(
            TwampSession(
                output_format="summary",
                packets_sent=int(block.counts["sent"]),
                packets_lost=int(block.counts["lost"]),
                send_duplicates=int(block.counts["send_dups"]),
                reflect_duplicates=int(block.counts["reflect_dups"]),
                round_trip=_printed_stats(block, "round-trip time", "two-way"),
                send=_printed_stats(block, "send time", "send"),
                reflect=_printed_stats(block, "reflect time", "reflect"),
                clocks_offset=offset_warning,
                **_hop_fields(send_hops, reflect_hops),
                sid=block.sid,
                from_host=header["from_host"],
                to_host=header["to_host"],
                percentiles_ms=block.percentiles_ms,
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
            return DelayStats(**common.machine_delays(keys, suffix), error_ms=error_ms if synced else None)

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
                **_hop_fields(send_hops, reflect_hops),
                sid=keys.get("SID"),
                from_host=keys.get("FROM_HOST"),
                to_host=keys.get("TO_HOST"),
            )
        )
    return sessions


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
    synced = all(p.clocks_synced for p in packets)

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
        round_trip=DelayStats(
            **summary_fields(rtts), error_ms=None if fwd_error is None or back_error is None else fwd_error + back_error
        ),
        send=DelayStats(**summary_fields(fwd_delays), error_ms=fwd_error),
        reflect=DelayStats(**summary_fields(back_delays), error_ms=back_error),
        processing_min_ms=min(processing) if processing else None,
        processing_max_ms=max(processing) if processing else None,
        clock_synced=synced,
        clocks_offset=any(d < 0 for d in fwd_delays + back_delays),
        **_hop_fields(send_hops, back_hops),
    )
