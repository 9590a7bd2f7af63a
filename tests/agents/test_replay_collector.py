"""The [[replay]] collector: a scenario's timeline shifted to the present, filtered, looped, never sent twice."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml

from agents.adapters import build_collectors
from agents.config import ConfigError, parse_config
from agents.replay_collector import ReplayCollector, ReplayError, ReplayTarget, load_timeline
from agents.scheduler import Scheduler
from agents.spool import Spool
from agents.validation import check_records
from collectors.records import HostTcpRecord, OwampRecord, SnmpRecord, ThroughputRecord, TracerouteRecord

ROOT = Path(__file__).resolve().parents[2]
LHC_DEMO = ROOT / "wanmon" / "demo" / "data" / "lhc-demo.yaml"
T0 = datetime(2026, 3, 1, tzinfo=UTC)
HOURS = 2
END = T0 + timedelta(hours=HOURS)
PERIOD = timedelta(hours=HOURS)
NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)  # the agent's "now" in these tests
RATE_BPS = 4e9  # geant-fra:xe-0/0/0 carries 4 Gb/s in the file
U32, U64 = 2**32, 2**64


def iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def snmp(time: str, equipment: str, interface: str, uptime_ticks: int, in_octets: int, out_octets: int,
         **more_counters: int) -> dict:  # fmt: skip
    """One poll of an interface that is up."""
    counters = {"hc_in_octets": in_octets, "hc_out_octets": out_octets, **more_counters}
    return {"type": "snmp", "time": time, "equipment": equipment, "interface": interface,
            "sys_uptime_ticks": uptime_ticks, "oper_status": "up", "counters": counters}  # fmt: skip


def mini_scenario(*, bad_index: int | None = None) -> dict:
    """CERN<->FZK for 2 h: owamp every 5 min, TCP every 30 min, traceroute and host_tcp hourly, SNMP of two
    devices every 5 min (geant-fra's in-octets close to 2^64, so they wrap inside the file)."""
    m: list[dict] = []
    for i in range(HOURS * 12):
        t = T0 + timedelta(minutes=5 * i)
        for src, dst in (("CERN", "FZK"), ("FZK", "CERN")):
            m.append(
                {
                    "type": "owamp",
                    "time": iso(t),
                    "src": src,
                    "dst": dst,
                    "packets_sent": 600,
                    "packets_lost": 0,
                    "delay_min_ms": 4.9,
                    "delay_median_ms": 5.0,
                    "delay_max_ms": 5.6,
                }
            )
        octets = (U64 - 10**12 + i * round(RATE_BPS * 300 / 8)) % U64
        polled = iso(t + timedelta(seconds=10))
        m.append(snmp(polled, "geant-fra", "xe-0/0/0", 900_000 + i * 30_000, octets, i * 10**9, in_errors=3 * i))
        m.append(snmp(polled, "dfn-fra", "et-1/0/0", 5_000 + i * 30_000, i * 10**10, i * 10**10))
    for i in range(HOURS * 2):
        t = T0 + timedelta(minutes=30 * i, seconds=20)
        for src, dst in (("CERN", "FZK"), ("FZK", "CERN")):
            m.append(
                {
                    "type": "throughput",
                    "time": iso(t),
                    "src": src,
                    "dst": dst,
                    "tool": "nuttcp",
                    "protocol": "tcp",
                    "duration_s": 10,
                    "throughput_bps": 9.3e9,
                    "rtt_ms": 9.8,
                }
            )
    for i in range(HOURS):
        t = T0 + timedelta(hours=i, minutes=40)
        m.append(
            {
                "type": "traceroute",
                "time": iso(t),
                "src": "CERN",
                "dst": "FZK",
                "hops": ["cern-border", "geant-gva", "geant-fra", "dfn-fra", "fzk-border"],
            }
        )
        for site, host in (("CERN", "cern-dt01"), ("FZK", "fzk-dt01")):
            m.append(
                {
                    "type": "host_tcp",
                    "time": iso(t + timedelta(minutes=10)),
                    "site": site,
                    "host": host,
                    "rmem_max": 268435456,
                    "wmem_max": 268435456,
                    "congestion_control": "cubic",
                    "mtu": 9000,
                }
            )
    if bad_index is not None:
        m[bad_index] = {**m[bad_index], "packets_lost": 601}  # more lost than sent
    return {"scenario": "mini", "now": iso(END), "topology": {}, "measurements": m}  # fmt: skip


@pytest.fixture
def scenario(tmp_path) -> Path:
    path = tmp_path / "mini.json"
    path.write_text(json.dumps(mini_scenario()))
    return path


def target(path: Path, **options) -> ReplayTarget:
    return ReplayTarget(file=path, **options)


def collector(path: Path, site: str = "CERN", *, state_dir=None, persist=False, **options) -> ReplayCollector:
    options.setdefault("equipment", ("geant-fra",))
    return ReplayCollector(target(path, **options), index=0, site=site, state_dir=state_dir, persist=persist)


def key(record) -> tuple:
    """What makes a record unique in the centre: kind, subject and time."""
    kind = type(record).__struct_config__.tag
    subject = getattr(record, "src", None) or getattr(record, "site", None) or record.equipment
    other = getattr(record, "dst", None) or getattr(record, "host", None) or getattr(record, "interface", None)
    return (kind, subject, other, getattr(record, "protocol", None), record.time)


def own_items(doc: dict, site: str, equipment=("geant-fra",)) -> list[dict]:
    out = []
    for m in doc["measurements"]:
        if m["type"] in ("throughput", "owamp", "traceroute") and m["src"] == site:
            out.append(m)
        elif m["type"] == "host_tcp" and m["site"] == site:
            out.append(m)
        elif m["type"] == "snmp" and m["equipment"] in equipment:
            out.append(m)
    return out


# --------------------------------------------------------------------------- configuration

HEAD = """
[central]
url = "https://wanmon.example.org"
token_file = "/etc/wanmon-agent/token"
[agent]
site = "CERN"
spool_dir = "{spool}"
"""


def test_a_replay_table_becomes_a_collector_with_its_options(scenario, tmp_path):
    text = HEAD.format(spool=tmp_path / "spool") + (
        f'[[replay]]\nfile = "{scenario}"\nspeed = 2\nshift = "2026-06-01T12:00:00Z"\nloop = true\n'
        'equipment = ["geant-fra"]\ninterval_s = 30\n'
    )
    config = parse_config(text)
    (t,) = config.replay
    assert (t.file, t.speed, t.loop, t.equipment, t.interval_s) == (scenario, 2.0, True, ("geant-fra",), 30.0)
    assert t.anchor == NOW
    (built,) = build_collectors(config)
    assert isinstance(built, ReplayCollector)
    assert (built.name, built.interval_s, built.site) == ("replay[0]:mini", 30.0, "CERN")
    assert built.state_dir == tmp_path / "spool"

    defaults = parse_config(HEAD.format(spool=tmp_path) + f'[[replay]]\nfile = "{scenario}"\n').replay[0]
    assert (defaults.speed, defaults.shift, defaults.loop, defaults.equipment) == (1.0, "end-at-now", False, ())


def test_bad_replay_tables_are_reported_with_file_and_key(scenario, tmp_path):
    text = HEAD.format(spool=tmp_path) + (
        f'[[replay]]\nfile = "{scenario}"\nshift = "yesterday"\n'
        f'[[replay]]\nfile = "{tmp_path / "missing.yaml"}"\n'
        f'[[replay]]\nfile = "{scenario}"\nspeed = 0\nloops = true\n'
    )
    with pytest.raises(ConfigError) as caught:
        parse_config(text, source="agent.toml")
    errors = "\n".join(caught.value.errors)
    assert 'agent.toml: replay[0]: shift: must be "end-at-now" or an RFC 3339 time' in errors
    assert f"agent.toml: replay[1]: file: {tmp_path / 'missing.yaml'}: no such file" in errors
    assert "agent.toml: replay[2].speed: must be > 0" in errors
    assert 'agent.toml: replay[2].loops: unknown key (did you mean "loop"?)' in errors


# --------------------------------------------------------------------------- shifting and filtering


def test_the_first_run_backfills_the_history_shifted_so_that_the_end_is_now(scenario):
    c = collector(scenario)
    records = c.collect(NOW)
    doc = mini_scenario()
    expected = own_items(doc, "CERN")
    assert len(records) == len(expected)
    shift = NOW - END
    assert sorted(r.time for r in records) == sorted(datetime.fromisoformat(m["time"]) + shift for m in expected)
    assert max(r.time for r in records) <= NOW
    assert c.anchor == NOW


def test_only_what_the_site_may_send_is_replayed(scenario):
    records = collector(scenario, "FZK").collect(NOW)
    kinds = Counter(type(r).__name__ for r in records)
    assert kinds == {"OwampRecord": 24, "SnmpRecord": 24, "ThroughputRecord": 4, "HostTcpRecord": 2}
    assert {r.src for r in records if isinstance(r, OwampRecord | ThroughputRecord)} == {"FZK"}
    assert {r.site for r in records if isinstance(r, HostTcpRecord)} == {"FZK"}
    assert {r.equipment for r in records if isinstance(r, SnmpRecord)} == {"geant-fra"}  # not dfn-fra

    cern = collector(scenario, "CERN", equipment=("dfn-fra", "geant-fra")).collect(NOW)
    assert {r.equipment for r in cern if isinstance(r, SnmpRecord)} == {"dfn-fra", "geant-fra"}
    assert any(isinstance(r, TracerouteRecord) for r in cern)
    assert not any(isinstance(r, SnmpRecord) for r in collector(scenario, "CERN", equipment=()).collect(NOW))


def test_an_explicit_shift_places_the_end_there_and_later_runs_send_what_became_due_once(scenario):
    anchor = NOW + timedelta(hours=1)  # the scenario's end is one hour ahead: its last hour is still to come
    c = collector(scenario, shift=iso(anchor))
    first = c.collect(NOW)
    assert max(r.time for r in first) <= NOW and len(first) < len(own_items(mini_scenario(), "CERN"))
    seen = list(first)
    moment = NOW
    while moment < anchor + timedelta(minutes=5):
        moment += timedelta(seconds=61)
        batch = c.collect(moment)
        assert all(seen[-1].time < r.time <= moment for r in batch) if seen and batch else True
        seen += batch
    assert len(seen) == len({key(r) for r in seen}) == len(own_items(mini_scenario(), "CERN"))
    assert c.collect(moment + timedelta(hours=5)) == []  # no loop: the timeline is over


def test_path_tests_carry_their_own_schedule_not_the_collectors_interval(scenario):
    records = collector(scenario).collect(NOW)
    owamp = next(r for r in records if isinstance(r, OwampRecord))
    tcp = next(r for r in records if isinstance(r, ThroughputRecord))
    trace = next(r for r in records if isinstance(r, TracerouteRecord))
    assert (owamp.schedule_interval_s, tcp.schedule_interval_s, trace.schedule_interval_s) == (300, 1800, 3600)


# --------------------------------------------------------------------------- looping


def test_a_loop_repeats_the_timeline_every_period_without_gaps_or_duplicates(scenario):
    c = collector(scenario, loop=True)
    records = c.collect(NOW)
    moment = NOW
    for _ in range(3 * 12):  # three hours of 5-min runs: one and a half periods
        moment += timedelta(minutes=5)
        records += c.collect(moment)
    assert len(records) == len({key(r) for r in records})
    owamp = sorted(r.time for r in records if isinstance(r, OwampRecord))
    gaps = {b - a for a, b in zip(owamp, owamp[1:], strict=False)}
    assert gaps == {timedelta(minutes=5)}  # the 5-min cadence runs on across the loop boundaries
    assert owamp[-1] > NOW + PERIOD  # iteration 2 has begun
    # One iteration later the same measurement comes again, one period later.
    first_tcp = min(r.time for r in records if isinstance(r, ThroughputRecord))
    assert first_tcp + PERIOD in {r.time for r in records if isinstance(r, ThroughputRecord)}


def test_snmp_counters_keep_growing_across_the_loop_at_the_files_rate(scenario):
    c = collector(scenario, loop=True)
    records = c.collect(NOW)
    for step in range(1, 6):  # every 30 min, for a period and a half
        records += c.collect(NOW + step * timedelta(minutes=30))
    polls = sorted((r for r in records if isinstance(r, SnmpRecord)), key=lambda r: r.time)
    assert len(polls) == 24 + 24 + 6  # one period of history, one of live data, half an hour of the next
    for a, b in zip(polls, polls[1:], strict=False):
        seconds = (b.time - a.time).total_seconds()
        assert seconds == 300
        assert b.sys_uptime_ticks - a.sys_uptime_ticks == 30_000  # 300 s of sysUpTime, no reboot at the seam
        grown = (b.counters.hc_in_octets - a.counters.hc_in_octets) % U64  # Counter64 wraps inside the file
        assert grown * 8 / seconds == pytest.approx(RATE_BPS, rel=0.01)
        assert 0 <= (b.counters.in_errors - a.counters.in_errors) % U32 <= 4
    assert any(b.counters.hc_in_octets < a.counters.hc_in_octets for a, b in zip(polls, polls[1:], strict=False))


def test_a_first_run_long_after_the_anchor_sends_one_period_of_history(scenario):
    c = collector(scenario, loop=True, shift=iso(NOW - timedelta(days=3)))
    records = c.collect(NOW)
    times = [r.time for r in records]
    assert NOW - PERIOD < min(times) and max(times) <= NOW
    assert len(records) == len(own_items(mini_scenario(), "CERN"))


def test_speed_compresses_time_and_keeps_snmp_rates(scenario):
    c = collector(scenario, speed=60)  # one scenario hour per real minute
    records = c.collect(NOW)
    assert min(r.time for r in records) >= NOW - timedelta(minutes=2)
    assert next(r for r in records if isinstance(r, OwampRecord)).schedule_interval_s == 5
    polls = sorted((r for r in records if isinstance(r, SnmpRecord)), key=lambda r: r.time)
    a, b = polls[3], polls[4]
    seconds = (b.time - a.time).total_seconds()
    assert seconds == 5
    assert (b.counters.hc_in_octets - a.counters.hc_in_octets) % U64 * 8 / seconds == pytest.approx(RATE_BPS, rel=0.01)
    assert (b.sys_uptime_ticks - a.sys_uptime_ticks) == 500


# --------------------------------------------------------------------------- state across restarts


def test_a_restarted_agent_continues_its_timeline_and_sends_nothing_twice(scenario, tmp_path):
    first = collector(scenario, loop=True, state_dir=tmp_path, persist=True)
    sent = first.collect(NOW) + first.collect(NOW + timedelta(minutes=10))
    (state_file,) = tmp_path.glob("replay-*.json")
    state = json.loads(state_file.read_text())
    assert state["anchor"] == "2026-06-01T12:00:00Z" and state["cursor"] == "2026-06-01T12:10:00Z"

    again = collector(scenario, loop=True, state_dir=tmp_path, persist=True)  # the agent restarts
    later = again.collect(NOW + timedelta(minutes=30))
    assert again.anchor == NOW
    assert all(NOW + timedelta(minutes=10) < r.time <= NOW + timedelta(minutes=30) for r in later)
    assert len(later) == 8  # 20 minutes: 4 owamp sessions and 4 SNMP polls
    assert not {key(r) for r in later} & {key(r) for r in sent}


def test_a_changed_scenario_file_starts_the_replay_afresh(scenario, tmp_path):
    collector(scenario, state_dir=tmp_path, persist=True).collect(NOW)
    scenario.write_text(json.dumps(mini_scenario()) + "\n")  # another digest
    c = collector(scenario, state_dir=tmp_path, persist=True)
    records = c.collect(NOW + timedelta(hours=1))
    assert c.anchor == NOW + timedelta(hours=1)
    assert len(records) == len(own_items(mini_scenario(), "CERN"))


def test_state_is_kept_only_while_this_process_holds_the_spool_as_run_and_once_do(scenario, tmp_path):
    spool_dir = tmp_path / "spool"
    dry = ReplayCollector(target(scenario), index=0, site="CERN", state_dir=spool_dir)  # persist: automatic
    assert dry.collect(NOW)
    assert not list(tmp_path.rglob("replay-*.json"))  # `once --dry-run` changes nothing

    with Spool(spool_dir):
        live = ReplayCollector(target(scenario), index=0, site="CERN", state_dir=spool_dir)
        assert live.collect(NOW)
    (state_file,) = spool_dir.glob("replay-*.json")
    assert json.loads(state_file.read_text())["cursor"] == "2026-06-01T12:00:00Z"

    dry_again = ReplayCollector(target(scenario), index=0, site="CERN", state_dir=spool_dir)
    assert dry_again.collect(NOW + timedelta(hours=1))  # the lock file is there but nobody holds it
    assert json.loads(state_file.read_text())["cursor"] == "2026-06-01T12:00:00Z"


# --------------------------------------------------------------------------- files


def test_yaml_and_json_scenarios_give_the_same_records(scenario, tmp_path):
    as_yaml = tmp_path / "mini.yaml"
    as_yaml.write_text(yaml.safe_dump(mini_scenario(), sort_keys=False))
    from_json = collector(scenario).collect(NOW)
    from_yaml = collector(as_yaml).collect(NOW)
    assert from_yaml == from_json


def test_an_invalid_measurement_of_this_site_is_named_others_are_not_its_business(tmp_path):
    doc = mini_scenario(bad_index=0)  # measurements[0]: owamp CERN->FZK with 601 of 600 lost
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ReplayError, match=r"bad.json: measurements\[0\]\.packets_lost"):
        collector(path, "CERN").collect(NOW)
    assert collector(path, "FZK").collect(NOW)  # FZK's agent does not send that record

    path.write_text("scenario: x\nmeasurements: 3\n")
    with pytest.raises(ReplayError, match="not a scenario"):
        load_timeline(path, site="CERN")


