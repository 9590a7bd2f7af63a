"""TWAMP-light statistics, pure: per-direction loss, duplicates, reordering, delays and jitter of one session
from the packets sent and the reflections received, and the two ``owamp`` records they make."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from collectors.delay import OneWayStats, summary_fields
from collectors.ntp import ntp_diff, ntp_units_to_ms, ptp_to_ntp
from collectors.runner import record_head, utc_time
from collectors.twamp.wire import MAX_RECORD_MS, REFLECTOR_HEADER_BYTES, TOOL, ReflectorPacket


@dataclass(frozen=True)
class SentPacket:
    """A packet the sender transmitted: its sequence number and T1."""

    seq: int
    timestamp: int  # T1, NTP
    size_bytes: int | None = None  # UDP payload


@dataclass(frozen=True)
class ReflectedPacket:
    """A reflection received by the sender: the decoded packet, T4 and the TTL it arrived with."""

    packet: ReflectorPacket
    receive_timestamp: int  # T4, NTP
    ttl: int | None = None


@dataclass(frozen=True, kw_only=True)
class DirectionStats(OneWayStats):
    """One direction of a session; ``jitter_ms`` is P95 - P50 of the one-way delays, as owping's.

    ``ttl_min``/``ttl_max`` are the TTLs the packets arrived with; ``packet_size_bytes`` the UDP payload.
    """

    packet_size_bytes: int | None = None


@dataclass(frozen=True)
class TwampStats:
    """Result of a TWAMP-light session: both directions, the round trip, the clocks.

    ``clock_error_ms`` is the largest, over the packets, sum of the sender's and the
    reflector's error estimates (what bounds a one-way delay); ``clock_synced`` is False when
    either end cleared its S bit on any packet or sent an invalid estimate (then the figure
    means nothing and records carry null). ``unmatched`` counts reflections answering no packet
    of this session (ignored). The fields after ``unmatched`` are filled by :func:`run_session`.
    """

    packets_sent: int
    packets_returned: int  # distinct sender packets whose reflection came back
    forward: DirectionStats
    reverse: DirectionStats
    rtt_min_ms: float | None = None
    rtt_median_ms: float | None = None
    rtt_max_ms: float | None = None
    processing_min_ms: float | None = None  # T3 - T2 at the reflector
    processing_max_ms: float | None = None
    clock_synced: bool | None = None
    clock_error_ms: float | None = None
    unmatched: int = 0
    packet_interval_s: float | None = None
    malformed: int = 0  # datagrams that were not reflector packets
    socket_errors: int = 0  # e.g. ICMP port unreachable reported on the socket
    socket_error: str | None = None  # the first of them

    @property
    def packets_lost(self) -> int:
        """Round-trip loss: packets whose reflection never came back."""
        return self.packets_sent - self.packets_returned


def _direction_stats(
    sent: int,
    lost: int,
    duplicates: int,
    reordered: int,
    delays: Iterable[int],
    *,
    ttl: tuple[int | None, int | None],
    size_bytes: int | None,
) -> DirectionStats:
    """One direction's figures from its counts and its one-way delays (NTP units)."""
    return DirectionStats(
        packets_sent=sent,
        packets_lost=lost,
        duplicates=duplicates,
        reordered=reordered,
        **summary_fields(delays, ntp_units_to_ms),
        ttl_min=ttl[0],
        ttl_max=ttl[1],
        packet_size_bytes=size_bytes,
    )


def _ttl_range(ttls: Iterable[int | None]) -> tuple[int | None, int | None]:
    known = [ttl for ttl in ttls if ttl]  # 0 / None: the receiving end could not read it
    return (min(known), max(known)) if known else (None, None)


def _reflector_times(packet: ReflectorPacket) -> tuple[int, int]:
    """(T2, T3) as NTP timestamps, converting an RFC 8186 PTP-format reflector."""
    if packet.error_estimate.ptp:
        return ptp_to_ntp(packet.receive_timestamp), ptp_to_ntp(packet.timestamp)
    return packet.receive_timestamp, packet.timestamp


