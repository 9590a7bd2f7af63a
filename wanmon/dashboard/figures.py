"""Plotly figure dicts for every chart of the dashboard (pure functions, no Django, no database).

The browser draws them with the vendored plotly.js (``Plotly.react(div, data, layout, config)``);
views pass them through ``json_script``. Conventions:

- values keep the units of the database (bit/s, fractions, ms): a trace's ``y`` is the stored
  number, the axis formats it (``906M`` b/s, ``3.97 %``), so a test can compare traces with rows;
- times are aware datetimes in, wall-clock strings of the display time zone out (plotly.js has no
  time zones), and the x-axis title names the zone;
- time marks (maintenance windows, route changes, findings, counter resets, an incident's onset) are shapes plus one
  marker trace per kind on a hidden overlay axis, so each has a hover text and a link;
- nothing here may produce NaN or infinity: JSON has neither.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from functools import lru_cache

from wanmon.dashboard import constants as k
from wanmon.dashboard.formatting import finite, format_bps, format_fraction

FONT = {"family": 'system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif', "size": 12,
        "color": "#1d2330"}
GRID_COLOUR = "#e6e9ee"
MARK_COLOURS = {"maintenance": "#3b82c4", "route": "#7c3aed", "discontinuity": "#52606d", "onset": "#14213d"}
MARK_NAMES = {
    "maintenance": "Maintenance",
    "route": "Route changes",
    "finding": "Findings",
    "discontinuity": "Counter resets",
    "onset": "Incident onset",
}
MARK_SYMBOLS = {"maintenance": "square", "route": "diamond", "finding": "triangle-down", "discontinuity": "x",
                "onset": "star"}
MARK_HEIGHTS = {"maintenance": 1.0, "finding": 0.95, "route": 0.9, "discontinuity": 0.85, "onset": 1.0}
#: Line styles of the marks drawn as a line: an incident's onset solid (the one instant the page is about).
MARK_DASHES = {"route": "dash", "onset": "solid"}
#: Units whose charts offer a log axis, and the spread (largest / smallest positive value, reference lines
#: included) from which they open on one: 108 Mb/s under a 10 Gb/s capacity is a flat line at zero on a linear axis.
LOG_UNITS = ("bps", "per_s", "fraction", "count")
LOG_SPREAD = 50
LEGEND_ENTRIES_PER_ROW = 3
LEGEND_ROW_PX = 20
#: Height of a time chart before its legend rows.
TIME_CHART_HEIGHT_PX = 320

#: Axis and hover formats per unit (d3-format).
UNITS = {
    "bps": {"axis": {"tickformat": "~s", "ticksuffix": "b/s", "rangemode": "tozero"}, "hover": "%{y:.4s}b/s"},
    # "p": percentage with significant digits, so 7e-06 reads 0.0007% and not 0%.
    "fraction": {"axis": {"tickformat": ".2~p", "rangemode": "tozero"}, "hover": "%{y:.3~p}"},
    "utilisation": {"axis": {"tickformat": ".0%", "rangemode": "tozero"}, "hover": "%{y:.1%}"},
    "ms": {"axis": {"ticksuffix": " ms"}, "hover": "%{y:.3f} ms"},
    "per_s": {"axis": {"tickformat": "~s", "ticksuffix": "/s", "rangemode": "tozero"}, "hover": "%{y:.3~s}/s"},
    "count": {"axis": {"tickformat": "~s", "rangemode": "tozero"}, "hover": "%{y:,.4~g}"},
}


@dataclass(frozen=True)
class Series:
    """One line of a time chart. ``values`` align with ``times``; None leaves a gap."""

    name: str
    times: Sequence[datetime]
    values: Sequence[float | None]
    colour: str | None = None
    dash: str = "solid"
    mode: str = "lines+markers"
    hover: Sequence[str] | None = None
    band_low: Sequence[float | None] | None = None
    band_high: Sequence[float | None] | None = None
    symbol: str = "circle"
    width: float = 1.8
    urls: Sequence[str] | None = None
    yaxis: str = "y"


@dataclass(frozen=True)
class TimeMark:
    """Something that happened at a time (or over a window) and is drawn on every chart of a page."""

    kind: str  # maintenance | route | finding | discontinuity | onset
    start: datetime
    end: datetime | None = None
    label: str = ""
    detail: str = ""
    severity: str | None = None
    url: str | None = None


@dataclass(frozen=True)
class Level:
    """A horizontal reference line (capacity, a computed ceiling)."""

    value: float
    label: str
    colour: str = "#6b7280"
    dash: str = "dash"


@lru_cache(maxsize=16384)
def local_time(moment: datetime, tz: tzinfo) -> str:
    """An aware datetime as the wall-clock string plotly.js draws (it ignores offsets).

    Cached: a page draws the same bucket times once per series (each interface's traffic, utilisation,
    errors and discards), tens of thousands of strftime calls on a month of both directions."""
    return moment.astimezone(tz).strftime("%Y-%m-%d %H:%M:%S")


def tz_name(tz: tzinfo) -> str:
    return getattr(tz, "key", None) or str(tz)


def _base_layout(*, title: str, height: int, subtitle: str | None = None) -> dict:
    title_dict: dict = {"text": plotly_text(title), "x": 0.01, "xanchor": "left", "y": 0.97, "yanchor": "top",
                        "font": {"size": 14}}
    if subtitle:
        title_dict["subtitle"] = {"text": plotly_text(subtitle), "font": {"size": 11, "color": "#7b8794"}}
    return {
        "title": title_dict,
        "height": height,
        "margin": {"l": 64, "r": 16, "t": 58 if subtitle else 40, "b": 84},
        "font": FONT,
        "paper_bgcolor": "#ffffff",
        "plot_bgcolor": "#ffffff",
        "hovermode": "closest",
        "hoverlabel": {"font": {"size": 12}},
        # Below the time axis: the title area stays readable however many series there are.
        "legend": {"orientation": "h", "x": 0, "xanchor": "left", "yref": "container", "y": 0.0,
                   "yanchor": "bottom", "font": {"size": 11}, "bgcolor": "rgba(255,255,255,0)"},
        # Plotly.react keeps the user's zoom across auto-refreshes while uirevision is unchanged.
        "uirevision": "keep",
    }


def plotly_text(name: str) -> str:
    """A name from a device, an agent or an operator (an ifName, a host, a site, a carrier's reference) as Plotly
    shows it: as text. Plotly renders a subset of HTML in titles, trace names, legends, hover and tick labels
    (``<a href>`` becomes a link) and reads ``%{...}`` in hover templates as a variable: both are written as
    character references. A line break (``\\n``: hover texts are wrapped by lines) is Plotly's ``<br>``.

    Every text of a figure that is not this module's own goes through here: callers give plain text."""
    return (name.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace("%", "&#37;").replace("{", "&#123;").replace("\n", "<br>"))


def _series_traces(series: Series, hover_value: str, tz: tzinfo) -> list[dict]:
    xs = [local_time(t, tz) for t in series.times]
    name = plotly_text(series.name)
    traces = []
    if series.band_low is not None and series.band_high is not None:
        colour = series.colour or "#1f5fa8"
        traces.append({
            "type": "scatter", "mode": "lines", "x": xs, "y": [finite(v) for v in series.band_low],
            "line": {"width": 0, "color": colour}, "hoverinfo": "skip", "showlegend": False,
            "legendgroup": series.name, "name": f"{name} min", "yaxis": series.yaxis,
        })
        traces.append({
            "type": "scatter", "mode": "lines", "x": xs, "y": [finite(v) for v in series.band_high],
            "line": {"width": 0, "color": colour}, "fill": "tonexty", "fillcolor": _alpha(colour, 0.15),
            "hoverinfo": "skip", "showlegend": False, "legendgroup": series.name, "name": f"{name} max",
            "yaxis": series.yaxis,
        })
    trace = {
        "type": "scatter",
        "mode": series.mode,
        "name": name,
        "legendgroup": series.name,
        "x": xs,
        "y": [finite(v) for v in series.values],
        "line": {"width": series.width, "dash": series.dash},
        "marker": {"size": 6, "symbol": series.symbol},
        "connectgaps": False,
        "yaxis": series.yaxis,
        "hovertemplate": f"<b>{name}</b><br>%{{x}}<br>{hover_value}"
        + ("<br>%{text}" if series.hover else "") + "<extra></extra>",
    }
    if series.colour:
        trace["line"]["color"] = series.colour
        trace["marker"]["color"] = series.colour
    if series.hover:
        trace["text"] = [plotly_text(text) for text in series.hover]
    if series.urls:
        trace["customdata"] = list(series.urls)
    traces.append(trace)
    return traces


def _alpha(colour: str, alpha: float) -> str:
    """``#rrggbb`` -> ``rgba(r,g,b,alpha)``."""
    value = colour.lstrip("#")
    r, g, b = (int(value[i : i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


def _mark_colour(mark: TimeMark) -> str:
    if mark.kind == "finding":
        return k.SEVERITY_COLOURS.get(mark.severity or "", "#52606d")
    return MARK_COLOURS.get(mark.kind, "#52606d")


def marks_to_plotly(marks: Sequence[TimeMark], start: datetime, end: datetime, tz: tzinfo) -> tuple[list, list]:
    """Shapes (bands and lines on the plot area) and marker traces (hover + click) for time marks.

    Marks are clipped to [start, end]; marks entirely outside are dropped.
    """
    shapes: list[dict] = []
    by_kind: dict[str, list[TimeMark]] = {}
    for mark in marks:
        mark_end = mark.end or mark.start
        if mark_end < start or mark.start > end:
            continue
        first, last = max(mark.start, start), min(mark_end, end)
        colour = _mark_colour(mark)
        if mark.kind == "maintenance":
            shapes.append({
                "type": "rect", "xref": "x", "yref": "paper", "x0": local_time(first, tz), "x1": local_time(last, tz),
                "y0": 0, "y1": 1, "fillcolor": _alpha(colour, 0.13), "line": {"width": 0}, "layer": "below",
            })
        else:
            shapes.append({
                "type": "line", "xref": "x", "yref": "paper", "x0": local_time(first, tz), "x1": local_time(first, tz),
                "y0": 0, "y1": 1, "line": {"color": colour, "width": 1.2, "dash": MARK_DASHES.get(mark.kind, "dot")},
            })
            if mark.kind == "finding" and last > first:
                shapes.append({
                    "type": "rect", "xref": "x", "yref": "paper", "x0": local_time(first, tz),
                    "x1": local_time(last, tz), "y0": 0.965, "y1": 1.0, "fillcolor": _alpha(colour, 0.45),
                    "line": {"width": 0}, "layer": "below",
                })
        by_kind.setdefault(mark.kind, []).append(mark)
    traces = []
    for kind in ("onset", "maintenance", "finding", "route", "discontinuity"):
        items = by_kind.get(kind)
        if not items:
            continue
        traces.append({
            "type": "scatter",
            "mode": "markers",
            "name": MARK_NAMES[kind],
            "x": [local_time(max(m.start, start), tz) for m in items],
            "y": [MARK_HEIGHTS[kind]] * len(items),
            "yaxis": "y2",
            "marker": {"symbol": MARK_SYMBOLS[kind], "size": 11, "color": [_mark_colour(m) for m in items],
                       "line": {"width": 1, "color": "#ffffff"}},
            "text": [plotly_text(m.label) for m in items],
            "hovertext": [f"<b>{plotly_text(m.label)}</b>" + (f"<br>{plotly_text(m.detail)}" if m.detail else "")
                          for m in items],
            "hoverinfo": "text",
            "customdata": [m.url or "" for m in items],
            "meta": kind,
        })
    return shapes, traces


def timeseries_figure(
    *,
    title: str,
    series: Sequence[Series],
    unit: str,
    start: datetime,
    end: datetime,
    tz: tzinfo,
    marks: Sequence[TimeMark] = (),
    levels: Sequence[Level] = (),
    y_title: str = "",
    height: int = TIME_CHART_HEIGHT_PX,
    source: str | None = None,
    empty_text: str = "No data in this time range",
    legend_per_row: int = LEGEND_ENTRIES_PER_ROW,
) -> dict:
    """A time chart: lines, optional reference levels, time marks and a caption naming the data source."""
    fmt = UNITS[unit]
    layout = _base_layout(title=title, height=height, subtitle=source)
    layout["xaxis"] = {
        "type": "date", "range": [local_time(start, tz), local_time(end, tz)], "gridcolor": GRID_COLOUR,
        "title": {"text": f"time ({tz_name(tz)})", "font": {"size": 11}, "standoff": 4},
    }
    layout["yaxis"] = {"title": {"text": plotly_text(y_title), "font": {"size": 11}}, "gridcolor": GRID_COLOUR,
                       "zeroline": False, "automargin": True, **fmt["axis"]}
    # Overlay axis for the time-mark markers: fixed 0..1 so marks sit at the top whatever the data.
    layout["yaxis2"] = {"overlaying": "y", "range": [0, 1.05], "visible": False, "fixedrange": True}
    data: list[dict] = []
    for s in series:
        data.extend(_series_traces(s, fmt["hover"], tz))
    shapes, mark_traces = marks_to_plotly(marks, start, end, tz)
    annotations = []
    for level in levels:
        value = finite(level.value)
        if value is None:
            continue
        shapes.append({"type": "line", "xref": "paper", "x0": 0, "x1": 1, "yref": "y", "y0": value, "y1": value,
                       "line": {"color": level.colour, "width": 1.2, "dash": level.dash}})
        annotations.append({"xref": "paper", "x": 1, "xanchor": "right", "yref": "y", "y": value, "yanchor": "bottom",
                            "text": plotly_text(level.label), "showarrow": False,
                            "font": {"size": 10, "color": level.colour}})
    has_points = any(finite(v) is not None for s in series for v in s.values)
    peak = max((abs(v) for s in series for v in map(finite, s.values) if v is not None), default=None)
    log = unit in LOG_UNITS and log_axis_default([v for s in series for v in s.values]
                                                 + [level.value for level in levels])
    if log:
        layout["yaxis"]["type"] = "log"
        _floor_zero_markers(data, series)
    if unit == "fraction" and peak == 0:
        # only zeros (no loss): a 0-0.1 % axis rather than plotly's 0-100 %, which reads as "something"
        layout["yaxis"]["range"] = [0, 0.001]
    if not has_points:
        annotations.append({"xref": "paper", "yref": "paper", "x": 0.5, "y": 0.5, "text": empty_text,
                            "showarrow": False, "font": {"size": 13, "color": "#7b8794"}})
    data.extend(mark_traces)
    # Read by static/js/wanmon.js: the log/linear toggle (where a log axis makes sense) and its default.
    layout["meta"] = {"log_toggle": unit in LOG_UNITS, "log_default": log}
    layout["shapes"] = shapes
    layout["annotations"] = annotations
    # The legend sits below the axis: give it room when there are many entries (about 3 per row).
    entries = sum(1 for trace in data if trace.get("showlegend", True))
    extra_rows = max(0, math.ceil(entries / legend_per_row) - 1)
    layout["height"] += LEGEND_ROW_PX * extra_rows
    layout["margin"]["b"] += LEGEND_ROW_PX * extra_rows
    return {"data": data, "layout": layout}


def log_axis_default(values: Sequence) -> bool:
    """Whether the positive values span LOG_SPREAD or more (decades apart: a log axis shows them all)."""
    positive = [v for v in map(finite, values) if v is not None and v > 0]
    return bool(positive) and max(positive) / min(positive) >= LOG_SPREAD


def _floor_zero_markers(data: list[dict], series: Sequence[Series]) -> None:
    """A log axis cannot draw 0: markers at 0 (failed tests) sit at the smallest positive value instead."""
    positive = [v for s in series for v in map(finite, s.values) if v is not None and v > 0]
    floor = min(positive) / 2
    names = {plotly_text(s.name) for s in series if s.mode == "markers"}  # as the traces carry them
    for trace in data:
        if trace.get("name") in names and trace.get("y"):
            trace["y"] = [floor if v == 0 else v for v in trace["y"]]


# --------------------------------------------------------------------------- path page charts


def throughput_figure(*, series: Sequence[Series], start, end, tz, marks=(), levels=(), source=None) -> dict:
    return timeseries_figure(title="TCP throughput tests", series=series, unit="bps", start=start, end=end, tz=tz,
                             marks=marks, levels=levels, y_title="throughput", source=source)


def loss_figure(*, series: Sequence[Series], start, end, tz, marks=(), source=None) -> dict:
    return timeseries_figure(title="Packet loss (UDP tests and one-way probes)", series=series, unit="fraction",
                             start=start, end=end, tz=tz, marks=marks, y_title="loss", source=source)


def delay_figure(*, series: Sequence[Series], start, end, tz, marks=(), source=None) -> dict:
    return timeseries_figure(title="One-way delay (owamp): minimum and median", series=series, unit="ms",
                             start=start, end=end, tz=tz, marks=marks, y_title="delay", source=source)


def utilisation_figure(*, title: str, series: Sequence[Series], start, end, tz, marks=(), source=None) -> dict:
    return timeseries_figure(title=title, series=series, unit="utilisation", start=start, end=end, tz=tz,
                             marks=marks, y_title="utilisation", source=source,
                             empty_text="No interface counters in this time range")


def errors_figure(*, title: str, series: Sequence[Series], start, end, tz, marks=(), source=None,
                  polled: bool = False) -> dict:
    """``polled``: counters exist in the range (so an empty chart means no errors, not no data)."""
    return timeseries_figure(title=title, series=series, unit="per_s", start=start, end=end, tz=tz, marks=marks,
                             y_title="events per second", source=source,
                             empty_text="No errors or discards in this time range" if polled
                             else "No interface counters in this time range")


def traffic_figure(*, title: str, series: Sequence[Series], start, end, tz, marks=(), levels=(), source=None) -> dict:
    return timeseries_figure(title=title, series=series, unit="bps", start=start, end=end, tz=tz, marks=marks,
                             levels=levels, y_title="traffic", source=source,
                             empty_text="No interface counters in this time range")


@dataclass(frozen=True)
class MemberShare:
    """One trunk member over the displayed range: average utilisation each way."""

    label: str
    in_utilisation: float | None
    out_utilisation: float | None
    url: str = ""


def trunk_members_figure(*, trunk: str, members: Sequence[MemberShare]) -> dict:
    """Trunk members side by side: average utilisation in and out; a healthy hash keeps the bars level."""
    layout = _base_layout(title=f"Trunk {trunk}: members side by side (average utilisation)", height=260)
    layout["barmode"] = "group"
    layout["xaxis"] = {"type": "category", "automargin": True}
    layout["yaxis"] = {"tickformat": ".0%", "rangemode": "tozero", "gridcolor": GRID_COLOUR,
                       "title": {"text": "utilisation", "font": {"size": 11}}}
    labels = [plotly_text(m.label) for m in members]
    data = [
        {"type": "bar", "name": "in", "x": labels, "y": [finite(m.in_utilisation) for m in members],
         "marker": {"color": k.DIRECTION_COLOURS[0]}, "customdata": [m.url for m in members],
         "hovertemplate": "%{x}<br>in %{y:.1%}<extra></extra>"},
        {"type": "bar", "name": "out", "x": labels, "y": [finite(m.out_utilisation) for m in members],
         "marker": {"color": k.DIRECTION_COLOURS[1]}, "customdata": [m.url for m in members],
         "hovertemplate": "%{x}<br>out %{y:.1%}<extra></extra>"},
    ]
    if not any(finite(m.in_utilisation) is not None or finite(m.out_utilisation) is not None for m in members):
        layout["annotations"] = [{"xref": "paper", "yref": "paper", "x": 0.5, "y": 0.5, "showarrow": False,
                                  "text": "No member counters in this time range",
                                  "font": {"size": 13, "color": "#7b8794"}}]
    return {"data": data, "layout": layout}


# --------------------------------------------------------------------------- data explorer


def unit_for_metric(metric: str) -> str:
    """The axis unit of a query-API metric name."""
    if metric.endswith("_bps"):
        return "bps"
    if metric.endswith("utilisation"):
        return "utilisation"
    if metric.endswith("_fraction"):
        return "fraction"
    if metric.endswith("_ms"):
        return "ms"
    if metric.endswith("_per_s"):
        return "per_s"
    return "count"


def explorer_figure(
    *, metric: str, aggregate: str, series: Sequence[Mapping], start: datetime, end: datetime, tz: tzinfo,
    source: str | None = None,
) -> dict:
    """One line per series of a query result: ``series`` as measurement_query returns them
    (``{"key": {...}, "points": [[datetime, value], ...]}``)."""
    lines = []
    for i, item in enumerate(series):
        name = series_name(item["key"])
        points = item["points"]
        lines.append(Series(name=name, times=[p[0] for p in points], values=[p[1] for p in points],
                            colour=k.PALETTE[i % len(k.PALETTE)],
                            mode="lines+markers" if len(points) < 200 else "lines"))
    return timeseries_figure(title=f"{metric} ({aggregate})", series=lines, unit=unit_for_metric(metric),
                             start=start, end=end, tz=tz, y_title=metric, height=420, source=source,
                             legend_per_row=8)


def series_name(key: Mapping) -> str:
    """``CERN→FZK`` for a path, ``geant-fra:xe-1/0/0`` for an interface, the values otherwise."""
    if "src" in key and "dst" in key:
        return f"{key['src']}→{key['dst']}"
    if "equipment" in key and "interface" in key:
        return f"{key['equipment']}:{key['interface']}"
    return " ".join(str(v) for v in key.values()) or "all"


# --------------------------------------------------------------------------- map


@dataclass(frozen=True)
class MapSite:
    code: str
    name: str
    lon: float
    lat: float
    tier: int | None = None
    url: str = ""
    status: str = k.OK


@dataclass(frozen=True)
class MapPath:
    """One path direction drawn through its hops' positions (already offset to its side)."""

    src: str
    dst: str
    points: Sequence[tuple[float, float]]
    status: str
    summary: str = ""
    url: str = ""


@dataclass(frozen=True)
class MapElement:
    """A carrier element placed between the sites whose paths cross it."""

    name: str
    owner: str
    lon: float
    lat: float
    paths: tuple[str, ...] = ()
    suspect: bool = False
    url: str = ""

    @property
    def site_pairs(self) -> int:
        return len({tuple(sorted(p.split("->"))) for p in self.paths})


@dataclass(frozen=True)
class MapView:
    """A named zoom for the map's buttons."""

    label: str
    lon_range: tuple[float, float]
    lat_range: tuple[float, float]


@dataclass(frozen=True)
class MapData:
    sites: Sequence[MapSite]
    paths: Sequence[MapPath]
    elements: Sequence[MapElement] = ()
    views: Sequence[MapView] = field(default_factory=tuple)


def map_figure(data: MapData) -> dict:
    """Sites by coordinates on plain lon/lat axes (no geo basemap: nothing to fetch), path directions
    coloured by health, carrier elements sized by how many paths cross them (red: a suspect)."""
    traces: list[dict] = []  # the page's legend explains the status colours
    mid_x, mid_y, mid_text, mid_url, mid_colour = [], [], [], [], []
    for path in data.paths:
        colour = k.STATUS_STYLE[path.status][0]
        traces.append({
            "type": "scatter", "mode": "lines", "x": [finite(p[0]) for p in path.points],
            "y": [finite(p[1]) for p in path.points], "line": {"color": colour, "width": 3},
            "hoverinfo": "skip", "showlegend": False, "legendgroup": path.status,
            "meta": f"{path.src}->{path.dst}",
        })
        middle = _polyline_middle(path.points)
        mid_x.append(middle[0])
        mid_y.append(middle[1])
        mid_text.append(f"<b>{plotly_text(path.src)} → {plotly_text(path.dst)}</b><br>{plotly_text(path.summary)}")
        mid_url.append(path.url)
        mid_colour.append(colour)
    if data.paths:
        traces.append({
            "type": "scatter", "mode": "markers", "name": "path directions", "x": mid_x, "y": mid_y,
            "marker": {"size": 9, "color": mid_colour, "symbol": "circle", "line": {"width": 1.5, "color": "#fff"}},
            "hovertext": mid_text, "hoverinfo": "text", "customdata": mid_url, "showlegend": False,
            "meta": "paths",
        })
    if data.elements:
        traces.append({
            "type": "scatter", "mode": "markers+text", "name": "carrier elements (size: paths crossing)",
            "x": [e.lon for e in data.elements], "y": [e.lat for e in data.elements],
            "text": [plotly_text(e.name) if e.site_pairs >= 2 or e.suspect else "" for e in data.elements],
            "textposition": "bottom center", "textfont": {"size": 10, "color": "#52606d"},
            "marker": {"symbol": "diamond", "size": [min(22, 8 + 2 * len(e.paths)) for e in data.elements],
                       "color": ["#d64545" if e.suspect else "#52606d" for e in data.elements],
                       "line": {"width": 1, "color": "#fff"}},
            "hovertext": [
                f"<b>{plotly_text(e.name)}</b> ({plotly_text(e.owner)}){' — suspect' if e.suspect else ''}<br>"
                f"crossed by {len(e.paths)} path direction(s):<br>" + "<br>".join(map(plotly_text, e.paths))
                for e in data.elements
            ],
            "hoverinfo": "text", "customdata": [e.url for e in data.elements], "meta": "elements",
        })
    if data.sites:
        traces.append({
            "type": "scatter", "mode": "markers+text", "name": "sites", "x": [s.lon for s in data.sites],
            "y": [s.lat for s in data.sites], "text": [f"<b>{plotly_text(s.code)}</b>" for s in data.sites],
            "textposition": "top center", "textfont": {"size": 12, "color": "#14213d"},
            "marker": {"size": [18 if s.tier == 0 else 13 for s in data.sites], "color": "#14213d",
                       "line": {"width": 2, "color": "#fff"}},
            "hovertext": [f"<b>{plotly_text(s.code)}</b> {plotly_text(s.name)}"
                          + (f"<br>Tier {s.tier}" if s.tier is not None else "") for s in data.sites],
            "hoverinfo": "text", "customdata": [s.url for s in data.sites], "meta": "sites",
        })
    layout = _base_layout(title="", height=540)
    layout["margin"] = {"l": 50, "r": 10, "t": 10, "b": 44}
    layout["dragmode"] = "pan"
    # The first named view is the initial one (the presenter puts the densest cluster first).
    lon_range, lat_range = (data.views[0].lon_range, data.views[0].lat_range) if data.views else _bounds(data)
    mean_lat = (lat_range[0] + lat_range[1]) / 2
    layout["xaxis"] = {"title": {"text": "longitude (°)", "font": {"size": 11}}, "range": list(lon_range),
                       "gridcolor": GRID_COLOUR, "zeroline": False}
    layout["yaxis"] = {"title": {"text": "latitude (°)", "font": {"size": 11}}, "range": list(lat_range),
                       "gridcolor": GRID_COLOUR, "zeroline": False, "scaleanchor": "x",
                       "scaleratio": round(1 / max(0.2, math.cos(math.radians(mean_lat))), 4)}
    layout["showlegend"] = False  # the page's legend explains colours and symbols
    if data.views:
        layout["updatemenus"] = [{
            "type": "buttons", "direction": "right", "x": 0, "y": 1.0, "xanchor": "left", "yanchor": "top",
            "pad": {"l": 6, "t": 6}, "showactive": False, "bgcolor": "#ffffff", "bordercolor": "#c5ccd6",
            "font": {"size": 11},
            "buttons": [{"label": v.label, "method": "relayout",
                         "args": [{"xaxis.range": list(v.lon_range), "yaxis.range": list(v.lat_range)}]}
                        for v in data.views],
        }]
    if not data.sites:
        layout["annotations"] = [{"xref": "paper", "yref": "paper", "x": 0.5, "y": 0.5, "showarrow": False,
                                  "text": "No site has coordinates yet", "font": {"size": 14, "color": "#7b8794"}}]
    return {"data": traces, "layout": layout}


def _polyline_middle(points: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """The point halfway along a polyline (by length), where the hover marker of a path sits."""
    if len(points) == 1:
        return points[0]
    lengths = [math.dist(points[i], points[i + 1]) for i in range(len(points) - 1)]
    half = sum(lengths) / 2
    for i, length in enumerate(lengths):
        if half <= length and length > 0:
            f = half / length
            (x0, y0), (x1, y1) = points[i], points[i + 1]
            return (round(x0 + f * (x1 - x0), 5), round(y0 + f * (y1 - y0), 5))
        half -= length
    return points[-1]


def _bounds(data: MapData) -> tuple[tuple[float, float], tuple[float, float]]:
    lons = [s.lon for s in data.sites] + [e.lon for e in data.elements]
    lats = [s.lat for s in data.sites] + [e.lat for e in data.elements]
    if not lons:
        return (-180.0, 180.0), (-60.0, 75.0)
    return _padded(min(lons), max(lons), 0.08, 4.0), _padded(min(lats), max(lats), 0.15, 3.0)


def _padded(low: float, high: float, fraction: float, minimum: float) -> tuple[float, float]:
    pad = max((high - low) * fraction, minimum)
    return (round(low - pad, 3), round(high + pad, 3))


def health_summary(status: str, latest_bps: float | None, loss: float | None) -> str:
    """One hover line for a path on the map."""
    parts = [k.STATUS_STYLE[status][1].split(":")[0]]
    if latest_bps is not None:
        parts.append(f"latest {format_bps(latest_bps)}")
    if loss is not None:
        parts.append(f"loss {format_fraction(loss)}")
    return " · ".join(parts)
