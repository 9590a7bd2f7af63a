"""TWAMP-Test wire format (RFC 5357 §4.1.2, §4.2.1), pure: sender and reflector packets, the RFC 4656 §4.1.2
error estimate, and the reflection of a request."""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from fractions import Fraction
from typing import Final

from collectors.ntp import NTP_FRACTION

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
MAX_UDP_PAYLOAD_BYTES: Final = 65507  # IPv4: 65535 - 20 (IP) - 8 (UDP)

# The owamp record schema (collectors/records/) bounds delays to one hour.
MAX_RECORD_MS: Final = 3.6e6


class PacketError(ValueError):
    """Bytes that are not a TWAMP-Test packet of the expected kind."""


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


def _pack(header: struct.Struct, kind: str, *fields: int) -> bytes:
    """A packet's header; a field that does not fit is a ValueError naming the ``kind`` of packet."""
    try:
        return header.pack(*fields)
    except struct.error as exc:
        raise ValueError(f"{kind} packet field out of range: {exc}") from None


def _unpack(header: struct.Struct, kind: str, data: bytes) -> tuple[int, ...]:
    """The header fields of a ``kind`` packet's wire bytes; fewer bytes than a header is a PacketError."""
    if len(data) < header.size:
        raise PacketError(f"{len(data)} bytes: a TWAMP-Test {kind} packet has at least {header.size}")
    return header.unpack_from(data)


def encode_sender_packet(packet: SenderPacket) -> bytes:
    """Wire bytes of a sender packet."""
    header = _pack(_SENDER_HEADER, "sender", packet.seq, packet.timestamp, packet.error_estimate.to_wire())
    return header + packet.padding


def decode_sender_packet(data: bytes) -> SenderPacket:
    """A sender packet from its wire bytes (everything after the header is padding)."""
    seq, timestamp, error = _unpack(_SENDER_HEADER, "sender", data)
    return SenderPacket(seq, timestamp, ErrorEstimate.from_wire(error), bytes(data[SENDER_HEADER_BYTES:]))


def encode_reflector_packet(packet: ReflectorPacket) -> bytes:
    """Wire bytes of a reflector packet (MBZ fields zero)."""
    header = _pack(
        _REFLECTOR_HEADER,
        "reflector",
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
    return header + packet.padding


def decode_reflector_packet(data: bytes) -> ReflectorPacket:
    """A reflector packet from its wire bytes. Non-zero MBZ octets are ignored (be liberal)."""
    seq, t3, error, _mbz, t2, sender_seq, t1, sender_error, _mbz2, ttl = _unpack(_REFLECTOR_HEADER, "reflector", data)
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