def _arrivals(
    arrivals: Iterable[tuple[int, ReflectedPacket]],
) -> tuple[dict[int, ReflectedPacket], int, int]:
    """(sequence number, packet) in arrival order -> the first arrival of each number, how many arrivals were
    duplicates and how many were reordered (1-reordering: after a higher number)."""
    first: dict[int, ReflectedPacket] = {}
    duplicates = reordered = 0
    highest = -1
    for seq, packet in arrivals:
        if seq in first:
            duplicates += 1
            continue
        first[seq] = packet
        if seq < highest:
            reordered += 1
        else:
            highest = seq
    return first, duplicates, reordered


def compute_stats(sent: Sequence[SentPacket], received: Sequence[ReflectedPacket]) -> TwampStats:
    """Per-direction loss, duplicates, reordering, delays and jitter of one session.

    ``received`` is in arrival order at the sender (reverse reordering is read from it);
    the reflector's sequence numbers give its arrival order (forward reordering). A reflection
    counts only if its sender sequence number and timestamp match a packet in ``sent``.
    See the module docstring for how loss is split between the directions.
    """
    sent_by_seq = {packet.seq: packet for packet in sent}
    if len(sent_by_seq) != len(sent):
        raise ValueError("sent packets must have distinct sequence numbers")
    matched = [
        r
        for r in received
        if (s := sent_by_seq.get(r.packet.sender_seq)) is not None and s.timestamp == r.packet.sender_timestamp
    ]

    # Reverse stream: reflector sequence numbers in the order they reached the sender.
    by_reflector_seq, reverse_duplicates, reverse_reordered = _arrivals((r.packet.seq, r) for r in matched)
    # Forward stream: sender sequence numbers in the order the reflector got them.
    by_sender_seq, forward_duplicates, forward_reordered = _arrivals(
        (by_reflector_seq[seq].packet.sender_seq, by_reflector_seq[seq]) for seq in sorted(by_reflector_seq)
    )

    reflected = max(by_reflector_seq) + 1 if by_reflector_seq else 0
    reverse_lost = reflected - len(by_reflector_seq)
    # Each reflector sequence gap is taken to be a distinct sender packet that did arrive.
    forward_lost = max(0, len(sent_by_seq) - len(by_sender_seq) - reverse_lost)

    forward_delay: dict[int, int] = {}
    for sender_seq, reflection in by_sender_seq.items():
        t2, _t3 = _reflector_times(reflection.packet)
        forward_delay[sender_seq] = ntp_diff(t2, reflection.packet.sender_timestamp)
    reverse_delay: dict[int, int] = {}
    processing: list[int] = []
    for seq, reflection in by_reflector_seq.items():
        t2, t3 = _reflector_times(reflection.packet)
        reverse_delay[seq] = ntp_diff(reflection.receive_timestamp, t3)
        processing.append(ntp_diff(t3, t2))
    rtts: dict[int, int] = {}
    for reflection in matched:  # the first reflection of each sender packet to come back
        p = reflection.packet
        if p.sender_seq not in rtts:
            t2, t3 = _reflector_times(p)
            rtts[p.sender_seq] = ntp_diff(reflection.receive_timestamp, p.sender_timestamp) - ntp_diff(t3, t2)

    estimates = [(r.packet.sender_error_estimate, r.packet.error_estimate) for r in matched]
    clock_synced = all(e.synchronized and e.valid for pair in estimates for e in pair) if estimates else None
    clock_error_ms = max((a.seconds + b.seconds) * 1000 for a, b in estimates) if estimates else None

    sizes = [p.size_bytes for p in sent if p.size_bytes]
    rtt = summary_fields(rtts.values(), ntp_units_to_ms)
    forward = _direction_stats(
        len(sent_by_seq),
        forward_lost,
        forward_duplicates,
        forward_reordered,
        forward_delay.values(),
        ttl=_ttl_range(r.packet.sender_ttl for r in by_sender_seq.values()),
        size_bytes=max(sizes) if sizes else None,
    )
    reverse = _direction_stats(
        reflected,
        reverse_lost,
        reverse_duplicates,
        reverse_reordered,
        reverse_delay.values(),
        ttl=_ttl_range(r.ttl for r in by_reflector_seq.values()),
        size_bytes=(
            max(REFLECTOR_HEADER_BYTES + len(r.packet.padding) for r in by_reflector_seq.values())
            if by_reflector_seq
            else None
        ),
    )
    return TwampStats(
        packets_sent=len(sent_by_seq),
        packets_returned=len(rtts),
        forward=forward,
        reverse=reverse,
        rtt_min_ms=rtt["delay_min_ms"],
        rtt_median_ms=rtt["delay_median_ms"],
        rtt_max_ms=rtt["delay_max_ms"],
        processing_min_ms=ntp_units_to_ms(min(processing)) if processing else None,
        processing_max_ms=ntp_units_to_ms(max(processing)) if processing else None,
        clock_synced=clock_synced,
        clock_error_ms=clock_error_ms,
        unmatched=len(received) - len(matched),
    )


