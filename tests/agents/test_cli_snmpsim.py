"""``wanmon-agent once --dry-run`` against a real SNMP agent: snmpsim on 127.0.0.1, v2c and v3 authPriv.

The installed console script runs as a subprocess with a TOML configuration whose ``[[snmp]]``
tables point at the simulator (tests/collectors/snmpsim: ``router`` has Counter64 values above
2^63, exactly 2^63 and 2^64-1; ``legacy`` has no ifXTable). Every interface of every device
must come out as one JSON line with its counters to the last digit: JSON numbers are printed in
full (no float rounding), and the centre's own decoder reads the same integers back.
"""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from collectors.records import decode_records
from tests.agents.conftest import ROOT
from tests.agents.harness import WAIT_S, agent_argv, parse_time
from tests.collectors.snmpsim.interfaces import LEGACY, ROUTER
from tests.collectors.snmpsim.simulator import SnmpSimulator

pytest.importorskip("snmpsim", reason="snmpsim (dev extra) is needed for the SNMP simulator tests")
pytestmark = pytest.mark.integration

ROUTER_SCALARS = {"host": "127.0.0.1", "sys_uptime_ticks": 883412200, "snmp_engine_boots": 7}
@pytest.fixture(scope="module")
def sim():
    # start() raises with the responder's log when it does not come up; leaving the block stops it for sure
    with SnmpSimulator() as simulator:
        yield simulator


def snmp_config(directory: Path, sim: SnmpSimulator) -> Path:
    user = sim.v3
    common = f'host = "{sim.host}"\nport = {sim.port}\ntimeout_s = 5\nretries = 2\n'
    path = directory / "agent.toml"
    path.write_text(
        '[central]\nurl = "https://wanmon.example.org"\n'
        f'token_file = "{directory / "token-not-needed-for-dry-run"}"\n\n'
        f'[agent]\nsite = "RAL"\nspool_dir = "{directory / "spool"}"\nstart_jitter_s = 0\n\n'
        f'[[snmp]]\nequipment = "lab-router"\n{common}version = "2c"\ncommunity = "router"\n\n'
        f'[[snmp]]\nequipment = "lab-legacy"\n{common}community = "legacy"\n\n'
        f'[[snmp]]\nequipment = "lab-router-v3"\n{common}version = "3"\nuser = "{user.user}"\n'
        f'auth_protocol = "{user.auth_protocol}"\nauth_key = "{user.auth_key}"\n'
        f'priv_protocol = "{user.priv_protocol}"\npriv_key = "{user.priv_key}"\ncontext_name = "router"\n'
    )
    return path


def test_once_dry_run_prints_every_interface_with_exact_counter64_values(sim, tmp_path):
    config = snmp_config(tmp_path, sim)
    argv = agent_argv("once", "--config", str(config), "--dry-run")  # the installed wanmon-agent script

    result = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=WAIT_S)

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    # The digits themselves are on stdout: no float, no exponent, no rounding anywhere.
    for digits in ("18446744073000000000", "18446744073709551615", "9223372036854775808", "9223372036854775807"):
        assert f":{digits}," in result.stdout, digits
    records = [json.loads(line) for line in lines]
    assert {r["type"] for r in records} == {"snmp"}

    by_device: dict[str, dict[str, dict]] = {}
    for record in records:
        device = by_device.setdefault(record.pop("equipment"), {})
        assert record.pop("type") == "snmp"
        record["time"] = parse_time(record["time"])
        assert record["interface"] not in device, "an interface reported twice"
        device[record.pop("interface")] = record
    assert sorted(by_device) == ["lab-legacy", "lab-router", "lab-router-v3"]

    def without_time(device: dict[str, dict]) -> dict[str, dict]:
        return {name: {k: v for k, v in row.items() if k != "time"} for name, row in device.items()}

    expected_router = {name: {**row, **ROUTER_SCALARS} for name, row in ROUTER.items()}
    assert without_time(by_device["lab-router"]) == expected_router  # v2c
    assert without_time(by_device["lab-router-v3"]) == expected_router  # v3 authPriv (SHA/AES), same values
    assert without_time(by_device["lab-legacy"]) == {
        name: {**row, "host": "127.0.0.1", "sys_uptime_ticks": 4294967000} for name, row in LEGACY.items()
    }
    assert list(by_device["lab-router"]) == ["xe-0/0/0", "xe-0/0/1", "ge-1/0/0", "ae0"]  # ifIndex order

    # one poll time per device: when its uptime was answered, after the run's start as logged
    logs = [json.loads(line) for line in result.stderr.splitlines()]
    runs = {log["collector"]: log for log in logs if log["message"] == "collector run"}
    assert {name: run["records"] for name, run in runs.items()} == {
        "snmp[0]:lab-router": 4,
        "snmp[1]:lab-legacy": 2,
        "snmp[2]:lab-router-v3": 4,
    }
    for index, equipment in enumerate(("lab-router", "lab-legacy", "lab-router-v3")):
        (moment,) = {row["time"] for row in by_device[equipment].values()}
        started = parse_time(runs[f"snmp[{index}]:{equipment}"]["started"])
        assert 0 < (moment - started).total_seconds() < runs[f"snmp[{index}]:{equipment}"]["duration_s"]
        assert abs((datetime.now(UTC) - moment).total_seconds()) < WAIT_S

    # what the centre would decode from these lines: the same integers
    decoded = decode_records("[" + ",".join(lines) + "]", now=datetime.now(UTC))
    hc_in = {(r.equipment, r.interface): r.counters.hc_in_octets for r in decoded if r.equipment == "lab-router"}
    assert hc_in[("lab-router", "xe-0/0/0")] == 18446744073000000000
    assert hc_in[("lab-router", "xe-0/0/1")] == 2**64 - 1
    assert not (tmp_path / "spool").exists()  # a dry run spools nothing


