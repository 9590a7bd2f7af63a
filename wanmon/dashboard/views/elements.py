"""Equipment, interfaces (with the other end of their link) and trunks."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from wanmon.core.http import found
from wanmon.dashboard import constants as k
from wanmon.dashboard import figures as fig
from wanmon.dashboard import presenters as p
from wanmon.dashboard import selectors as s
from wanmon.dashboard.formatting import format_bps
from wanmon.dashboard.ranges import (
    TimeRange,
)
from wanmon.dashboard.views.common import (
    display_tz,
    range_at,
    range_context,
    range_param,
    respond,
)
from wanmon.inventory import selectors as inventory


@login_required
def equipment_list(request):
    return render(request, "dashboard/equipment_list.html",
                  {"rows": s.equipment_list(), "trunks": inventory.trunk_list()})


def _cells_for(crossings, tr: TimeRange):
    return s.path_observations(at=range_at(tr), paths=[c.path for c in crossings])


def _crossing_rows(crossings, cells, query: str) -> list[dict]:
    return [{"crossing": c, "url": p.path_url(c.path.src.code, c.path.dst.code, query),
             "cell": cells.get((c.path.src.code, c.path.dst.code))} for c in crossings]


def _add_counter_figures(figures: dict, label: str, interfaces, trunks, series, *, tr: TimeRange, marks,
                         source: str) -> list[dict]:
    """Add the errors chart of ``interfaces`` and the charts of ``trunks`` to ``figures``; the trunks' views."""
    tz = display_tz()
    figures["errors"] = fig.errors_figure(
        title=f"{label}: errors and discards", series=p.error_series(interfaces, series), start=tr.start, end=tr.end,
        tz=tz, marks=marks, source=source, polled=p.polled(series),
    )
    trunk_figures, trunk_views = p.trunk_charts(trunks, series, tr=tr, tz=tz, marks=marks, source=source,
                                                query=tr.query())
    figures.update(trunk_figures)
    return trunk_views


@login_required
def equipment_detail(request, name: str):
    """Which paths cross this box (per direction), its interfaces' counters, its trunks side by side."""
    equipment = found(inventory.equipment_get(name), f"equipment {name}")
    tr = range_param(request)
    query = tr.query()
    interfaces = list(equipment.interfaces.order_by("name"))
    trunks = inventory.trunk_list(equipment=equipment)
    members = {m.pk: m for t in trunks for m in p.sorted_members(t)}
    ids = [i.pk for i in interfaces] + [pk for pk in members if pk not in {i.pk for i in interfaces}]
    table, series = s.interface_series(interface_ids=ids, start=tr.start, end=tr.end, bucket_s=tr.bucket_s)
    latest = s.interface_latest(interface_ids=[i.pk for i in interfaces], at=tr.end)
    crossings = s.equipment_paths(equipment, at=range_at(tr))
    cells = _cells_for(crossings, tr)
    findings = s.findings_for_elements(start=tr.start, end=tr.end, equipment=[name], trunks=[t.name for t in trunks])
    maintenance = s.maintenance_for_element(labels={name, *(t.name for t in trunks)}, equipment=name,
                                            start=tr.start, end=tr.end + k.MAINTENANCE_HORIZON)
    marks = (p.maintenance_marks(m for m in maintenance if m.start < tr.end) + p.finding_marks(findings)
             + p.discontinuity_marks(s.interface_discontinuities(interface_ids=[i.pk for i in interfaces],
                                                                   start=tr.start, end=tr.end)))
    tz = display_tz()
    source = f"source: {table}, {p.bucket_text(tr.bucket_s)} buckets"
    figures = {
        "traffic": p.with_links(
            fig.traffic_figure(title=f"{name}: traffic per interface (solid: out, dotted: in)",
                               series=p.traffic_series(interfaces, series, "bps"), start=tr.start,
                               end=tr.end, tz=tz, marks=marks, source=source),
            p.data_links(tr, "out_bps", equipment=name, group_by="interface")),
    }
    trunk_views = _add_counter_figures(figures, name, interfaces, trunks, series, tr=tr, marks=marks, source=source)
    p.with_links(figures["errors"], p.data_links(tr, "in_errors_per_s", equipment=name, group_by="interface"))
    context = {
        "equipment": equipment,
        "interfaces": [{"interface": i, "latest": latest.get(i.pk),
                        "url": p.interface_url(name, i.name, query),
                        "trunks": [t.name for t in trunks if i.pk in {m.pk for m in t.members.all()}]}
                       for i in interfaces],
        "crossings": _crossing_rows(crossings, cells, query),
        "trunks": trunk_views,
        "findings": [(f, p.finding_url(f.pk), *p.subject_link(f.subject, query)) for f in findings],
        "maintenance": maintenance,
        **range_context(request, tr),
    }
    return respond(request, "dashboard/equipment.html", context, figures=figures,
                    fragments={"interfaces": "dashboard/_equipment_interfaces.html"})


