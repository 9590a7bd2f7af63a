"""TWAMP-light sender and reflector (RFC 5357 Appendix I, unauthenticated test packets).

Three layers, each testable alone:

* wire format, pure: :class:`SenderPacket` (RFC 5357 §4.1.2) and :class:`ReflectorPacket`
  (§4.2.1) with their ``encode_*``/``decode_*`` functions, the RFC 4656 §4.1.2 error estimate
  (:class:`ErrorEstimate`) and 64-bit NTP timestamps (:func:`ntp_from_unix_ns`, exact to 2^-32 s);
* statistics, pure: :func:`compute_stats` turns the packets sent and the reflections received
  into per-direction figures, :func:`stats_to_records` into two ``owamp`` records
  (docs/scenario-format.md#measurement-records, ``tool: "twamp-light"``);
* I/O, asyncio + socket only: :class:`Reflector` (served by :func:`serve_reflector`) and
  :func:`run_session`.

Timestamps: T1 sender transmit, T2 reflector receive, T3 reflector transmit, T4 sender receive.
Forward (sender -> reflector) one-way delay is T2 - T1, reverse is T4 - T3: both include the
offset between the two clocks (with opposite signs), so a negative one-way delay is how an
unsynchronised pair shows (CLOCK_UNSYNC); their sum, the RTT (T4 - T1) - (T3 - T2), does not.

Loss per direction needs the reflector's own sequence number: it counts the packets it
reflected *to this sender*, so a gap in it is a reflection lost on the way back (reverse loss),
and a sender packet that is neither reflected back nor accounted for by such a gap never
reached the reflector (forward loss). Two limits follow, inherent to TWAMP-light:

* losses after the last reflection that came back cannot be placed (there is no later
  reflector sequence number to reveal a gap): they count as forward loss;
* a reflector that *copies* the sender's sequence number (RFC 8972 "stateless" mode) makes
  every loss look like reverse loss. This module's reflector counts per sender.

"Stateless" for :class:`Reflector` means no TWAMP-Control session: the only state is a
counter per sender address and port, forgotten after :data:`REFLECTOR_IDLE_TIMEOUT_S` of
silence and bounded in number (an LRU), so a new session from a new ephemeral port starts
at sequence number 0 and spoofed sources cannot grow memory.

Jitter (``jitter_ms``) is the mean absolute IPDV (RFC 3393, RFC 5481 §1.1) between packets
consecutive in that direction's stream (sender sequence forward, reflector sequence reverse)
that both arrived. IPDV is insensitive to a constant clock offset, unlike the delays. Note
that owping/twping records carry P95 - P50 of the delay (PDV) in the same field instead.

Reordering is RFC 4737 §3 (Type-P-Reordered with NextExp): a packet is reordered when its
sequence number is lower than one already received; duplicates are not counted again.
"""

from __future__ import annotations

import asyncio
import math
import os
import socket
import struct
import sys
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from fractions import Fraction
from typing import Any, Final

from collectors.owamp import NTP_FRACTION, NTP_UNIX_OFFSET_S
from collectors.runner import utc_time

__all__ = [
    "DEFAULT_PADDING_BYTES",
    "REFLECTOR_IDLE_TIMEOUT_S",
    "REFLECTOR_MAX_SENDERS",
    "REFLECTOR_HEADER_BYTES",
    "SENDER_HEADER_BYTES",
    "SEND_TTL",
    "TOOL",
    "TWAMP_TEST_PORT",
    "UNSYNCED_ERROR",
    "DirectionStats",
    "ErrorEstimate",
    "PacketError",
    "ReflectedPacket",
    "Reflector",
    "ReflectorPacket",
    "SenderPacket",
    "SentPacket",
    "TtlDatagramProtocol",
    "TwampStats",
    "compute_stats",
    "decode_reflector_packet",
    "decode_sender_packet",
    "encode_reflector_packet",
    "encode_sender_packet",
    "ntp_diff",
    "ntp_from_unix_ns",
    "ntp_now",
    "ntp_to_unix_ns",
    "ntp_units_to_ms",
    "open_udp_endpoint",
    "ptp_to_ntp",
    "reflect_packet",
    "run_session",
    "serve_reflector",
    "stats_to_records",
]

TOOL: Final = "twamp-light"
TWAMP_TEST_PORT: Final = 862  # RFC 8545: well-known TWAMP-Test receiver port
SEND_TTL: Final = 255  # RFC 5357 §4.1.2 / §4.2.1: both ends send with TTL 255, so 255 - TTL = hops
REFLECTOR_TRUNCATION_BYTES: Final = 27  # §4.2.1: the reflector's header is 27 octets longer
DEFAULT_PADDING_BYTES: Final = REFLECTOR_TRUNCATION_BYTES  # symmetric sizes (twping's default too)

