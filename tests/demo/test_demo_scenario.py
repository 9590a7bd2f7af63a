"""The demo of scripts/demo: the generated LHC scenario, its injected cases, and the simulated site agents.

Slow-ish (about half a minute): the replay loads 30 000 measurements through the real ingest and
diagnosis, and the agents' test pushes every site's share through the ingest as that site's agent.
"""

from __future__ import annotations

import importlib.util
import json
import stat
import sys
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command
from django.utils import timezone

from agents.adapters import build_collectors
from agents.config import load_config, read_token
from agents.replay_collector import ReplayCollector
from wanmon.alerts.models import Incident, Notification
from wanmon.alerts.services import alerts_process
from wanmon.diagnosis.choices import ACTIVE_STATUSES
from wanmon.diagnosis.models import Finding
from wanmon.diagnosis.replay import expect_check
from wanmon.diagnosis.shards import diagnosis_cycle_run
from wanmon.inventory.models import Agent
from wanmon.inventory.services import agent_authenticate
from wanmon.maintenance.models import MaintenanceWindow
from wanmon.measurements.ingest import batch_ingest
from wanmon.measurements.services import measurements_process

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "wanmon" / "demo" / "data"
LHC_DEMO = DATA / "lhc-demo.yaml"
LHC_TOPOLOGY = DATA / "lhc-topology.yaml"
SITES = ["ASGC", "BNL", "CERN", "CNAF", "FNAL", "FZK", "IN2P3", "NDGF", "PIC", "RAL", "SARA", "TRIUMF"]
POLLERS = {
    "cern-demo": {"geant-gva", "uslhcnet-gva"},
    "fzk-demo": {"geant-fra"},
    "fnal-demo": {"uslhcnet-chi"},
    "ral-demo": {"janet-lon", "ral-border"},
    "sara-demo": {"surf-ams"},
}
# What the brief of the demo promises to show (the file's expect block says more).
INJECTED = [
    {"code": "ASYMMETRIC_PATH", "subject": {"src": "FZK", "dst": "CERN"}},
    {"code": "SHARED_EQUIPMENT_SUSPECT", "subject": {"equipment": "geant-fra"}, "rank": 1},
    {"code": "WINDOW_LIMITED", "subject": {"src": "CERN", "dst": "ASGC"}},
    {"code": "TRUNK_IMBALANCE", "subject": {"trunk": "ral-lag"}},
    {"code": "MAINTENANCE_EXPLAINED"},
]


@pytest.fixture(scope="module")
def demo() -> dict:
    return json.loads(LHC_DEMO.read_text(encoding="utf-8"))  # JSON, which is valid YAML (docs/scenario-format.md)


