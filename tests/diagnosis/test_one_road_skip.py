"""One road, planned: the beat's cycle evaluates only the path directions that something new may change
(docs/diagnosis.md, "Planning"); a scenario replayed that way opens, updates and resolves the same findings as the
same replay evaluating every path direction at every cycle.

The scenario makes the window slide without new evidence: a loss that ends (the window slides past it), and a
direction whose tests stop (nothing new ever arrives on it: only its silence says something). The cycles run every
10 minutes over results 30 minutes to an hour apart, so that most cycles have most directions with nothing new.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.scenarios.noise import faults as f
from tests.scenarios.noise.cases.faulty import FaultyCase
from tests.scenarios.noise.corpus import Case
from tests.scenarios.noise.mesh import MeshSpec
from tests.scenarios.noise.verdict import replay_case
from wanmon.diagnosis import shards
from wanmon.inventory.selectors import path_list_valid_at

pytestmark = pytest.mark.django_db

STEP = timedelta(minutes=10)  # the beat runs every minute; 10 keeps the test short with the same skipping
SLIDES = FaultyCase(
    "one-road-planned",
    "CERN->FZK loses 1 packet in 1 000 for 2 hours from hour 27; from hour 30 no test of CNAF->CERN arrives.",
    MeshSpec(
        name="one-road-planned",
        description="CERN, FZK and CNAF on 10G, jumbo frames; owamp every 30 min, TCP and traceroutes hourly.",
        sites=("CERN", "FZK", "CNAF"),
        seed=2612,
        capacity_mbps=10_000,
        days=1.42,  # to hour 34: both findings resolved before its end
        tcp_interval_h=1.0,
        owamp_interval_min=30.0,
        traceroute_interval_h=1.0,
    ),
    (
        f.PathLoss(start_h=27, end_h=29, src="CERN", dst="FZK", loss=1e-3),
        f.TestsStop(start_h=30, src="CNAF", dst="CERN"),
    ),
)


def _every_path(*, now, late_s, window):  # noqa: ARG001 -- the planner's signature
    """The planner that skips nothing: every current path direction at every cycle."""
    return [(p.id, p.src.code, p.dst.code) for p in path_list_valid_at(at=now)]


def _lifecycles(findings: list[dict]) -> list[tuple]:
    return sorted(
        (x["code"], tuple(sorted(x["subject"].items())), x["first_seen_at"], x["worst_severity"], x["status"],
         x["resolved_at"])
        for x in findings
    )  # fmt: skip


def test_a_planned_replay_finds_what_evaluating_every_path_at_every_cycle_finds(tmp_path, monkeypatch):
    case = Case(SLIDES.name, False, SLIDES.base, SLIDES)
    # given the scenario replayed as the beat plans it, from hour 26 to its end (hour 34)
    planned = replay_case(case, tmp_path, since_h=26, step=STEP)
    # and the same replay evaluating every path direction at every cycle
    monkeypatch.setattr(shards, "paths_to_evaluate", _every_path)
    everything = replay_case(case, tmp_path, since_h=26, step=STEP)
    # then the drop and the silence were found, and every finding lived the same life on both roads
    codes = {(x["code"], x["subject"].get("src"), x["subject"].get("dst")) for x in everything.findings}
    assert {("MEASUREMENT_GAP", "CNAF", "CERN")} <= codes, codes
    assert _lifecycles(planned.findings) == _lifecycles(everything.findings)
