"""The NIC speed of a transfer host, from /sys to the window advice: a fake /sys tree, the agent's host_tcp
collector, the ingest (a scenario replay stores its records through ``batch_ingest``), the stored row, the
evidence bundle and the advice of HOST_TCP_TUNING and WINDOW_LIMITED.

A 10 Gb/s NIC on a 100 Gb/s path at 150 ms: 2 x BDP of the NIC is 2 x 10e9 x 0.150 / 8 = 375 000 000 bytes,
358 MiB = 375 390 208 bytes once rounded up; of the path it would be 3.75 GB, beyond Linux's 2 GiB cap.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml

from collectors import hostinfo
from wanmon.diagnosis import constants as k
from wanmon.diagnosis.advice import fill_rate, sysctl_lines
from wanmon.diagnosis.evidence import HostTcpEvidence
from wanmon.diagnosis.replay import scenario_load, scenario_replay
from wanmon.measurements.models import HostTcp

NOW = datetime(2026, 3, 6, 6, 0, tzinfo=UTC)
NIC_FILL_BYTES = 375_390_208  # 2 x 10 Gb/s x 150 ms / 8 = 375 MB, rounded up to 358 MiB
WINDOW_BYTES = 4 << 20  # the host's buffers: one stream carries 4 MiB x 8 / 150 ms = 224 Mb/s


def fake_host(root: Path, *, speed: str | None, buffer_bytes: int = WINDOW_BYTES) -> tuple[Path, Path]:
    """A /proc and /sys of a host with these buffer maxima and a 9000-byte ens1f0 of the given speed file."""
    proc, sys = root / "proc", root / "sys"
    files = {
        proc / "sys/net/ipv4/tcp_rmem": f"4096\t87380\t{buffer_bytes}\n",
        proc / "sys/net/ipv4/tcp_wmem": f"4096\t65536\t{buffer_bytes}\n",
        proc / "sys/net/core/rmem_max": f"{buffer_bytes}\n",
        proc / "sys/net/core/wmem_max": f"{buffer_bytes}\n",
        proc / "sys/net/ipv4/tcp_congestion_control": "cubic\n",
        proc / "sys/net/ipv4/tcp_available_congestion_control": "reno cubic\n",
        sys / "class/net/ens1f0/mtu": "9000\n",
    }
    if speed is not None:
        files[sys / "class/net/ens1f0/speed"] = speed
    for path, content in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    return proc, sys


@pytest.mark.parametrize(("speed", "expected"), [("10000\n", 10000.0), ("-1\n", None), (None, None), ("0\n", None)])
def test_the_collector_reads_the_nic_speed_null_when_unknown(tmp_path, speed, expected):
    proc, sys = fake_host(tmp_path, speed=speed)
    (record,) = hostinfo.collect(site="CERN", host="cern-dt01", now=NOW, interface="ens1f0", proc_root=proc,
                                 sys_root=sys)
    assert record["nic_speed_mbps"] == expected and record["mtu"] == 9000
    assert "read_errors" not in record  # an unknown speed is not a failure to read the settings


def test_fill_rate_is_the_slowest_known_nic_or_the_path():
    nic10 = HostTcpEvidence(site="CERN", host="a", nic_speed_mbps=10_000)
    nic40 = HostTcpEvidence(site="TRIUMF", host="b", nic_speed_mbps=40_000)
    unknown = HostTcpEvidence(site="TRIUMF", host="c")
    assert fill_rate(100e9, [nic40, nic10]).rate_bps == 10e9 and fill_rate(100e9, [nic40, nic10]).nic_host is nic10
    assert fill_rate(100e9, [unknown, None]).rate_bps == 100e9 and fill_rate(100e9, [unknown]).nic_host is None
    assert fill_rate(1e9, [nic10]).nic_host is None  # a 1 Gb/s path is slower than the NIC
    assert sysctl_lines(2 * 100e9 * 0.150 / 8)[0] == f"net.core.rmem_max = {k.LINUX_MAX_SOCKET_BUFFER_BYTES}"


def _scenario(tmp_path: Path, record: dict, *, throughput_bps: float, window_bytes: int) -> Path:
    tests = []
    for i in range(12):  # every 30 min for 6 h, both directions
        at = NOW - timedelta(hours=6) + timedelta(minutes=30 * i)
        for src, dst, src_host, dst_host in (("CERN", "TRIUMF", "192.0.2.10", "198.51.100.20"),
                                             ("TRIUMF", "CERN", "198.51.100.20", "192.0.2.10")):
            tests.append({
                "type": "throughput", "time": at.isoformat().replace("+00:00", "Z"), "src": src, "dst": dst,
                "tool": "nuttcp", "protocol": "tcp", "duration_s": 10, "streams": 1, "window_bytes": window_bytes,
                "mss_bytes": 8948, "throughput_bps": throughput_bps, "retransmits": 0, "rtt_ms": 150.0,
                "src_host": src_host, "dst_host": dst_host,
            })
    doc = {
        "scenario": "nic-speed-10g-on-100g",
        "now": NOW.isoformat().replace("+00:00", "Z"),
        "topology": {
            "sites": [{"code": "CERN", "name": "CERN", "tier": 0}, {"code": "TRIUMF", "name": "TRIUMF", "tier": 1}],
            "hosts": [{"site": "CERN", "name": "cern-dt01", "address": "192.0.2.10"},
                      {"site": "TRIUMF", "name": "triumf-dt01", "address": "198.51.100.20"}],
            "equipment": [{"name": "cern-border", "site": "CERN", "role": "router"},
                          {"name": "triumf-border", "site": "TRIUMF", "role": "router"}],
            "paths": [
                {"src": "CERN", "dst": "TRIUMF", "capacity_mbps": 100_000, "hops": ["cern-border", "triumf-border"]},
                {"src": "TRIUMF", "dst": "CERN", "capacity_mbps": 100_000, "hops": ["triumf-border", "cern-border"]},
            ],
        },
        "measurements": [record, *tests],
    }
    path = tmp_path / "nic.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def _replay(tmp_path: Path, speed: str | None, *, throughput_bps: float, window_bytes: int = WINDOW_BYTES):
    proc, sys = fake_host(tmp_path, speed=speed, buffer_bytes=window_bytes)
    (record,) = hostinfo.collect(site="CERN", host="cern-dt01", now=NOW - timedelta(hours=5), interface="ens1f0",
                                 proc_root=proc, sys_root=sys)
    scenario = scenario_load(str(_scenario(tmp_path, record, throughput_bps=throughput_bps, window_bytes=window_bytes)))
    result = scenario_replay(scenario, keep=True)
    return {(f.code, tuple(sorted(f.subject.values()))): f for f in result.findings}


@pytest.mark.django_db
def test_a_10g_nic_on_a_100g_path_at_150_ms_gets_the_window_that_fills_the_nic(tmp_path):
    window_rate = WINDOW_BYTES * 8 / 0.150  # 224 Mb/s
    found = _replay(tmp_path, "10000\n", throughput_bps=0.95 * window_rate, window_bytes=WINDOW_BYTES)

    # stored as the collector read it, and carried by the evidence into the finding
    assert HostTcp.objects.get(host="cern-dt01").nic_speed_mbps == 10000.0
    host = found[("HOST_TCP_TUNING", ("CERN", "cern-dt01"))]
    assert host.evidence["nic_speed_mbps"] == 10000.0 and host.evidence["nic_limited"] is True
    assert host.evidence["fill_rate_bps"] == 10e9 and host.evidence["bdp_bytes"] == pytest.approx(187_500_000)
    assert host.evidence["recommended_buffer_bytes"] == NIC_FILL_BYTES
    assert f"net.core.rmem_max = {NIC_FILL_BYTES}" in host.actions[0]
    assert f"net.ipv4.tcp_wmem = 4096 65536 {NIC_FILL_BYTES}" in host.actions[0]
    assert "10 Gb/s (the NIC of cern-dt01; the path carries 100 Gb/s) x 150 ms" in host.explanation

    window = found[("WINDOW_LIMITED", ("CERN", "TRIUMF"))]
    assert window.evidence["fill_rate_bps"] == 10e9 and window.evidence["nic_limited_by"] == "cern-dt01"
    assert f"Use a TCP window of at least 375 MB ({NIC_FILL_BYTES} bytes) for CERN->TRIUMF" in window.actions[0]
    assert f"net.core.rmem_max = {NIC_FILL_BYTES}" in window.actions[1]
    assert window.evidence["nic_bound"] is False and window.severity != "info"


@pytest.mark.django_db
def test_without_a_nic_speed_the_path_capacity_is_filled_up_to_linux_cap(tmp_path):
    window_rate = WINDOW_BYTES * 8 / 0.150
    found = _replay(tmp_path, "-1\n", throughput_bps=0.95 * window_rate, window_bytes=WINDOW_BYTES)
    assert HostTcp.objects.get(host="cern-dt01").nic_speed_mbps is None
    host = found[("HOST_TCP_TUNING", ("CERN", "cern-dt01"))]
    assert host.evidence["nic_limited"] is False
    assert f"net.core.rmem_max = {k.LINUX_MAX_SOCKET_BUFFER_BYTES}" in host.actions[0]


@pytest.mark.django_db
def test_a_window_that_already_fills_the_nic_is_not_asked_to_grow(tmp_path):
    """256 MiB at 150 ms carries 14.3 Gb/s, more than the 10 Gb/s NIC sends; the tests run steadily at 9.4 Gb/s.
    On the 100 Gb/s path that looks window-limited, but the NIC holds the stream: WINDOW_LIMITED says so (info,
    no window asked for) and HOST_TCP_TUNING does not fire (256 MiB covers the NIC's BDP of 187.5 MB)."""
    found = _replay(tmp_path, "10000\n", throughput_bps=9.4e9, window_bytes=256 << 20)
    assert ("HOST_TCP_TUNING", ("CERN", "cern-dt01")) not in found
    window = found[("WINDOW_LIMITED", ("CERN", "TRIUMF"))]
    assert window.evidence["nic_bound"] is True and window.severity == "info"
    assert "the NIC, not the window, is the limit, and a larger window does not help" in window.explanation
    assert list(window.actions) == [
        "The 10 Gb/s NIC of cern-dt01 is the limit of one stream on CERN->TRIUMF: a faster NIC, or transfers "
        "spread over several hosts, carry more; no window setting does."
    ]


@pytest.mark.django_db
def test_without_the_nic_speed_the_same_host_is_asked_for_linux_cap(tmp_path):
    found = _replay(tmp_path, None, throughput_bps=9.4e9, window_bytes=256 << 20)
    host = found[("HOST_TCP_TUNING", ("CERN", "cern-dt01"))]
    assert f"net.core.rmem_max = {k.LINUX_MAX_SOCKET_BUFFER_BYTES}" in host.actions[0]