@login_required
def interface_detail(request, name: str, interface: str):
    """One port: paths leaving by it (per direction), counters, errors, its trunk's members side by side."""
    iface = found(inventory.interface_get(equipment=name, name=interface), f"interface {name}:{interface}")
    tr = range_param(request)
    query = tr.query()
    trunks = list(iface.trunks.prefetch_related("members__equipment").order_by("name"))
    siblings = [m for t in trunks for m in p.sorted_members(t)]
    far = s.interface_far_end(iface, at=range_at(tr))
    link = [iface, far] if far is not None else [iface]  # both ends: one's transmit is the other's receive
    ids = list(dict.fromkeys([i.pk for i in link] + [m.pk for m in siblings]))
    table, series = s.interface_series(interface_ids=ids, start=tr.start, end=tr.end, bucket_s=tr.bucket_s)
    latest_rows = s.interface_latest(interface_ids=[i.pk for i in link], at=tr.end)
    latest = latest_rows.get(iface.pk)
    by_port, unknown = s.interface_paths(iface, at=range_at(tr))
    cells = _cells_for(by_port + unknown, tr)
    findings = s.findings_for_elements(start=tr.start, end=tr.end, interface=(name, interface),
                                       trunks=[t.name for t in trunks])
    label = f"{name}:{interface}"
    maintenance = s.maintenance_for_element(labels={name, label, *(t.name for t in trunks)}, equipment=None,
                                            start=tr.start, end=tr.end + k.MAINTENANCE_HORIZON)
    discontinuities = s.interface_discontinuities(interface_ids=[iface.pk], start=tr.start, end=tr.end)
    marks = (p.maintenance_marks(m for m in maintenance if m.start < tr.end) + p.finding_marks(findings)
             + p.discontinuity_marks(discontinuities))
    tz = display_tz()
    source = f"source: {table}, {p.bucket_text(tr.bucket_s)} buckets"
    levels = [fig.Level(iface.speed_bps, f"speed {format_bps(iface.speed_bps)}")] if iface.speed_bps else []
    figures = {
        "traffic": fig.traffic_figure(title=f"{label}: traffic (avg per bucket)",
                                      series=p.traffic_series(link, series, "bps"), start=tr.start, end=tr.end,
                                      tz=tz, marks=marks, levels=levels, source=source),
        "utilisation": fig.utilisation_figure(title=f"{label}: utilisation (max per bucket)",
                                              series=p.traffic_series(link, series, "utilisation"),
                                              start=tr.start, end=tr.end, tz=tz, marks=marks, source=source),
    }
    trunk_views = _add_counter_figures(figures, label + (" and its far end" if far else ""), link, trunks, series,
                                       tr=tr, marks=marks, source=source)
    for chart, metric, aggregate in (("traffic", "out_bps", "avg"), ("utilisation", "out_utilisation", "max"),
                                     ("errors", "in_errors_per_s", "avg")):
        p.with_links(figures[chart], p.data_links(tr, metric, aggregate, interface=label))
    context = {
        "interface": iface, "label": label, "latest": latest,
        "far_end": far, "far_latest": latest_rows.get(far.pk) if far else None,
        "far_end_url": p.interface_url(far.equipment.name, far.name, query) if far else None,
        "equipment_url": p.equipment_url(name, query),
        "by_port": _crossing_rows(by_port, cells, query),
        "unknown": _crossing_rows(unknown, cells, query),
        "trunks": trunk_views,
        "findings": [(f, p.finding_url(f.pk), *p.subject_link(f.subject, query)) for f in findings],
        "maintenance": maintenance,
        "discontinuities": discontinuities,
        **range_context(request, tr),
    }
    return respond(request, "dashboard/interface.html", context, figures=figures)


@login_required
def trunk_detail(request, name: str):
    """A bundle's members side by side, and the paths that hash onto it."""
    trunk = found(inventory.trunk_get(name), f"trunk {name}")
    tr = range_param(request)
    query = tr.query()
    members = p.sorted_members(trunk)
    table, series = s.interface_series(interface_ids=[m.pk for m in members], start=tr.start, end=tr.end,
                                       bucket_s=tr.bucket_s)
    latest = s.interface_latest(interface_ids=[m.pk for m in members], at=tr.end)
    findings = s.findings_for_elements(start=tr.start, end=tr.end, trunks=[name])
    maintenance = s.maintenance_for_element(labels={name}, equipment=None, start=tr.start,
                                            end=tr.end + k.MAINTENANCE_HORIZON)
    marks = p.maintenance_marks(m for m in maintenance if m.start < tr.end) + p.finding_marks(findings)
    paths = inventory.path_list_through_trunk(trunk=trunk, at=range_at(tr))
    tz = display_tz()
    source = f"source: {table}, {p.bucket_text(tr.bucket_s)} buckets"
    figures = {
        "members": fig.trunk_members_figure(trunk=name, members=p.member_shares(members, series, query)),
        "utilisation": fig.utilisation_figure(
            title=f"Trunk {name}: member utilisation over time (solid: out, dotted: in)",
            series=p.traffic_series(members, series, "utilisation"), start=tr.start, end=tr.end, tz=tz,
            marks=marks, source=source),
        "errors": fig.errors_figure(title=f"Trunk {name}: member errors and discards",
                                    series=p.error_series(members, series), start=tr.start, end=tr.end, tz=tz,
                                    marks=marks, source=source, polled=p.polled(series)),
    }
    context = {
        "trunk": trunk,
        "members": [{"interface": m, "latest": latest.get(m.pk), "url": p.interface_url(m.equipment.name, m.name,
                                                                                        query)} for m in members],
        "paths": [(path, p.path_url(path.src.code, path.dst.code, query)) for path in paths],
        "findings": [(f, p.finding_url(f.pk), *p.subject_link(f.subject, query)) for f in findings],
        "maintenance": maintenance,
        **range_context(request, tr),
    }
    return respond(request, "dashboard/trunk.html", context, figures=figures)
