"""Glue between selectors and pages: selector results -> figure inputs, template rows and links.

No queries here (selectors do that) and no Plotly dicts (figures.py does that); only URLs,
labels and the choice of what goes on which chart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, tzinfo
from urllib.parse import urlencode

from django.urls import NoReverseMatch, reverse

from collectors.records.types import iso_z
from wanmon.dashboard import constants as k
from wanmon.dashboard import figures as fig
from wanmon.dashboard.derived import PathInputs, path_derived_figures
from wanmon.dashboard.formatting import format_bps, format_by_name
from wanmon.dashboard.map_layout import LayoutHop, LayoutPath, element_positions, path_polyline
from wanmon.dashboard.path_ports import OUT
from wanmon.dashboard.ranges import TimeRange

# --------------------------------------------------------------------------- links


def _url(url_name: str, query: str = "", /, **kwargs) -> str:
    url = reverse(url_name, kwargs=kwargs)
    return f"{url}?{query}" if query else url


def path_url(src: str, dst: str, query: str = "") -> str:
    return _url("dashboard-path", query, src=src, dst=dst)


def pair_url(src: str, dst: str, query: str = "") -> str:
    return _url("dashboard-pair", query, src=src, dst=dst)


def equipment_url(name: str, query: str = "") -> str:
    return _url("dashboard-equipment", query, name=name)


def interface_url(equipment: str, interface: str, query: str = "") -> str:
    return _url("dashboard-interface", query, name=equipment, interface=interface)


def trunk_url(name: str, query: str = "") -> str:
    return _url("dashboard-trunk", query, name=name)


def finding_url(pk: int) -> str:
    return reverse("dashboard-finding", kwargs={"pk": pk})


def incident_url(pk: int) -> str:
    """The alerting app's incident page (the e-mails link there too)."""
    try:
        return reverse("alerts:incident-detail", kwargs={"pk": pk})
    except NoReverseMatch:
        return f"/incidents/{pk}"


def subject_link(subject: Mapping | None, query: str = "") -> tuple[str, str | None]:
    """(text, url) of a finding's subject: a path direction, equipment, interface, trunk or site."""
    subject = subject or {}
    if "src" in subject and "dst" in subject:
        return f"{subject['src']} → {subject['dst']}", path_url(subject["src"], subject["dst"], query)
    if subject.get("equipment") and subject.get("interface"):
        return (f"{subject['equipment']}:{subject['interface']}",
                interface_url(subject["equipment"], subject["interface"], query))
    if subject.get("equipment"):
        return subject["equipment"], equipment_url(subject["equipment"], query)
    if subject.get("trunk"):
        return f"trunk {subject['trunk']}", trunk_url(subject["trunk"], query)
    if subject.get("site"):
        text = subject["site"] + (f" / {subject['host']}" if subject.get("host") else "")
        return text, reverse("home") + "?" + urlencode({"site": subject["site"]})
    return ", ".join(f"{key}={value}" for key, value in subject.items()) or "–", None


def finding_query_for(finding) -> str:
    """Links from a finding to its subject's page show the finding's episode, from its onset to its window's end."""
    start = getattr(finding, "onset", None) or finding.start
    end = iso_z(finding.end, "seconds", utc=True)
    return urlencode({"range": _range_covering(min(start, finding.start), finding.end), "end": end})


def _range_covering(start: datetime, end: datetime) -> str:
    span = end - start
    for key, (width, _) in k.RANGES.items():
        if width >= span * 1.5:
            return key
    return "1y"


# --------------------------------------------------------------------------- overview


@dataclass(frozen=True)
class GridRow:
    src: str
    cells: list  # per destination: a CellView, None (no path) or "self"


@dataclass(frozen=True)
class CellView:
    cell: object
    url: str
    colour: str


def grid_rows(data, query: str = "") -> list[GridRow]:
    rows = []
    for src in data.sources:
        cells = []
        for dst in data.destinations:
            cell = data.cells.get((src, dst))
            if src == dst:
                cells.append("self")
            else:
                cells.append(CellView(cell, path_url(src, dst, query), cell.health.colour) if cell else None)
        rows.append(GridRow(src, cells))
    return rows


def legend() -> list[tuple[str, str, str]]:
    return [(status, colour, text) for status, (colour, text) in k.STATUS_STYLE.items()]


# --------------------------------------------------------------------------- map


