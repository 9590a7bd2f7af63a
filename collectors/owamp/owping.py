"""Parsers of owping/owstats/powstream output (OWAMP 5.2.3; older 3.x text too), all pure:

* :func:`parse_summary`: the default text report (one ``--- owping statistics from [A]:p to [B]:q ---``
  block per session);
* :func:`parse_machine`: the ``-M`` key/value report of ``owping``, ``owstats`` and powstream ``.sum``
  files (``SUMMARY 3.00`` blocks);
* :func:`parse_raw`: the ``-R`` per-packet records (statistics computed here);
* :func:`parse`: whichever of the three the text is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime
from decimal import Decimal
from typing import Any

from collectors.delay import OneWayStats, summary_fields
from collectors.ntp import ntp_to_datetime
from collectors.owamp import common


@dataclass(frozen=True, kw_only=True)
class OwampSession(OneWayStats, common.SessionReport):
    """Statistics of one one-way session (one direction).

    Delays are in milliseconds. ``clock_error_ms`` is owamp's error estimate
    and is only set when ``clock_synced`` is true; ``max_error_ms`` is the raw
    figure owamp computed either way. ``hops`` values come from the received
    TTLs (255 - TTL). ``None`` means "not reported / not computable".
    """

    clock_error_ms: float | None = None
    max_error_ms: float | None = None
    hops_min: int | None = None
    hops_max: int | None = None
    from_addr: str | None = None
    from_port: str | None = None
    to_addr: str | None = None
    to_port: str | None = None
    start_time: datetime | None = None
    end_time: datetime | None = None
    session_finished: bool | None = None
    bucket_width_ms: float | None = None
    reordering_pct: float | None = None

    @property
    def hops(self) -> int | None:
        """Hop count when every packet saw the same one."""
        if self.hops_min is not None and self.hops_min == self.hops_max:
            return self.hops_min
        return None


def _without_empty_claims(session: OwampSession) -> OwampSession:
    """An empty session (0 sent) proves nothing about clocks or reordering.

    owamp still prints "(err=0 ms)" and "no reordering" for it (see the
    perfsonar/project#836 output); those must not read as "synchronised" and
    "no reordering".
    """
    if session.packets_sent:
        return session
    return replace(session, clock_synced=None, clock_error_ms=None, reordered=None, reordering_pct=None)


def _reordered_count(pct: float, received: int) -> int:
    # owamp prints 100 * rn[0] / rnumseqno with %f (6 decimals), rnumseqno
    # being the records received: the count is recovered exactly by rounding.
    return round(pct * received / 100.0)


def _summary_block(header: re.Match[str], lines: list[str]) -> OwampSession | None:
    block = common.read_text_block(lines, common.OW_COUNTS)
    if block.counts is None:
        # owping -v prints the header once more before the per-packet lines;
        # such a block holds no statistics.
        return None
    values: dict[str, Any] = {
        "from_host": header["from_host"],
        "from_port": header["from_port"],
        "to_host": header["to_host"],
        "to_port": header["to_port"],
        "sid": block.sid,
        "jitter_ms": block.jitter_ms.get("one-way"),
    }
    if delay := block.delays.get("one-way delay"):
        values.update(common.printed_delays(delay))
        values["clock_synced"] = not delay["unsync"]
        if not delay["unsync"]:
            values["max_error_ms"] = values["clock_error_ms"] = common.printed_error_ms(delay)
    sent, lost, dups = int(block.counts["sent"]), int(block.counts["lost"]), int(block.counts["dups"])
    if block.no_reordering:
        values["reordered"], values["reordering_pct"] = 0, 0.0
    elif block.reorder_pct is not None:
        values["reordering_pct"] = block.reorder_pct
        values["reordered"] = _reordered_count(block.reorder_pct, sent - lost + dups)
    if hops := block.hops.get(""):
        values["hops_min"], values["hops_max"] = hops
        values["ttl_min"] = common.OWAMP_SEND_TTL - hops[1]
        values["ttl_max"] = common.OWAMP_SEND_TTL - hops[0]
    return OwampSession(
        output_format="summary",
        packets_sent=sent,
        packets_lost=lost,
        duplicates=dups,
        percentiles_ms=block.percentiles_ms,
        **values,
    )


def parse_summary(text: str) -> list[OwampSession]:
    """Sessions of an ``owping``/``owstats`` default text report, in printed order.

    Lines that are not part of the report (``Approximately ...``, owping's
    own error messages mixed into the output) are ignored. ``nan`` values
    (an empty session) become ``None``.
    """
    sessions: list[OwampSession] = []
    for header, lines, _offset in common.split_text_sessions(text):
        if header["tool"] != "owping":
            continue
        session = _summary_block(header, lines)
        if session is not None:
            sessions.append(_without_empty_claims(session))
    return sessions


def _clock_and_ttl(
    synced: bool, max_error_ms: float | None, ttl_min: int | None, ttl_max: int | None
) -> dict[str, Any]:
    """A session's clock and TTL fields: the error bound is the clock error only when both clocks were
    synchronised; the hops follow from the TTLs."""
    hops_min, hops_max = common.hops_from_ttl(ttl_min, ttl_max)
    return {
        "clock_synced": synced,
        "clock_error_ms": max_error_ms if synced else None,
        "max_error_ms": max_error_ms,
        "ttl_min": ttl_min,
        "ttl_max": ttl_max,
        "hops_min": hops_min,
        "hops_max": hops_max,
    }


def parse_machine(text: str) -> list[OwampSession]:
    """Sessions of an owamp ``-M`` report (one per ``SUMMARY`` block), in printed order.

    Times in ``-M`` are seconds; they are converted to milliseconds.
    ``MIN``/``MEDIAN``/``MAX``/``PDV`` are absent when every packet was lost.
    """
    sessions: list[OwampSession] = []
    for keys, tables in common.machine_blocks(text):
        if "SENT" not in keys:
            raise common.OwampParseError("owamp -M block without SENT")
        if "MIN_FWD" in keys or "DUPS_FWD" in keys:
            raise common.OwampParseError("this is twping -M output: use parse_twamp_machine")
        synced = keys.get("SYNC") == "1"
        max_error_ms = common.seconds_to_ms(keys, "MAXERR")
        ttl_min, ttl_max = common.ttl_range(keys)
        reordered = None
        for row in tables.get("NREORDERING", []):
            if len(row) >= 2 and row[0] == "1":
                reordered = int(row[1])
        sent = int(keys["SENT"])
        lost = int(keys.get("LOST", "0"))
        sessions.append(
            _without_empty_claims(
                OwampSession(
                    output_format="machine",
                    packets_sent=sent,
                    packets_lost=lost,
                    duplicates=common.int_key(keys, "DUPS"),
                    reordered=reordered,
                    **common.machine_delays(keys),
                    **_clock_and_ttl(synced, max_error_ms, ttl_min, ttl_max),
                    sid=keys.get("SID"),
                    from_host=keys.get("FROM_HOST"),
                    from_addr=keys.get("FROM_ADDR"),
                    from_port=keys.get("FROM_PORT"),
                    to_host=keys.get("TO_HOST"),
                    to_addr=keys.get("TO_ADDR"),
                    to_port=keys.get("TO_PORT"),
                    start_time=common.ntp_key(keys, "START_TIME"),
                    end_time=common.ntp_key(keys, "END_TIME"),
                    session_finished=keys.get("SESSION_FINISHED") == "1" if "SESSION_FINISHED" in keys else None,
                    bucket_width_ms=common.seconds_to_ms(keys, "BUCKET_WIDTH"),
                )
            )
        )
    return sessions


def _split_raw_sessions(packets: list[common.OneWayPacket]) -> list[list[common.OneWayPacket]]:
    """Split concatenated sessions (owping -R prints both with no separator).

    A sequence number seen again with a *different* send time starts a new
    session; with the same send time it is a duplicate of the same packet.
    """
    sessions: list[list[common.OneWayPacket]] = []
    current: list[common.OneWayPacket] = []
    send_time_by_seq: dict[int, int] = {}
    for packet in packets:
        known = send_time_by_seq.get(packet.seq)
        if known is not None and known != packet.send.ntp:
            sessions.append(current)
            current, send_time_by_seq = [], {}
        send_time_by_seq.setdefault(packet.seq, packet.send.ntp)
        current.append(packet)
    if current:
        sessions.append(current)
    return sessions


def _raw_session(packets: list[common.OneWayPacket]) -> OwampSession:
    seen: set[int] = set()
    lost_seqs: set[int] = set()
    delays: list[float] = []
    duplicates = 0
    reordered = 0
    previous_seq: int | None = None
    ttls: list[int] = []
    max_error_s = Decimal(0)
    for packet in packets:
        max_error_s = max(max_error_s, packet.send.error_s + packet.recv.error_s)
        if packet.lost:
            lost_seqs.add(packet.seq)
            continue
        # owamp's 1-reordering: a packet arriving after one with a higher
        # sequence number (stats.c, j-reordering with j = 1).
        if previous_seq is not None and packet.seq < previous_seq:
            reordered += 1
        previous_seq = packet.seq
        if packet.seq in seen:
            duplicates += 1
            continue
        seen.add(packet.seq)
        delays.append(packet.delay_ms)
        ttls.append(packet.ttl)
    synced = all(p.clocks_synced for p in packets)
    ttl_min, ttl_max = (min(ttls), max(ttls)) if ttls else (None, None)
    send_times = [p.send.ntp for p in packets]
    max_error_ms = float(max_error_s * 1000)
    return OwampSession(
        output_format="raw",
        packets_sent=len(seen | lost_seqs),
        packets_lost=len(lost_seqs - seen),
        duplicates=duplicates,
        reordered=reordered,
        **summary_fields(delays),
        **_clock_and_ttl(synced, max_error_ms, ttl_min, ttl_max),
        start_time=ntp_to_datetime(min(send_times)) if send_times else None,
        end_time=ntp_to_datetime(max(send_times)) if send_times else None,
    )


def parse_raw(text: str) -> list[OwampSession]:
    """Sessions from owamp ``-R`` records (``SEQNO STIME SS SERR RTIME RS RERR TTL``).

    Statistics are computed from the packets: exact nearest-rank median and
    P95 - P50 jitter (owamp itself uses a histogram of ``-b`` wide buckets, so
    its medians are quantised), duplicates, 1-reordering, max error estimate.
    """
    packets: list[common.OneWayPacket] = []
    for number, line in enumerate(text.splitlines(), start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) == 16:
            raise common.OwampParseError("this is twping -R output: use parse_twamp_raw")
        if len(parts) != 8 or not parts[0].isdigit():
            raise common.OwampParseError(f"line {number}: not an owamp raw record: {line.strip()!r}")
        packets.append(common.one_way_packet(parts))
    return [_raw_session(group) for group in _split_raw_sessions(packets)]


def parse(text: str) -> list[OwampSession]:
    """Sessions from any owping/owstats output format (``-M``, default text or ``-R``)."""
    if re.search(r"^SUMMARY\s", text, re.MULTILINE):
        return parse_machine(text)
    if common.HEADER.search(text) or re.search(r"^--- owping statistics", text, re.MULTILINE):
        return parse_summary(text)
    if re.search(r"^\d+ \d+ [01] \S+ \d+ [01] \S+ \d+\s*$", text, re.MULTILINE):
        return parse_raw(text)
    return []
