"""A lasting slight drop on a busy shared link: judged against what the load and the hosts usually let the tests get.

PIC->FZK arrives by fzk-border:et-0/0/0, a 10G port whose other traffic follows the day (0.5 Gb/s at night, 3.5
in the afternoon). The path's tests get the smaller of what its hosts reach (~9 Gb/s) and 105 % of the room the
load leaves (elastic background traffic yields to them). From a day before the window an inline device forwards
at 80 % of line rate: every test carries a fifth less. Each such test still gets "most of what the load left it"
(above LOAD_SPARE_MATCH_FRACTION of the room), and the raw rates of a day spread with the load, so neither the
single-test judgement nor a day's median of rates sees it; the tests' share of their room does.
"""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import datetime, timedelta

import pytest

from tests.diagnosis.builders import NOW, T0, bundle, codes_of, find, iface, rate_row, run, tcp
from wanmon.diagnosis import codes
from wanmon.diagnosis.evidence import PathEvidence, summarise_path
from wanmon.diagnosis.room import room_model

HOPS = ("pic-border", "geant-mad", "geant-fra", "fzk-border:et-0/0/0")
DAYS_BEFORE = 5


def load_bps(t: datetime) -> float:
    """The other traffic into FZK: low at night, 3.5 Gb/s at 15:00 UTC."""
    hour = t.hour + t.minute / 60
    return 0.5e9 + 3.0e9 * max(0.0, math.sin(math.pi * (hour - 5) / 18)) if 5 <= hour <= 23 else 0.5e9


def healthy_bps(t: datetime, load_factor: float = 1.0) -> float:
    wiggle = 1 + 0.02 * math.sin(t.timestamp() / 3600 * 2.3)  # run-to-run noise, +-2 %
    return min(9.0e9, 1.05 * (10e9 - load_factor * load_bps(t))) * wiggle


def evidence(*, fault_from_h: float | None, heavier_from_h: float | None = None, room_history: bool = True):
    """The path with tests every hour: ``DAYS_BEFORE`` days before the window and the window's 6 h; the fault
    (x0.8) from ``fault_from_h`` hours before NOW; or the other traffic 60 % heavier from ``heavier_from_h``."""
    def rate(t: datetime) -> float:
        heavier = heavier_from_h is not None and t >= NOW - timedelta(hours=heavier_from_h)
        r = healthy_bps(t, 1.6 if heavier else 1.0)
        return r * 0.8 if fault_from_h is not None and t >= NOW - timedelta(hours=fault_from_h) else r

    def room(t: datetime) -> float:
        heavier = heavier_from_h is not None and t >= NOW - timedelta(hours=heavier_from_h)
        return 10e9 - (1.6 if heavier else 1.0) * load_bps(t)

    times = [NOW - timedelta(hours=h) for h in range(DAYS_BEFORE * 24 + 6, 0, -1)]
    before = [t for t in times if t < T0]
    window = [t for t in times if t >= T0]
    history_tests = [replace(tcp(0, rate(t)), time=t) for t in before]
    window_tests = tuple(replace(tcp(0, rate(t)), time=t) for t in window)
    polls = [
        rate_row((t - T0).total_seconds() / 60, in_bps=10e9 - room(t), interval_s=300.0)
        for t in (T0 + timedelta(minutes=5 * i) for i in range(0, 73))
    ]
    port = iface("fzk-border", "et-0/0/0", 10e9, polls)
    path = PathEvidence(
        "PIC",
        "FZK",
        10e9,
        HOPS,
        window_tests,
        baseline=summarise_path(history_tests, (), (), before[0], T0),
        earlier_tcp_results=tuple(
            (t.time, t.throughput_bps) for t in history_tests if t.time >= NOW - timedelta(days=1)
        ),
        room_history=tuple((t.time, t.throughput_bps, room(t.time)) for t in history_tests) if room_history else (),
    )
    return bundle(path, interfaces=(port,))


def test_the_model_learns_the_paths_share_of_its_room_and_its_hosts_reach():
    b = evidence(fault_from_h=None)
    model = room_model(b.paths[0].room_history)
    assert model is not None
    assert model.share == pytest.approx(1.05, abs=0.03)
    assert model.reach_bps == pytest.approx(9.0e9, rel=0.03)
    assert model.usual_ratio == pytest.approx(1.0, abs=0.02) and model.sigma < 0.03


def test_a_fifth_less_for_a_day_on_a_busy_link_is_a_degradation_from_its_first_low_test():
    findings = run(evidence(fault_from_h=30))
    (f,) = find(findings, codes.UNEXPLAINED_DEGRADATION, src="PIC", dst="FZK")
    assert "got a median 80" in f.explanation and "of what the load and its hosts usually let" in f.explanation
    # the onset is the first low test, a day before the window, not the window's edge
    assert f.start <= NOW - timedelta(hours=23)


def test_without_the_room_history_the_same_drop_passes_as_what_the_load_left():
    assert codes.UNEXPLAINED_DEGRADATION not in codes_of(run(evidence(fault_from_h=30, room_history=False)))


def test_a_healthy_busy_link_is_quiet():
    assert run(evidence(fault_from_h=None)) == []


def test_a_day_of_heavier_load_is_the_loads_not_a_fault():
    # the other traffic 60 % heavier for a day: every test gets less, as much less as the room it left
    findings = run(evidence(fault_from_h=None, heavier_from_h=30))
    assert codes.UNEXPLAINED_DEGRADATION not in codes_of(findings)