def test_records_pass_the_agents_validation_through_the_scheduler(scenario):
    config = parse_config(
        HEAD.format(spool="/nonexistent") + f'[[replay]]\nfile = "{scenario}"\nequipment = ["geant-fra"]\n'
    )
    collected = []
    results = asyncio.run(Scheduler(build_collectors(config), sink=lambda c, r: collected.extend(r)).run_once())
    (result,) = results
    assert result.error is None and result.invalid == 0
    assert len(collected) == len(own_items(mini_scenario(), "CERN"))
    assert next(r for r in collected if isinstance(r, OwampRecord)).schedule_interval_s == 300


def test_the_lhc_demo_scenario_replays_each_sites_share(tmp_path):
    doc = json.loads(LHC_DEMO.read_text())
    c = ReplayCollector(
        ReplayTarget(file=LHC_DEMO, loop=True, equipment=("geant-fra",)), index=0, site="FZK", persist=False
    )
    records = c.collect(NOW)
    assert len(records) == len(own_items(doc, "FZK")) > 1000
    checked = check_records(records, now=NOW)
    assert not checked.invalid and len(checked.records) == len(records)
    assert {r.equipment for r in records if isinstance(r, SnmpRecord)} == {"geant-fra"}
    assert max(r.time for r in records) <= NOW
    assert min(r.time for r in records) > NOW - timedelta(hours=48)
