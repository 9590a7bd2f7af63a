"""A busy link on production's road (tests/scenarios/noise/verdict.py): the 85 % diurnal mesh, whose tests get
only the capacity the production traffic leaves them, in its busiest afternoon hours.

TCP tests at a full uplink retransmit what they lose in its queue: their own congestion, not a loss of the path
(LOSS_LIMITED from retransmits alone); and a direction whose uplink was busier at the time carries less than the
reverse without being an asymmetric path (docs/diagnosis.md, LOSS_LIMITED and ASYMMETRIC_PATH).
"""

from __future__ import annotations

import pytest

from .cases.faulty import _small
from .cases.healthy import DIURNAL_85
from .corpus import Case
from .verdict import replay_case

pytestmark = pytest.mark.django_db

SITES = ("CERN", "CNAF", "IN2P3", "RAL")


def test_tests_that_fill_a_busy_uplink_open_no_loss_or_asymmetry_warning(tmp_path):
    # given 4 of its sites on 10G whose uplinks carry up to 85 % of their speed every afternoon, tests every 2 hours,
    # two days of history
    case = Case("busy-uplinks-4-sites", True, _small(DIURNAL_85, SITES, name="busy-uplinks-4-sites", days=2.0))
    # when production's cycle runs every test interval through the second afternoon and evening
    verdict = replay_case(case, tmp_path, since_h=24 + 12)
    # then neither LOSS_LIMITED nor ASYMMETRIC_PATH opens a warning or critical finding at any step
    assert verdict.steps >= 2
    alarms = [f for f in verdict.alarms if f["code"] in ("LOSS_LIMITED", "ASYMMETRIC_PATH")]
    assert not alarms, "\n".join(verdict.lines())
