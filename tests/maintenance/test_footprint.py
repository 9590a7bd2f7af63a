"""Which paths a window touches and with what impact: the pure topology rules, no database."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from wanmon.maintenance import footprint as topo

T0 = datetime(2026, 1, 1, tzinfo=UTC)
T1 = datetime(2026, 1, 2, tzinfo=UTC)

# Equipment 1 cern-border (site 10 CERN), 2 geant-gva, 3 geant-lon, 4 janet-lon, 5 ral-border (site 20 RAL),
# 6 geant-fra, 7 fzk-border (site 30 FZK). Ports: 41, 42 on janet-lon; 51, 52 on ral-border; 21 on geant-gva.
# Trunk 100 (ral-lag) = 41, 42, 51, 52. Circuits: 200 = 41-51, 201 = 42-52, 202 = 21-(unknown).
CERN_RAL = topo.PathView(1, "CERN", "RAL", 10, 20, T0, None, ((1, None), (2, None), (3, None), (4, 41), (5, None)))
RAL_CERN = topo.PathView(2, "RAL", "CERN", 20, 10, T0, None, ((5, 51), (4, None), (3, None), (2, None), (1, None)))
CERN_FZK = topo.PathView(3, "CERN", "FZK", 10, 30, T0, None, ((1, None), (2, 21), (6, None), (7, None)))
OLD_FZK = topo.PathView(4, "CERN", "FZK", 10, 30, datetime(2025, 1, 1, tzinfo=UTC), T0, ((1, None), (7, None)))


@pytest.fixture
def tp() -> topo.Topology:
    return topo.Topology(
        paths=[CERN_RAL, RAL_CERN, CERN_FZK, OLD_FZK],
        interface_equipment={41: 4, 42: 4, 51: 5, 52: 5, 21: 2},
        equipment_site={1: 10, 2: None, 3: None, 4: None, 5: 20, 6: None, 7: 30},
        trunk_members={100: frozenset({41, 42, 51, 52})},
        circuit_ends={200: (41, 51), 201: (42, 52), 202: (21, None)},
        path_pairs={1: (10, 20), 2: (20, 10), 3: (10, 30), 4: (10, 30)},
        site_codes={10: "CERN", 20: "RAL", 30: "FZK"},
    )


def t(kind, pk, impact="outage", label=None):
    return topo.Target(kind, pk, impact, label or f"{kind}:{pk}")


def test_footprint_includes_trunk_siblings_far_ends_and_parallel_circuits(tp):
    fp = tp.footprint(CERN_RAL)
    assert fp.equipment == {1, 2, 3, 4, 5}
    assert fp.trunks == {100}
    # the hop leaves janet-lon by 41; the LAG spreads flows over 41 and 42 and ends on 51 and 52
    assert fp.interfaces == {41, 42, 51, 52}
    # both member circuits carry the path's traffic
    assert fp.circuits == {200, 201}
    assert fp.sites == {10, 20}


def test_an_unknown_port_is_not_crossed(tp):
    # CERN->FZK names no port at janet-lon (it does not even pass there) nor at geant-fra
    assert not tp.touches(t(topo.INTERFACE, 42), CERN_FZK)
    # a hop at geant-gva leaving by 21 crosses port 21 and the circuit starting there
    assert tp.touches(t(topo.INTERFACE, 21), CERN_FZK) and tp.touches(t(topo.CIRCUIT, 202), CERN_FZK)


@pytest.mark.parametrize(
    ("targets", "impact", "explains"),
    [
        # carrier says reduced redundancy on one member circuit: the working path is not affected
        ([t(topo.CIRCUIT, 201, "reduced-redundancy")], "reduced-redundancy", False),
        # an outage of one member of the redundant LAG degrades the path (half the capacity), not cuts it
        ([t(topo.CIRCUIT, 201, "outage")], "degraded", True),
        ([t(topo.INTERFACE, 41, "outage")], "degraded", True),
        # both members down: the path is down
        ([t(topo.CIRCUIT, 200, "outage"), t(topo.CIRCUIT, 201, "outage")], "outage", True),
        # the whole trunk or a box on the path: outage
        ([t(topo.TRUNK, 100, "outage")], "outage", True),
        ([t(topo.EQUIPMENT, 3, "outage")], "outage", True),
        # the worst element wins
        ([t(topo.EQUIPMENT, 3, "no-impact"), t(topo.CIRCUIT, 201, "reduced-redundancy")], "reduced-redundancy",
         False),
        # an impact nobody knows counts as an outage
        ([t(topo.EQUIPMENT, 2, "x-weird")], "outage", True),
    ],
)
def test_impact_on_the_path_is_redundancy_aware(tp, targets, impact, explains):
    touch = tp.path_touch(targets, CERN_RAL)
    assert touch is not None
    assert (touch.impact, touch.explains) == (impact, explains)


def test_window_touches_only_the_path_versions_in_force(tp):
    # geant-gva is crossed by every current path; the 2025 CERN->FZK version is over
    touches = tp.window_touches([t(topo.EQUIPMENT, 2)], T0, T1)
    assert [x.path.key for x in touches] == ["CERN->RAL", "RAL->CERN", "CERN->FZK"]
    old = tp.window_touches([t(topo.EQUIPMENT, 7)], datetime(2025, 6, 1, tzinfo=UTC), datetime(2025, 6, 2, tzinfo=UTC))
    assert [x.path.id for x in old] == [4]


def test_sites_a_window_touches(tp):
    # work on a GEANT box: both ends of every path through it
    assert tp.window_sites([t(topo.EQUIPMENT, 6)], T0, T1) == {10, 30}
    # a site's own router, with no path in the window's period: still its site
    assert tp.window_sites([t(topo.EQUIPMENT, 7)], datetime(2020, 1, 1, tzinfo=UTC),
                           datetime(2020, 1, 2, tzinfo=UTC)) == {30}
    # a path direction names both its sites
    assert tp.window_sites([t(topo.PATH, 2)], T0, T1) == {10, 20}
    assert tp.window_touches([t(topo.PATH, 2)], T0, T1)[0].path.key == "RAL->CERN"


@pytest.mark.parametrize(
    ("target", "kind", "element", "impact"),
    [
        (t(topo.EQUIPMENT, 4), topo.INTERFACE, 41, "outage"),  # the box takes its port down
        (t(topo.INTERFACE, 41), topo.EQUIPMENT, 4, "degraded"),  # a port does not take the box down
        (t(topo.CIRCUIT, 201), topo.TRUNK, 100, "degraded"),  # one member of two
        (t(topo.CIRCUIT, 201, "reduced-redundancy"), topo.TRUNK, 100, "reduced-redundancy"),
        (t(topo.TRUNK, 100), topo.CIRCUIT, 200, "outage"),  # the LAG down: its member circuits too
        (t(topo.SITE, 20), topo.EQUIPMENT, 5, "outage"),
        (t(topo.EQUIPMENT, 5), topo.SITE, 20, "degraded"),
        (t(topo.EQUIPMENT, 6), topo.TRUNK, 100, None),  # unrelated
    ],
)
def test_element_matches(tp, target, kind, element, impact):
    matches = tp.element_matches([target], kind, element)
    assert [i for _, i in matches] == ([impact] if impact else [])
