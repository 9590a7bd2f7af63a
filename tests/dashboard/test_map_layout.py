"""Map placement: carrier elements between the sites whose paths cross them; two directions apart."""

import math

import pytest

from wanmon.dashboard.map_layout import LayoutHop, LayoutPath, element_positions, path_polyline

SITES = {"CERN": (6.05, 46.23), "FZK": (8.43, 49.09), "CNAF": (11.34, 44.49), "ASGC": (121.61, 25.04)}


def hops(*names):
    return [LayoutHop(n, n.split("-")[0].upper() if n.endswith("border") else None) for n in names]


def test_site_equipment_sits_on_its_site_and_carrier_equipment_between():
    paths = [LayoutPath("CERN", "FZK", hops("cern-border", "geant-gva", "geant-fra", "dfn-fra", "fzk-border"))]
    positions = element_positions(SITES, paths)
    assert positions["cern-border"] == SITES["CERN"]
    assert positions["fzk-border"] == SITES["FZK"]
    # evenly spaced: geant-fra halfway between CERN and FZK
    assert positions["geant-fra"] == pytest.approx(((6.05 + 8.43) / 2, (46.23 + 49.09) / 2), abs=1e-3)


def test_short_paths_pin_a_shared_element_more_than_long_ones():
    paths = [
        LayoutPath("CERN", "FZK", hops("cern-border", "geant-gva", "fzk-border")),
        LayoutPath("CERN", "ASGC", hops("cern-border", "geant-gva", "asgc-border")),
    ]
    gva = element_positions(SITES, paths)["geant-gva"]
    # closer to the CERN-FZK midpoint (7.2 E) than to the CERN-ASGC midpoint (63.8 E)
    assert 7 < gva[0] < 12


def test_directions_bow_to_opposite_sides_and_end_on_the_sites():
    forward = LayoutPath("CERN", "FZK", hops("cern-border", "geant-fra", "fzk-border"))
    reverse = LayoutPath("FZK", "CERN", hops("fzk-border", "geant-fra", "cern-border"))
    positions = element_positions(SITES, [forward, reverse])
    a = path_polyline(forward, SITES, positions)
    b = path_polyline(reverse, SITES, positions)
    assert a[0] == SITES["CERN"] and a[-1] == SITES["FZK"]
    assert b[0] == SITES["FZK"] and b[-1] == SITES["CERN"]
    middle = positions["geant-fra"]
    # the middle points lie on opposite sides of the element, at the same distance
    assert math.dist(a[1], middle) == pytest.approx(math.dist(b[1], middle), rel=1e-3)
    assert math.dist(a[1], b[1]) == pytest.approx(2 * math.dist(a[1], middle), rel=1e-3)
    cross = (SITES["FZK"][0] - SITES["CERN"][0]) * (a[1][1] - middle[1]) - (SITES["FZK"][1] - SITES["CERN"][1]) * (
        a[1][0] - middle[0])
    assert cross < 0  # right-hand side of travel


def test_a_direction_without_carrier_hops_still_bows():
    line = path_polyline(LayoutPath("CERN", "FZK", hops("cern-border", "fzk-border")), SITES,
                         {"cern-border": SITES["CERN"], "fzk-border": SITES["FZK"]})
    assert len(line) == 3 and line[1] != ((6.05 + 8.43) / 2, (46.23 + 49.09) / 2)


def test_paths_to_sites_without_coordinates_are_skipped():
    positions = element_positions(SITES, [LayoutPath("CERN", "NOWHERE", hops("cern-border", "x-1"))])
    assert positions == {}
