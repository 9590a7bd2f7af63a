"""Replay part of the noise corpus on production's road and hold the engine to what an operator is shown.

Each case goes through the real ingest, then production's diagnosis cycle runs at the case's shortest test interval
with the findings' whole lifecycle. Healthy meshes: no warning or critical finding opened at any step (info
allowed; the incidents the alerting would have e-mailed are ``scripts/bench diagnosis``'s, which runs it after
every cycle). Faulty ones: every injected fault found with its code and subject, its first warning no later than
``DETECT_MAX_INTERVALS`` test intervals after the onset (the goal is two; ``scripts/bench diagnosis`` prints the
median), and the onset it reports within one test interval of the true one (``ONSET_GAPS``: not yet). The whole
corpus over every day of every case is ``scripts/bench diagnosis``'s (hours on a loaded machine); here a
representative part, each healthy mesh over its last two days (the five days before are its history) and each
fault from half a day before its onset. The thin spots' cases (``cases.healthy.THIN``, ``cases.faulty.THIN_FAULTS``)
join it once today's rules pass them.
"""

from __future__ import annotations

import pytest

from .corpus import CASES
from .verdict import replay_case

pytestmark = pytest.mark.django_db

HEALTHY = ["noise-eu-10g-cubic-jumbo", "noise-lhcopn-100g-bbr"]
FAULTY = [
    "fault-reverse-path-loss-fzk",
    "fault-crc-patch-panel-fzk",
    "fault-path-down-fzk-ndgf",
    "fault-window-triumf",
    "fault-maintenance-geant-fra",
    "fault-collapse-6h-fzk-cern",
    "fault-tcp-only-bbr-mtu1500-fzk-sara",
    "fault-route-change-cnaf",
    "fault-reverse-loss-2-days-history-in2p3",
    "fault-clock-drift-in2p3",
]
HISTORY_H = 5 * 24  # a healthy mesh's cycles start after five days of history
LEAD_H = 12  # a fault's cycles start half a day before it
# Today's road: 1-5 hourly intervals from onset to the first warning, host settings (reported every 6 h) the
# slowest; a fault found later than this is a regression.
DETECT_MAX_INTERVALS = 7
# Faults whose onsets today's road reports more than one interval of the tests that show them away from the true one
# (none of this part since 2026-11-30: the TCP policer's +154 min is the first TCP test after it began, four hours
# apart on that path).
ONSET_GAPS: set[str] = set()


def _fault_start_h(name: str) -> float:
    return min(f.start_h for f in CASES[name].faulty.faults)


@pytest.mark.parametrize("name", HEALTHY)
def test_healthy_mesh_opens_no_warning_at_any_step(name, tmp_path):
    verdict = replay_case(CASES[name], tmp_path, since_h=HISTORY_H)
    assert verdict.steps >= 48
    assert not verdict.alarms, "\n".join(verdict.lines())


@pytest.mark.parametrize("name", FAULTY)
def test_injected_fault_is_found_with_its_code_and_subject_in_time(name, tmp_path):
    verdict = replay_case(CASES[name], tmp_path, since_h=_fault_start_h(name) - LEAD_H)
    assert verdict.detected and not verdict.missed, "\n".join(verdict.lines())
    assert max(verdict.detect_min, default=0) <= DETECT_MAX_INTERVALS * verdict.step_min, "\n".join(verdict.lines())
    # within one interval of the tests that can show the fault (verdict.onset_tolerances: TCP for a TCP-only fault)
    within = bool(verdict.onset_error_min) and all(verdict.onsets_within)
    if name in ONSET_GAPS:  # a strict expected failure: fixing it makes this say so
        assert not within, f"{name}: its onsets are now within one test interval; take it out of ONSET_GAPS"
    else:
        assert within, "\n".join(verdict.lines())