def map_data(inputs, query: str = "") -> fig.MapData:
    coords = {s.code: (s.lon, s.lat) for s in inputs.sites}
    layout_paths = [
        LayoutPath(path.src.code, path.dst.code,
                   [LayoutHop(h.equipment.name, inputs.equipment_site.get(h.equipment.name)) for h in path.hops.all()])
        for path in inputs.paths
    ]
    positions = element_positions(coords, layout_paths)
    map_paths = []
    crossing: dict[str, list[str]] = {}
    for lp in layout_paths:
        if lp.src not in coords or lp.dst not in coords:
            continue
        cell = inputs.cells.get((lp.src, lp.dst))
        status = cell.health.status if cell else k.NODATA
        obs = cell.observation if cell else None
        summary = fig.health_summary(status, obs.latest_bps if obs else None, obs.loss_fraction if obs else None)
        if cell and cell.finding_count:
            summary += f" · {cell.finding_count} finding(s)"
        map_paths.append(fig.MapPath(lp.src, lp.dst, path_polyline(lp, coords, positions), status, summary,
                                     path_url(lp.src, lp.dst, query)))
        for hop in lp.hops:
            if hop.site is None:
                crossing.setdefault(hop.equipment, []).append(f"{lp.src}->{lp.dst}")
    elements = [
        fig.MapElement(name=name, owner=inputs.equipment_owner.get(name, ""), lon=positions[name][0],
                       lat=positions[name][1], paths=tuple(paths), suspect=name in inputs.suspects,
                       url=equipment_url(name, query))
        for name, paths in sorted(crossing.items()) if name in positions
    ]
    sites = [fig.MapSite(s.code, s.name, s.lon, s.lat, s.tier, reverse("home") + "?" + urlencode({"site": s.code}))
             for s in inputs.sites]
    views = [fig.MapView("All sites", *_bounds([(s.lon, s.lat) for s in sites]))] if sites else []
    europe = [(s.lon, s.lat) for s in sites if -12 <= s.lon <= 30 and 34 <= s.lat <= 66]
    if 2 <= len(europe) < len(sites):
        # Most LHC sites are in Europe, a few far away: start on Europe, one click shows them all.
        views.insert(0, fig.MapView("Europe", *_bounds(europe)))
    return fig.MapData(sites=sites, paths=map_paths, elements=elements, views=views)


def _bounds(points: Sequence[tuple[float, float]]):
    lons, lats = [p[0] for p in points], [p[1] for p in points]
    return fig._padded(min(lons), max(lons), 0.08, 4.0), fig._padded(min(lats), max(lats), 0.15, 3.0)


# --------------------------------------------------------------------------- time marks


def maintenance_marks(items) -> list[fig.TimeMark]:
    """Maintenance windows on a chart; references and targets come from carriers' notices: shown as text."""
    return [
        fig.TimeMark(kind="maintenance", start=m.start, end=m.end, label=f"Maintenance {m.reference}",
                     detail=f"{m.carrier or ''} {m.impact}: {', '.join(m.affects)}".strip(), url="")
        for m in items
        if not m.held  # held for review: no maintenance until an operator accepts it
    ]


def finding_marks(findings) -> list[fig.TimeMark]:
    return [
        fig.TimeMark(kind="finding", start=f.start, end=f.end, label=f"{f.code}", severity=f.severity,
                     detail=_wrap(f.summary), url=finding_url(f.pk))
        for f in findings
    ]


def route_change_marks(direction) -> list[fig.TimeMark]:
    """New path versions inside the range, and traceroutes whose hop list differs from the previous one."""
    marks = []
    for version in direction.versions[1:]:
        hops = " → ".join(h.label for h in version.hops.all())
        marks.append(fig.TimeMark(
            kind="route", start=version.valid_from, label=f"Route change {direction.src}→{direction.dst} (inventory)",
            detail=_wrap(hops + (f" ({version.note})" if version.note else "")),
        ))
    for before, after in zip(direction.traceroutes, direction.traceroutes[1:], strict=False):
        if list(before["hops"]) != list(after["hops"]):
            marks.append(fig.TimeMark(
                kind="route", start=after["time"], label=f"Route change {direction.src}→{direction.dst} (traceroute)",
                detail=_wrap("was: " + " → ".join(h or "*" for h in before["hops"]) + "\nnow: "
                             + " → ".join(h or "*" for h in after["hops"])),
            ))
    return marks


