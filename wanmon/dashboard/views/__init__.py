"""Pages of the NOC dashboard. Thin: parse the request, call selectors, hand results to presenters
and figure builders, render. Every page answers ``?format=json`` with its fragments (HTML) and
figures (Plotly dicts), which the page's script fetches every minute to refresh without a reload.
One module per area of pages; ``common`` holds what every page does with its request."""

from __future__ import annotations

from wanmon.dashboard.views.elements import equipment_detail, equipment_list, interface_detail, trunk_detail
from wanmon.dashboard.views.explore import explore, preferences
from wanmon.dashboard.views.findings import finding_acknowledge, finding_detail, finding_list
from wanmon.dashboard.views.incidents import incident_charts
from wanmon.dashboard.views.overview import network_map, overview
from wanmon.dashboard.views.paths import pair_detail, path_detail

__all__ = [
    "equipment_detail",
    "equipment_list",
    "explore",
    "finding_acknowledge",
    "finding_detail",
    "finding_list",
    "incident_charts",
    "interface_detail",
    "network_map",
    "overview",
    "pair_detail",
    "path_detail",
    "preferences",
    "trunk_detail",
]
