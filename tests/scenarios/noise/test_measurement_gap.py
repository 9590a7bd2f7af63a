"""A test daemon that dies, on production's road (docs/diagnosis.md, MEASUREMENT_GAP): CERN->FZK's tests run every
hour (owamp) and every 2 h (TCP), then none arrives any more. No new test means no reason in the fresh tests to
evaluate the path again, and an hourly kind leaves at most three results in the 6-hour window once three of its
intervals are missing: the cycle must still look at the silent path, and the rule must take the kind's regularity
from the baseline period.
"""

from __future__ import annotations

import pytest

from . import faults as f
from .cases.faulty import FaultyCase
from .corpus import Case
from .mesh import MeshSpec
from .verdict import replay_case

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