def discontinuity_marks(rows) -> list[fig.TimeMark]:
    return [fig.TimeMark(kind="discontinuity", start=r["time"],
                         label=f"Counter reset {r['equipment']}:{r['interface']}",
                         detail=_wrap(f"{r['code']}: {r['reason']}")) for r in rows]


def _wrap(text: str, width: int = 90) -> str:
    """Hover texts wrap at about ``width`` characters (plotly does not wrap), keeping the line breaks they have:
    plain text, lines joined by ``\\n`` (figures.plotly_text makes them Plotly's ``<br>``)."""
    lines = []
    for paragraph in (text or "").split("\n"):
        line = ""
        for word in paragraph.split():
            if line and len(line) + len(word) + 1 > width:
                lines.append(line)
                line = word
            else:
                line = f"{line} {word}".strip()
        if line:
            lines.append(line)
    return "\n".join(lines)


# --------------------------------------------------------------------------- path page


def _direction_colour(index: int) -> str:
    return k.DIRECTION_COLOURS[index % len(k.DIRECTION_COLOURS)]


def _tcp_hover(rows: Sequence[Mapping], bucketed: bool) -> list[str]:
    if bucketed:
        return [f"avg of {r['tests']} test(s), min {format_bps(r['low'])}, max {format_bps(r['high'])}" for r in rows]
    out = []
    for r in rows:
        parts = []
        if r.get("window_bytes"):
            parts.append(f"window {format_by_name('window_bytes', r['window_bytes'])}")
        if r.get("rtt_ms"):
            parts.append(f"RTT {r['rtt_ms']:g} ms")
        if r.get("retransmits") is not None:
            parts.append(f"retransmits {r['retransmits']:,}")
        if r.get("streams") and r["streams"] > 1:
            parts.append(f"{r['streams']} streams")
        if r.get("dst_host"):
            parts.append(f"to {r['dst_host']}")
        out.append(", ".join(parts))
    return out