def _direction_record(
    direction: DirectionStats,
    *,
    src: str,
    dst: str,
    time: datetime,
    clock_error_ms: float | None,
    packet_interval_s: float | None,
    hosts: dict[str, str | None],
    no_data_error: str | None,
) -> dict[str, Any]:
    record = record_head(
        "owamp",
        tool=TOOL,
        ends={"src": src, "dst": dst},  # the hosts, either of which may be unknown, go last
        time=time,
        **direction.rounded().figures(),
        clock_error_ms=clock_error_ms,  # not rounded: 2 x 2^-32 s is 4.7e-7 ms
    )
    delays = [record[k] for k in ("delay_min_ms", "delay_max_ms") if record[k] is not None]
    if any(abs(d) > MAX_RECORD_MS for d in delays):
        # Only clocks hours apart produce this; the schema bounds delays to an hour.
        worst = max(delays, key=abs)
        for key in ("delay_min_ms", "delay_median_ms", "delay_max_ms", "jitter_ms"):
            record[key] = None
        record["error"] = f"one-way delay of {worst:.0f} ms: the two clocks disagree by hours; delays omitted"
    if record["jitter_ms"] is not None and record["jitter_ms"] > MAX_RECORD_MS:
        record["jitter_ms"] = None
    if no_data_error is not None and direction.packets_received == 0:
        record["error"] = no_data_error
    if packet_interval_s:
        record["packet_interval_s"] = packet_interval_s
    if direction.packet_size_bytes:
        record["packet_size_bytes"] = direction.packet_size_bytes
    record.update({key: value for key, value in hosts.items() if value is not None})
    return record


def stats_to_records(
    stats: TwampStats,
    src_site: str,
    dst_site: str,
    time: datetime,
    *,
    src_host: str | None = None,
    dst_host: str | None = None,
) -> list[dict[str, Any]]:
    """``[src -> dst record, dst -> src record]``: ``owamp`` records (docs/scenario-format.md#measurement-records).

    ``src_site`` is the sender's site, ``dst_site`` the reflector's. ``clock_error_ms`` is null
    unless both clocks said they were synchronised (unknown, not small). When nothing came back,
    the reverse record has 0 packets and an ``error``; the forward record is plain 100 % loss,
    unless the socket reported an ICMP error (port unreachable): then it carries the error too.
    """
    when = utc_time(time)
    clock_error_ms = stats.clock_error_ms if stats.clock_synced else None
    if clock_error_ms is not None and clock_error_ms > MAX_RECORD_MS:
        clock_error_ms = None
    no_reply = refused = None
    if stats.packets_returned == 0:
        if stats.socket_error:
            # An ICMP error came back, so the path works and nothing listens: not PATH_DOWN.
            refused = no_reply = f"no reflected packet came back; the reflector host answered: {stats.socket_error}"
        else:
            no_reply = (
                "no reflected packet came back: reflector down, port filtered or path down "
                "(the direction of the loss is unknown)"
            )
    common = {"time": when, "clock_error_ms": clock_error_ms, "packet_interval_s": stats.packet_interval_s}
    forward = _direction_record(
        stats.forward,
        src=src_site,
        dst=dst_site,
        hosts={"src_host": src_host, "dst_host": dst_host},
        no_data_error=refused,  # otherwise all sent, all lost is data (PATH_DOWN), not an error
        **common,
    )
    reverse = _direction_record(
        stats.reverse,
        src=dst_site,
        dst=src_site,
        hosts={"src_host": dst_host, "dst_host": src_host},
        no_data_error=no_reply,
        **common,
    )
    return [forward, reverse]
