"""Configured tables -> collectors: what each produces once validated, and how missing modules are skipped."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import types

import pytest

from agents.adapters import build_collectors, host_group
from agents.config import ConfigError, parse_config
from agents.scheduler import Scheduler, exclusive_groups
from collectors import snmp as snmp_module
from collectors import twamp as twamp_module
from collectors.records import Counters, OwampRecord, SnmpRecord, ThroughputRecord
from collectors.runner import CommandResult, FakeCommandRunner, completed
from tests.agents.conftest import CONFIG_HEAD, toolout


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
    config = parse_config(CONFIG_HEAD + '[[nuttcp]]\ndst = "FZK"\nhost = "fzk-dt01"\ninterval_s = 600\n')
    refused = toolout("nuttcp-error-connrefused-stderr-1.txt").read_text()
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
                CONFIG_HEAD + f'[[twamp]]\ndst = "FZK"\nhost = "127.0.0.1"\nport = {port}\npackets = 20\n'
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
        CONFIG_HEAD + '[[snmp]]\nequipment = "ral-border"\nhost = "192.0.2.1"\nversion = "3"\nuser = "wanmon"\n'
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
    # The [[snmp]] table is collectors.snmp_config.SnmpDeviceConfig itself: refused when the file is loaded.
    with pytest.raises(ConfigError) as caught:
        parse_config(
            CONFIG_HEAD + '[[snmp]]\nequipment = "x"\nhost = "h"\ncommunity = "c"\ntimeout_s = 5\nretries = 3\n'
            "deadline_s = 10\n"
        )
    (error,) = caught.value.errors
    assert error.startswith("agent.toml: snmp[0].deadline_s: 10.0 is shorter than one request")


def test_missing_optional_modules_skip_only_their_tables(caplog):
    config = parse_config(
        CONFIG_HEAD + '[[snmp]]\nequipment = "x"\nhost = "h"\ncommunity = "c"\n[[twamp]]\ndst = "FZK"\nhost = "h"\n'
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
        CONFIG_HEAD + '[[nuttcp]]\ndst = "FZK"\nhost = "h"\nduration_s = 10\nreverse = true\n'
        '[[owamp]]\ndst = "FZK"\nhost = "h"\npackets = 600\n'
    )
    nuttcp, owamp = build_collectors(config, runner=FakeCommandRunner())
    # two directions of (10 s test + 45 s nuttcp margin), the version probe, and a margin
    assert nuttcp.timeout_s == 2 * 55 + 10 + 10 and nuttcp.exclusive_group == "throughput"
    # 600 packets at 0.1 s, 10 s loss timeout, owping margin, scheduler margin
    assert owamp.timeout_s == pytest.approx(60 + 10 + 30 + 10)


def test_host_group_ignores_case_port_brackets_and_the_root_dot():
    assert host_group("FZK-DT01.example.org.") == "host:fzk-dt01.example.org"
    assert host_group("fzk-dt01.example.org:861") == "host:fzk-dt01.example.org"
    assert host_group("[2001:db8::1]:861") == host_group("2001:db8::1") == "host:2001:db8::1"
    assert host_group("192.0.2.7:861") == "host:192.0.2.7"


def test_active_tests_are_grouped_by_far_host_and_passive_ones_are_not():
    config = parse_config(
        CONFIG_HEAD
        + '[[nuttcp]]\ndst = "FZK"\nhost = "fzk-ps.example.org"\n'
        + '[[owamp]]\ndst = "FZK"\nhost = "FZK-PS.example.org:861"\n'
        + '[[twamp]]\ndst = "FZK"\nhost = "fzk-ps.example.org"\n'
        + '[[traceroute]]\ndst = "FZK"\nhost = "fzk-ps.example.org"\n'
        + '[[snmp]]\nequipment = "x"\nhost = "fzk-ps.example.org"\ncommunity = "c"\n'
        + '[[host_tcp]]\ninterface = "lo"\n'
    )
    groups = {c.name: exclusive_groups(c) for c in build_collectors(config)}
    assert groups == {
        "nuttcp[0]:FZK": ["host:fzk-ps.example.org", "throughput"],
        "owamp[0]:FZK": ["host:fzk-ps.example.org"],
        "twamp[0]:FZK": ["host:fzk-ps.example.org"],
        "traceroute[0]:FZK": [],
        "snmp[0]:x": [],
        "host_tcp[0]": [],
    }


class Activity:
    """Which test runs towards which host, when: (host, name, start, end) per run, thread-safe."""

    def __init__(self):
        self.lock = threading.Lock()
        self.active: dict[str, int] = {}
        self.runs: list[tuple[str, str, float, float]] = []
        self.b_saw_a = threading.Event()

    def begin(self, host: str) -> float:
        with self.lock:
            self.active[host] = self.active.get(host, 0) + 1
        return time.monotonic()

    def end(self, host: str, name: str, started: float) -> None:
        with self.lock:
            self.active[host] -= 1
            self.runs.append((host, name, started, time.monotonic()))

    def hold(self, host: str, name: str) -> None:
        """Host A's tests hold until a host B test has seen one of them running (or 30 s);
        B's owamp waits until an A test is running: with per-host exclusivity they overlap."""
        if host == "a":
            self.b_saw_a.wait(30)
            time.sleep(0.05)
        elif name == "owping":
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not self.active.get("a"):
                time.sleep(0.01)
            if self.active.get("a"):
                self.b_saw_a.set()
        else:
            time.sleep(0.05)


