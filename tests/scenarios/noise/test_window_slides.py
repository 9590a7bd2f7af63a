"""What must not change as the window slides, on production's road (docs/diagnosis.md, "One road"): two small
noisy meshes replayed through the cycle at their shortest test interval, each over a few hours.

- ECMP: CERN<->FZK whose traceroutes alternate hourly between Frankfurt's two equal-cost routers, and a
  drop on CERN->FZK that the route has nothing to do with: the route "changes" are shown, at info, never as a
  warning (docs/diagnosis.md, what the rules tolerate: ECMP alternation is normal).
- Slow evidence and explanations that last: host settings reported once a day (too small buffers at CNAF) and a
  detour through Madrid on CERN->FZK (+~10 ms one way): HOST_TCP_TUNING stays one open finding while the window
  holds no report (the last report before it is the evidence, with its age), and once the route change has slid
  out of the window the longer path's steady delay is not a fresh UNEXPLAINED_DEGRADATION.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from . import faults as f
from .cases.faulty import FaultyCase
from .corpus import Case
from .mesh import MeshSpec
from .verdict import replay_case

pytestmark = pytest.mark.django_db

_MESH = MeshSpec(
    name="window-slides",
    description="CERN, FZK and CNAF on 10G, jumbo frames; owamp hourly, tests every 2 h, traceroutes hourly.",
    sites=("CERN", "FZK", "CNAF"),
    seed=2611,
    capacity_mbps=10_000,
    days=1.5,
    tcp_interval_h=2.0,
    traceroute_interval_h=1.0,
)
ECMP = FaultyCase(
    "window-slides-ecmp",
    "From hour 40 CERN->FZK carries 40 % of its rate (an inline device); Frankfurt's routes alternate by ECMP.",
    replace(_MESH, name="window-slides-ecmp", sites=("CERN", "FZK"), ecmp_pops=("geant-fra",), days=2.5),
    (f.RateFactor(start_h=40, src="CERN", dst="FZK", factor=0.4),),
)
SLOW = FaultyCase(
    "window-slides-slow-evidence",
    "CNAF's host has 4 MiB buffers all along (reported once a day); from hour 20 CERN->FZK detours via Madrid.",
    replace(_MESH, name="window-slides-slow-evidence"),
    (
        f.HostSettings(start_h=0, site="CNAF", buffer_max_bytes=4 << 20),
        f.RouteChange(start_h=20, src="CERN", dst="FZK", via="geant-mad"),
    ),
)


def _replay(fc: FaultyCase, tmp_path, since_h: float) -> list[dict]:
    return replay_case(Case(fc.name, False, fc.base, fc), tmp_path, since_h=since_h).findings


def test_ecmp_alternation_beside_a_real_drop_is_never_a_route_warning(tmp_path):
    findings = _replay(ECMP, tmp_path, since_h=38)
    routes = [x for x in findings if x["code"] == "ROUTE_CHANGE"]
    assert routes, "the alternation is shown"
    assert all(x["worst_severity"] == "info" for x in routes), [(x["subject"], x["summary"]) for x in routes]
    path = {"src": "CERN", "dst": "FZK"}
    assert any(
        x["code"] != "ROUTE_CHANGE" and x["subject"] == path and x["worst_severity"] != "info" for x in findings
    ), [(x["code"], x["subject"], x["worst_severity"]) for x in findings]


def test_slow_evidence_and_explanations_do_not_expire_with_the_window(tmp_path):
    findings = _replay(SLOW, tmp_path, since_h=16)
    path = {"src": "CERN", "dst": "FZK"}
    tuning = [x for x in findings if x["code"] == "HOST_TCP_TUNING" and x["subject"]["site"] == "CNAF"]
    unexplained = [x for x in findings if x["code"] == "UNEXPLAINED_DEGRADATION" and x["subject"] == path]
    # both judged before either assertion, so that a failure says everything that went wrong
    assert (
        [(x["first_seen_at"], x["resolved_at"]) for x in tuning],
        [x["summary"] for x in unexplained],
    ) == ([(tuning[0]["first_seen_at"], None)], [])
    assert tuning[0]["evidence"]["settings_age_s"] > 6 * 3600  # at the end, the report of hour ~24 is ~12 h old
    assert any(x["code"] == "ROUTE_CHANGE" and x["subject"] == path for x in findings)
