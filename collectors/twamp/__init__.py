"""TWAMP-light sender and reflector (RFC 5357 Appendix I, unauthenticated test packets).

Three layers, each testable alone, and the parsers of the twping tool:

* :mod:`~collectors.twamp.wire`, pure: :class:`SenderPacket` (RFC 5357 §4.1.2) and :class:`ReflectorPacket`
  (§4.2.1) with their ``encode_*``/``decode_*`` functions and the RFC 4656 §4.1.2 error estimate
  (:class:`ErrorEstimate`); 64-bit NTP timestamps are collectors/ntp.py (exact to 2^-32 s);
* :mod:`~collectors.twamp.stats`, pure: :func:`compute_stats` turns the packets sent and the reflections
  received into per-direction figures, :func:`stats_to_records` into two ``owamp`` records
  (docs/scenario-format.md#measurement-records, ``tool: "twamp-light"``);
* :mod:`~collectors.twamp.transport`, asyncio + socket only: :class:`Reflector` (served by
  :func:`serve_reflector`) and :func:`run_session`;
* :mod:`~collectors.twamp.twping`, pure: the text, ``-M`` and ``-R`` reports of ``twping``.

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

Jitter (``jitter_ms``) is P95 - P50 of the one-way delays of that direction (collectors/delay.py), the
figure owping and twping report, so that every ``owamp`` record means the same by it.

Reordering is RFC 4737 §3 (Type-P-Reordered with NextExp): a packet is reordered when its
sequence number is lower than one already received; duplicates are not counted again.
"""

from __future__ import annotations

from collectors.ntp import ntp_diff, ntp_from_unix_ns, ntp_now, ntp_to_unix_ns, ntp_units_to_ms, ptp_to_ntp
from collectors.twamp.stats import (
    DirectionStats,
    ReflectedPacket,
    SentPacket,
    TwampStats,
    compute_stats,
    stats_to_records,
)
from collectors.twamp.transport import Reflector, TtlDatagramProtocol, open_udp_endpoint, run_session, serve_reflector
from collectors.twamp.twping import DelayStats, TwampSession, parse_twamp_machine, parse_twamp_raw, parse_twamp_summary
from collectors.twamp.wire import (
    DEFAULT_PADDING_BYTES,
    REFLECTOR_HEADER_BYTES,
    REFLECTOR_IDLE_TIMEOUT_S,
    REFLECTOR_MAX_SENDERS,
    REFLECTOR_TRUNCATION_BYTES,
    SEND_TTL,
    SENDER_HEADER_BYTES,
    TOOL,
    TWAMP_TEST_PORT,
    UNSYNCED_ERROR,
    ErrorEstimate,
    PacketError,
    ReflectorPacket,
    SenderPacket,
    decode_reflector_packet,
    decode_sender_packet,
    encode_reflector_packet,
    encode_sender_packet,
    reflect_packet,
)

__all__ = [
    "DEFAULT_PADDING_BYTES",
    "REFLECTOR_HEADER_BYTES",
    "REFLECTOR_IDLE_TIMEOUT_S",
    "REFLECTOR_MAX_SENDERS",
    "REFLECTOR_TRUNCATION_BYTES",
    "SENDER_HEADER_BYTES",
    "SEND_TTL",
    "TOOL",
    "TWAMP_TEST_PORT",
    "UNSYNCED_ERROR",
    "DelayStats",
    "DirectionStats",
    "ErrorEstimate",
    "PacketError",
    "ReflectedPacket",
    "Reflector",
    "ReflectorPacket",
    "SenderPacket",
    "SentPacket",
    "TtlDatagramProtocol",
    "TwampSession",
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
    "parse_twamp_machine",
    "parse_twamp_raw",
    "parse_twamp_summary",
    "ptp_to_ntp",
    "reflect_packet",
    "run_session",
    "serve_reflector",
    "stats_to_records",
]
