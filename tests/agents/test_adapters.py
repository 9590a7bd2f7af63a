"""Configured tables -> collectors: what each produces once validated, and how missing modules are skipped."""

from __future__ import annotations

import asyncio
import logging
import types

import pytest

from agents.adapters import build_collectors
from agents.config import ConfigError, parse_config
from agents.scheduler import Scheduler
from collectors import snmp as snmp_module
from collectors import twamp as twamp_module
from collectors.records import Counters, OwampRecord, SnmpRecord, ThroughputRecord
from collectors.runner import CommandResult, FakeCommandRunner, completed
from tests.agents.conftest import FIXTURES

HEAD = """
[central]
url = "https://wanmon.example.org"
token_file = "/etc/wanmon-agent/token"
[agent]
site = "RAL"
spool_dir = "/var/lib/wanmon-agent"
"""


class Sink:
    def __init__(self):
        self.records = []

    def __call__(self, collector, records):
        self.records.extend(records)


def run_once(collectors):
    sink = Sink()
    results = asyncio.run(Scheduler(collectors, sink=sink).run_once())
    return sink.records, results


def test_a_refused_nuttcp_connection_is_a_valid_error_record_for_path_down():
    config = parse_config(HEAD + '[[nuttcp]]\ndst = "FZK"\nhost = "fzk-dt01"\ninterval_s = 600\n')
    refused = (FIXTURES / "nuttcp-error-connrefused-stderr-1.txt").read_text()
    runner = FakeCommandRunner({"nuttcp": [completed("nuttcp-8.2.2\n"), CommandResult(1, "", refused, 0.1)]})

    records, (result,) = run_once(build_collectors(config, runner=runner))

    (record,) = records
    assert isinstance(record, ThroughputRecord)
    assert (record.src, record.dst, record.throughput_bps, record.exit_code) == ("RAL", "FZK", None, 1)
    assert record.error and "refused" in record.error.lower()
    assert record.schedule_interval_s == 600.0
    assert result.invalid == 0
    assert runner.programs_called() == ["nuttcp", "nuttcp"]


def test_twamp_light_against_a_real_reflector_gives_two_owamp_records():
    async def go():
        reflector = await twamp_module.serve_reflector("127.0.0.1", 0)
        port = reflector.get_extra_info("sockname")[1]
        try:
            config = parse_config(
                HEAD + f'[[twamp]]\ndst = "FZK"\nhost = "127.0.0.1"\nport = {port}\npackets = 20\n'
                "packet_interval_s = 0.01\ntimeout_s = 0.5\ninterval_s = 60\n"
            )
            sink = Sink()
            await Scheduler(build_collectors(config), sink=sink).run_once()
            return sink.records
        finally:
            reflector.close()

    forward, reverse = asyncio.run(go())

    assert all(isinstance(r, OwampRecord) for r in (forward, reverse))
    assert (forward.src, forward.dst, reverse.src, reverse.dst) == ("RAL", "FZK", "FZK", "RAL")
    assert (forward.packets_sent, forward.packets_lost, reverse.packets_lost) == (20, 0, 0)
    assert forward.tool == "twamp-light" and forward.schedule_interval_s == 60.0
    assert 0 <= forward.delay_min_ms <= forward.delay_median_ms <= forward.delay_max_ms < 500


class FakePoller:
    """Stands in for collectors.snmp.SnmpPoller (no UDP): answers with one interface's counters."""

    polled = []

    def __init__(self):
        self.closed = False

    async def poll_device(self, config, *, now=None):
        FakePoller.polled.append(config)
        record = SnmpRecord(
            time=now,
            equipment=config.equipment,
            interface="xe-1/0/0",
            sys_uptime_ticks=883412200,
            oper_status="up",
            counters=Counters(hc_in_octets=2**64 - 1, hc_out_octets=12),
        )
        return snmp_module.DevicePoll(
            equipment=config.equipment,
            host=config.host,
            port=config.port,
            time=now,
            elapsed_s=0.01,
            records=(record,),
            warnings=("column 1.3.6.1.2.1.2.2.1.22 left out: genErr",),
        )

    def close(self):
        self.closed = True


