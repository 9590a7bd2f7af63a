"""TWAMP-light: wire format, NTP/error-estimate arithmetic, statistics, and a real sender and
reflector on loopback (127.0.0.1 only, free ports, every socket closed: checked by fd count)."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from fractions import Fraction
from typing import Any, TypeVar

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from collectors import ntp, twamp
from collectors.records import decode_records
from collectors.twamp import (
    ErrorEstimate,
    ReflectedPacket,
    Reflector,
    ReflectorPacket,
    SenderPacket,
    SentPacket,
)
from tests.conftest import shared_fixture

# Real tool output, public third-party data kept beside the repository (../shared/fixtures/toolout/SOURCES.md).
TOOLOUT = ("fixtures", "toolout")
NOW = datetime(2026, 3, 1, 11, 1, tzinfo=UTC)
UNIT_S = Fraction(1, 2**32)  # one NTP fraction unit
MS = 2**32 / 1000  # NTP units per millisecond (not an integer)
SYNCED_FINEST = ErrorEstimate.from_seconds(0)  # S=1, 2^-32 s: what twping reports on loopback
LINUX = sys.platform.startswith("linux")
T = TypeVar("T")


def units(ms: float) -> int:
    return round(ms * MS)


def as_ms(n_units: int | Fraction) -> float:
    return float(Fraction(n_units) * 1000 / 2**32)


# --- NTP timestamps ----------------------------------------------------------------------------

UNIX_NS = st.integers(ntp._UNIX_NS_MIN, ntp._UNIX_NS_END - 1)


def test_ntp_known_values():
    assert twamp.ntp_from_unix_ns(0) == 2_208_988_800 << 32
    assert twamp.ntp_from_unix_ns(1_500_000_000) == (2_208_988_801 << 32) + 2**31  # 1.5 s: half a second exact
    # 2036-02-07T06:28:16Z: NTP era 0 ends, the timestamp wraps to 0 and reads back as era 1
    end_of_era0_ns = int(datetime(2036, 2, 7, 6, 28, 16, tzinfo=UTC).timestamp()) * 10**9
    assert twamp.ntp_from_unix_ns(end_of_era0_ns) == 0
    assert twamp.ntp_to_unix_ns(0) == end_of_era0_ns
    before = twamp.ntp_from_unix_ns(end_of_era0_ns - 500_000_000)
    after = twamp.ntp_from_unix_ns(end_of_era0_ns + 500_000_000)
    assert before > after and twamp.ntp_diff(after, before) == 2**32  # 1 s across the boundary
    assert twamp.ntp_diff(before, after) == -(2**32)


def test_ntp_matches_owamp_reading_of_a_real_twping_timestamp():
    start = 17198335948680056210  # START_TIME of ../shared/fixtures/toolout/twping-M-1.txt
    unix_ns = twamp.ntp_to_unix_ns(start)
    assert abs(datetime.fromtimestamp(unix_ns / 1e9, UTC) - ntp.ntp_to_datetime(start)) < timedelta(microseconds=2)


@settings(max_examples=500)
@given(unix_ns=UNIX_NS)
def test_ntp_conversion_is_exact_to_half_a_unit_and_round_trips(unix_ns):
    ntp = twamp.ntp_from_unix_ns(unix_ns)
    era_ntp = ntp if ntp >> 32 >= 2**31 else ntp + 2**64
    exact_s = Fraction(unix_ns, 10**9) + 2_208_988_800
    assert abs(era_ntp * UNIT_S - exact_s) <= UNIT_S / 2
    assert twamp.ntp_to_unix_ns(ntp) == unix_ns  # 2^-32 s is finer than 1 ns


@given(a=UNIX_NS, delta_ns=st.integers(-(2**31) * 10**9 + 1, 2**31 * 10**9 - 1))
def test_ntp_diff_is_the_exact_signed_interval_up_to_68_years(a, delta_ns):
    b = a + delta_ns
    assume(ntp._UNIX_NS_MIN <= b < ntp._UNIX_NS_END)
    diff = twamp.ntp_diff(twamp.ntp_from_unix_ns(a), twamp.ntp_from_unix_ns(b))
    assert abs(diff * UNIT_S - Fraction(a - b, 10**9)) <= UNIT_S


def test_ntp_out_of_range_is_refused():
    with pytest.raises(ValueError):
        twamp.ntp_from_unix_ns(ntp._UNIX_NS_END)
    with pytest.raises(ValueError):
        twamp.ntp_to_unix_ns(2**64)


def test_ptp_timestamp_converts_to_the_same_instant():
    ptp = (1_772_362_860 << 32) | 250_000_000  # 2026-03-01T11:01:00.25Z as PTPv2 truncated
    assert twamp.ptp_to_ntp(ptp) == twamp.ntp_from_unix_ns(1_772_362_860_250_000_000)


# --- error estimate ------------------------------------------------------------------------------


def test_error_estimate_every_16_bit_value_round_trips():
    assert all(ErrorEstimate.from_wire(v).to_wire() == v for v in range(2**16))


def test_error_estimate_known_encodings():
    # twping on loopback: "2.32831e-10" s = multiplier 1, scale 0, S set
    assert SYNCED_FINEST == ErrorEstimate(synchronized=True, scale=0, multiplier=1)
    assert SYNCED_FINEST.to_wire() == 0x8001
    assert ErrorEstimate.from_seconds(2.0**-32).to_wire() == 0x8001
    assert ErrorEstimate.from_seconds(2.32831e-10).to_wire() == 0x8002  # twping's rounded print is above 2^-32
    assert SYNCED_FINEST.seconds == 2.0**-32
    # 0.5 ms = 2147483.648 units: scale 13 would need multiplier 263 > 255, so scale 14, ceil(131.07) = 132
    half_ms = ErrorEstimate.from_seconds(0.0005)
    assert (half_ms.scale, half_ms.multiplier) == (14, 132)
    assert half_ms.to_wire() == 0x8E84
    assert ErrorEstimate.from_seconds(1e-3, synchronized=False).to_wire() & 0x8000 == 0
    assert ErrorEstimate.from_wire(0x4001).ptp and not ErrorEstimate.from_wire(0x8001).ptp  # Z bit (RFC 8186)
    assert not ErrorEstimate.from_wire(0x8000).valid  # multiplier 0 is invalid (RFC 4656)
    assert ErrorEstimate.from_seconds(1e300) == ErrorEstimate(synchronized=True, scale=63, multiplier=255)


@given(error_s=st.floats(0, 1e6, allow_nan=False))
def test_error_estimate_never_understates_and_overstates_by_at_most_1_128th(error_s):
    encoded = ErrorEstimate.from_seconds(error_s)
    assert Fraction(encoded.seconds) >= Fraction(error_s)
    assert Fraction(encoded.seconds) <= Fraction(error_s) * Fraction(129, 128) + UNIT_S


@pytest.mark.parametrize("bad", [-1e-9, float("nan"), float("inf")])
def test_error_estimate_refuses_impossible_errors(bad):
    with pytest.raises(ValueError):
        ErrorEstimate.from_seconds(bad)


# --- packets -----------------------------------------------------------------------------------

ESTIMATES = st.integers(0, 2**16 - 1).map(ErrorEstimate.from_wire)
U32 = st.integers(0, 2**32 - 1)
U64 = st.integers(0, 2**64 - 1)
PADDING = st.binary(max_size=300)


@given(seq=U32, ts=U64, err=ESTIMATES, padding=PADDING)
def test_sender_packet_round_trips(seq, ts, err, padding):
    packet = SenderPacket(seq, ts, err, padding)
    data = twamp.encode_sender_packet(packet)
    assert len(data) == 14 + len(padding)
    assert twamp.decode_sender_packet(data) == packet


@given(seq=U32, t3=U64, err=ESTIMATES, t2=U64, sseq=U32, t1=U64, serr=ESTIMATES, ttl=st.integers(0, 255),
       padding=PADDING)
def test_reflector_packet_round_trips(seq, t3, err, t2, sseq, t1, serr, ttl, padding):
    packet = ReflectorPacket(seq, t3, err, t2, sseq, t1, serr, ttl, padding)
    data = twamp.encode_reflector_packet(packet)
    assert len(data) == 41 + len(padding)
    assert twamp.decode_reflector_packet(data) == packet


@given(data=st.binary(min_size=41, max_size=200))
def test_any_reflector_bytes_decode_and_re_encode_with_mbz_zeroed(data):
    mbz_zeroed = data[:14] + b"\0\0" + data[16:38] + b"\0\0" + data[40:]
    assert twamp.encode_reflector_packet(twamp.decode_reflector_packet(data)) == mbz_zeroed


def test_sender_packet_fixed_bytes():
    packet = SenderPacket(seq=1, timestamp=0xE9B1_4A2C_8000_0000, error_estimate=SYNCED_FINEST, padding=b"\xaa" * 3)
    expected = bytes.fromhex(
        "00000001"  # sequence number
        "e9b14a2c80000000"  # timestamp
        "8001"  # error estimate: S=1, Z=0, scale 0, multiplier 1
        "aaaaaa"  # padding
    )
    assert twamp.encode_sender_packet(packet) == expected
    assert twamp.decode_sender_packet(expected) == packet


def test_reflector_packet_fixed_bytes_from_a_real_twping_exchange():
    # first line of ../shared/fixtures/toolout/twping-R-1.txt: T1, T2, T3 of packet 0, TTL 255
    t1, t2, t3 = 17198335970638510159, 17198335970639025555, 17198335970639115750
    packet = ReflectorPacket(
        seq=0, timestamp=t3, error_estimate=SYNCED_FINEST, receive_timestamp=t2, sender_seq=0, sender_timestamp=t1,
        sender_error_estimate=SYNCED_FINEST, sender_ttl=255, padding=b"",
    )
    expected = bytes.fromhex(
        "00000000"  # 0: sequence number (the reflector's)
        "eeacc371d1c475e6"  # 4: timestamp, T3
        "8001"  # 12: error estimate
        "0000"  # 14: MBZ
        "eeacc371d1c31593"  # 16: receive timestamp, T2
        "00000000"  # 24: sender sequence number
        "eeacc371d1bb384f"  # 28: sender timestamp, T1
        "8001"  # 36: sender error estimate
        "0000"  # 38: MBZ
        "ff"  # 40: sender TTL
    )
    assert (expected[4:12], expected[16:24], expected[28:36]) == tuple(t.to_bytes(8, "big") for t in (t3, t2, t1))
    assert twamp.encode_reflector_packet(packet) == expected


def test_short_datagrams_are_not_packets():
    with pytest.raises(twamp.PacketError):
        twamp.decode_sender_packet(b"\0" * 13)
    with pytest.raises(twamp.PacketError):
        twamp.decode_reflector_packet(b"\0" * 40)


def test_out_of_range_fields_are_refused_when_encoding():
    with pytest.raises(ValueError):
        twamp.encode_sender_packet(SenderPacket(2**32, 0, SYNCED_FINEST))
    with pytest.raises(ValueError):
        twamp.encode_reflector_packet(ReflectorPacket(0, 0, SYNCED_FINEST, 0, 0, 0, SYNCED_FINEST, 256))


@pytest.mark.parametrize(("padding_bytes", "reply_bytes"), [(0, 41), (10, 41), (27, 41), (100, 114)])
def test_reflection_copies_the_sender_fields_and_keeps_the_size(padding_bytes, reply_bytes):
    request = SenderPacket(seq=7, timestamp=123, error_estimate=ErrorEstimate.from_seconds(1e-3),
                           padding=bytes(range(padding_bytes)))
    reply = twamp.reflect_packet(request, seq=3, receive_timestamp=456, send_timestamp=789,
                                 error_estimate=SYNCED_FINEST, ttl=250)
    assert (reply.sender_seq, reply.sender_timestamp, reply.sender_error_estimate, reply.sender_ttl) == (
        7, 123, request.error_estimate, 250)
    assert (reply.seq, reply.receive_timestamp, reply.timestamp, reply.error_estimate) == (3, 456, 789, SYNCED_FINEST)
    assert len(twamp.encode_reflector_packet(reply)) == reply_bytes
    assert reply.padding == request.padding[: max(0, padding_bytes - 27)]


# --- reflector without sockets -----------------------------------------------------------------


def sender_bytes(seq: int, timestamp: int = 1) -> bytes:
    return twamp.encode_sender_packet(SenderPacket(seq, timestamp, SYNCED_FINEST, b"\0" * 27))


def reflector_seqs(reflector: Reflector, addrs: Iterable[Any]) -> list[int]:
    return [twamp.decode_reflector_packet(reflector.reflect(sender_bytes(0), addr)).seq for addr in addrs]


def test_reflector_numbers_each_sender_on_its_own():
    reflector = Reflector()
    a, b = ("192.0.2.1", 5000), ("192.0.2.1", 5001)
    assert reflector_seqs(reflector, [a, a, b, a, b, b]) == [0, 1, 0, 2, 1, 2]


def test_reflector_forgets_an_idle_sender():
    now = [0.0]
    reflector = Reflector(idle_timeout_s=60.0, clock=lambda: now[0])
    a = ("192.0.2.1", 5000)
    assert reflector_seqs(reflector, [a, a]) == [0, 1]
    now[0] = 59.0
    assert reflector_seqs(reflector, [a]) == [2]  # 59 s of silence: same session
    now[0] = 119.5
    assert reflector_seqs(reflector, [a]) == [0]  # 60.5 s: a new session


def test_reflector_remembers_a_bounded_number_of_senders():
    reflector = Reflector(max_senders=2)
    a, b, c = ("192.0.2.1", 1), ("192.0.2.2", 1), ("192.0.2.3", 1)
    # c evicts b (least recently heard), then a is still counting and b starts again
    assert reflector_seqs(reflector, [a, b, a, c, a, b]) == [0, 0, 1, 0, 2, 0]


def test_reflector_ignores_malformed_datagrams_without_using_a_sequence_number():
    reflector = Reflector()
    addr = ("192.0.2.1", 5000)
    assert reflector.reflect(b"\0" * 13, addr) is None
    assert reflector.malformed == 1
    assert reflector_seqs(reflector, [addr]) == [0]


def test_reflector_stamps_receive_and_send_times_and_copies_the_ttl():
    clock = iter([1000, 1003])
    reflector = Reflector(now_fn=lambda: next(clock), error_estimate=ErrorEstimate.from_seconds(1e-4))
    reply = twamp.decode_reflector_packet(reflector.reflect(sender_bytes(9, timestamp=900), ("h", 1), ttl=243))
    assert (reply.receive_timestamp, reply.timestamp) == (1000, 1003)
    assert (reply.sender_seq, reply.sender_timestamp, reply.sender_ttl) == (9, 900, 243)
    assert reply.error_estimate == ErrorEstimate.from_seconds(1e-4)
    unknown_ttl = twamp.decode_reflector_packet(Reflector().reflect(sender_bytes(0), ("h", 1), ttl=None))
    assert unknown_ttl.sender_ttl == 0


# --- compute_stats on scripted sessions (pure) -------------------------------------------------

T0 = twamp.ntp_from_unix_ns(1_772_362_860 * 10**9)
INTERVAL = units(10)
FWD = units(6)  # true forward delay
REV = units(7)
PROC = units(0.05)


def scripted(
    n: int,
    *,
    arrivals: Sequence[int] | None = None,
    returns: Sequence[int] | None = None,
    fwd: Sequence[int] | None = None,
    offset: int = 0,
    sender_error: ErrorEstimate = SYNCED_FINEST,
    reflector_error: ErrorEstimate = SYNCED_FINEST,
) -> tuple[list[SentPacket], list[ReflectedPacket]]:
    """A session through a scripted network.

    ``arrivals``: sender seqs in the order the reflector got them (missing: forward loss,
    repeated: forward duplicate); the reflector numbers them 0, 1, ... ``returns``: reflector
    seqs in the order the sender got them. ``offset``: how far the reflector's clock is ahead.
    """
    sent = [SentPacket(seq, T0 + seq * INTERVAL, 41) for seq in range(n)]
    arrivals = list(range(n)) if arrivals is None else arrivals
    reflections = []
    for rseq, sseq in enumerate(arrivals):
        t1 = sent[sseq].timestamp
        t2 = t1 + (FWD if fwd is None else fwd[sseq]) + offset
        t3 = t2 + PROC
        reflections.append(ReflectorPacket(rseq, t3, reflector_error, t2, sseq, t1, sender_error, 255))
    returns = list(range(len(arrivals))) if returns is None else returns
    received = [ReflectedPacket(reflections[r], reflections[r].timestamp - offset + REV, ttl=250) for r in returns]
    return sent, received


def counts(direction: twamp.DirectionStats) -> tuple[int, int, int, int]:
    return direction.packets_sent, direction.packets_lost, direction.duplicates, direction.reordered


def test_clean_session_exact_numbers():
    stats = twamp.compute_stats(*scripted(100))
    assert counts(stats.forward) == (100, 0, 0, 0)
    assert counts(stats.reverse) == (100, 0, 0, 0)
    assert (stats.packets_sent, stats.packets_returned, stats.packets_lost) == (100, 100, 0)
    assert stats.forward.delay_min_ms == stats.forward.delay_median_ms == stats.forward.delay_max_ms == as_ms(FWD)
    assert stats.reverse.delay_min_ms == stats.reverse.delay_max_ms == as_ms(REV)
    assert stats.rtt_min_ms == stats.rtt_max_ms == as_ms(FWD + REV)
    assert stats.processing_min_ms == stats.processing_max_ms == as_ms(PROC)
    assert stats.forward.jitter_ms == stats.reverse.jitter_ms == 0.0
    assert (stats.forward.ttl_min, stats.forward.ttl_max, stats.reverse.ttl_min) == (255, 255, 250)
    assert stats.forward.packet_size_bytes == stats.reverse.packet_size_bytes == 41
    assert stats.clock_synced is True
    assert stats.clock_error_ms == 2 * 2.0**-32 * 1000


def test_forward_loss_is_inferred_from_the_reflector_sequence():
    lost = {7, 27, 47, 67, 87}
    stats = twamp.compute_stats(*scripted(100, arrivals=[s for s in range(100) if s not in lost]))
    assert counts(stats.forward) == (100, 5, 0, 0)
    assert counts(stats.reverse) == (95, 0, 0, 0)
    assert stats.packets_lost == 5


def test_reverse_loss_shows_as_reflector_sequence_gaps():
    stats = twamp.compute_stats(*scripted(100, returns=[r for r in range(100) if r % 10 != 4]))
    assert counts(stats.forward) == (100, 0, 0, 0)
    assert counts(stats.reverse) == (100, 10, 0, 0)
    assert stats.packets_lost == 10


def test_loss_in_both_directions_is_split_exactly():
    arrivals = [s for s in range(100) if s not in {3, 50, 51}]  # 97 reach the reflector, numbered 0..96
    returns = [r for r in range(97) if r not in {0, 10, 20, 30}]  # the last one (96) comes back
    stats = twamp.compute_stats(*scripted(100, arrivals=arrivals, returns=returns))
    assert counts(stats.forward) == (100, 3, 0, 0)
    assert counts(stats.reverse) == (97, 4, 0, 0)


def test_losses_after_the_last_reflection_received_count_as_forward():
    # documented limit: no later reflector sequence number reveals that reflection 99 was lost
    stats = twamp.compute_stats(*scripted(100, returns=list(range(99))))
    assert counts(stats.forward) == (100, 1, 0, 0)
    assert counts(stats.reverse) == (99, 0, 0, 0)


def test_duplicates_are_counted_per_direction_and_not_as_loss():
    arrivals = [*range(50), 20, *range(50, 100), 70]  # the reflector gets 20 and 70 twice: 102 reflections
    returns = [*range(102), 5, 6, 5]  # reflections 5 and 6 reach the sender twice, 5 three times
    stats = twamp.compute_stats(*scripted(100, arrivals=arrivals, returns=returns))
    assert counts(stats.forward) == (100, 0, 2, 0)
    assert counts(stats.reverse) == (102, 0, 3, 0)
    assert stats.packets_returned == 100


def test_reordering_is_rfc4737_next_expected():
    # 0 3 1 2 4: 1 and 2 arrive after 3 (RFC 4737 counts both; "less than the previous" would count one)
    forward = twamp.compute_stats(*scripted(5, arrivals=[0, 3, 1, 2, 4]))
    assert counts(forward.forward) == (5, 0, 0, 2)
    assert forward.reverse.reordered == 0  # the reflector sent them in its own order
    backward = twamp.compute_stats(*scripted(6, returns=[0, 4, 1, 2, 3, 5]))
    assert counts(backward.reverse) == (6, 0, 0, 3)
    assert backward.forward.reordered == 0


def test_a_duplicate_is_not_also_counted_as_reordered():
    stats = twamp.compute_stats(*scripted(4, returns=[0, 1, 2, 3, 1]))
    assert counts(stats.reverse) == (4, 0, 1, 0)


def test_jitter_is_p95_minus_p50_of_the_one_way_delays_as_owping_reports_it():
    fwd = [units(6), units(8), units(7), units(11), units(6)]
    stats = twamp.compute_stats(*scripted(5, fwd=fwd))
    # sorted 6, 6, 7, 8, 11 ms: P50 (3rd of 5) 7 ms, P95 (5th of 5) 11 ms
    assert stats.forward.jitter_ms == as_ms(units(11) - units(7))
    assert stats.forward.jitter_ms == pytest.approx(4.0)
    assert stats.reverse.jitter_ms == 0.0
    # packet 2 lost on the way out: 6, 6, 8, 11 ms remain, P50 (2nd of 4) 6 ms, P95 (4th) 11 ms
    lossy = twamp.compute_stats(*scripted(5, fwd=fwd, arrivals=[0, 1, 3, 4]))
    assert lossy.forward.jitter_ms == as_ms(units(11) - units(6))
    assert lossy.forward.delay_median_ms == as_ms(units(6))  # nearest rank: the lower middle of 6, 6, 8, 11
    assert twamp.compute_stats(*scripted(1)).forward.jitter_ms == 0.0
    assert twamp.compute_stats(*scripted(3, arrivals=[])).forward.jitter_ms is None


def test_a_clock_offset_shifts_the_one_way_delays_but_not_the_rtt():
    # reflector clock 10 ms behind: forward 6 - 10 = -4 ms (CLOCK_UNSYNC evidence), reverse 7 + 10 = 17 ms
    sent, received = scripted(20, offset=-units(10))
    stats = twamp.compute_stats(sent, received)
    assert stats.forward.delay_min_ms == as_ms(FWD - units(10)) < 0
    assert stats.reverse.delay_min_ms == as_ms(REV + units(10))
    assert stats.rtt_min_ms == stats.rtt_max_ms == as_ms(FWD + REV)
    assert stats.forward.jitter_ms == 0.0  # P95 - P50 ignores a constant offset


def test_clock_error_is_the_sum_of_both_ends_and_null_in_records_when_unsynced():
    sender, reflector = ErrorEstimate.from_seconds(1e-4), ErrorEstimate.from_seconds(5e-4)
    stats = twamp.compute_stats(*scripted(3, sender_error=sender, reflector_error=reflector))
    assert stats.clock_synced is True
    assert stats.clock_error_ms == (sender.seconds + reflector.seconds) * 1000
    assert 0.6 <= stats.clock_error_ms <= 0.6 * 129 / 128
    assert {r["clock_error_ms"] for r in twamp.stats_to_records(stats, "CERN", "FZK", NOW)} == {stats.clock_error_ms}

    unsynced = ErrorEstimate.from_seconds(5e-4, synchronized=False)
    stats = twamp.compute_stats(*scripted(3, sender_error=sender, reflector_error=unsynced))
    assert stats.clock_synced is False
    assert stats.clock_error_ms is not None  # the figure is kept, but means nothing
    assert {r["clock_error_ms"] for r in twamp.stats_to_records(stats, "CERN", "FZK", NOW)} == {None}


def test_reflections_of_another_session_are_ignored():
    sent, received = scripted(3)
    stale = ReflectedPacket(
        ReflectorPacket(0, T0, SYNCED_FINEST, T0, 1, T0 - units(1000), SYNCED_FINEST, 255), T0 + 5
    )  # sender seq 1 but another T1: an old session's packet
    stats = twamp.compute_stats(sent, [stale, *received])
    assert stats.unmatched == 1
    assert counts(stats.forward) == (3, 0, 0, 0) and counts(stats.reverse) == (3, 0, 0, 0)


def test_nothing_back_means_all_lost_forward_and_nothing_known_in_reverse():
    stats = twamp.compute_stats(*scripted(10, arrivals=[]))
    assert counts(stats.forward) == (10, 10, 0, 0)
    assert counts(stats.reverse) == (0, 0, 0, 0)
    assert stats.rtt_min_ms is None and stats.forward.delay_min_ms is None and stats.clock_synced is None


def test_a_ptp_format_reflector_is_read_in_its_own_format():
    # RFC 8186: Z bit set in the reflector's error estimate, T2/T3 as (Unix seconds, ns)
    t1_ns = 1_772_362_860 * 10**9
    t1 = twamp.ntp_from_unix_ns(t1_ns)
    ptp = ErrorEstimate(synchronized=True, scale=0, multiplier=1, ptp=True)
    t2 = ((t1_ns + 3_000_000) // 10**9 << 32) | (t1_ns + 3_000_000) % 10**9
    t3 = ((t1_ns + 3_100_000) // 10**9 << 32) | (t1_ns + 3_100_000) % 10**9
    t4 = twamp.ntp_from_unix_ns(t1_ns + 7_100_000)
    reflected = ReflectedPacket(ReflectorPacket(0, t3, ptp, t2, 0, t1, SYNCED_FINEST, 255), t4)
    stats = twamp.compute_stats([SentPacket(0, t1)], [reflected])
    assert stats.forward.delay_min_ms == pytest.approx(3.0, abs=1e-6)
    assert stats.reverse.delay_min_ms == pytest.approx(4.0, abs=1e-6)
    assert stats.rtt_min_ms == pytest.approx(7.0, abs=1e-6)


def test_duplicate_sent_sequence_numbers_are_a_caller_error():
    with pytest.raises(ValueError):
        twamp.compute_stats([SentPacket(0, 1), SentPacket(0, 2)], [])


def twping_raw_packets(text: str) -> tuple[list[SentPacket], list[ReflectedPacket]]:
    """The packets of twping -R output (SSEQ STIME SS SERR SRTIME SRS SRERR STTL | RSEQ RSTIME RSS RSERR RTIME RS
    RERR RTTL), as the TWAMP-light sender would have them."""
    sent, received = [], []
    for line in text.splitlines():
        f = line.split()
        if len(f) != 16:
            continue
        t1, t2, t3, t4 = int(f[1]), int(f[4]), int(f[9]), int(f[12])
        sender_err, reflector_err = ErrorEstimate.from_seconds(float(f[3])), ErrorEstimate.from_seconds(float(f[11]))
        sent.append(SentPacket(int(f[0]), t1))
        packet = ReflectorPacket(int(f[8]), t3, reflector_err, t2, int(f[0]), t1, sender_err, int(f[7]))
        received.append(ReflectedPacket(packet, t4, int(f[15])))
    return sent, received


def test_agrees_with_the_owamp_parser_on_real_twping_raw_output():
    text = shared_fixture(*TOOLOUT, "twping-R-1.txt").read_text()
    sent, received = twping_raw_packets(text)
    ours = twamp.compute_stats(sent, received)
    theirs = twamp.parse_twamp_raw(text)
    assert (ours.packets_sent, ours.packets_lost) == (theirs.packets_sent, theirs.packets_lost) == (20, 0)
    pairs = [
        (ours.forward.delay_min_ms, theirs.send.delay_min_ms),
        (ours.forward.delay_median_ms, theirs.send.delay_median_ms),
        (ours.forward.delay_max_ms, theirs.send.delay_max_ms),
        (ours.reverse.delay_min_ms, theirs.reflect.delay_min_ms),
        (ours.reverse.delay_median_ms, theirs.reflect.delay_median_ms),
        (ours.reverse.delay_max_ms, theirs.reflect.delay_max_ms),
        (ours.rtt_min_ms, theirs.round_trip.delay_min_ms),
        (ours.rtt_median_ms, theirs.round_trip.delay_median_ms),
        (ours.rtt_max_ms, theirs.round_trip.delay_max_ms),
        (ours.processing_min_ms, theirs.processing_min_ms),
        (ours.processing_max_ms, theirs.processing_max_ms),
    ]
    assert all(mine == pytest.approx(other, abs=2e-6) for mine, other in pairs), pairs
    assert (ours.forward.ttl_min, ours.reverse.ttl_max) == (255, 255)


# --- records -----------------------------------------------------------------------------------

RECORD_KEYS = {
    "type", "time", "src", "dst", "packets_sent", "packets_lost", "duplicates", "reordered", "delay_min_ms",
    "delay_median_ms", "delay_max_ms", "jitter_ms", "clock_error_ms", "tool",
}


def test_records_one_per_direction_with_format_md_fields():
    arrivals = [s for s in range(100) if s not in {7, 27, 47, 67, 87}]
    stats = twamp.compute_stats(*scripted(100, arrivals=arrivals, returns=[*range(95), 3]))
    forward, reverse = twamp.stats_to_records(stats, "CERN", "FZK", NOW, src_host="192.0.2.10")
    assert RECORD_KEYS <= forward.keys() and RECORD_KEYS <= reverse.keys()
    assert (forward["src"], forward["dst"], reverse["src"], reverse["dst"]) == ("CERN", "FZK", "FZK", "CERN")
    assert forward["tool"] == reverse["tool"] == "twamp-light"
    assert (forward["packets_sent"], forward["packets_lost"], forward["duplicates"]) == (100, 5, 0)
    assert (reverse["packets_sent"], reverse["packets_lost"], reverse["duplicates"]) == (95, 0, 1)
    assert forward["delay_min_ms"] == round(as_ms(FWD), 6) and reverse["delay_max_ms"] == round(as_ms(REV), 6)
    assert forward["src_host"] == reverse["dst_host"] == "192.0.2.10"
    assert forward["time"] == NOW and forward["packet_size_bytes"] == 41
    records = decode_records([forward, reverse])  # the ingest schema accepts them as they are
    assert [(r.src, r.packets_lost) for r in records] == [("CERN", 5), ("FZK", 0)]


def test_records_of_an_unsynchronised_pair_keep_negative_delays():
    stats = twamp.compute_stats(*scripted(10, offset=-units(10)))
    forward, reverse = twamp.stats_to_records(stats, "CERN", "FZK", NOW)
    assert forward["delay_min_ms"] < 0 < reverse["delay_min_ms"]
    assert len(decode_records([forward, reverse])) == 2


def test_records_when_nothing_came_back():
    stats = twamp.compute_stats(*scripted(10, arrivals=[]))
    forward, reverse = twamp.stats_to_records(stats, "CERN", "FZK", NOW)
    assert (forward["packets_sent"], forward["packets_lost"], "error" in forward) == (10, 10, False)
    assert (reverse["packets_sent"], reverse["packets_lost"]) == (0, 0)
    assert "no reflected packet came back" in reverse["error"]
    refused = twamp.stats_to_records(
        twamp.TwampStats(**{**stats.__dict__, "socket_error": "[Errno 111] Connection refused"}), "CERN", "FZK", NOW
    )
    assert all("Connection refused" in r["error"] for r in refused)  # the host is up, nothing listens
    assert len(decode_records([forward, reverse, *refused])) == 4


def test_records_of_clocks_hours_apart_omit_the_delays_and_say_why():
    stats = twamp.compute_stats(*scripted(5, offset=units(2 * 3600 * 1000)))
    forward, reverse = twamp.stats_to_records(stats, "CERN", "FZK", NOW)
    assert forward["delay_min_ms"] is None and "clocks disagree" in forward["error"]
    assert reverse["delay_min_ms"] is None
    assert len(decode_records([forward, reverse])) == 2


def test_records_refuse_a_naive_time():
    with pytest.raises(ValueError):
        twamp.stats_to_records(twamp.compute_stats(*scripted(1)), "CERN", "FZK", datetime(2026, 3, 1))