def test_the_scheduler_never_runs_two_active_tests_towards_one_host_at_once():
    """Real adapters and scheduler; the tools are a runner that logs when each runs towards which host."""
    a, b = "fzk-ps.example.org", "cnaf-ps.example.org"
    config = parse_config(
        CONFIG_HEAD
        + f'[[nuttcp]]\ndst = "FZK"\nhost = "{a}"\nreverse = true\nduration_s = 1\n'
        + f'[[owamp]]\ndst = "FZK"\nhost = "{a.upper()}:861"\n'
        + f'[[twamp]]\ndst = "FZK"\nhost = "{a}"\n'
        + f'[[owamp]]\ndst = "CNAF"\nhost = "{b}"\n'
        + f'[[nuttcp]]\ndst = "CNAF"\nhost = "{b}"\nduration_s = 1\n'
    )
    activity = Activity()
    nuttcp_output = toolout("nuttcp-tcp-fparse-1.txt").read_text()

    class Runner:
        def run(self, argv, timeout_s):
            program = argv[0]
            if argv[1:] == ["-V"]:
                return completed("nuttcp-8.2.2\n")
            host = "a" if any(a in arg.lower() for arg in argv) else "b"
            started = activity.begin(host)
            try:
                activity.hold(host, program)
            finally:
                activity.end(host, program, started)
            return completed(nuttcp_output) if program == "nuttcp" else CommandResult(1, "", "no server", 0.1)

    async def run_session(host, port, **options):
        key = "a" if host == a else "b"
        started = activity.begin(key)
        try:
            await asyncio.to_thread(activity.hold, key, "twping")
        finally:
            activity.end(key, "twping", started)
        raise ConnectionRefusedError("no reflector")  # an error run: still a run towards the host

    fake_twamp = types.SimpleNamespace(run_session=run_session, stats_to_records=lambda *args, **kw: [])
    collectors = build_collectors(
        config, runner=Runner(), import_module=lambda name: fake_twamp if name == "collectors.twamp" else None
    )

    async def go():
        return await asyncio.wait_for(Scheduler(collectors, sink=Sink()).run_once(), 120)

    results = asyncio.run(go())

    assert all(not r.skipped for r in results)
    on_a = sorted((start, end, name) for host, name, start, end in activity.runs if host == "a")
    assert [name for _, _, name in on_a].count("nuttcp") == 2  # forward and reverse
    assert len(on_a) == 4
    for (_, end, first), (start, _, second) in zip(on_a, on_a[1:], strict=False):
        assert start >= end, f"{second} started towards host A while {first} was running"
    nuttcps = sorted((start, end) for _, name, start, end in activity.runs if name == "nuttcp")
    assert all(start >= end for (_, end), (start, _) in zip(nuttcps, nuttcps[1:], strict=False))
    assert activity.b_saw_a.is_set()  # host B's owping ran while a test towards A was running
