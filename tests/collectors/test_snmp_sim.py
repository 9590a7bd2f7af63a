"""The SNMP collector against a real SNMP agent: snmpsim on 127.0.0.1, v2c and v3 authPriv.

The simulated devices are tests/collectors/snmpsim/data/*.snmprec (file name = community = v3
context): ``router`` (ifXTable, Counter64 values above 2^63, snmpEngineBoots) and ``legacy``
(ifTable only: no ifName, no HC counters). Values are cross-checked against net-snmp's
``snmpbulkwalk`` of the same agent.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
import time
from datetime import UTC, datetime, timedelta

import msgspec
import pytest

from collectors.records import decode_records, record_errors, record_to_dict
from collectors.snmp import SnmpDeviceConfig, SnmpPoller, oids, poll_device, poll_devices
from tests.collectors.snmpsim.interfaces import LEGACY, ROUTER
from tests.collectors.snmpsim.simulator import SnmpSimulator, free_udp_port

pytest.importorskip("snmpsim", reason="snmpsim (dev extra) is needed for the SNMP simulator tests")
pytestmark = pytest.mark.integration

NOW = datetime(2026, 3, 1, 11, 1, tzinfo=UTC)

ROUTER_UPTIME_TICKS = 883412200
ROUTER_ENGINE_BOOTS = 7


@pytest.fixture(scope="module")
def sim():
    # start() raises with the responder's log when it does not come up; leaving the block stops it for sure
    with SnmpSimulator() as simulator:
        yield simulator
    assert simulator.process is None


def v2c(sim, community="router", **options) -> SnmpDeviceConfig:
    base = {"equipment": f"lab-{community}", "host": sim.host, "port": sim.port, "community": community}
    return SnmpDeviceConfig(**{**base, "timeout_s": 1.0, "retries": 1, **options})


def v3(sim, context="router", **options) -> SnmpDeviceConfig:
    user = sim.v3
    base = {
        "equipment": f"lab-{context}",
        "host": sim.host,
        "port": sim.port,
        "version": "3",
        "user": user.user,
        "auth_protocol": user.auth_protocol,
        "auth_key": user.auth_key,
        "priv_protocol": user.priv_protocol,
        "priv_key": user.priv_key,
        "context_name": context,
        "timeout_s": 1.0,
        "retries": 1,
    }
    return SnmpDeviceConfig(**{**base, **options})


def summary(records):
    """The parts of the records the simulator fixes (everything but time, equipment, host)."""
    out = {}
    for record in records:
        data = record_to_dict(record)
        name = data.pop("interface")
        out[name] = {k: v for k, v in data.items() if k not in ("type", "time", "equipment", "host")}
    return out


def expected_router():
    return {
        name: {**row, "sys_uptime_ticks": ROUTER_UPTIME_TICKS, "snmp_engine_boots": ROUTER_ENGINE_BOOTS}
        for name, row in ROUTER.items()
    }


def test_v2c_reads_counter64_above_2_63_exactly(sim):
    poll = asyncio.run(poll_device(v2c(sim, equipment="geant-par"), NOW))

    assert poll.ok, poll.error
    assert poll.warnings == ()
    assert summary(poll.records) == expected_router()
    assert [r.interface for r in poll.records] == ["xe-0/0/0", "xe-0/0/1", "ge-1/0/0", "ae0"]  # ifIndex order
    assert {(r.equipment, r.host, r.time) for r in poll.records} == {("geant-par", "127.0.0.1", poll.time)}
    # stamped when sysUpTime was answered: after `now`, by the engine's start-up and one round trip
    assert NOW < poll.time < NOW + timedelta(seconds=poll.elapsed_s)
    assert [(i.alias, i.mtu_bytes) for i in poll.interfaces] == [
        ("CERN-FZK primary", 9192),
        ("to GEANT", 9192),
        (None, 1500),
        ("LAG to RAL", 9192),
    ]
    # What the agent sends is what the centre validates and stores, to the last digit.
    assert all(record_errors(r, now=NOW) == [] for r in poll.records)
    wire = msgspec.json.encode([record_to_dict(r) for r in poll.records])
    assert decode_records(wire)[0].counters.hc_in_octets == 18446744073000000000


def test_v3_authpriv_sha_aes_reads_the_same_values(sim):
    poll = asyncio.run(poll_device(v3(sim), NOW))

    assert poll.ok, poll.error
    assert summary(poll.records) == expected_router()


@pytest.mark.parametrize("make", [v2c, v3], ids=["v2c", "v3"])
def test_interface_filter_on_a_real_agent(sim, make):
    poll = asyncio.run(poll_device(make(sim, interfaces=["ae0", "xe-9/9/9"]), NOW))

    assert [r.interface for r in poll.records] == ["ae0"]
    assert poll.records[0].counters.hc_in_octets == 5000000000000
    assert poll.warnings == ("interface 'xe-9/9/9' not found on the device (ifName, ifDescr)",)


def test_device_without_hc_counters_gives_32_bit_counters(sim):
    poll = asyncio.run(poll_device(v2c(sim, community="legacy"), NOW))

    assert poll.ok, poll.error
    assert summary(poll.records) == {
        name: {**row, "sys_uptime_ticks": 4294967000} for name, row in LEGACY.items()
    }  # no snmp_engine_boots, no counter_discontinuity_ticks: the agent has neither


def test_dead_device_fails_within_its_timeout_and_does_not_delay_the_others(sim):
    dead_port = free_udp_port()  # nothing listens there: requests go unanswered
    configs = [
        v2c(sim, equipment="dead-1", port=dead_port, timeout_s=1.0, retries=1),
        v2c(sim, equipment="router"),
        v3(sim, equipment="router-v3"),
        v2c(sim, equipment="dead-2", port=dead_port, timeout_s=1.0, retries=1),
        v2c(sim, community="legacy", equipment="legacy"),
    ]

    async def run():
        async with SnmpPoller() as poller:
            await poller.poll_devices([v2c(sim)])  # engine start-up and v3 discovery out of the timing
            started = time.monotonic()
            polls = await poller.poll_devices(configs, now=NOW)
            return polls, time.monotonic() - started

    polls, elapsed_s = asyncio.run(run())
    by_equipment = {p.equipment: p for p in polls}

    budget_s = 1.0 * 2  # timeout_s x (retries + 1)
    for name in ("dead-1", "dead-2"):
        dead = by_equipment[name]
        assert dead.records == () and dead.error.kind == oids.ERROR_TIMEOUT
        assert budget_s - 0.1 <= dead.error.elapsed_s < budget_s + 1.0
    # Concurrent: one timeout budget in total, not the sum of two (>= 4 s).
    assert elapsed_s < budget_s + 1.0
    assert summary(by_equipment["router"].records) == expected_router()
    assert summary(by_equipment["router-v3"].records) == expected_router()
    assert len(by_equipment["legacy"].records) == 2
    for name in ("router", "router-v3", "legacy"):
        assert by_equipment[name].elapsed_s < budget_s, name  # answered at their own pace, not after the dead one


def test_wrong_v3_key_is_an_auth_error_and_leaves_the_right_key_working(sim):
    wrong = v3(sim, equipment="wrong-key", auth_key="not-the-auth-key")
    right = v3(sim, equipment="right-key")

    polls = asyncio.run(poll_devices([wrong, right], NOW))

    assert polls[0].error.kind == oids.ERROR_AUTH and polls[0].records == ()
    # Classified as an authentication failure within the device's deadline (snmpsim may answer a wrong
    # digest with a report or stay silent, so the time to the verdict depends on the machine's load).
    assert polls[0].error.elapsed_s < 20.0
    assert polls[1].ok and summary(polls[1].records) == expected_router()


def test_wrong_community_times_out_with_a_hint(sim):
    poll = asyncio.run(poll_device(v2c(sim, community="nosuchcommunity", timeout_s=0.5, retries=0), NOW))

    assert poll.error.kind == oids.ERROR_TIMEOUT
    assert "wrong community" in poll.error.message


NETSNMP_LINE = re.compile(r"^\.?(?P<oid>[\d.]+) = (?:(?P<type>[\w-]+): )?(?P<value>.*)$")


def snmpbulkwalk(sim, column: str) -> dict[int, str]:
    result = subprocess.run(
        ["snmpbulkwalk", "-v2c", "-c", "router", "-On", "-Oe", "-Cr25", "-t", "2", "-r", "1",
         f"{sim.host}:{sim.port}", column],
        capture_output=True, text=True, timeout=30, check=True,
    )  # fmt: skip
    values = {}
    for line in result.stdout.splitlines():
        match = NETSNMP_LINE.match(line)
        assert match, line
        values[int(match["oid"].rsplit(".", 1)[1])] = match["value"].strip('"')
    return values


@pytest.mark.skipif(shutil.which("snmpbulkwalk") is None, reason="net-snmp's snmpbulkwalk is not installed")
def test_values_match_net_snmp_snmpbulkwalk(sim):
    poll = asyncio.run(poll_device(v2c(sim), NOW))
    by_index = {r.if_index: r for r in poll.records}

    hc_in = snmpbulkwalk(sim, oids.IF_HC_IN_OCTETS)
    assert hc_in == {1: "18446744073000000000", 2: "18446744073709551615", 3: "0", 17: "5000000000000"}
    assert {i: str(r.counters.hc_in_octets) for i, r in by_index.items()} == hc_in
    assert {i: str(r.counters.hc_out_octets) for i, r in by_index.items()} == snmpbulkwalk(sim, oids.IF_HC_OUT_OCTETS)
    assert {i: str(r.counters.in_errors) for i, r in by_index.items()} == snmpbulkwalk(sim, oids.IF_IN_ERRORS)
    assert {i: str(r.counters.out_discards) for i, r in by_index.items()} == snmpbulkwalk(sim, oids.IF_OUT_DISCARDS)
    assert {i: r.interface for i, r in by_index.items()} == snmpbulkwalk(sim, oids.IF_NAME)


def test_simulator_is_gone_after_stop():
    with SnmpSimulator() as simulator:
        process = simulator.process
        assert process is not None and process.poll() is None
    assert process.poll() is not None
