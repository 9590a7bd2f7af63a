"""Two statistical defects of the diagnosis, judged on production's road (tests/scenarios/noise/verdict.py).

- Results piled up at line rate with a tail below: the spread used to judge a result below the level is the
  tail's, not the MAD of the pile, so ordinary tail results (-15..-30 %) open nothing at any step.
- A case-6-like loss measured precisely by UDP (millions of datagrams an hour) beside owamp's stray single
  losses: the most precise source leads, and LOSS_LIMITED is found on the path with UDP named as its source.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from .corpus import CASES
from .verdict import replay_case

pytestmark = pytest.mark.django_db


def test_tests_piled_up_at_line_rate_with_a_tail_below_open_no_warning_at_any_step(tmp_path):
    # given 4 sites on 10G whose hourly tests sit at ~97 % of line rate, a fifth of them 4-30 % below, and owamp
    # sessions losing a single stray packet now and then; five days of history
    case = CASES["noise-eu-10g-capped-line-rate"]
    # when production's cycle runs every test interval over the last day
    verdict = replay_case(case, tmp_path, since_h=6 * 24)
    # then it opens no warning or critical finding at any step
    assert verdict.steps >= 24
    assert not verdict.alarms, "\n".join(verdict.lines())


def test_a_loss_measured_precisely_by_udp_is_not_overridden_by_owamps_stray_losses(tmp_path):
    # given 1.1e-5 loss on CERN->FNAL from day 6.5, hourly 5 Gb/s UDP tests (~8 of 700 000 lost each) and hourly
    # 6000-packet owamp sessions whose receiver drops a single packet in about half of them
    case = CASES["fault-loss-limited-udp-precise-fnal"]
    # when production's cycle runs hourly from an hour before the fault
    verdict = replay_case(case, tmp_path, since_h=6.5 * 24 - 1, step=timedelta(hours=1))
    # then LOSS_LIMITED is found on the path, its loss from the UDP tests with their packet count
    assert verdict.detected and not verdict.missed, "\n".join(verdict.lines())
    [first, *_] = sorted(
        (f for f in verdict.findings if f["code"] == "LOSS_LIMITED" and f["subject"] == {"src": "CERN", "dst": "FNAL"}),
        key=lambda f: f["first_seen_at"],
    )
    evidence = first["evidence"]
    assert evidence["loss_source"] == "udp" and evidence["loss_packets"] > 1e6
    assert evidence["loss_fraction"] == pytest.approx(1.1e-5, rel=0.5)
    owamp = next(s for s in evidence["loss_sources"] if s["source"] == "owamp")
    assert owamp["scattered"] and not owamp["leads"]
    # found within a few test intervals of the onset
    assert max(verdict.detect_min) <= 4 * 60, "\n".join(verdict.lines())
