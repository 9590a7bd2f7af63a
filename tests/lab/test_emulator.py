"""The emulator's impairments and its router's SNMP face, without namespaces (no root needed).

Packets are fed to :class:`tests.lab.emulator.Direction` with chosen arrival times: each impairment is checked
against what it promises (the delay, the serialisation and queue limit of the rate, the share and placement of
losses, no reordering unless asked). The SNMP responder answers net-snmp's own tools on loopback.
"""

from __future__ import annotations

import shutil
import socket
import struct
import subprocess

import pytest

from tests.lab.emulator import Direction, Impairment, packet_facts
from tests.lab.snmp_agent import Responder, if_mib


def ipv4(proto: int, dst_last: int = 2, payload: int = 1000, size: int | None = None) -> bytes:
    """An IPv4 packet 10.0.0.1 -> 10.0.0.<dst_last>; TCP with ``payload`` bytes after a 20-byte header."""
    l4 = bytearray(20 if proto == 6 else 8)
    if proto == 6:
        l4[12] = 5 << 4  # data offset: 20 bytes
    body = bytes(l4) + bytes(payload)
    total = 20 + len(body) if size is None else size
    header = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, 0, 0, 64, proto, 0, bytes([10, 0, 0, 1]),
                         bytes([10, 0, 0, dst_last]))  # fmt: skip
    return (header + body)[:total] if size else header + body


def test_packet_facts_tell_tcp_payload_from_acks():
    assert packet_facts(ipv4(6, payload=100)) == (6, True, 2)
    assert packet_facts(ipv4(6, payload=0)) == (6, False, 2)
    assert packet_facts(ipv4(17, dst_last=3)) == (17, False, 3)
    assert packet_facts(b"\x60" + bytes(39)) == (0, False, 0)  # IPv6: forwarded, never classified


def test_delay_and_jitter_never_reorder():
    d = Direction(Impairment(delay_ms=50, jitter_ms=20), seed=1, start_s=0.0)
    times = [d.admit(ipv4(6), i * 0.001) for i in range(2000)]
    assert all(t is not None for t in times)
    assert times == sorted(times)
    lateness = [t - i * 0.001 for i, t in enumerate(times)]
    assert min(lateness) >= 0.050 and max(lateness) <= 0.0705


def test_reordering_lets_later_packets_overtake():
    d = Direction(Impairment(delay_ms=10, reorder=0.1, reorder_ms=5), seed=2, start_s=0.0)
    times = [d.admit(ipv4(6), i * 0.001) for i in range(1000)]
    overtaken = sum(1 for i, t in enumerate(times) if any(later < t for later in times[i + 1 : i + 10]))
    assert 60 <= overtaken <= 140


def test_random_loss_share_and_seed():
    def lost(seed: int) -> list[int]:
        d = Direction(Impairment(loss=0.01), seed=seed, start_s=0.0)
        return [i for i in range(100_000) if d.admit(ipv4(6), i * 1e-5) is None]

    first = lost(7)
    assert 850 <= len(first) <= 1150
    assert lost(7) == first  # the same packets of the same stream, run after run
    assert lost(8) != first


def test_tcp_only_and_odd_destination_loss():
    d = Direction(Impairment(loss=1.0, tcp_only=True, odd_dst_only=True), seed=1, start_s=0.0)
    assert d.admit(ipv4(17, dst_last=3), 0.0) is not None  # UDP passes
    assert d.admit(ipv4(6, dst_last=2), 0.0) is not None  # even destination passes
    assert d.admit(ipv4(6, dst_last=3), 0.0) is None
    assert d.counters.drops["random"] == 1 and d.counters.tcp_data_drops == 1


def test_periodic_loss_drops_everything_in_its_window_only():
    d = Direction(Impairment(periodic_every_s=6.0, periodic_for_s=0.37), seed=1, start_s=100.0)
    lost = [i * 0.01 for i in range(3000) if d.admit(ipv4(17), 100.0 + i * 0.01) is None]
    starts = [t for t in lost if round(t % 6.0, 6) == 0.0]
    assert starts == [0.0, 6.0, 12.0, 18.0, 24.0]
    assert len(lost) == 5 * 37


def test_burst_loss_comes_in_runs():
    d = Direction(Impairment(burst_enter=0.001, burst_leave=0.2), seed=3, start_s=0.0)
    lost = [i for i in range(200_000) if d.admit(ipv4(6), i * 1e-5) is None]
    runs = sum(1 for a, b in zip([-2, *lost], lost, strict=False) if b != a + 1)
    assert 3 <= len(lost) / runs <= 7  # mean run length 1 / burst_leave = 5


def test_rate_limit_serialises_and_bounds_its_queue():
    d = Direction(Impairment(rate_bps=8e6, queue_bytes=10_000), seed=1, start_s=0.0)  # 1 ms per 1000 bytes
    packet = ipv4(6, payload=960)  # 1000 bytes on the wire (20 IP + 20 TCP)
    times = [d.admit(packet, 0.0) for _ in range(15)]
    kept = [t for t in times if t is not None]
    assert len(kept) == 10 and d.counters.drops["queue"] == 5
    assert kept == pytest.approx([0.001 * (i + 1) for i in range(10)])


def test_mtu_and_interface_errors():
    d = Direction(Impairment(mtu=1400, error_rate=0.5), seed=4, start_s=0.0)
    assert d.admit(ipv4(6, payload=1500), 0.0) is None and d.counters.drops["mtu"] == 1
    results = [d.admit(ipv4(6, payload=100), 0.0) for _ in range(1000)]
    assert 400 <= d.counters.drops["errors"] == sum(r is None for r in results) <= 600


@pytest.mark.skipif(shutil.which("snmpbulkwalk") is None, reason="net-snmp tools (snmpbulkwalk) not installed")
def test_router_counters_answer_net_snmp():
    counters = {"octets": 12345678901234}
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]

    def mib():
        return if_mib("rtr", 4200, [{"ifIndex": 1, "ifName": "to-a", "ifHCInOctets": counters["octets"],
                                     "ifInErrors": 2**32 + 5}])  # fmt: skip

    responder = Responder([sock], "public", mib).start()
    try:
        walk = subprocess.run(["snmpbulkwalk", "-v2c", "-cpublic", "-On", f"127.0.0.1:{port}", "1.3.6.1.2.1"],
                              capture_output=True, text=True, timeout=30)  # fmt: skip
        assert walk.returncode == 0, walk.stderr
        assert ".1.3.6.1.2.1.31.1.1.1.6.1 = Counter64: 12345678901234" in walk.stdout
        assert ".1.3.6.1.2.1.2.2.1.14.1 = Counter32: 5" in walk.stdout  # wraps like a Counter32
        assert ".1.3.6.1.2.1.1.3.0 = Timeticks: (4200)" in walk.stdout
        counters["octets"] += 1000  # the next request reads the live value
        get = subprocess.run(["snmpget", "-v2c", "-cpublic", "-On", f"127.0.0.1:{port}", "1.3.6.1.2.1.31.1.1.1.6.1"],
                             capture_output=True, text=True, timeout=30)  # fmt: skip
        assert "Counter64: 12345678902234" in get.stdout
        wrong = subprocess.run(["snmpget", "-v2c", "-cwrong", "-t1", "-r0", f"127.0.0.1:{port}", "1.3.6.1.2.1.1.3.0"],
                               capture_output=True, text=True, timeout=30)  # fmt: skip
        assert wrong.returncode != 0  # a wrong community gets no answer, as from a router
    finally:
        responder.stop()
