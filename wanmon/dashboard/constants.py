"""Thresholds, time ranges and colours of the dashboard, each with the reason it has its value."""

from __future__ import annotations

from datetime import timedelta

# --------------------------------------------------------------------------- grid health
#: A TCP test below half of the path capacity is worth a look (MaDDash's usual "warning" band).
THROUGHPUT_WARNING_FRACTION = 0.5
#: Below a tenth of the capacity the path is unusable for bulk transfers.
THROUGHPUT_CRITICAL_FRACTION = 0.1
#: One-way probe loss (owamp, UDP tests) over the loss window. On a 10 ms path with jumbo frames
#: 1e-4 already caps one Reno stream near 500 Mb/s (Mathis), so any loss above it is a warning;
#: 1 % is an outage for TCP on any WAN path.
LOSS_WARNING_FRACTION = 1e-4
LOSS_CRITICAL_FRACTION = 1e-2
#: Probe loss is summed over this window before the cell time (owamp runs every few minutes).
LOSS_WINDOW = timedelta(hours=1)
#: Throughput tests run every 30 min or so: the latest one is stale after a few missed runs.
STALE_AFTER = timedelta(hours=2)
#: How far back the grid looks for the latest test at all (older: "no data").
LATEST_LOOKBACK = timedelta(days=2)
#: An agent that has not uploaded for this long is listed as "stopped reporting" (uploads every minute).
AGENT_SILENT_AFTER = timedelta(minutes=15)
#: Maintenance windows starting within this horizon are "upcoming" on the overview.
MAINTENANCE_HORIZON = timedelta(days=7)
#: When the newest measurement is older than this, the overview offers to show the time of the data.
DATA_GAP_NOTICE_AFTER = timedelta(hours=1)

# Statuses, worst last; the order drives "worst of".
OK = "ok"
WARNING = "warning"
CRITICAL = "critical"
MAINTENANCE = "maintenance"
STALE = "stale"
NODATA = "nodata"
SEVERITY_RANK = {OK: 0, "info": 0, WARNING: 1, CRITICAL: 2}

#: Status -> (colour, legend text). One palette for the grid, the map and the chart marks. White text on the
#: dark ones and dark text on the light ones keep a contrast of at least 4.5:1 (WCAG AA).
STATUS_STYLE = {
    OK: ("#1e7b34", "OK: throughput >= 50 % of capacity, no probe loss, no open finding"),
    WARNING: ("#f0b429", "Warning: throughput < 50 % of capacity, loss >= 1e-4, or a warning finding"),
    CRITICAL: ("#b3261e", "Critical: throughput < 10 %, loss >= 1 %, last test failed, or a critical finding"),
    MAINTENANCE: ("#2f6fb0", "Maintenance running on an element of the path"),
    STALE: ("#616e7c", "Stale: latest test older than 2 h"),
    NODATA: ("#e4e7eb", "No test in the last 2 days"),
}
#: Status -> glyph: the state reads without colour (colour-blind readers, grey-scale wall screens).
STATUS_GLYPHS = {OK: "✓", WARNING: "▲", CRITICAL: "✖", MAINTENANCE: "⚙", STALE: "◷", NODATA: "∅"}
STATUS_LABELS = {NODATA: "no data"}
SEVERITY_COLOURS = {"info": "#2f6fb0", WARNING: "#f0b429", CRITICAL: "#b3261e"}
#: Trace colours for the two directions of a pair and for series of several interfaces.
DIRECTION_COLOURS = ("#1f5fa8", "#d9730d")
PALETTE = (
    "#1f5fa8", "#d9730d", "#2e9e4f", "#8e44ad", "#c0392b", "#16a085", "#7f8c8d", "#b7950b", "#2c3e50", "#e84393",
)

# --------------------------------------------------------------------------- time ranges
#: Range key -> (span, bucket seconds). The buckets are multiples of the rollup widths, so the
#: measurement selectors read raw rates for 6 h, the 5 min rollup for 24 h, the 1 h rollup for
#: 7 and 30 days and the daily rollup for 90 days and a year: a few hundred points per series.
RANGES = {
    "6h": (timedelta(hours=6), 60),
    "24h": (timedelta(hours=24), 300),
    "7d": (timedelta(days=7), 3600),
    "30d": (timedelta(days=30), 3 * 3600),
    "90d": (timedelta(days=90), 86400),
    "1y": (timedelta(days=365), 86400),
}
DEFAULT_RANGE = "24h"
#: Up to this bucket width every throughput test is drawn; above it tests are averaged per bucket.
RAW_TESTS_MAX_BUCKET_S = 300

# --------------------------------------------------------------------------- page behaviour
#: Pages fetch their fragments and figures again every minute (agents upload every minute).
REFRESH_INTERVAL_S = 60
#: Time zone shown when the user has no preference.
DEFAULT_TIME_ZONE = "UTC"
SESSION_TIME_ZONE_KEY = "wanmon_time_zone"

# --------------------------------------------------------------------------- an incident's charts
#: The path page's charts an incident page shows per site pair (both directions each): what degraded, and the loss
#: that usually explains it.
INCIDENT_CHARTS = ("throughput", "loss")
#: Their height (the path page's are 320 px): a handful side by side on one screen with the findings.
COMPACT_CHART_HEIGHT_PX = 240