def path_figures(
    *, directions: Sequence, tr: TimeRange, tz: tzinfo, marks: Sequence[fig.TimeMark], ports: Sequence,
    iface_series: Mapping, iface_table: str,
) -> dict:
    """The charts of the path page, for one direction or both. ``ports`` are (PathPort, Interface) pairs: each
    port is charted by the side that carries the path in its direction (out where a hop leaves by it, in where
    the path arrives by it), never both sides summed: a port's receive errors belong to the paths arriving."""
    both = len(directions) > 1
    through, loss, delay = [], [], []
    levels = []
    for index, d in enumerate(directions):
        colour = _direction_colour(index)
        name = f"{d.src}→{d.dst}"
        through.append(fig.Series(
            name=name, times=d.tcp.times, values=d.tcp.values, colour=colour, hover=_tcp_hover(d.tcp.details,
                                                                                           d.tcp.bucketed),
            band_low=d.tcp.lows if d.tcp.bucketed else None, band_high=d.tcp.highs if d.tcp.bucketed else None,
        ))
        if d.failed:
            through.append(fig.Series(
                name=f"{name} failed tests", times=[r["time"] for r in d.failed], values=[0.0] * len(d.failed),
                colour="#d64545", mode="markers", symbol="x", hover=[r["error"] for r in d.failed],
            ))
        loss.append(fig.Series(name=f"{name} one-way probes", times=d.owamp_loss.times, values=d.owamp_loss.values,
                               colour=colour, hover=[f"{r['packets_lost']:,} of {r['packets_sent']:,} packets"
                                                     for r in d.owamp_loss.details]))
        loss.append(fig.Series(name=f"{name} UDP tests", times=d.udp_loss.times, values=d.udp_loss.values,
                               colour=colour, dash="dot", symbol="square",
                               hover=[f"{r['packets_lost']:,} of {r['packets_sent']:,} packets"
                                      for r in d.udp_loss.details]))
        delay.append(fig.Series(name=f"{name} minimum", times=d.delay_min.times, values=d.delay_min.values,
                                colour=colour, mode="lines"))
        delay.append(fig.Series(name=f"{name} median", times=d.delay_median.times, values=d.delay_median.values,
                                colour=colour, dash="dot", mode="lines"))
        capacity = d.path.capacity_bps if d.path else None
        if capacity and not (both and index):
            levels.append(fig.Level(capacity, f"capacity {format_bps(capacity)}", "#52606d"))
    if not both and directions:
        derived = direction_derived(directions[0])
        if derived.window_limited_rate_bps and derived.window_limited_rate_bps < (derived.capacity_bps or 1e30):
            levels.append(fig.Level(derived.window_limited_rate_bps,
                                    f"window limit {format_bps(derived.window_limited_rate_bps)}", "#7c3aed", "dot"))
        if derived.mathis_ceiling_bps and derived.mathis_ceiling_bps < (derived.capacity_bps or 1e30):
            levels.append(fig.Level(derived.mathis_ceiling_bps,
                                    f"Mathis ceiling {format_bps(derived.mathis_ceiling_bps)}", "#d64545", "dot"))
    tests_source = ("every test" if tr.raw_tests else f"average per {bucket_text(tr.bucket_s)} (band: min–max)")
    util, errors = [], []
    colours: dict[int, str] = {}
    for port, iface in ports:
        series = iface_series.get(iface.pk)
        if series is None:
            continue
        # One colour per interface: on the both-directions page a port is one path's exit and the other's entry.
        colour = colours.setdefault(iface.pk, k.PALETTE[len(colours) % len(k.PALETTE)])
        side = port.direction  # "out": the transmit counters carry the path; "in": the receive counters
        d = directions[port.path]
        name = f"{port.label} {side}" + (f" ({d.src}→{d.dst})" if both else "")
        dash = "solid" if side == OUT else "dot"
        util.append(fig.Series(name=name, times=series.times, values=getattr(series, f"{side}_utilisation"),
                               colour=colour, mode="lines", dash=dash))
        errors.append(fig.Series(name=f"{name} errors", times=series.times,
                                 values=getattr(series, f"{side}_errors_per_s"), colour=colour, dash=dash,
                                 mode="lines+markers"))
        errors.append(fig.Series(name=f"{name} discards", times=series.times,
                                 values=getattr(series, f"{side}_discards_per_s"), colour=colour, dash="dash",
                                 mode="lines"))
    errors = nonzero(errors)
    iface_source = f"source: {iface_table}, {bucket_text(tr.bucket_s)} buckets"
    # The explorer and CSV of the first direction's tests (both directions: the site pair's, grouped by path).
    ends = ({"site": directions[0].src, "group_by": "path"} if both
            else {"src": directions[0].src, "dst": directions[0].dst}) if directions else {}
    return {
        "throughput": with_links(fig.throughput_figure(series=through, start=tr.start, end=tr.end, tz=tz, marks=marks,
                                                       levels=levels, source=f"TCP tests: {tests_source}"),
                                 data_links(tr, "throughput_bps", protocol="tcp", **ends)),
        "loss": with_links(fig.loss_figure(series=loss, start=tr.start, end=tr.end, tz=tz, marks=marks,
                                           source="per session" if tr.raw_tests else f"per {bucket_text(tr.bucket_s)}"),
                           data_links(tr, "loss_fraction", **ends)),
        "delay": with_links(fig.delay_figure(series=delay, start=tr.start, end=tr.end, tz=tz, marks=marks,
                                             source="per session" if tr.raw_tests
                                             else f"per {bucket_text(tr.bucket_s)}"),
                            data_links(tr, "delay_min_ms", aggregate="min", **ends)),
        "utilisation": fig.utilisation_figure(
            title="Utilisation hop by hop: out of each exit port, in at the next box (max per bucket)",
            series=util, start=tr.start, end=tr.end, tz=tz, marks=marks, source=iface_source),
        "errors": fig.errors_figure(title="Errors and discards in the path's direction (solid: out, dotted: in)",
                                    series=errors, start=tr.start, end=tr.end, tz=tz, marks=marks,
                                    source=iface_source, polled=polled(iface_series)),
    }


def port_rows(ports: Sequence, directions: Sequence, query: str = "") -> list[dict]:
    """The path page's table of the counters it charts: which port, which side, for which direction."""
    return [{"port": port, "interface": iface, "direction": f"{directions[port.path].src}→{directions[port.path].dst}",
             "side": "transmit (out)" if port.direction == OUT else "receive (in)",
             "url": interface_url(iface.equipment.name, iface.name, query)} for port, iface in ports]