REFLECTOR_IDLE_TIMEOUT_S: Final = 60.0
"""A sender silent this long is forgotten: its next packet starts at reflector sequence 0."""
REFLECTOR_MAX_SENDERS: Final = 4096
"""Senders remembered at once; the least recently heard is forgotten first."""

_SENDER_HEADER = struct.Struct("!IQH")  # seq, timestamp, error estimate
_REFLECTOR_HEADER = struct.Struct("!IQHHQIQHHB")  # seq, T3, err, MBZ, T2, sender seq, T1, sender err, MBZ, TTL
SENDER_HEADER_BYTES: Final = _SENDER_HEADER.size  # 14
REFLECTOR_HEADER_BYTES: Final = _REFLECTOR_HEADER.size  # 41
_MAX_UDP_PAYLOAD_BYTES: Final = 65507  # IPv4: 65535 - 20 (IP) - 8 (UDP)

_U32: Final = 2**32
_U64: Final = 2**64
_NS_PER_S: Final = 10**9
_NTP_UNIX_OFFSET_NS: Final = NTP_UNIX_OFFSET_S * _NS_PER_S
# Era 0 ends 2036-02-07T06:28:16Z. Timestamps whose seconds field has the top bit clear are read
# as era 1 (RFC 4330 §3 convention): the representable span is 1968-01-20 .. 2104-02-26.
_NTP_PIVOT_SECONDS: Final = 2**31
_UNIX_NS_MIN: Final = (_NTP_PIVOT_SECONDS * _NS_PER_S) - _NTP_UNIX_OFFSET_NS
_UNIX_NS_END: Final = _UNIX_NS_MIN + _U32 * _NS_PER_S

# The owamp record schema (collectors/records.py) bounds delays to one hour.
_MAX_RECORD_MS: Final = 3.6e6

# Linux values (linux/in.h); Python's socket module does not export IP_RECVTTL.
_IP_RECVTTL: Final = getattr(socket, "IP_RECVTTL", 12 if sys.platform.startswith("linux") else None)
_IP_TTL_CMSG: Final = socket.IP_TTL
_IPV6_RECVHOPLIMIT: Final = getattr(socket, "IPV6_RECVHOPLIMIT", None)
_IPV6_HOPLIMIT: Final = getattr(socket, "IPV6_HOPLIMIT", None)
_CMSG_BYTES: Final = socket.CMSG_SPACE(struct.calcsize("i")) * 2
_MAX_READS_PER_WAKEUP: Final = 64  # let other callbacks (the sender's schedule) run under a flood


class PacketError(ValueError):
    """Bytes that are not a TWAMP-Test packet of the expected kind."""


# --- NTP timestamps ----------------------------------------------------------------------------


