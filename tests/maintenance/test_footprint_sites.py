"""Work on a trunk concerns the sites of its members, as work on a circuit concerns the sites of its ends."""

from __future__ import annotations

import pytest

from wanmon.maintenance import footprint as topo

# Trunk 100 = ports 41 (janet-lon, no site) and 51, 52 (ral-border, site 20 RAL); circuit 200 = 41-51.
TOPOLOGY = topo.Topology(
    interface_equipment={41: 4, 51: 5, 52: 5},
    equipment_site={4: None, 5: 20},
    trunk_members={100: frozenset({41, 51, 52})},
    circuit_ends={200: (41, 51)},
)


@pytest.mark.parametrize(
    ("kind", "pk", "site", "impact"),
    [
        (topo.CIRCUIT, 200, 20, "degraded"),
        (topo.TRUNK, 100, 20, "degraded"),  # was not listed for the site at all
        (topo.TRUNK, 100, 30, None),
    ],
)
def test_work_on_a_line_degrades_the_sites_it_ends_in(kind, pk, site, impact):
    matches = TOPOLOGY.element_matches([topo.Target(kind, pk, "outage", f"{kind}:{pk}")], topo.SITE, site)
    assert [i for _, i in matches] == ([impact] if impact else [])
