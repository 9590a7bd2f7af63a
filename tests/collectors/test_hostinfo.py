"""hostinfo collector: host_tcp records from a fake /proc + /sys tree and from this machine."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from collectors import hostinfo

NOW = datetime(2026, 3, 1, 11, 0, tzinfo=UTC)
HOST_TCP_KEYS = {
    "type",
    "time",
    "site",
    "host",
    "tcp_rmem",
    "tcp_wmem",
    "rmem_max",
    "wmem_max",
    "congestion_control",
    "mtu",
}

# Captured from the development VM (Debian 12): /proc/net/route and /proc/net/ipv6_route.
PROC_NET_ROUTE = (
    "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
    "eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n"
    "eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n"
)
PROC_NET_IPV6_ROUTE = (
    "fd000000000000000000000000000000 40 00000000000000000000000000000000 00 "
    "00000000000000000000000000000000 00000100 00000001 00000000 00000001     eth0\n"
    "00000000000000000000000000000000 00 00000000000000000000000000000000 00 "
    "fd000000000000000000000000000001 00000400 00000002 00000000 00000003     eth0\n"
    "00000000000000000000000000000000 00 00000000000000000000000000000000 00 "
    "00000000000000000000000000000000 ffffffff 00000001 00000000 00200200       lo\n"
)


def write(root: Path, relative: str, content: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)


def fake_host(tmp_path: Path, *, congestion: str = "reno", mtu: str = "1500\n") -> tuple[Path, Path]:
    """A /proc and /sys tree with the values of the ASGC example (docs/scenario-format.md#measurement-records)."""
    proc, sys = tmp_path / "proc", tmp_path / "sys"
    # the kernel separates the three values with tabs
    write(proc, hostinfo.TCP_RMEM, "4096\t87380\t4194304\n")
    write(proc, hostinfo.TCP_WMEM, "4096\t65536\t4194304\n")
    write(proc, hostinfo.RMEM_MAX, "4194304\n")
    write(proc, hostinfo.WMEM_MAX, "4194304\n")
    write(proc, hostinfo.CONGESTION_CONTROL, f"{congestion}\n")
    write(proc, hostinfo.AVAILABLE_CONGESTION_CONTROL, "reno cubic\n")
    write(proc, "sys/net/ipv4/tcp_mtu_probing", "0\n")
    write(proc, "sys/net/core/default_qdisc", "fq_codel\n")
    write(proc, "net/route", PROC_NET_ROUTE)
    write(sys, "class/net/eth0/mtu", mtu)
    write(sys, "class/net/eth0/speed", "25000\n")
    return proc, sys


def test_record_from_fake_tree(tmp_path):
    proc, sys = fake_host(tmp_path)
    (record,) = hostinfo.collect(site="ASGC", host="asgc-dt01", now=NOW, proc_root=proc, sys_root=sys)
    assert HOST_TCP_KEYS <= record.keys()
    assert record == {
        "type": "host_tcp",
        "time": NOW,
        "site": "ASGC",
        "host": "asgc-dt01",
        "tcp_rmem": [4096, 87380, 4194304],
        "tcp_wmem": [4096, 65536, 4194304],
        "rmem_max": 4194304,
        "wmem_max": 4194304,
        "congestion_control": "reno",
        "mtu": 1500,
        "nic_speed_mbps": 25000.0,
        "available_congestion_control": ["reno", "cubic"],
        "interface": "eth0",  # from the default route
        "tcp_mtu_probing": 0,
        "default_qdisc": "fq_codel",
    }


def test_explicit_interface(tmp_path):
    proc, sys = fake_host(tmp_path)
    write(sys, "class/net/ens1f0/mtu", "9000\n")
    settings = hostinfo.read_host_tcp(proc_root=proc, sys_root=sys, interface="ens1f0")
    assert (settings.interface, settings.mtu, settings.nic_speed_mbps) == ("ens1f0", 9000, None)  # no speed file


def test_default_route_parsers_on_real_tables():
    assert hostinfo.parse_default_route_interface(PROC_NET_ROUTE) == "eth0"
    assert hostinfo.parse_default_route_interface(PROC_NET_ROUTE.splitlines()[0] + "\n") is None
    # the lo default with RTF_REJECT (00200200) is the kernel's "unreachable" route
    assert hostinfo.parse_default_route6_interface(PROC_NET_IPV6_ROUTE) == "eth0"
    assert hostinfo.parse_default_route6_interface(PROC_NET_IPV6_ROUTE.splitlines(keepends=True)[-1]) is None


def test_ipv6_only_host_uses_ipv6_default_route(tmp_path):
    proc, sys = fake_host(tmp_path)
    (proc / "net" / "route").unlink()
    write(proc, "net/ipv6_route", PROC_NET_IPV6_ROUTE)
    assert hostinfo.read_host_tcp(proc_root=proc, sys_root=sys).interface == "eth0"


def test_lowest_metric_default_route_wins():
    table = PROC_NET_ROUTE + "wlan0\t00000000\t0101A8C0\t0003\t0\t0\t600\t00000000\t0\t0\t0\n"
    table = table.replace("eth0\t00000000\t010200C0\t0003\t0\t0\t0", "eth0\t00000000\t010200C0\t0003\t0\t0\t700")
    assert hostinfo.parse_default_route_interface(table) == "wlan0"


def test_missing_and_malformed_files_are_reported_not_raised(tmp_path):
    proc, sys = fake_host(tmp_path, mtu="garbage\n")
    (proc / hostinfo.TCP_WMEM).write_text("4096 65536\n")  # two values: malformed
    (proc / hostinfo.CONGESTION_CONTROL).unlink()
    settings = hostinfo.read_host_tcp(proc_root=proc, sys_root=sys)
    assert settings.tcp_rmem == (4096, 87380, 4194304)
    assert settings.tcp_wmem is None
    assert settings.congestion_control is None
    assert settings.mtu is None
    assert len(settings.errors) == 3
    record = hostinfo.settings_to_record(settings, site="ASGC", host="h", time=NOW)
    assert record["tcp_wmem"] is None and record["congestion_control"] is None
    assert len(record["read_errors"]) == 3
    assert "error" not in record  # partial data is still data


def test_nothing_readable_is_an_error_record(tmp_path):
    (record,) = hostinfo.collect(site="ASGC", host="h", now=NOW, proc_root=tmp_path / "none", sys_root=tmp_path)
    assert record["type"] == "host_tcp"
    assert record["error"].startswith("no TCP setting could be read")
    assert record["tcp_rmem"] is None and record["mtu"] is None


def test_naive_time_is_refused(tmp_path):
    proc, sys = fake_host(tmp_path)
    with pytest.raises(ValueError):
        hostinfo.collect(site="ASGC", host="h", now=datetime(2026, 3, 1), proc_root=proc, sys_root=sys)


def test_parse_triple():
    assert hostinfo.parse_triple("4096\t131072\t33554432\n") == (4096, 131072, 33554432)
    with pytest.raises(ValueError):
        hostinfo.parse_triple("4096\n")


def test_this_machines_real_proc():
    if not Path("/proc/sys/net/ipv4/tcp_rmem").exists():
        pytest.skip("no Linux /proc/sys/net here")
    (record,) = hostinfo.collect(site="HERE", now=NOW)
    assert record["host"]
    low, default, high = record["tcp_rmem"]
    assert 0 < low <= default <= high
    low, default, high = record["tcp_wmem"]
    assert 0 < low <= default <= high
    assert record["rmem_max"] > 0 and record["wmem_max"] > 0
    assert record["congestion_control"] in record["available_congestion_control"]
    if record.get("interface"):
        assert record["mtu"] >= 68  # the IPv4 minimum MTU
