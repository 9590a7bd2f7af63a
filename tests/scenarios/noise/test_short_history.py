"""Short histories on production's road: a new mesh, replayed cycle after cycle from its first result, stays
quiet through the noise of docs/diagnosis.md#what-the-rules-tolerate, and a 20 % drop lasting 20 hours inside a
short history is found once it has lasted the half day a slight drop must last.

Both meshes are four sites with hourly tests, replayed at their test interval from their first result: the first
cycles see no history at all, the last ones a day or two.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from wanmon.diagnosis import constants as k

from . import faults as f
from .cases.faulty import FaultyCase, _small
from .cases.healthy import EU_100G_FLAKY, LHCOPN_100G_BBR
from .corpus import Case
from .verdict import replay_case

pytestmark = pytest.mark.django_db

SITES = ("CERN", "FZK", "IN2P3", "PIC")

# Two days of a noisy 100G mesh (failed and slow tests, lost owamp packets, delay spikes, jittering polls): the
# production road opened an UNEXPLAINED_DEGRADATION and a SHARED_EQUIPMENT_SUSPECT on it, judged against a few
# hours of history.
NEW_MESH = Case(
    "short-history-flaky-100g",
    True,
    replace(
        _small(EU_100G_FLAKY, SITES, data_challenges=()),
        name="short-history-flaky-100g",
        seed=2,
        days=2.0,
        tcp_interval_h=1.0,
    ),
)

DROP_START_H, DROP_END_H = 28.0, 48.0
_DROP_BASE = replace(_small(LHCOPN_100G_BBR, SITES, data_challenges=()), seed=5, days=2.5, tcp_interval_h=1.0)
DROP_IN_SHORT_HISTORY = Case(
    "short-history-drop-20pct-pic-fzk",
    False,
    _DROP_BASE,
    FaultyCase(
        "short-history-drop-20pct-pic-fzk",
        "A day and a few hours after the mesh's first test, PIC->FZK carries 20 % less for 20 hours (an inline "
        "device at 80 % of line rate), then recovers; host-limited streams vary ~28 % run to run.",
        _DROP_BASE,
        (f.RateFactor(start_h=DROP_START_H, end_h=DROP_END_H, src="PIC", dst="FZK", factor=0.8),),
    ),
)


def test_a_new_mesh_opens_no_warning_at_any_step(tmp_path):
    verdict = replay_case(NEW_MESH, tmp_path)
    assert verdict.steps >= 48
    assert not verdict.alarms, "\n".join(verdict.lines())


def test_a_lasting_20_percent_drop_in_a_short_history_is_found_once_it_has_lasted(tmp_path):
    verdict = replay_case(DROP_IN_SHORT_HISTORY, tmp_path)
    assert verdict.detected and not verdict.missed, "\n".join(verdict.lines())
    # found within the persistence time of a slight drop and two test intervals (the cycle runs at the interval)
    [minutes] = verdict.detect_min
    assert minutes <= k.SLIGHT_DROP_MIN_SPAN_S / 60 + 2 * verdict.step_min, "\n".join(verdict.lines())