def _generator():
    spec = importlib.util.spec_from_file_location("generate_demo", ROOT / "scripts" / "generate_demo.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


def test_the_demo_scenario_is_up_to_date_with_its_generator_and_the_topology(demo):
    assert _generator().main(["--check"]) == 0, "run scripts/generate_demo.py"
    assert LHC_DEMO.stat().st_size < 15 * 2**20
    topology = yaml.safe_load(LHC_TOPOLOGY.read_text())
    for section in ("carriers", "sites", "equipment", "interfaces", "circuits", "trunks", "paths"):
        assert demo["topology"][section] == topology[section], section
    hosts = {(h["site"], h["name"]) for h in demo["topology"]["hosts"]}
    assert {(h["site"], h["name"]) for h in topology["hosts"]} < hosts

    per_path: dict[tuple[str, str], dict[str, int]] = {}
    for m in demo["measurements"]:
        if "src" in m:
            kind = m.get("protocol") or m["type"]
            counts = per_path.setdefault((m["src"], m["dst"]), {})
            counts[kind] = counts.get(kind, 0) + 1
    assert set(per_path) == {(p["src"], p["dst"]) for p in topology["paths"]}
    assert all(c == {"tcp": 96, "udp": 24, "owamp": 576, "traceroute": 48} for c in per_path.values())
    times = sorted(m["time"] for m in demo["measurements"])
    assert (times[0], demo["now"]) == ("2026-01-05T00:00:00Z", "2026-01-07T00:00:00Z")
    assert {m["site"] for m in demo["measurements"] if m["type"] == "host_tcp"} == set(SITES)
    snmp = {m["equipment"] for m in demo["measurements"] if m["type"] == "snmp"}
    assert snmp == set().union(*POLLERS.values())
    assert demo["maintenance"][0]["affects"] == ["surf-ams"]


@pytest.mark.integration
@pytest.mark.django_db
def test_replay_check_finds_the_injected_cases_and_so_does_the_live_diagnosis(demo, capsys):
    try:
        # the beat's cycle over the last day of the timeline, every 30 minutes (the file's tests run every 30)
        since = (datetime.fromisoformat(demo["now"]) - timedelta(hours=24)).isoformat()
        call_command("replay", str(LHC_DEMO), "--check", "--keep", "--step", "30", "--since", since)
    except SystemExit as exc:
        pytest.fail(f"replay --check failed ({exc.code}):\n{capsys.readouterr().err}")
    assert "check passed" in capsys.readouterr().err
    # what the findings pages show at the end: scripts/demo's beat judges the last 6 hours every minute
    findings = list(Finding.objects.filter(status__in=ACTIVE_STATUSES))
    assert expect_check(findings, demo["expect"]) == []
    assert expect_check(findings, {"findings": INJECTED}) == []

    # and the incidents the alerting makes of them: the GEANT Frankfurt fault and the RAL trunk are two incidents,
    # each e-mailed to the sites whose paths cross its root element and to the element's operator, nobody else
    now = datetime.fromisoformat(demo["now"])
    alerts_process(now=now, flush=True, dispatch=False)
    incidents = {i.key: i for i in Incident.objects.all()}
    fra, lag = incidents["element:geant-fra"], incidents["trunk:ral-lag"]
    assert fra.root_finding.subject["equipment"] == "geant-fra" and "RAL" not in fra.sites
    assert not {m.finding.subject.get("dst") for m in fra.members.all()} & {"RAL"}
    assert "CERN->RAL" not in fra.paths and fra.onset is not None and fra.onset <= fra.opened_at
    told = {i: set(Notification.objects.filter(incident=i, kind="firing").values_list("recipient", flat=True))
            for i in (fra, lag)}
    assert "noc@geant.example" in told[fra] and "noc@ral.example" not in told[fra]
    assert told[fra] <= {"noc@geant.example", *(f"noc@{s.lower()}.example" for s in fra.sites)}
    assert "noc@ral.example" in told[lag] and "noc@geant.example" not in told[lag]


@pytest.mark.integration
@pytest.mark.django_db
def test_demo_agents_sets_up_one_agent_per_site_idempotently(tmp_path, capsys):
    call_command("demo_data")
    directory = tmp_path / "demo-agents"
    call_command("demo_agents", "--dir", str(directory), "--url", "http://127.0.0.1:8000")
    out = capsys.readouterr().out
    assert "CERN: agent cern-demo (created)" in out and "maintenance SURF-CHG-DEMO-0117" in out

    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert sorted(p.stem for p in directory.glob("*.toml")) == SITES
    agents = {a.name: a for a in Agent.objects.filter(name__endswith="-demo").prefetch_related("equipment")}
    assert sorted(agents) == sorted(f"{s.lower()}-demo" for s in SITES)
    for name, agent in agents.items():
        assert {e.name for e in agent.equipment.all()} == POLLERS.get(name, set())
    anchor = datetime.fromisoformat(json.loads((directory / "timeline.json").read_text())["anchor"])
    tokens = {}
    for site in SITES:
        config = load_config(directory / f"{site}.toml")
        for path in (directory / f"{site}.toml", directory / f"{site}.token"):
            assert stat.S_IMODE(path.stat().st_mode) == 0o600
        tokens[site] = read_token(config)
        assert agent_authenticate(token=tokens[site]).name == f"{site.lower()}-demo"
        assert config.agent.site == site and config.central.ingest_url == "http://127.0.0.1:8000/api/v1/ingest"
        (replay,) = config.replay
        assert (replay.file, replay.anchor, replay.loop) == (LHC_DEMO, anchor, True)
        assert set(replay.equipment) == POLLERS.get(f"{site.lower()}-demo", set())
    window = MaintenanceWindow.objects.get(reference="SURF-CHG-DEMO-0117")
    assert window.start == anchor - timedelta(hours=4) and window.end == anchor - timedelta(hours=2)
    assert window.rrule == "FREQ=DAILY;INTERVAL=2" and window.carrier.code == "SURF"  # the 48 h loop

    # Again: nothing changes. Without its token file an agent gets a new token (the old one stops working).
    (directory / "PIC.token").unlink()
    call_command("demo_agents", "--dir", str(directory), "--url", "http://127.0.0.1:8000")
    out = capsys.readouterr().out
    assert "CERN: agent cern-demo (unchanged)" in out and "PIC: agent pic-demo (new token)" in out
    assert Agent.objects.filter(name__endswith="-demo").count() == 12
    assert MaintenanceWindow.objects.filter(reference="SURF-CHG-DEMO-0117").count() == 1
    assert json.loads((directory / "timeline.json").read_text())["anchor"] == anchor.isoformat()
    assert read_token(load_config(directory / "CERN.toml")) == tokens["CERN"]
    assert agent_authenticate(token=tokens["PIC"]) is None
    assert agent_authenticate(token=read_token(load_config(directory / "PIC.toml"))).name == "pic-demo"


@pytest.mark.integration
@pytest.mark.django_db
def test_the_simulated_agents_may_send_all_they_replay_and_the_diagnosis_finds_the_cases(tmp_path):
    """What scripts/demo does, in process: every agent's first run, accepted by the ingest as that agent's."""
    call_command("demo_data")
    directory = tmp_path / "demo-agents"
    call_command("demo_agents", "--dir", str(directory), "--url", "http://127.0.0.1:8000")
    now = timezone.now().astimezone(UTC)
    since: dict[int, datetime] = {}
    total = 0
    for site in SITES:
        config = load_config(directory / f"{site}.toml")
        (collector,) = build_collectors(config)
        assert isinstance(collector, ReplayCollector)
        records = collector.collect(now)
        agent = Agent.objects.get(name=config.agent.name)
        result = batch_ingest(batch_id=str(uuid.uuid4()), records=records, agent=agent)  # 403 if not allowed
        assert result.accepted == len(records) > 500
        total += len(records)
        for iid, t in result.interface_since.items():
            since[iid] = min(t, since.get(iid, t))
    assert total == len(json.loads(LHC_DEMO.read_text())["measurements"])  # every record sent exactly once
    measurements_process(interface_since=since)
    diagnosis_cycle_run(now=now)
    findings = list(Finding.objects.filter(status__in=ACTIVE_STATUSES))
    assert expect_check(findings, {"findings": INJECTED}) == []
