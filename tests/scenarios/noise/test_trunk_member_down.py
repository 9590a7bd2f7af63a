"""A LAG member down, replayed on production's road: a finding of its own naming the member, its bundle and the
capacity left, and never a hashing TRUNK_IMBALANCE.

The case is the noise corpus's ``fault-trunk-member-down-sara`` on two sites over two days (it replays in
seconds): SARA's uplink is two 10 Gb/s members, polled every 5 minutes with jitter, with diurnal load; at 12:05 on
day 2 one member goes oper down and the other carries the whole bundle. Before, production's cycle compared the
member left, averaged over the whole window (six hours of the whole bundle), with the member down, averaged over
its few polls before it failed, and reported "members unevenly loaded" (46 %) for hours, blaming the hashing.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from . import faults as f
from .cases.faulty import FaultyCase, _small
from .cases.healthy import EU_10G
from .corpus import Case
from .verdict import replay_case

pytestmark = pytest.mark.django_db

ONSET_H = 36.0  # 12:00 on day 2; the member's first poll down is at ~12:05


def member_down_case() -> Case:
    spec = replace(_small(EU_10G, ("CERN", "SARA")), name="trunk-member-down-short", days=2.0)
    faulty = FaultyCase(
        "trunk-member-down-short",
        "SARA's 2 x 10G uplink LAG loses a member at 12:00 on day 2.",
        spec,
        (f.TrunkMemberDown(start_h=ONSET_H, site="SARA"),),
    )
    return Case(faulty.name, False, spec, faulty)


def test_a_member_down_is_found_on_productions_road_with_its_bundle_and_the_capacity_left(tmp_path):
    # given production's cycle run at the case's test interval from three hours before the member fails
    verdict = replay_case(member_down_case(), tmp_path, since_h=ONSET_H - 3)
    assert verdict.steps >= 12
    # then the member down is found, within one test interval, with its true onset
    assert verdict.detected and not verdict.missed, "\n".join(verdict.lines())
    assert verdict.detect_min[0] <= verdict.step_min
    assert 0 <= verdict.onset_error_min[0] <= 10
    [down] = [x for x in verdict.findings if x["subject"].get("member")]
    assert down["subject"] == {"trunk": "sara-ae0", "member": "sara-border:et-0/0/1"}
    # named with its bundle and the capacity left, down since its first poll down -- still, six hours later,
    # when the window no longer holds it
    assert down["summary"] == "sara-ae0: member sara-border:et-0/0/1 down since 12:05, 10 of 20 Gb/s left"
    assert down["status"] == "open" and down["worst_severity"] == "warning"
    # and no hashing imbalance of the bundle (nor anything else above info) at any step
    assert [x for x in verdict.findings if x["subject"] == {"trunk": "sara-ae0"}] == []
    loud = [x for x in verdict.findings if x is not down and x["worst_severity"] != "info"]
    assert loud == [], loud
