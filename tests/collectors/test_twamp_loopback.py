"""TWAMP-light on loopback: the reflector and the sender over real UDP sockets, TTLs, timeouts and ICMP errors."""

from __future__ import annotations

import asyncio
import os
import socket
import struct
import time
from collections.abc import Awaitable
from typing import Any

import pytest

from collectors import twamp
from collectors.records import decode_records
from collectors.twamp import Reflector
from tests.collectors.test_twamp import LINUX, NOW, SYNCED_FINEST, T, counts, units

# --- on loopback -------------------------------------------------------------------------------


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def run(coro: Awaitable[T]) -> T:
    """asyncio.run, and prove that every socket the coroutine opened was closed by the code itself.

    Counted inside the loop, where a forgotten transport is still referenced by the selector
    (after asyncio.run the garbage collector would close it and hide the leak), and after it.
    """

    async def checked() -> T:
        before = open_fds()
        try:
            return await coro
        finally:
            await asyncio.sleep(0)  # connection_lost callbacks
            leaked = open_fds() - before
            assert leaked == 0, f"{leaked} socket(s) or transport(s) left open"

    if not LINUX:
        return asyncio.run(coro)  # type: ignore[arg-type]
    before = open_fds()
    result = asyncio.run(checked())
    assert open_fds() == before
    return result


class ScriptedPath(twamp.TtlDatagramProtocol):
    """Test double: a Reflector behind a scripted network, keyed by the sender's sequence number
    so the counts are exact whatever the timing. ``hold_*`` delays a packet until three later
    ones have passed (reordering without timers)."""

    HOLD_FOR = 3

    def __init__(self, reflector: Reflector, *, drop_forward=(), duplicate_forward=(), hold_forward=(),
                 drop_reverse=(), duplicate_reverse=(), hold_reverse=()) -> None:
        self.reflector = reflector
        self.drop_forward, self.duplicate_forward, self.hold_forward = drop_forward, duplicate_forward, hold_forward
        self.drop_reverse, self.duplicate_reverse, self.hold_reverse = drop_reverse, duplicate_reverse, hold_reverse
        self.held_forward: list[list[Any]] = []
        self.held_reverse: list[list[Any]] = []
        self.transport: asyncio.DatagramTransport | None = None

    def connection_made(self, transport):
        self.transport = transport

    def datagram_received(self, data, addr):
        self.datagram_received_with_ttl(data, addr, None)

    def datagram_received_with_ttl(self, data, addr, ttl):
        seq = twamp.decode_sender_packet(data).seq
        if seq in self.drop_forward:
            return
        if seq in self.hold_forward:
            self.held_forward.append([self.HOLD_FOR, data, addr, ttl])
            return
        for _ in range(2 if seq in self.duplicate_forward else 1):
            self._reflect(data, addr, ttl)
        for held in self._due(self.held_forward):
            self._reflect(*held[1:])

    def _reflect(self, data, addr, ttl):
        reply = self.reflector.reflect(data, addr, ttl)
        seq = twamp.decode_reflector_packet(reply).sender_seq
        if seq in self.drop_reverse:
            return
        if seq in self.hold_reverse:
            self.held_reverse.append([self.HOLD_FOR, reply, addr])
            return
        for _ in range(2 if seq in self.duplicate_reverse else 1):
            self.transport.sendto(reply, addr)
        for held in self._due(self.held_reverse):
            self.transport.sendto(*held[1:])

    @staticmethod
    def _due(held: list[list[Any]]) -> list[list[Any]]:
        for item in held:
            item[0] -= 1
        due = [item for item in held if item[0] == 0]
        held[:] = [item for item in held if item[0] > 0]
        return due


async def session_through(protocol: asyncio.DatagramProtocol | None = None, **kwargs: Any) -> twamp.TwampStats:
    """Serve ``protocol`` (a plain Reflector by default) on a free loopback port, run one session, close."""
    transport = await twamp.serve_reflector("127.0.0.1", 0, protocol)
    try:
        port = transport.get_extra_info("sockname")[1]
        options = {"packets": 100, "interval_s": 0.002, "timeout_s": 0.5, "clock_error_estimate": SYNCED_FINEST}
        return await twamp.run_session("127.0.0.1", port, **{**options, **kwargs})
    finally:
        transport.close()
        await asyncio.sleep(0)  # let connection_lost run
        assert transport.is_closing()


