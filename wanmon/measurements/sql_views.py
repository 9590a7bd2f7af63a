"""The documented read-only SQL views (created by the measurements migrations; see docs/data-mining.md)."""

VIEW_NAMES = (
    "wanmon_interface_rates",
    "wanmon_interface_rates_5m",
    "wanmon_interface_rates_1h",
    "wanmon_interface_rates_1d",
    "wanmon_counter_discontinuities",
    "wanmon_throughput_tests",
    "wanmon_owamp_tests",
    "wanmon_traceroutes",
    "wanmon_host_tcp",
    # Grafana annotations, created by the perfsonar migrations (docs/data-mining.md#grafana-annotations).
    "wanmon_finding_annotations",
    "wanmon_incident_annotations",
    "wanmon_maintenance_annotations",
)