def ntp_from_unix_ns(unix_ns: int) -> int:
    """64-bit NTP timestamp (RFC 5905 / RFC 4656 §4.1.2) nearest to a Unix time in nanoseconds.

    The result is within 2^-33 s of the exact value, so ``ntp_to_unix_ns`` recovers ``unix_ns``.
    Times after 2036-02-07 wrap into NTP era 1.
    """
    if not _UNIX_NS_MIN <= unix_ns < _UNIX_NS_END:
        raise ValueError(f"{unix_ns} ns is outside the NTP timestamps this module reads (1968-2104)")
    return (((unix_ns + _NTP_UNIX_OFFSET_NS) * NTP_FRACTION + _NS_PER_S // 2) // _NS_PER_S) % _U64


def ntp_to_unix_ns(ntp: int) -> int:
    """Unix time in nanoseconds (rounded to nearest) of a 64-bit NTP timestamp."""
    if not 0 <= ntp < _U64:
        raise ValueError(f"{ntp} is not a 64-bit NTP timestamp")
    if ntp >> 32 < _NTP_PIVOT_SECONDS:
        ntp += _U64  # era 1
    return (ntp * _NS_PER_S + NTP_FRACTION // 2) // NTP_FRACTION - _NTP_UNIX_OFFSET_NS


def ntp_now() -> int:
    """The current wall-clock time as a 64-bit NTP timestamp."""
    return ntp_from_unix_ns(time.time_ns())


def ntp_diff(later: int, earlier: int) -> int:
    """Signed difference of two NTP timestamps in units of 2^-32 s, across an era boundary too."""
    diff = (later - earlier) % _U64
    return diff - _U64 if diff >= _U64 // 2 else diff


def ntp_units_to_ms(units: int) -> float:
    """Milliseconds in ``units`` of 2^-32 s (correctly rounded: int / int true division)."""
    return units * 1000 / NTP_FRACTION


def ptp_to_ntp(ptp: int) -> int:
    """NTP timestamp of an RFC 8186 PTPv2 truncated timestamp (32-bit Unix seconds, 32-bit ns)."""
    seconds, nanoseconds = divmod(ptp, _U32)
    return ntp_from_unix_ns(seconds * _NS_PER_S + nanoseconds)


# --- error estimate ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ErrorEstimate:
    """RFC 4656 §4.1.2 error estimate: ``S|Z|scale(6)|multiplier(8)``, error = multiplier * 2^(scale-32) s.

    ``synchronized`` is the S bit (the clock is synchronised to UTC from an external source).
    ``ptp`` is the Z bit, which RFC 8186 reuses in TWAMP: the timestamps of that end are in
    PTPv2 truncated format instead of NTP. A multiplier of 0 is invalid (RFC 4656); it is kept
    as decoded and read as "error unknown".
    """

    synchronized: bool
    scale: int
    multiplier: int
    ptp: bool = False

    def __post_init__(self) -> None:
        if not 0 <= self.scale < 64 or not 0 <= self.multiplier < 256:
            raise ValueError(f"scale {self.scale} (0..63) or multiplier {self.multiplier} (0..255) out of range")

    @classmethod
    def from_wire(cls, value: int) -> ErrorEstimate:
        """Decode the 16-bit field."""
        return cls(
            synchronized=bool(value & 0x8000),
            ptp=bool(value & 0x4000),
            scale=(value >> 8) & 0x3F,
            multiplier=value & 0xFF,
        )

    @classmethod
    def from_seconds(cls, error_s: float, *, synchronized: bool = True) -> ErrorEstimate:
        """The smallest encodable error not below ``error_s`` (an error estimate never understates).

        The smallest scale that fits is used, so the multiplier is >= 128 whenever the scale is
        above 0 and the rounding adds at most 1/128 (0.8 %). 0 s becomes the finest step, 2^-32 s.
        """
        if not math.isfinite(error_s) or error_s < 0:
            raise ValueError(f"error estimate must be a finite number of seconds >= 0, got {error_s}")
        units = Fraction(error_s) * NTP_FRACTION
        for scale in range(64):
            multiplier = math.ceil(units / 2**scale)
            if multiplier <= 255:
                return cls(synchronized=synchronized, scale=scale, multiplier=max(1, multiplier))
        return cls(synchronized=synchronized, scale=63, multiplier=255)

    def to_wire(self) -> int:
        """Encode as the 16-bit field."""
        return (self.synchronized << 15) | (self.ptp << 14) | (self.scale << 8) | self.multiplier

    @property
    def valid(self) -> bool:
        """False for the invalid multiplier 0."""
        return self.multiplier != 0

    @property
    def seconds(self) -> float:
        """The error bound in seconds."""
        return (self.multiplier << self.scale) / NTP_FRACTION


UNSYNCED_ERROR: Final = ErrorEstimate(synchronized=False, scale=0, multiplier=1)
"""What a host that knows nothing of its clock sends: S bit clear (error estimate not meaningful)."""


# --- packets -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class SenderPacket:
    """RFC 5357 §4.1.2 unauthenticated Session-Sender test packet (header 14 octets + padding)."""

    seq: int
    timestamp: int  # T1, NTP
    error_estimate: ErrorEstimate
    padding: bytes = b""


@dataclass(frozen=True)
class ReflectorPacket:
    """RFC 5357 §4.2.1 unauthenticated Session-Reflector test packet (header 41 octets + padding)."""

    seq: int  # the reflector's own count of packets reflected to this sender
    timestamp: int  # T3: reflector transmit time
    error_estimate: ErrorEstimate  # the reflector's
    receive_timestamp: int  # T2
    sender_seq: int
    sender_timestamp: int  # T1, copied
    sender_error_estimate: ErrorEstimate  # copied
    sender_ttl: int  # TTL / hop limit the sender's packet arrived with; 0 when the reflector could not read it
    padding: bytes = b""


def encode_sender_packet(packet: SenderPacket) -> bytes:
    """Wire bytes of a sender packet."""
    try:
        header = _SENDER_HEADER.pack(packet.seq, packet.timestamp, packet.error_estimate.to_wire())
    except struct.error as exc:
        raise ValueError(f"sender packet field out of range: {exc}") from None
    return header + packet.padding


def decode_sender_packet(data: bytes) -> SenderPacket:
    """A sender packet from its wire bytes (everything after the header is padding)."""
    if len(data) < SENDER_HEADER_BYTES:
        raise PacketError(f"{len(data)} bytes: a TWAMP-Test sender packet has at least {SENDER_HEADER_BYTES}")
    seq, timestamp, error = _SENDER_HEADER.unpack_from(data)
    return SenderPacket(seq, timestamp, ErrorEstimate.from_wire(error), bytes(data[SENDER_HEADER_BYTES:]))


def encode_reflector_packet(packet: ReflectorPacket) -> bytes:
    """Wire bytes of a reflector packet (MBZ fields zero)."""
    try:
        header = _REFLECTOR_HEADER.pack(
            packet.seq,
            packet.timestamp,
            packet.error_estimate.to_wire(),
            0,
            packet.receive_timestamp,
            packet.sender_seq,
            packet.sender_timestamp,
            packet.sender_error_estimate.to_wire(),
            0,
            packet.sender_ttl,
        )
    except struct.error as exc:
        raise ValueError(f"reflector packet field out of range: {exc}") from None
    return header + packet.padding


def decode_reflector_packet(data: bytes) -> ReflectorPacket:
    """A reflector packet from its wire bytes. Non-zero MBZ octets are ignored (be liberal)."""
    if len(data) < REFLECTOR_HEADER_BYTES:
        raise PacketError(f"{len(data)} bytes: a TWAMP-Test reflector packet has at least {REFLECTOR_HEADER_BYTES}")
    seq, t3, error, _mbz, t2, sender_seq, t1, sender_error, _mbz2, ttl = _REFLECTOR_HEADER.unpack_from(data)
    return ReflectorPacket(
        seq=seq,
        timestamp=t3,
        error_estimate=ErrorEstimate.from_wire(error),
        receive_timestamp=t2,
        sender_seq=sender_seq,
        sender_timestamp=t1,
        sender_error_estimate=ErrorEstimate.from_wire(sender_error),
        sender_ttl=ttl,
        padding=bytes(data[REFLECTOR_HEADER_BYTES:]),
    )


def reflect_packet(
    request: SenderPacket,
    *,
    seq: int,
    receive_timestamp: int,
    send_timestamp: int,
    error_estimate: ErrorEstimate,
    ttl: int | None,
) -> ReflectorPacket:
    """The reflection of ``request``: copies its sequence number, timestamp, error estimate and TTL.

    The padding is the received one shortened by 27 octets (§4.2.1), so the reply has the size
    of the request whenever the sender padded by at least 27 octets.
    """
    keep = max(0, len(request.padding) - REFLECTOR_TRUNCATION_BYTES)
    return ReflectorPacket(
        seq=seq,
        timestamp=send_timestamp,
        error_estimate=error_estimate,
        receive_timestamp=receive_timestamp,
        sender_seq=request.seq,
        sender_timestamp=request.timestamp,
        sender_error_estimate=request.error_estimate,
        sender_ttl=ttl if ttl is not None and 0 <= ttl <= 255 else 0,
        padding=request.padding[:keep],
    )


# --- statistics (pure) -------------------------------------------------------------------------


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


@dataclass(frozen=True)
class DirectionStats:
    """One direction of a session. Delays and jitter in ms, None without samples.

    ``jitter_ms`` is the mean absolute IPDV of consecutive packets (see the module docstring).
    ``ttl_min``/``ttl_max`` are the TTLs the packets arrived with (None: not readable).
    """

    packets_sent: int
    packets_lost: int
    duplicates: int
    reordered: int
    delay_min_ms: float | None = None
    delay_median_ms: float | None = None
    delay_max_ms: float | None = None
    jitter_ms: float | None = None
    ttl_min: int | None = None
    ttl_max: int | None = None
    packet_size_bytes: int | None = None

    @property
    def packets_received(self) -> int:
        """Distinct packets that arrived."""
        return self.packets_sent - self.packets_lost


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


def _nearest_rank(sorted_values: Sequence[int], fraction: float) -> int:
    # Same definition as the owamp collector's, so both tools' medians compare.
    return sorted_values[max(1, math.ceil(fraction * len(sorted_values))) - 1]


def _summary_ms(units: Iterable[int]) -> tuple[float | None, float | None, float | None]:
    values = sorted(units)
    if not values:
        return None, None, None
    return ntp_units_to_ms(values[0]), ntp_units_to_ms(_nearest_rank(values, 0.5)), ntp_units_to_ms(values[-1])


def _mean_abs_ipdv_ms(delay_by_seq: dict[int, int]) -> float | None:
    variations = [abs(delay_by_seq[s + 1] - d) for s, d in delay_by_seq.items() if s + 1 in delay_by_seq]
    if not variations:
        return None
    return float(Fraction(sum(variations), len(variations)) * 1000 / NTP_FRACTION)


def _ttl_range(ttls: Iterable[int | None]) -> tuple[int | None, int | None]:
    known = [ttl for ttl in ttls if ttl]  # 0 / None: the receiving end could not read it
    return (min(known), max(known)) if known else (None, None)


def _reflector_times(packet: ReflectorPacket) -> tuple[int, int]:
    """(T2, T3) as NTP timestamps, converting an RFC 8186 PTP-format reflector."""
    if packet.error_estimate.ptp:
        return ptp_to_ntp(packet.receive_timestamp), ptp_to_ntp(packet.timestamp)
    return packet.receive_timestamp, packet.timestamp


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
    by_reflector_seq: dict[int, ReflectedPacket] = {}
    reverse_duplicates = reverse_reordered = 0
    highest = -1
    for reflection in matched:
        seq = reflection.packet.seq
        if seq in by_reflector_seq:
            reverse_duplicates += 1
            continue
        by_reflector_seq[seq] = reflection
        if seq < highest:
            reverse_reordered += 1
        else:
            highest = seq

    # Forward stream: sender sequence numbers in the order the reflector got them.
    by_sender_seq: dict[int, ReflectedPacket] = {}
    forward_duplicates = forward_reordered = 0
    highest = -1
    for seq in sorted(by_reflector_seq):
        reflection = by_reflector_seq[seq]
        sender_seq = reflection.packet.sender_seq
        if sender_seq in by_sender_seq:
            forward_duplicates += 1
            continue
        by_sender_seq[sender_seq] = reflection
        if sender_seq < highest:
            forward_reordered += 1
        else:
            highest = sender_seq

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
    forward_ttl = _ttl_range(r.packet.sender_ttl for r in by_sender_seq.values())
    reverse_ttl = _ttl_range(r.ttl for r in by_reflector_seq.values())
    fwd_min, fwd_median, fwd_max = _summary_ms(forward_delay.values())
    rev_min, rev_median, rev_max = _summary_ms(reverse_delay.values())
    rtt_min, rtt_median, rtt_max = _summary_ms(rtts.values())
    forward = DirectionStats(
        packets_sent=len(sent_by_seq),
        packets_lost=forward_lost,
        duplicates=forward_duplicates,
        reordered=forward_reordered,
        delay_min_ms=fwd_min,
        delay_median_ms=fwd_median,
        delay_max_ms=fwd_max,
        jitter_ms=_mean_abs_ipdv_ms(forward_delay),
        ttl_min=forward_ttl[0],
        ttl_max=forward_ttl[1],
        packet_size_bytes=max(sizes) if sizes else None,
    )
    reverse = DirectionStats(
        packets_sent=reflected,
        packets_lost=reverse_lost,
        duplicates=reverse_duplicates,
        reordered=reverse_reordered,
        delay_min_ms=rev_min,
        delay_median_ms=rev_median,
        delay_max_ms=rev_max,
        jitter_ms=_mean_abs_ipdv_ms(reverse_delay),
        ttl_min=reverse_ttl[0],
        ttl_max=reverse_ttl[1],
        packet_size_bytes=(
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
        rtt_min_ms=rtt_min,
        rtt_median_ms=rtt_median,
        rtt_max_ms=rtt_max,
        processing_min_ms=ntp_units_to_ms(min(processing)) if processing else None,
        processing_max_ms=ntp_units_to_ms(max(processing)) if processing else None,
        clock_synced=clock_synced,
        clock_error_ms=clock_error_ms,
        unmatched=len(received) - len(matched),
    )


def _round_ms(value: float | None) -> float | None:
    # 1 ns, as the owamp collector does: finer than any error estimate a real clock reports.
    return None if value is None else round(value, 6)


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
    record: dict[str, Any] = {
        "type": "owamp",
        "time": time,
        "src": src,
        "dst": dst,
        "packets_sent": direction.packets_sent,
        "packets_lost": direction.packets_lost,
        "duplicates": direction.duplicates,
        "reordered": direction.reordered,
        "delay_min_ms": _round_ms(direction.delay_min_ms),
        "delay_median_ms": _round_ms(direction.delay_median_ms),
        "delay_max_ms": _round_ms(direction.delay_max_ms),
        "jitter_ms": _round_ms(direction.jitter_ms),
        "clock_error_ms": clock_error_ms,  # not rounded: 2 x 2^-32 s is 4.7e-7 ms
        "tool": TOOL,
    }
    delays = [record[k] for k in ("delay_min_ms", "delay_max_ms") if record[k] is not None]
    if any(abs(d) > _MAX_RECORD_MS for d in delays):
        # Only clocks hours apart produce this; the schema bounds delays to an hour.
        worst = max(delays, key=abs)
        for key in ("delay_min_ms", "delay_median_ms", "delay_max_ms", "jitter_ms"):
            record[key] = None
        record["error"] = f"one-way delay of {worst:.0f} ms: the two clocks disagree by hours; delays omitted"
    if record["jitter_ms"] is not None and record["jitter_ms"] > _MAX_RECORD_MS:
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
    if clock_error_ms is not None and clock_error_ms > _MAX_RECORD_MS:
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


# --- UDP transport with TTL ----------------------------------------------------------------------


class TtlDatagramProtocol(asyncio.DatagramProtocol):
    """A datagram protocol that also wants the TTL / hop limit each datagram arrived with."""

    def datagram_received_with_ttl(self, data: bytes, addr: Any, ttl: int | None) -> None:
        """Called instead of ``datagram_received`` by :func:`open_udp_endpoint` transports."""
        self.datagram_received(data, addr)


def _ttl_from_ancdata(ancdata: list[tuple[int, int, bytes]]) -> int | None:
    for level, kind, data in ancdata:
        if (level, kind) in ((socket.IPPROTO_IP, _IP_TTL_CMSG), (socket.IPPROTO_IPV6, _IPV6_HOPLIMIT)) and data:
            return data[0] if len(data) < 4 else struct.unpack("i", data[:4])[0]
    return None


class _UdpTransport(asyncio.DatagramTransport):
    """Selector-loop datagram transport reading with recvmsg, to see the received TTL.

    asyncio's own transport uses recvfrom and drops ancillary data. Sends never block or
    buffer: a datagram the kernel will not take now is reported and dropped, like on the wire.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, sock: socket.socket, protocol: asyncio.DatagramProtocol,
                 connected: bool) -> None:
        peer = sock.getpeername() if connected else None
        super().__init__(extra={"socket": sock, "sockname": sock.getsockname(), "peername": peer})
        self._loop = loop
        self._sock = sock
        self._protocol = protocol
        self._connected = connected
        self._closing = False
        loop.add_reader(sock.fileno(), self._read_ready)
        protocol.connection_made(self)

    def _read_ready(self) -> None:
        for _ in range(_MAX_READS_PER_WAKEUP):
            if self._closing:
                return
            try:
                data, ancdata, _flags, addr = self._sock.recvmsg(_MAX_UDP_PAYLOAD_BYTES + 1, _CMSG_BYTES)
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:  # ICMP errors on a connected socket surface here
                self._protocol.error_received(exc)
                continue
            ttl = _ttl_from_ancdata(ancdata)
            if isinstance(self._protocol, TtlDatagramProtocol):
                self._protocol.datagram_received_with_ttl(data, addr, ttl)
            else:
                self._protocol.datagram_received(data, addr)

    def sendto(self, data: Any, addr: Any = None) -> None:
        if self._closing:
            return
        try:
            if self._connected and addr is None:
                self._sock.send(data)
            else:
                self._sock.sendto(data, addr)
        except OSError as exc:
            self._protocol.error_received(exc)

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        if self._closing:
            return
        self._closing = True
        self._loop.remove_reader(self._sock.fileno())
        self._sock.close()
        self._loop.call_soon(self._protocol.connection_lost, None)

    def abort(self) -> None:
        self.close()

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self._protocol

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self._protocol = protocol  # type: ignore[assignment]

    def get_write_buffer_size(self) -> int:
        return 0


def _configure_ttl(sock: socket.socket, family: int) -> None:
    """Send with TTL 255 and ask for the received TTL; best effort (unknown TTLs are 0 on the wire)."""
    try:
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_UNICAST_HOPS, SEND_TTL)
            if _IPV6_RECVHOPLIMIT is not None:
                sock.setsockopt(socket.IPPROTO_IPV6, _IPV6_RECVHOPLIMIT, 1)
        else:
            sock.setsockopt(socket.IPPROTO_IP, socket.IP_TTL, SEND_TTL)
            if _IP_RECVTTL is not None:
                sock.setsockopt(socket.IPPROTO_IP, _IP_RECVTTL, 1)
    except OSError:
        pass  # an exotic stack: measure without hop counts rather than not at all


async def open_udp_endpoint(
    protocol: asyncio.DatagramProtocol,
    *,
    local: tuple[str, int] | None = None,
    remote: tuple[str, int] | None = None,
) -> asyncio.DatagramTransport:
    """A UDP socket bound to ``local`` and/or connected to ``remote``, sending with TTL 255.

    On selector event loops the transport reports each datagram's TTL to a
    :class:`TtlDatagramProtocol`; elsewhere (no ``add_reader``) it falls back to asyncio's
    transport and the TTL is unknown. Raises OSError when the address does not resolve or bind.
    """
    loop = asyncio.get_running_loop()
    if remote is not None:
        infos = await loop.getaddrinfo(remote[0], remote[1], type=socket.SOCK_DGRAM)
    elif local is not None:
        infos = await loop.getaddrinfo(local[0], local[1], type=socket.SOCK_DGRAM, flags=socket.AI_PASSIVE)
    else:
        raise ValueError("open_udp_endpoint needs a local or a remote address")
    family, kind, proto, _name, sockaddr = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setblocking(False)
        _configure_ttl(sock, family)
        if local is not None:
            sock.bind(sockaddr if remote is None else (local[0], local[1]))
        if remote is not None:
            sock.connect(sockaddr)  # UDP: no traffic; filters sources and reports ICMP errors
        try:
            return _UdpTransport(loop, sock, protocol, connected=remote is not None)
        except NotImplementedError:  # e.g. Windows proactor loop: no add_reader
            transport, _ = await loop.create_datagram_endpoint(lambda: protocol, sock=sock)
            return transport
    except BaseException:
        sock.close()
        raise


# --- reflector ---------------------------------------------------------------------------------


class Reflector(TtlDatagramProtocol):
    """TWAMP-light Session-Reflector: answers every sender packet at once (RFC 5357 §4.2).

    Keeps no session, only a reflector sequence number per sender address and port
    (see the module docstring). ``now_fn`` gives NTP timestamps, ``error_estimate`` is this
    host's clock error; ``clock`` (monotonic seconds) only ages the per-sender counters.
    Malformed datagrams get no answer.
    """

    def __init__(
        self,
        *,
        now_fn: Callable[[], int] = ntp_now,
        error_estimate: ErrorEstimate = UNSYNCED_ERROR,
        idle_timeout_s: float = REFLECTOR_IDLE_TIMEOUT_S,
        max_senders: int = REFLECTOR_MAX_SENDERS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.now_fn = now_fn
        self.error_estimate = error_estimate
        self.idle_timeout_s = idle_timeout_s
        self.max_senders = max_senders
        self._clock = clock
        self._senders: OrderedDict[Any, tuple[int, float]] = OrderedDict()  # addr -> (next seq, last heard)
        self.transport: asyncio.DatagramTransport | None = None
        self.reflected = 0
        self.malformed = 0
        self.socket_errors = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None

    def error_received(self, exc: Exception) -> None:
        self.socket_errors += 1  # a sender that went away (ICMP unreachable): nothing to do

    def datagram_received(self, data: bytes, addr: Any) -> None:
        self.datagram_received_with_ttl(data, addr, None)

    def datagram_received_with_ttl(self, data: bytes, addr: Any, ttl: int | None) -> None:
        reply = self.reflect(data, addr, ttl)
        if reply is not None and self.transport is not None:
            self.transport.sendto(reply, addr)

    def next_seq(self, addr: Any) -> int:
        """Take the reflector sequence number for the next packet from ``addr``."""
        now = self._clock()
        entry = self._senders.pop(addr, None)
        seq = 0 if entry is None or now - entry[1] > self.idle_timeout_s else entry[0]
        self._senders[addr] = ((seq + 1) % _U32, now)
        while len(self._senders) > self.max_senders:
            self._senders.popitem(last=False)
        return seq

    def reflect(
        self, data: bytes, addr: Any, ttl: int | None = None, *, received_at: int | None = None
    ) -> bytes | None:
        """The reply to one datagram (None if it is not a sender packet); advances ``addr``'s count."""
        t2 = self.now_fn() if received_at is None else received_at
        try:
            request = decode_sender_packet(data)
        except PacketError:
            self.malformed += 1
            return None
        seq = self.next_seq(addr)
        self.reflected += 1
        reply = reflect_packet(
            request,
            seq=seq,
            receive_timestamp=t2,
            send_timestamp=self.now_fn(),
            error_estimate=self.error_estimate,
            ttl=ttl,
        )
        return encode_reflector_packet(reply)


async def serve_reflector(
    host: str, port: int, protocol: asyncio.DatagramProtocol | None = None
) -> asyncio.DatagramTransport:
    """Serve ``protocol`` (a new :class:`Reflector` by default) on ``host``:``port`` (0: a free port).

    Bind a multi-homed host to the address senders use: replies leave from the bound address,
    and senders accept replies only from the address they sent to. Close the returned
    transport to stop; ``transport.get_extra_info("sockname")`` gives the port.
    """
    return await open_udp_endpoint(protocol if protocol is not None else Reflector(), local=(host, port))


# --- sender ------------------------------------------------------------------------------------


class _SenderProtocol(TtlDatagramProtocol):
    def __init__(self, now_fn: Callable[[], int]) -> None:
        self.now_fn = now_fn
        self.received: list[ReflectedPacket] = []
        self.malformed = 0
        self.socket_errors = 0
        self.socket_error: str | None = None

    def datagram_received(self, data: bytes, addr: Any) -> None:
        self.datagram_received_with_ttl(data, addr, None)

    def datagram_received_with_ttl(self, data: bytes, addr: Any, ttl: int | None) -> None:
        t4 = self.now_fn()
        try:
            packet = decode_reflector_packet(data)
        except PacketError:
            self.malformed += 1
            return
        self.received.append(ReflectedPacket(packet=packet, receive_timestamp=t4, ttl=ttl))

    def error_received(self, exc: Exception) -> None:
        self.socket_errors += 1
        if self.socket_error is None:
            self.socket_error = str(exc) or type(exc).__name__


async def run_session(
    target_host: str,
    target_port: int,
    *,
    packets: int = 100,
    interval_s: float = 0.1,
    timeout_s: float = 2.0,
    padding_bytes: int = DEFAULT_PADDING_BYTES,
    now_fn: Callable[[], int] = ntp_now,
    clock_error_estimate: ErrorEstimate = UNSYNCED_ERROR,
) -> TwampStats:
    """Send ``packets`` test packets ``interval_s`` apart to a TWAMP-light reflector and measure.

    Packets leave on a fixed schedule (no drift: packet i at start + i * interval_s). Replies
    are collected until ``timeout_s`` after the last packet left, so the session lasts
    (packets - 1) * interval_s + timeout_s, and a packet counts as lost when no reply came
    within at least ``timeout_s``. ``now_fn`` gives the T1/T4 NTP timestamps;
    ``clock_error_estimate`` is this host's clock error, sent in every packet (leave it
    unsynchronised unless NTP says otherwise). The padding is random (RFC 4656 §4.1.2), 27
    octets by default so that the replies have the size of the requests.

    Raises ValueError for impossible arguments and OSError when the target does not resolve
    or no socket can be opened; socket errors during the session (ICMP port unreachable) are
    counted in the result, which is never partial: the socket is closed on every path.
    """
    if not 1 <= packets <= _U32:
        raise ValueError(f"packets must be 1..2^32, got {packets}")
    if not (math.isfinite(interval_s) and interval_s >= 0 and math.isfinite(timeout_s) and timeout_s > 0):
        raise ValueError(f"interval_s must be >= 0 and timeout_s > 0, got {interval_s} and {timeout_s}")
    if not 0 <= padding_bytes <= _MAX_UDP_PAYLOAD_BYTES - SENDER_HEADER_BYTES:
        raise ValueError(f"padding_bytes must be 0..{_MAX_UDP_PAYLOAD_BYTES - SENDER_HEADER_BYTES}")
    loop = asyncio.get_running_loop()
    receiver = _SenderProtocol(now_fn)
    transport = await open_udp_endpoint(receiver, remote=(target_host, target_port))
    padding = os.urandom(padding_bytes)
    sent: list[SentPacket] = []
    try:
        start = loop.time()
        for seq in range(packets):
            wait_s = start + seq * interval_s - loop.time()
            if wait_s > 0:
                await asyncio.sleep(wait_s)
            t1 = now_fn()
            data = encode_sender_packet(SenderPacket(seq, t1, clock_error_estimate, padding))
            transport.sendto(data)
            sent.append(SentPacket(seq=seq, timestamp=t1, size_bytes=len(data)))
        await asyncio.sleep(timeout_s)
    finally:
        transport.close()
    stats = compute_stats(sent, receiver.received)
    return replace(
        stats,
        packet_interval_s=interval_s if interval_s > 0 else None,
        malformed=receiver.malformed,
        socket_errors=receiver.socket_errors,
        socket_error=receiver.socket_error,
    )