def test_loopback_session_is_clean():
    reflector = Reflector(error_estimate=SYNCED_FINEST)
    started = time.monotonic()
    stats = run(session_through(reflector, packets=100, interval_s=0.005, timeout_s=0.5))
    elapsed_s = time.monotonic() - started
    assert counts(stats.forward) == (100, 0, 0, 0)
    assert counts(stats.reverse) == (100, 0, 0, 0)
    assert (stats.packets_returned, stats.unmatched, stats.malformed, stats.socket_errors) == (100, 0, 0, 0)
    assert reflector.reflected == 100
    for direction in (stats.forward, stats.reverse):
        assert 0 <= direction.delay_min_ms <= direction.delay_median_ms <= direction.delay_max_ms < 100
        assert direction.delay_median_ms < 10
    assert 0 <= stats.rtt_min_ms <= stats.rtt_max_ms < 200
    assert stats.forward.delay_min_ms + stats.reverse.delay_min_ms <= stats.rtt_max_ms
    assert stats.clock_synced is True and stats.clock_error_ms == 2 * 2.0**-32 * 1000
    assert stats.forward.packet_size_bytes == stats.reverse.packet_size_bytes == 41
    assert stats.packet_interval_s == 0.005
    assert 0.99 * 0.495 + 0.5 <= elapsed_s < 0.495 + 0.5 + 1.0  # schedule + timeout, not more
    assert len(decode_records(twamp.stats_to_records(stats, "CERN", "FZK", NOW))) == 2


@pytest.mark.skipif(not LINUX, reason="received TTLs are read with Linux IP_RECVTTL")
def test_loopback_ttl_is_sent_as_255_and_copied_back():
    stats = run(session_through(packets=5))
    assert (stats.forward.ttl_min, stats.forward.ttl_max) == (255, 255)  # copied by the reflector
    assert (stats.reverse.ttl_min, stats.reverse.ttl_max) == (255, 255)  # read by the sender


# A scripted network keyed by sequence number: what it does to one direction is counted in that direction only,
# and a round trip is lost when either of its halves is. counts: (sent, lost, duplicates, reordered).
@pytest.mark.parametrize(
    ("network", "forward", "reverse", "round_trips_lost"),
    [
        pytest.param({"drop_forward": {7, 27, 47, 67, 87}}, (100, 5, 0, 0), (95, 0, 0, 0), 5, id="forward-loss"),
        pytest.param(
            {"drop_reverse": {s for s in range(100) if s % 10 == 4}}, (100, 0, 0, 0), (100, 10, 0, 0), 10,
            id="reverse-loss",
        ),
        pytest.param(
            {"drop_forward": {3, 50, 51}, "drop_reverse": {0, 10, 20, 30}}, (100, 3, 0, 0), (97, 4, 0, 0), 7,
            id="loss-both-ways",
        ),
        pytest.param(
            {"duplicate_forward": {5, 50, 95}, "duplicate_reverse": {10, 20, 30, 40}}, (100, 0, 3, 0),
            (103, 0, 4, 0), 0, id="duplicates",
        ),
        pytest.param({"hold_forward": {10, 30, 50}}, (100, 0, 0, 3), (100, 0, 0, 0), 0, id="forward-reordering"),
        pytest.param(
            {"hold_reverse": {20, 40, 60, 80}}, (100, 0, 0, 0), (100, 0, 0, 4), 0, id="reverse-reordering"
        ),
    ],
)  # fmt: skip
def test_loopback_counts_each_direction_apart(network, forward, reverse, round_trips_lost):
    stats = run(session_through(ScriptedPath(Reflector(), **network)))
    assert counts(stats.forward) == forward
    assert counts(stats.reverse) == reverse
    assert (stats.packets_lost, stats.packets_returned) == (round_trips_lost, 100 - round_trips_lost)


def test_loopback_reflector_clock_behind_makes_forward_delay_negative():
    offset = units(10)
    reflector = Reflector(now_fn=lambda: twamp.ntp_now() - offset, error_estimate=SYNCED_FINEST)
    stats = run(session_through(reflector, packets=20))
    assert -10 < stats.forward.delay_min_ms <= stats.forward.delay_max_ms < 0
    assert 10 < stats.reverse.delay_min_ms
    assert stats.rtt_max_ms < 100  # the round trip does not see the offset
    forward, reverse = twamp.stats_to_records(stats, "CERN", "FZK", NOW)
    assert forward["delay_min_ms"] < 0 and len(decode_records([forward, reverse])) == 2


