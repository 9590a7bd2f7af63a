"""SHARED_EQUIPMENT_SUSPECT's load rise on production's road: small scenarios (one or two path directions, 5-minute
SNMP polls, tests every 30-60 min) replayed through the cycle at their test interval, as the beat would run it.

The shared link's load ramps up every morning (docs/diagnosis.md, what the rules tolerate): the tests on it get
the capacity the other traffic leaves, which says nothing of the equipment; a fault that starts during the ramp is
not the ramp's doing; and a path tested hourly for days did not "start" its traffic at the window's edge.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from tests.scenarios.regression.builder import MiB, Scenario, scenario
from tests.scenarios.regression.counters import Counter64Port
from wanmon.diagnosis.replay import scenario_load, scenario_replay

pytestmark = pytest.mark.django_db

DAY = datetime(2026, 3, 9, 0, 0, tzinfo=UTC)
FZK_CERN = ["fzk-border", "geant-fra:et-1/0/0", "geant-gva", "cern-border"]


#: The ramp scenarios start a day earlier: the day before holds the same diurnal cycle, the history a path's
#: judgements need (docs/diagnosis.md: a path with less than most of a day of history is not judged yet).
RAMP_START = DAY - timedelta(days=1)


def _ramp_share(t: datetime, peak: float) -> float:
    """The other traffic's share of the link: 20 % through the night, ramping to ``peak`` from 06:00 to 12:00,
    holding it in the afternoon and falling back to 20 % from 18:00 to 24:00, every day."""
    hours = (t - RAMP_START).total_seconds() / 3600 % 24
    if hours <= 6:
        return 0.2
    if hours <= 18:
        return 0.2 + (peak - 0.2) * math.sin(min(hours - 6, 6) / 6 * math.pi / 2)
    return 0.2 + (peak - 0.2) * math.cos((hours - 18) / 6 * math.pi / 2)


def _ramp_mesh(sc: Scenario, peak: float, fault_at: datetime | None = None) -> None:
    """FZK->CERN, host-limited at 30 Gb/s, over GEANT's 100G Frankfurt port whose load ramps up every morning;
    each test gets at most 95 % of what the other traffic leaves (from ``fault_at`` on, 70 % of its rate).  A day
    of history, then the second day's morning to noon."""
    sc.hours = 36.0
    sc.add_routers("fzk-border", "geant-fra", "geant-gva", "cern-border")
    sc.interface("geant-fra", "et-1/0/0", 600, 100_000)
    sc.path("FZK", "CERN", 100_000, FZK_CERN, both=False)
    port = Counter64Port("geant-fra", "et-1/0/0", 86400 * 40, 10**15, 3 * 10**15, mean_frame_bytes=6000)
    polls = sc.every(5)
    rates = {}
    for t in sc.every(30, 120):
        spare = 100e9 * (1 - _ramp_share(t, peak))
        thr = min(sc.jitter(30e9, 0.03), 0.95 * spare)
        if fault_at is not None and t >= fault_at:
            thr *= 0.7
        rates[t] = thr
        sc.tcp(t, "FZK", "CERN", thr, rtt_ms=10.2, mss=8948, window=None, retransmits=sc.rng.randint(20, 200))
    for i, t in enumerate(polls):
        if i:
            # the counters carry the other traffic and, during a test, its 10 s of bytes
            test = next((thr for when, thr in rates.items() if t - timedelta(minutes=5) < when <= t), 0.0)
            out = 100e9 * _ramp_share(t, peak) * (1 + sc.rng.gauss(0, 0.01)) + test * 10 / 300
            port.advance(300, 5e9, out)
        port.poll(sc, t)


@scenario("load-ramp-to-85pct-healthy", RAMP_START, carriers=("GEANT",), sites=("FZK", "CERN"))
def load_ramp_healthy(sc: Scenario) -> None:
    """GEANT's Frankfurt 100G port ramps from 20 % to 85 % of other traffic between 06:00 and 12:00 every day;
    FZK->CERN (host-limited at 30 Gb/s) gets what is left, 14 Gb/s at the peak. Healthy: the load predicts every
    result."""
    _ramp_mesh(sc, 0.85)


@scenario("load-ramp-to-70pct-with-a-fault", RAMP_START, carriers=("GEANT",), sites=("FZK", "CERN"))
def load_ramp_fault(sc: Scenario) -> None:
    """The same port ramps to 70 % only (30 Gb/s left: room for the path's level), and FZK->CERN loses 30 % of
    its rate at 10:00 on the second day for a reason of its own, during the ramp."""
    _ramp_mesh(sc, 0.70, fault_at=DAY + timedelta(hours=10))