def fake_snmp_module():
    return types.SimpleNamespace(SnmpDeviceConfig=snmp_module.SnmpDeviceConfig, SnmpPoller=FakePoller)


def test_snmp_tables_become_device_configs_of_collectors_snmp(caplog):
    config = parse_config(
        HEAD + '[[snmp]]\nequipment = "ral-border"\nhost = "192.0.2.1"\nversion = "3"\nuser = "wanmon"\n'
        'auth_protocol = "sha256"\nauth_key = "auth-pass-1"\npriv_protocol = "AES"\npriv_key = "priv-pass-1"\n'
        'interval_s = 30\ninterfaces = ["xe-1/0/0"]\nif_index_names = {"501" = "xe-1/0/0"}\n'
    )
    FakePoller.polled = []
    loaded = []

    def import_module(name):
        loaded.append(name)
        return fake_snmp_module()

    collectors = build_collectors(config, import_module=import_module)
    with caplog.at_level(logging.WARNING):
        records, (result,) = run_once(collectors)

    assert loaded == ["collectors.snmp"]
    (device,) = FakePoller.polled
    assert (device.equipment, device.host, device.version, device.user) == ("ral-border", "192.0.2.1", "3", "wanmon")
    assert (device.auth_protocol, device.priv_protocol, device.security_level) == ("SHA256", "AES", "authPriv")
    assert device.interfaces == ("xe-1/0/0",) and device.if_index_names == {501: "xe-1/0/0"}
    assert device.timeout_s == snmp_module.DEFAULT_TIMEOUT_S  # not set in the table: the module's default
    (record,) = records
    assert record.counters.hc_in_octets == 2**64 - 1 and record.equipment == "ral-border"
    assert collectors[0].interval_s == 30.0 and result.error is None
    assert any(getattr(r, "warning", "").startswith("column") for r in caplog.records)
    assert "auth-pass-1" not in repr(collectors[0].config)


def test_a_table_collectors_snmp_refuses_is_a_config_error():
    config = parse_config(
        HEAD + '[[snmp]]\nequipment = "x"\nhost = "h"\ncommunity = "c"\ntimeout_s = 5\nretries = 3\ndeadline_s = 10\n'
    )
    with pytest.raises(ConfigError) as caught:
        build_collectors(config, import_module=lambda name: fake_snmp_module())
    (error,) = caught.value.errors
    assert error.startswith("agent.toml: snmp[0]: snmp x: deadline_s 10.0 is shorter than one request")


def test_missing_optional_modules_skip_only_their_tables(caplog):
    config = parse_config(
        HEAD + '[[snmp]]\nequipment = "x"\nhost = "h"\ncommunity = "c"\n[[twamp]]\ndst = "FZK"\nhost = "h"\n'
        '[[host_tcp]]\ninterface = "lo"\n'
    )

    def import_module(name):
        raise ModuleNotFoundError(f"No module named {name!r}")

    with caplog.at_level(logging.ERROR):
        collectors = build_collectors(config, import_module=import_module)

    assert [c.name for c in collectors] == ["host_tcp[0]"]
    messages = [r.getMessage() for r in caplog.records]
    assert "SNMP collector unavailable: [[snmp]] tables skipped" in messages
    assert "TWAMP collector unavailable: [[twamp]] tables skipped" in messages


def test_collector_timeouts_cover_the_tools_own_deadlines():
    config = parse_config(
        HEAD + '[[nuttcp]]\ndst = "FZK"\nhost = "h"\nduration_s = 10\nreverse = true\n'
        '[[owamp]]\ndst = "FZK"\nhost = "h"\npackets = 600\n'
    )
    nuttcp, owamp = build_collectors(config, runner=FakeCommandRunner())
    # two directions of (10 s test + 45 s nuttcp margin), the version probe, and a margin
    assert nuttcp.timeout_s == 2 * 55 + 10 + 10 and nuttcp.exclusive_group == "throughput"
    # 600 packets at 0.1 s, 10 s loss timeout, owping margin, scheduler margin
    assert owamp.timeout_s == pytest.approx(60 + 10 + 30 + 10)