def test_loopback_two_senders_share_a_reflector():
    async def two_sessions() -> list[twamp.TwampStats]:
        transport = await twamp.serve_reflector("127.0.0.1", 0)
        try:
            port = transport.get_extra_info("sockname")[1]
            return await asyncio.gather(*(
                twamp.run_session("127.0.0.1", port, packets=50, interval_s=0.002, timeout_s=0.3) for _ in range(2)
            ))
        finally:
            transport.close()

    for stats in run(two_sessions()):  # each sender has its own reflector numbering: no phantom loss
        assert counts(stats.forward) == (50, 0, 0, 0)
        assert counts(stats.reverse) == (50, 0, 0, 0)


def test_loopback_reflector_answers_nothing_to_garbage():
    async def garbage_then_session() -> tuple[Reflector, twamp.TwampStats]:
        reflector = Reflector()
        transport = await twamp.serve_reflector("127.0.0.1", 0, reflector)
        try:
            port = transport.get_extra_info("sockname")[1]
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
                probe.settimeout(0.2)
                probe.sendto(b"\x01" * 13, ("127.0.0.1", port))
                with pytest.raises(TimeoutError):
                    await asyncio.to_thread(probe.recv, 100)
            return reflector, await twamp.run_session("127.0.0.1", port, packets=3, interval_s=0.001, timeout_s=0.2)
        finally:
            transport.close()

    reflector, stats = run(garbage_then_session())
    assert reflector.malformed == 1
    assert counts(stats.reverse) == (3, 0, 0, 0)


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_dead_port_session_is_all_lost_within_the_timeout():
    port = free_udp_port()  # bound then closed: nothing listens
    started = time.monotonic()
    stats = run(twamp.run_session("127.0.0.1", port, packets=10, interval_s=0.01, timeout_s=0.3))
    elapsed_s = time.monotonic() - started
    assert 0.09 + 0.3 <= elapsed_s < 0.09 + 0.3 + 0.5
    assert counts(stats.forward) == (10, 10, 0, 0)
    assert counts(stats.reverse) == (0, 0, 0, 0)
    assert stats.packets_returned == 0
    assert stats.socket_errors >= 1 and "refused" in stats.socket_error.lower()  # ICMP port unreachable


def test_silent_host_session_is_all_lost_within_the_timeout():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as black_hole:  # bound, never answers, no ICMP
        black_hole.bind(("127.0.0.1", 0))
        started = time.monotonic()
        stats = run(twamp.run_session("127.0.0.1", black_hole.getsockname()[1], packets=5, interval_s=0.01,
                                      timeout_s=0.25))
        elapsed_s = time.monotonic() - started
    assert 0.04 + 0.25 <= elapsed_s < 0.04 + 0.25 + 0.5
    assert counts(stats.forward) == (5, 5, 0, 0) and stats.socket_errors == 0
    forward, reverse = twamp.stats_to_records(stats, "CERN", "FZK", NOW)
    assert "error" not in forward and "path down" in reverse["error"]


def test_a_cancelled_session_closes_its_socket():
    async def cancel_midway() -> None:
        transport = await twamp.serve_reflector("127.0.0.1", 0)
        try:
            task = asyncio.create_task(
                twamp.run_session("127.0.0.1", transport.get_extra_info("sockname")[1], packets=1000, interval_s=0.01)
            )
            await asyncio.sleep(0.05)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        finally:
            transport.close()

    run(cancel_midway())  # run() fails if the sender's socket stayed open


@pytest.mark.parametrize(
    "kwargs",
    [{"packets": 0}, {"interval_s": -1.0}, {"timeout_s": 0.0}, {"timeout_s": float("nan")}, {"padding_bytes": -1}],
)
def test_impossible_session_arguments_are_refused_before_any_socket(kwargs):
    with pytest.raises(ValueError):
        run(twamp.run_session("127.0.0.1", 9, **kwargs))


def test_wire_header_sizes_match_rfc_5357():
    assert (twamp.SENDER_HEADER_BYTES, twamp.REFLECTOR_HEADER_BYTES) == (14, 41)
    assert struct.calcsize("!IQH") == 14