def data_links(tr: TimeRange, metric: str, aggregate: str = "avg", **filters: str | None) -> dict[str, str]:
    """The explorer and the CSV of the query that reproduces a chart over the page's exact range."""
    params = {"metric": metric, "aggregate": aggregate,
              "start": iso_z(tr.start, "seconds", utc=True), "end": iso_z(tr.end, "seconds", utc=True),
              **{name: value for name, value in filters.items() if value}}
    return {"explore": f"{reverse('dashboard-explore')}?{urlencode(params)}",
            "csv": f"{reverse('query')}?{urlencode({**params, 'bucket': f'{tr.bucket_s}s', 'format': 'csv'})}"}


def with_links(figure: dict, links: dict[str, str]) -> dict:
    """``figure`` carrying its explorer and CSV links (static/js/wanmon.js shows them under the chart)."""
    figure["layout"].setdefault("meta", {})["links"] = links
    return figure


def compact(figure: dict) -> dict:
    """A time chart drawn smaller, for a page of several (its legend keeps the room it was given)."""
    figure["layout"]["height"] += k.COMPACT_CHART_HEIGHT_PX - fig.TIME_CHART_HEIGHT_PX
    return figure


def polled(series: Mapping) -> bool:
    """Whether any interface has counters in the range."""
    return any(s.times for s in series.values())


def nonzero(series: Sequence[fig.Series]) -> list[fig.Series]:
    """Only the series with a non-zero value: a chart of twenty flat zero lines hides the one that matters."""
    return [s for s in series if any(v for v in s.values if v is not None)]


def _sum_lists(a: Sequence[float | None], b: Sequence[float | None]) -> list[float | None]:
    return [None if x is None and y is None else (x or 0.0) + (y or 0.0) for x, y in zip(a, b, strict=True)]


def bucket_text(seconds: int) -> str:
    for width, text in ((86400, "d"), (3600, "h"), (60, "min")):
        if seconds % width == 0:
            return f"{seconds // width} {text}"
    return f"{seconds} s"


def direction_derived(direction, reverse=None):
    samples = direction.derived_samples or {}
    reverse_samples = (reverse.derived_samples or {}) if reverse else {}
    path = direction.path
    return path_derived_figures(PathInputs(
        capacity_bps=path.capacity_bps if path else None,
        nominal_rtt_ms=path.rtt_ms if path else None,
        test_rtts_ms=samples.get("rtts", ()),
        test_mss_bytes=samples.get("mss", ()),
        test_windows_bytes=samples.get("windows", ()),
        owamp_min_delays_ms=samples.get("delays", ()),
        reverse_owamp_min_delays_ms=reverse_samples.get("delays", ()),
        loss_packets_lost=samples.get("lost", 0),
        loss_packets_sent=samples.get("sent", 0),
        loss_owamp_sessions=samples.get("sessions", 0),
        loss_owamp_visible_lost=samples.get("visible"),
        loss_owamp_visible_sessions=samples.get("visible_sessions", 0),
        udp_packets_lost=samples.get("udp_lost", 0),
        udp_packets_sent=samples.get("udp_sent", 0),
        udp_tests=samples.get("udp_tests", 0),
        udp_visible_lost=samples.get("udp_visible"),
        udp_visible_tests=samples.get("udp_visible_tests", 0),
    ))


def derived_table(direction, reverse=None) -> list[tuple[str, str, str]]:
    figures = direction_derived(direction, reverse)
    return [(label, format_by_name(unit, value), note) for label, unit, value, note in figures.rows()]


# --------------------------------------------------------------------------- interface pages


def _iface_label(iface, full: bool) -> str:
    return f"{iface.equipment.name}:{iface.name}" if full else iface.name


def _full_names(interfaces: Sequence) -> bool:
    return len({iface.equipment_id for iface in interfaces}) > 1


def _per_interface(interfaces: Sequence, series: Mapping):
    """(label, colour, series) of each interface that has series: one colour per interface, by its place."""
    full = _full_names(interfaces)
    for index, iface in enumerate(interfaces):
        s = series.get(iface.pk)
        if s is not None:
            yield _iface_label(iface, full), k.PALETTE[index % len(k.PALETTE)], s


