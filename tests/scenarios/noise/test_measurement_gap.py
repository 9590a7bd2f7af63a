"""A test daemon that dies, on production's road (docs/diagnosis.md, MEASUREMENT_GAP): CERN->FZK's tests run every
hour (owamp) and every 2 h (TCP), then none arrives any more. No new test means no reason in the fresh tests to
evaluate the path again, and an hourly kind leaves at most three results in the 6-hour window once three of its
intervals are missing: the cycle must still look at the silent path, and the rule must take the kind's regularity
from the baseline period.
"""

from __future__ import annotations

from datetime import timedelta
from types import SimpleNamespace

import pytest

from . import faults as f
from .cases.faulty import FaultyCase
from .corpus import Case
from .mesh import MeshSpec, at
from .verdict import fault_seen_by, onset_tolerances, replay_case

pytestmark = pytest.mark.django_db

STOP_H = 44
SILENT = FaultyCase(
    "gap-daemon-dies",
    "From hour 44 no measurement of CERN->FZK arrives (the test daemon died).",
    MeshSpec(
        name="gap-daemon-dies",
        description="CERN and FZK on 10G, jumbo frames; owamp hourly, tests every 2 h, traceroutes every 6 h.",
        sites=("CERN", "FZK"),
        seed=2911,
        days=2.3,
        tcp_interval_h=2.0,
    ),
    (f.TestsStop(start_h=STOP_H, src="CERN", dst="FZK"),),
)


def test_a_path_whose_tests_stop_is_a_measurement_gap_once_three_intervals_are_missing(tmp_path):
    verdict = replay_case(Case(SILENT.name, False, SILENT.base, SILENT), tmp_path, since_h=STOP_H - 4)
    assert verdict.detected and not verdict.missed, "\n".join(verdict.lines())
    # three missing hourly sessions, then at most one cycle and a recheck of the silent path
    assert verdict.detect_min and verdict.detect_min[0] <= 5 * verdict.step_min, "\n".join(verdict.lines())
    # its onset is the last session before the silence, less than an interval before the daemon died
    assert all(abs(m) <= verdict.step_min for m in verdict.onset_error_min), "\n".join(verdict.lines())


def test_a_refused_throughput_tests_onset_is_judged_against_the_throughput_interval():
    # given a server that refuses every throughput test from hour 44, where TCP runs every 2 h and owamp hourly
    busy = FaultyCase("gap-server-busy", "", SILENT.base, (f.ServerBusy(start_h=STOP_H, src="CERN", dst="FZK"),))
    case = Case(busy.name, False, busy.base, busy)
    records = [SimpleNamespace(time=at(0) + timedelta(hours=h), src="CERN", dst="FZK", protocol="tcp")
               for h in range(0, 48, 2)]
    expect = {"findings": busy.faults[0].expect(case.mesh())}
    # then only the next throughput test can show it: its reported onset may lie one TCP interval off, not one hour
    assert fault_seen_by(case) == {0: "tcp"}
    assert onset_tolerances(records, expect, 60.0, fault_seen_by(case)) == {0: 120.0}
    assert onset_tolerances(records, expect, 60.0) == {0: 60.0}
