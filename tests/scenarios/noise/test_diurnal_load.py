"""Busy uplinks on production's road: four sites on 10G whose polled uplinks carry production traffic ramping every
day to up to 85 % of the link, where a test gets only the capacity the other traffic leaves (docs/diagnosis.md,
"Load on the path").

The afternoon's lower results are what the load left the tests, not a degradation: no episode, so no
UNEXPLAINED_DEGRADATION and no SHARED_EQUIPMENT_SUSPECT cluster of every path through a busy uplink. And a path
that gets a fifth less than that room under the same load is found from its first morning, by its third test.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from .cases.faulty import THIN_FAULTS
from .corpus import CASES, Case
from .verdict import replay_case

pytestmark = pytest.mark.django_db

#: The rules this file holds to (LOSS_LIMITED and ASYMMETRIC_PATH on this mesh are other rules' matter).
LOAD_JUDGED = {"UNEXPLAINED_DEGRADATION", "SHARED_EQUIPMENT_SUSPECT"}

_FAULT = next(fc for fc in THIN_FAULTS if fc.name == "fault-drop-20pct-under-diurnal-load-pic-fzk")
(_DROP,) = _FAULT.faults
#: the mesh's TCP test interval (2-hourly)
TCP_INTERVAL_MIN = _FAULT.base.tcp_interval_h * 60
#: four days of history, then the day the drop starts (05:00 local): its first afternoon and evening
DAYS = 5.0

BUSY_UPLINKS = Case("diurnal-85pct-4-sites", True, replace(_FAULT.base, name="diurnal-85pct-4-sites", days=DAYS))
DROP_UNDER_LOAD = Case(
    _FAULT.name, False, replace(_FAULT.base, days=DAYS), replace(_FAULT, base=replace(_FAULT.base, days=DAYS))
)


def test_a_day_of_busy_uplinks_opens_no_degradation_on_the_road(tmp_path):
    # given four days of history, then the last day replayed at the test interval
    verdict = replay_case(BUSY_UPLINKS, tmp_path, since_h=(DAYS - 1) * 24)
    assert verdict.steps >= 20
    # then no path is degraded, unexplained or sharing a suspect element: the tests got what the load left them
    alarms = [a for a in verdict.alarms if a["code"] in LOAD_JUDGED]
    assert alarms == [], "\n".join(verdict.lines())


def test_a_fifth_less_than_the_room_under_the_same_load_is_found_on_the_road(tmp_path):
    # given PIC->FZK carrying 20 % less than the room the load leaves it from 05:00 on day 5, replayed from 2 h
    # before
    verdict = replay_case(DROP_UNDER_LOAD, tmp_path, since_h=_DROP.start_h - 2)
    # then it is found, with its code and subject, by the cycle after its third test short of its room (the
    # night's room above the path's median level is judged too: its tests reached it the night before), and
    # dated to the first of them, within one test interval
    assert verdict.detected and not verdict.missed, "\n".join(verdict.lines())
    [minutes] = verdict.detect_min
    assert minutes <= 3 * TCP_INTERVAL_MIN + verdict.step_min, "\n".join(verdict.lines())
    [onset_error] = verdict.onset_error_min
    assert abs(onset_error) <= TCP_INTERVAL_MIN, "\n".join(verdict.lines())
    # and no other path is reported degraded
    others = [
        (f["code"], f["subject"], f["summary"])
        for f in verdict.findings
        if f["code"] in LOAD_JUDGED and f["worst_severity"] != "info" and f["subject"] != {"src": "PIC", "dst": "FZK"}
    ]
    assert others == []


def test_busy_uplinks_are_quiet_from_a_new_deployments_first_hour(tmp_path):
    # given the 85 % diurnal mesh whose ports are polled every ten minutes, replayed from its first hour: no
    # history, and at each cycle the newest test has no poll covering it yet
    spec = replace(CASES["noise-10g-diurnal-85pct-spare-only"].spec, days=2.0)
    verdict = replay_case(Case("diurnal-85pct-new-deployment", True, spec), tmp_path, since_h=0,
                          step=timedelta(hours=1))
    # then no afternoon test reads as a collapse against the night's level while its poll is on its way
    assert verdict.steps >= 40
    assert verdict.alarms == [], "\n".join(verdict.lines())


def test_a_fifth_less_all_day_on_a_four_hourly_busy_path_is_found_within_a_day(tmp_path):
    # given PIC->FZK (tests every 4 h, its port's load following the day, the tests getting ~105 % of the room it
    # leaves) carrying a fifth less from day 4 on: each test still gets over 80 % of its room, and the day's rates
    # spread with the load
    case = CASES["fault-drop-20pct-pic-fzk"]
    (drop,) = case.faulty.faults
    verdict = replay_case(case, tmp_path, since_h=drop.start_h - 12)
    # then a day of tests short of their usual share of the room finds it, dated to its first test
    assert verdict.detected and not verdict.missed, "\n".join(verdict.lines())
    interval_min = case.spec.tcp_interval_h * 60
    [minutes] = verdict.detect_min
    assert minutes <= 24 * 60 + interval_min, "\n".join(verdict.lines())
    [onset_error] = verdict.onset_error_min
    assert abs(onset_error) <= interval_min, "\n".join(verdict.lines())
    # and nothing else is
    others = [
        (f["code"], f["subject"], f["summary"])
        for f in verdict.findings
        if f["worst_severity"] != "info" and f["subject"] != {"src": "PIC", "dst": "FZK"}
    ]
    assert others == []