def traffic_series(interfaces: Sequence, series: Mapping, metric: str) -> list[fig.Series]:
    """``metric`` in/out per interface: solid out, dotted in, one colour per interface."""
    out = []
    for label, colour, s in _per_interface(interfaces, series):
        out.append(fig.Series(name=f"{label} in", times=s.times, values=getattr(s, f"in_{metric}"),
                              colour=colour, dash="dot", mode="lines"))
        out.append(fig.Series(name=f"{label} out", times=s.times, values=getattr(s, f"out_{metric}"),
                              colour=colour, mode="lines"))
    return out


def error_series(interfaces: Sequence, series: Mapping) -> list[fig.Series]:
    """Errors in, errors out and discards (in + out) per interface; all-zero series are left out."""
    out = []
    for label, colour, s in _per_interface(interfaces, series):
        out.append(fig.Series(name=f"{label} in errors", times=s.times, values=s.in_errors_per_s,
                              colour=colour, mode="lines+markers"))
        out.append(fig.Series(name=f"{label} out errors", times=s.times, values=s.out_errors_per_s,
                              colour=colour, dash="dash", mode="lines"))
        out.append(fig.Series(name=f"{label} discards", times=s.times,
                              values=_sum_lists(s.in_discards_per_s, s.out_discards_per_s), colour=colour,
                              dash="dot", mode="lines"))
    return nonzero(out)


def sorted_members(trunk) -> list:
    """A trunk's member interfaces by equipment, then name (members prefetched by the selectors)."""
    return sorted(trunk.members.all(), key=lambda i: (i.equipment.name, i.name))


def trunk_charts(
    trunks: Sequence, series: Mapping, *, tr: TimeRange, tz: tzinfo, marks: Sequence[fig.TimeMark], source: str,
    query: str = "",
) -> tuple[dict, list[dict]]:
    """For each trunk: its members side by side (bars) and over time (lines); (figures, views for the page)."""
    figures: dict = {}
    views = []
    for trunk in trunks:
        members = sorted_members(trunk)
        bars, lines = f"trunk-{trunk.pk}", f"trunk-{trunk.pk}-lines"
        figures[bars] = fig.trunk_members_figure(trunk=trunk.name, members=member_shares(members, series, query))
        figures[lines] = fig.utilisation_figure(
            title=f"Trunk {trunk.name}: member utilisation over time (solid: out, dotted: in)",
            series=traffic_series(members, series, "utilisation"), start=tr.start, end=tr.end, tz=tz,
            marks=marks, source=source)
        views.append({"trunk": trunk, "url": trunk_url(trunk.name, query), "figure": bars, "lines": lines})
    return figures, views


def member_shares(members: Sequence, series: Mapping, query: str = "") -> list[fig.MemberShare]:
    return [
        fig.MemberShare(
            label=f"{m.equipment.name}:{m.name}",
            in_utilisation=series[m.pk].mean("in_utilisation") if m.pk in series else None,
            out_utilisation=series[m.pk].mean("out_utilisation") if m.pk in series else None,
            url=interface_url(m.equipment.name, m.name, query),
        )
        for m in members
    ]


# --------------------------------------------------------------------------- finding detail


@dataclass(frozen=True)
class EvidenceRow:
    key: str
    value: str


@dataclass(frozen=True)
class EvidenceTable:
    key: str
    columns: list[str]
    rows: list[list[str]]


def evidence_view(evidence: Mapping | None) -> tuple[list[EvidenceRow], list[EvidenceTable]]:
    """Evidence numbers as (key, formatted value) rows, nested dicts flattened with dotted keys, and
    lists of records (e.g. the tests a rule used) as small tables. Units come from the key names."""
    rows: list[EvidenceRow] = []
    tables: list[EvidenceTable] = []

    def walk(prefix: str, value) -> None:
        if isinstance(value, Mapping):
            for key, item in value.items():
                walk(f"{prefix}.{key}" if prefix else str(key), item)
        elif isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
            columns: list[str] = []
            for item in value:
                columns.extend(c for c in item if c not in columns)
            tables.append(EvidenceTable(prefix, columns, [
                [format_by_name(c, item.get(c)) if c in item else "" for c in columns] for item in value
            ]))
        elif isinstance(value, list):
            rows.append(EvidenceRow(prefix, ", ".join(format_by_name(prefix, v) for v in value) or "–"))
        else:
            rows.append(EvidenceRow(prefix, format_by_name(prefix.rsplit(".", 1)[-1], value)))

    walk("", evidence or {})
    return rows, tables

