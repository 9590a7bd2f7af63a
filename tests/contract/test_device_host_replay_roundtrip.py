"""SNMP from six real routers, this host's TCP settings and a replayed scenario: through the ingest and back.

SNMP: the captures in ../shared/fixtures/snmprec (LibreNMS recordings of Juniper, Cisco IOS XR and
NX-OS, Nokia SR OS, Arista and Ciena equipment; SOURCES.md there) are served by snmpsim on
127.0.0.1 and polled with the collector's own ``SnmpPoller``, as the agent polls a router. Their
samples carry what real equipment reports: Counter64 values up to 6e15, ifTable-only interfaces
(saturated ifSpeed), interfaces without counters. Every value must come back from PostgreSQL as
the agent sent it.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agents.replay_collector import ReplayCollector, ReplayTarget
from collectors import hostinfo
from collectors.snmp import SnmpDeviceConfig, SnmpPoller
from tests.collectors.snmpsim.interfaces import CAPTURE_NAMES
from tests.contract.wire import agent_records, assert_stored, deliver, shared_fixture

pytestmark = [pytest.mark.django_db, pytest.mark.integration]

DEVICES = CAPTURE_NAMES


@pytest.fixture(scope="module")
def routers():
    """snmpsim serving the six real captures (community = file name) on 127.0.0.1."""
    pytest.importorskip("snmpsim", reason="snmpsim (dev extra) is needed for the SNMP simulator")
    from tests.collectors.snmpsim.simulator import SnmpSimulator

    files = [shared_fixture("snmprec", f"{name}.snmprec") for name in DEVICES]
    # start() raises with the responder's log when it does not come up; leaving the block stops it for sure
    with SnmpSimulator(files) as simulator:
        yield simulator


def _poll(routers, now: datetime):
    # one snmpsim process (pure Python) answers the six walks at once: on a loaded machine a GETBULK of the
    # largest capture took more than 2 s, and this test is about the values stored, not the agent's patience
    configs = [
        SnmpDeviceConfig(equipment=name, host=routers.host, port=routers.port, community=name, timeout_s=10.0)
        for name in DEVICES
    ]

    async def run():
        async with SnmpPoller() as poller:
            return await poller.poll_devices(configs, now=now)

    return asyncio.run(run())


@pytest.mark.parametrize("chunk_records", [1000, 40], ids=["one-chunk", "streamed"])
def test_six_real_routers_polled_through_snmpsim_are_stored_to_the_last_digit(
    client, centre, routers, settings, chunk_records
):
    # given the agent's poll of six real routers (decoded and stored in chunks of `chunk_records` samples)
    settings.WANMON_INGEST_STREAM_CHUNK_RECORDS = chunk_records
    now = datetime.now(UTC).replace(microsecond=0)
    polls = _poll(routers, now)
    assert [(p.equipment, p.error) for p in polls] == [(name, None) for name in DEVICES]
    for name in DEVICES:
        centre.equipment(name)
    records = agent_records([r for p in polls for r in p.records], now=now, schedule_interval_s=60.0)
    per_device = {name: sum(1 for r in records if r.equipment == name) for name in DEVICES}
    print("SNMP samples per device:", per_device)  # noqa: T201

    # when the agent uploads them in one batch
    batch = deliver(client, centre.token, records)

    # then each sample is one row with every value as polled
    assert assert_stored(batch, agent_id=centre.agent.id) == {"snmp": len(records)}
    assert all(per_device.values()), per_device
    counters = [v for r in batch.wire for k, v in r["counters"].items() if k.startswith("hc_")]
    speeds = {r["speed_mbps"] for r in batch.wire if "speed_mbps" in r}
    assert max(counters) > 2**48  # SR OS: HC octets up to 6.0e15, exact in numeric(20,0)
    assert {10.0, 1000.0, 10000.0} <= speeds and all(isinstance(s, float) for s in speeds)  # floats on the wire
    saturated = [r for r in batch.wire if r["equipment"] == "ciena-rls_6500-r2" and "speed_mbps" not in r]
    assert len(saturated) == 2  # ifSpeed 2^32-1 without ifHighSpeed: unknown, stored as NULL


def test_this_hosts_tcp_settings_and_an_unreadable_host_are_stored_as_sent(client, centre, tmp_path):
    now = datetime.now(UTC).replace(microsecond=0)
    local = hostinfo.collect(site="CERN", now=now, interface="lo")
    # a container that hides every sysctl: the record says so in `error`
    hidden = hostinfo.collect(site="CERN", now=now, host="cern-dt02", proc_root=tmp_path, sys_root=tmp_path)
    records = agent_records(local + hidden, now=now)

    batch = deliver(client, centre.token, records)

    assert assert_stored(batch, agent_id=centre.agent.id) == {"host_tcp": 2}
    assert len(batch.wire[0]["tcp_rmem"]) == 3 and batch.wire[0]["interface"] == "lo"
    assert batch.wire[1]["error"].startswith("no TCP setting could be read")


# --- replay ----------------------------------------------------------------------------------------

T0 = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
U32_MAX, U64_MAX = 2**32 - 1, 2**64 - 1


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _scenario() -> dict:
    """One hour of CERN's measurements, values at the edges of the schema (docs/scenario-format.md)."""
    m: list[dict] = []
    for i in range(4):
        t = T0 + timedelta(minutes=15 * i)
        m.append(
            {
                "type": "snmp",
                "time": _iso(t),
                "equipment": "cern-border",
                "interface": "Serial0/0/0:1 (E1 to FZK)",
                "if_index": 2**31 - 1,
                "sys_uptime_ticks": 4_000_000 + 90_000 * i,
                "snmp_engine_boots": 2**31 - 1,
                "oper_status": "up",
                "admin_status": "up",
                "speed_mbps": 2.048,
                "counters": {
                    "hc_in_octets": U64_MAX - 10**6 + i,
                    "hc_out_octets": 2**63 + i,
                    "in_octets": U32_MAX - 3 + i,
                    "in_errors": 0,
                },
            }
        )
        m.append(
            {
                "type": "owamp",
                "time": _iso(t + timedelta(seconds=30)),
                "src": "CERN",
                "dst": "FZK",
                "packets_sent": 600,
                "packets_lost": 600 if i == 3 else i,
                "duplicates": 0,
                "reordered": None if i == 3 else 0,
                **({} if i == 3 else {"delay_min_ms": -0.25, "delay_median_ms": 4.75, "delay_max_ms": 1e-300 + 9}),
                "jitter_ms": 0.0 if i < 3 else None,
                "tool": "owping",
                "src_host": "cern-owamp.cern.ch",
            }
        )
    m += [
        {
            "type": "throughput",
            "time": _iso(T0 + timedelta(minutes=5)),
            "src": "CERN",
            "dst": "FZK",
            "tool": "nuttcp",
            "protocol": "udp",
            "duration_s": 10.5,
            "offered_bps": 1e13,
            "throughput_bps": 5e-324,
            "packets_sent": 2**63 - 1,
            "packets_lost": 2**63 - 1,
            "src_host": "cern-dt01.cern.ch",
            "dst_host": "2001:db8::2",
        },
        {
            "type": "traceroute",
            "time": _iso(T0 + timedelta(minutes=40)),
            "src": "CERN",
            "dst": "FZK",
            "hops": ["192.0.2.1", "*", None, "2001:db8::ffff", "fzk-border.kit.edu"],
            "pmtu_bytes": 9000,
            "tool": "tracepath",
        },
        {
            "type": "host_tcp",
            "time": _iso(T0 + timedelta(minutes=50)),
            "site": "CERN",
            "host": "cern-dt01",
            "tcp_rmem": [4096, 131072, 2**40],
            "tcp_wmem": [0, 0, 0],
            "rmem_max": 2**40,
            "congestion_control": "bbr",
            "mtu": 65536,
        },
        {  # another site's test: not this agent's to send
            "type": "throughput",
            "time": _iso(T0 + timedelta(minutes=6)),
            "src": "FZK",
            "dst": "CERN",
            "tool": "nuttcp",
            "protocol": "tcp",
            "duration_s": 10,
            "throughput_bps": 9e9,
        },
    ]
    return {"scenario": "contract", "now": _iso(T0 + timedelta(hours=1)), "topology": {}, "measurements": m}


def test_a_replayed_scenario_is_stored_as_sent(client, centre, tmp_path):
    path: Path = tmp_path / "contract.json"
    path.write_text(json.dumps(_scenario()))
    centre.equipment("cern-border")
    collector = ReplayCollector(
        ReplayTarget(file=path, equipment=("cern-border",)), index=0, site="CERN", persist=False
    )
    now = datetime.now(UTC)
    records = agent_records(collector.collect(now), now=now, schedule_interval_s=collector.interval_s)

    batch = deliver(client, centre.token, records)

    assert assert_stored(batch, agent_id=centre.agent.id) == {
        "snmp": 4,
        "owamp": 4,
        "throughput": 1,
        "traceroute": 1,
        "host_tcp": 1,
    }
    snmp = [r for r in batch.wire if r["type"] == "snmp"]
    assert [r["counters"]["hc_in_octets"] for r in snmp] == [U64_MAX - 10**6 + i for i in range(4)]
    assert {r["speed_mbps"] for r in snmp} == {2.048}
