"""Reads behind the dashboard pages, one module per page area. All SQL and time_bucket of the dashboard live
in these modules; inventory lookups (equipment, interfaces, trunks, path versions) are the inventory's own
selectors (``wanmon.inventory.selectors``).

- ``overview``: the grid and the map (path health at an instant, silent agents, incidents);
- ``paths``: the path page (tests of a direction over a range, route changes, interfaces crossed);
- ``interfaces``: interface rate series from the raw rates or a rollup, the newest rates, discontinuities;
- ``elements``: the equipment, interface and trunk pages (how current paths cross an element);
- ``findings``: findings active at an instant, the findings page, those about paths and elements;
- ``maintenance``: maintenance occurrences and the paths and elements they touch.

Selectors return plain dataclasses (and model instances for inventory objects); the pure modules
(health, derived, figures) turn them into what the pages show. The names below are the ones the views use.
"""

from wanmon.dashboard.selectors.elements import (
    Crossing,
    equipment_list,
    equipment_paths,
    interface_far_end,
    interface_paths,
)
from wanmon.dashboard.selectors.findings import (
    finding_get,
    finding_list_active_at,
    finding_list_filtered,
    findings_for_elements,
    findings_for_paths,
)
from wanmon.dashboard.selectors.interfaces import (
    InterfaceSeries,
    interface_discontinuities,
    interface_latest,
    interface_series,
    interface_table_for_bucket,
)
from wanmon.dashboard.selectors.maintenance import MaintenanceItem, maintenance_for_element, maintenance_for_paths
from wanmon.dashboard.selectors.overview import (
    GRID_MAX_SITES,
    GridCell,
    latest_measurement_time,
    map_inputs,
    overview,
    path_observations,
)
from wanmon.dashboard.selectors.paths import DirectionData, TestRows, direction_data, path_interfaces

__all__ = [
    "Crossing",
    "DirectionData",
    "GridCell",
    "InterfaceSeries",
    "MaintenanceItem",
    "TestRows",
    "direction_data",
    "equipment_list",
    "equipment_paths",
    "finding_get",
    "finding_list_active_at",
    "finding_list_filtered",
    "findings_for_elements",
    "findings_for_paths",
    "interface_discontinuities",
    "interface_latest",
    "interface_far_end",
    "interface_paths",
    "interface_series",
    "interface_table_for_bucket",
    "latest_measurement_time",
    "maintenance_for_element",
    "maintenance_for_paths",
    "map_inputs",
    "overview",
    "GRID_MAX_SITES",
    "path_interfaces",
    "path_observations",
]