@scenario("load-window-edge-hourly-neighbour", DAY, carriers=("GEANT",), sites=("NDGF", "FZK", "CERN"))
def window_edge(sc: Scenario) -> None:
    """FZK->CERN, tested every 10 min, collapses at 04:00 and stays down; NDGF->CERN crosses geant-gva too and
    tests hourly (10 min past the hour) at 8-9.5 Gb/s all along. Around 09:30 the 6-hour window starts just before
    the collapse and holds none of NDGF->CERN's earlier results: its history, not an empty window, says what it
    carried."""
    sc.hours = 10.5
    sc.add_routers("fzk-border", "geant-fra", "geant-gva", "cern-border", "ndgf-border")
    sc.path("FZK", "CERN", 10_000, ["fzk-border", "geant-fra", "geant-gva", "cern-border"], both=False)
    sc.path("NDGF", "CERN", 10_000, ["ndgf-border", "geant-gva", "cern-border"], both=False)
    for t in sc.every(10, 60):
        thr = sc.jitter(9.5e9, 0.02) if t < sc.at("04:00") else sc.jitter(1.2e9, 0.05)
        sc.tcp(t, "FZK", "CERN", thr, rtt_ms=10.0, mss=8948, window=64 * MiB, retransmits=sc.rng.randint(0, 3))
        if t.minute == 11:
            q = sc.rng.uniform(8.0e9, 9.5e9)
            sc.tcp(t, "NDGF", "CERN", q, rtt_ms=30.0, mss=8948, window=64 * MiB, retransmits=1)


def _replay(build, tmp_path, step_min: float, since: str, day: int = 0):
    """Every finding the cycles opened, one every ``step_min`` minutes from ``since`` on the scenario's ``day``
    (0: its first; before it: history only)."""
    sc = build()
    path = tmp_path / f"{sc.name}.yaml"
    path.write_text(sc.document())
    start = sc.at(since) + timedelta(days=day)
    return scenario_replay(scenario_load(str(path)), step=timedelta(minutes=step_min), since=start).findings


def _suspects(findings, severities=("warning", "critical")):
    return [f for f in findings if f.code == "SHARED_EQUIPMENT_SUSPECT" and f.worst_severity in severities]


def test_a_morning_ramp_that_leaves_the_tests_less_room_is_no_suspect_on_the_road(tmp_path):
    # given the morning ramp to 85 % of a 100G port after a day of the same cycle, replayed every 30 min from
    # 07:00 of the second day (the ramp's first hour)
    findings = _replay(load_ramp_healthy, tmp_path, 30, "07:00", day=1)
    # then the port is no warning suspect at any step: the tests got what the other traffic left them, which is
    # at most information
    assert _suspects(findings) == [], [(f.code, f.subject, f.summary) for f in findings]
    for port in _suspects(findings, ("info",)):
        assert port.evidence["verdict"] == "spare"
        assert "far below its capacity" not in port.explanation
        assert "the other traffic left them" in port.explanation
    # and the load explains the lower results: nothing unexplained either
    assert [f.code for f in findings if f.code == "UNEXPLAINED_DEGRADATION"] == []


def test_a_fault_during_the_ramp_is_not_explained_by_the_ramp_on_the_road(tmp_path):
    # given a 30 % loss of rate at 10:00 of the second day while the port's load ramps to 70 % (still room for
    # the path's 30 Gb/s)
    findings = _replay(load_ramp_fault, tmp_path, 30, "07:00", day=1)
    # then the ramp is not blamed for it (the load did not step up with the drop), and the drop is reported
    assert _suspects(findings, ("info", "warning", "critical")) == []
    assert [f.subject for f in findings if f.code == "UNEXPLAINED_DEGRADATION"] == [{"src": "FZK", "dst": "CERN"}]


def test_a_path_tested_hourly_did_not_start_its_traffic_at_the_window_edge_on_the_road(tmp_path):
    # given FZK->CERN collapsed since 04:00 and NDGF->CERN tested hourly, replayed every 10 min from 08:50 on
    findings = _replay(window_edge, tmp_path, 10, "08:50")
    # then NDGF->CERN's traffic never "started (0 -> 8.x Gb/s)", and no element is blamed for the collapse
    started = [f for f in findings for r in f.evidence.get("other_paths", []) if r["started"] or not r["before_bps"]]
    assert started == []
    assert _suspects(findings, ("info", "warning", "critical")) == []