# --- six real routers (../shared/fixtures/snmprec, LibreNMS captures; see SOURCES.md there) ---------

CAPTURES = ROOT.parent / "shared" / "fixtures" / "snmprec"
# community (capture file) -> (equipment, interfaces the default selection reports, of how many)
CAPTURED_DEVICES = {
    "junos_rpm": ("lab-srx240", 59, 59),
    "iosxr_asr9010": ("lab-asr9010", 90, 100),  # 2 loopbacks and 8 dwdm controllers have no octet counter
    "timos": ("lab-7210sas", 14, 14),
    "arista_eos": ("lab-7050tx", 55, 55),
    "nxos_n3k-3064pq": ("lab-n3k", 54, 54),
    "ciena-rls_6500-r2": ("lab-ciena6500", 75, 75),
}


@pytest.fixture(scope="module")
def captures_sim():
    if not CAPTURES.is_dir():
        pytest.skip("real router captures absent (../shared/fixtures/snmprec)")
    # start() raises with the responder's log when it does not come up; leaving the block stops it for sure
    with SnmpSimulator(data_files=[CAPTURES / f"{name}.snmprec" for name in CAPTURED_DEVICES]) as simulator:
        yield simulator


def test_once_dry_run_on_six_real_routers_prints_every_selected_interface_with_exact_counters(captures_sim, tmp_path):
    sim = captures_sim
    tables = "".join(
        f'[[snmp]]\nequipment = "{equipment}"\nhost = "{sim.host}"\nport = {sim.port}\ncommunity = "{community}"\n'
        "timeout_s = 5\nretries = 2\nmax_repetitions = 50\n\n"
        for community, (equipment, _, _) in CAPTURED_DEVICES.items()
    )
    config = tmp_path / "agent.toml"
    config.write_text(
        '[central]\nurl = "https://wanmon.example.org"\n'
        f'token_file = "{tmp_path / "token-not-needed-for-dry-run"}"\n\n'
        f'[agent]\nsite = "RAL"\nspool_dir = "{tmp_path / "spool"}"\nstart_jitter_s = 0\n\n{tables}'
    )

    result = subprocess.run(
        agent_argv("once", "--config", str(config), "--dry-run"),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=WAIT_S,
    )

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    decoded = decode_records("[" + ",".join(lines) + "]", now=datetime.now(UTC))
    per_device: dict[str, int] = {}
    for record in decoded:
        per_device[record.equipment] = per_device.get(record.equipment, 0) + 1
    assert per_device == {equipment: kept for equipment, kept, _ in CAPTURED_DEVICES.values()}
    assert len(decoded) == len(lines) == 347  # of the 357 interfaces of the six captures
    assert len({(r.equipment, r.interface) for r in decoded}) == 347

    def counters(equipment: str, interface: str):
        (record,) = [r for r in decoded if (r.equipment, r.interface) == (equipment, interface)]
        return record

    # values as the capture files hold them (e.g. timos.snmprec 1.3.6.1.2.1.31.1.1.1.6.35684352)
    sas = counters("lab-7210sas", "1/1/1")
    assert (sas.counters.hc_in_octets, sas.counters.hc_out_octets) == (5680098420082678, 6025900727304484)
    assert '"hc_in_octets":5680098420082678,' in result.stdout  # digits, no float on the way
    asr = counters("lab-asr9010", "TenGigE0/0/0/0")
    assert (asr.counters.hc_in_octets, asr.counters.in_errors, asr.counters.in_discards) == (52129201677884, 50, 48753)
    assert asr.sys_uptime_ticks == 478395994
    srx = counters("lab-srx240", "ge-0/0/7")
    assert (srx.counters.hc_in_octets, srx.counters.hc_out_octets) == (5823315416420, 490120348210)
    ciena = counters("lab-ciena6500", "vdp")
    assert (ciena.counters.in_octets, ciena.counters.in_discards, ciena.counters.hc_in_octets) == (
        4252958467,
        1697822743,
        None,
    )
    assert counters("lab-n3k", "port-channel10").counters.hc_in_octets == 31193445858
    assert counters("lab-7050tx", "Ethernet47").counters.hc_in_ucast_pkts == 27282806667
    assert not [r for r in decoded if r.interface.startswith(("Loopback", "dwdm"))]

    logs = [json.loads(line) for line in result.stderr.splitlines()]
    runs = {log["collector"]: log["records"] for log in logs if log["message"] == "collector run"}
    assert runs == {
        f"snmp[{index}]:{equipment}": kept for index, (equipment, kept, _) in enumerate(CAPTURED_DEVICES.values())
    }
    # what the devices answer that the agent ignores: one line, the SRX's ifMtu of 2^31-1 on 16 interfaces
    warnings = [log for log in logs if log["level"] == "warning" and "collector" in log]  # not the config file's
    assert [(log["collector"], log["warning"][:42]) for log in warnings] == [
        ("snmp[0]:lab-srx240", "ifMtu: not a number within 0..65536, left ")
    ]
    assert "and 11 more" in warnings[0]["warning"]
