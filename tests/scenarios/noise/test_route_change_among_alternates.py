"""A real route change in a mesh whose traceroutes alternate between equal-cost routers, on production's road
(docs/diagnosis.md, ROUTE_CHANGE): CERN->CNAF's traceroutes every 30 minutes flip between Geneva's and Milan's
twin routers, then from hour 44 it is routed through Paris, a router it never crossed. The alternation alone is no
finding (else it stays open from the first cycle and the detour is that old finding); the detour opens one, dated
from its first traceroute.
"""

from __future__ import annotations

import pytest

from . import faults as f
from .cases.faulty import FaultyCase
from .corpus import Case
from .mesh import MeshSpec
from .verdict import replay_case

pytestmark = pytest.mark.django_db

CHANGE_H = 44
DETOUR = FaultyCase(
    "route-change-among-alternates",
    "From hour 44 CERN->CNAF is routed through Paris; Geneva's and Milan's routers are ECMP pairs.",
    MeshSpec(
        name="route-change-among-alternates",
        description="CERN and CNAF on 10G; traceroutes every 30 min alternate between equal-cost twins.",
        sites=("CERN", "CNAF"),
        seed=2912,
        days=2.1,
        tcp_interval_h=2.0,
        traceroute_interval_h=0.5,
        ecmp_pops=("geant-gva", "geant-mil"),
    ),
    (f.RouteChange(start_h=CHANGE_H, src="CERN", dst="CNAF", via="geant-par"),),
)


def test_a_route_onto_a_router_never_seen_among_ecmp_alternates_is_found_from_its_first_traceroute(tmp_path):
    verdict = replay_case(Case(DETOUR.name, False, DETOUR.base, DETOUR), tmp_path, since_h=CHANGE_H - 3)
    assert verdict.detected and not verdict.missed, "\n".join(verdict.lines())
    routes = [x for x in verdict.findings if x["code"] == "ROUTE_CHANGE"]
    assert all(x["subject"] == {"src": "CERN", "dst": "CNAF"} for x in routes), [x["subject"] for x in routes]
    assert verdict.detect_min and verdict.detect_min[0] <= 2 * verdict.step_min, "\n".join(verdict.lines())
    assert all(abs(m) <= verdict.step_min for m in verdict.onset_error_min), "\n".join(verdict.lines())
