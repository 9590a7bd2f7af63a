"""Pages of the NOC dashboard. Thin: parse the request, call selectors, hand results to presenters
and figure builders, render. Every page answers ``?format=json`` with its fragments (HTML) and
figures (Plotly dicts), which the page's script fetches every minute to refresh without a reload.
"""

from __future__ import annotations

import math
import statistics
from datetime import UTC, datetime
from urllib.parse import urlencode

from django.apps import apps
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import BadRequest, PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpResponseBadRequest, HttpResponseRedirect, JsonResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST

from collectors.records.types import iso_z
from wanmon.core.http import found
from wanmon.core.pages import next_url
from wanmon.core.permissions import user_is_operator
from wanmon.core.times import format_utc
from wanmon.dashboard import constants as k
from wanmon.dashboard import figures as fig
from wanmon.dashboard import presenters as p
from wanmon.dashboard import selectors as s
from wanmon.dashboard.formatting import format_bps
from wanmon.dashboard.forms import AcknowledgeForm, ExplorerForm, PreferenceForm
from wanmon.dashboard.ranges import (
    CUSTOM,
    AsOf,
    RangeError,
    TimeRange,
    bucket_for_span,
    parse_time_param,
    range_from_params,
)
from wanmon.dashboard.services import preference_set_time_zone
from wanmon.diagnosis.choices import Code, FindingStatus, Severity
from wanmon.diagnosis.services import finding_acknowledge as finding_acknowledge_service
from wanmon.inventory import selectors as inventory
from wanmon.measurements.selectors import QueryError, measurement_query


def _tz():
    return timezone.get_current_timezone()


def _as_of(request) -> AsOf:
    try:
        return AsOf(now=timezone.now(), at_param=parse_time_param("at", request.GET.get("at"), _tz()))
    except RangeError as exc:
        raise BadRequest(str(exc)) from exc


def _range(request) -> TimeRange:
    """The page's range from ``range``, ``start`` and ``end``; a parameter that cannot be read is a 400 naming it."""
    try:
        return range_from_params(range_text=request.GET.get("range"), start_text=request.GET.get("start"),
                                 end_text=request.GET.get("end"), tz=_tz(), now=timezone.now())
    except RangeError as exc:
        raise BadRequest(str(exc)) from exc


def _range_at(tr: TimeRange) -> datetime:
    """The instant a range page reads its path versions, crossings and health at: the range's chosen end, else now."""
    return tr.end if tr.anchored else timezone.now()


def _respond(request, template: str, context: dict, *, fragments: dict[str, str] | None = None,
             figures: dict | None = None):
    """The page, or (``?format=json``) its fragments and figures for the auto-refresh."""
    figures = figures or {}
    context = {**context, "figures": figures, "refresh_s": k.REFRESH_INTERVAL_S}
    if request.GET.get("format") == "json":
        return JsonResponse({
            "generated_at": iso_z(timezone.now(), "seconds", utc=True),
            "fragments": {name: render_to_string(tpl, context, request=request)
                          for name, tpl in (fragments or {}).items()},
            "figures": figures,
        })
    return render(request, template, context)


def _range_links(request, tr: TimeRange) -> list[dict]:
    links = []
    for key in k.RANGES:
        params = {"range": key}
        if tr.anchored:
            params["end"] = iso_z(tr.end, "seconds", utc=True)
        links.append({"key": key, "href": f"{request.path}?{urlencode(params)}", "active": key == tr.key})
    return links


def _range_context(request, tr: TimeRange) -> dict:
    latest = s.latest_measurement_time()
    show_latest = latest is not None and latest < tr.start  # everything stored is older than the range
    return {
        "range": tr,
        "range_links": _range_links(request, tr),
        "range_query": tr.query(),
        "latest_data": latest,
        "latest_data_href": (f"{request.path}?{urlencode({'range': tr.key, 'end': iso_z(latest, 'seconds', utc=True)})}"
                             if show_latest else None),
        "now_href": f"{request.path}?{urlencode({'range': tr.key})}" if tr.anchored else None,
    }


# --------------------------------------------------------------------------- overview and map


@login_required
def overview(request):
    """Site-by-site grid (MaDDash style), open findings, maintenance and silent agents."""
    as_of = _as_of(request)
    query = as_of.query
    site = request.GET.get("site") or None
    if site is not None and inventory.site_get(site) is None:
        raise BadRequest(f"site: unknown site {site[:20]!r}")
    filters = _overview_filters(request)
    if isinstance(filters, HttpResponseBadRequest):
        return filters
    data = s.overview(at=as_of.at, now=as_of.now, site=site, **filters)
    context = {
        "data": data,
        "filters": filters,
        "tiers": (0, 1, 2, 3),
        "grid_max_sites": s.GRID_MAX_SITES,
        "statuses": [st for st in k.STATUS_STYLE if st != k.OK],
        "problem_rows": [(c, p.path_url(c.src, c.dst, query)) for c in data.problems],
        "group_rows": [(g, "?" + urlencode({"region": g.region, "tier": "" if g.tier is None else g.tier}))
                       for g in data.groups],
        "rows": p.grid_rows(data, query),
        "legend": p.legend(),
        "site": site,
        "at_param": as_of.at_param,
        "gap_href": as_of.gap_href(request.path, data.latest_data),
        "finding_rows": [(f, *p.subject_link(f.subject, query)) for f in data.findings],
        "incident_rows": [(incident, p.incident_url(incident.pk)) for incident in data.incidents],
        "alerts_installed": apps.is_installed("wanmon.alerts"),
        # A wall screen: the grid alone, big, no navigation (the page still refreshes every minute).
        "kiosk": request.GET.get("kiosk") in ("1", "true", "yes"),
    }
    fragments = {
        "grid": "dashboard/_grid.html",
        "findings": "dashboard/_overview_findings.html",
        "incidents": "dashboard/_overview_incidents.html",
        "maintenance": "dashboard/_overview_maintenance.html",
        "agents": "dashboard/_overview_agents.html",
    }
    if data.scaled:
        fragments["groups"] = "dashboard/_overview_groups.html"
    return _respond(request, "dashboard/overview.html", context, fragments=fragments)


def _overview_filters(request) -> dict | HttpResponseBadRequest:
    """region, tier, q and status of the scaled overview, checked (a bad value is a 400 naming it)."""
    region = request.GET.get("region") or None
    tier_text = request.GET.get("tier") or ""
    q = (request.GET.get("q") or "").strip() or None
    status = request.GET.get("status") or None
    if region is not None and len(region) > 64:
        return HttpResponseBadRequest("region: at most 64 characters")
    if q is not None and len(q) > 64:
        return HttpResponseBadRequest("q: at most 64 characters")
    tier = None
    if tier_text:
        if tier_text not in ("0", "1", "2", "3"):
            return HttpResponseBadRequest(f"tier: {tier_text[:20]!r} is not one of 0, 1, 2, 3")
        tier = int(tier_text)
    if status is not None and status not in k.STATUS_STYLE:
        return HttpResponseBadRequest(f"status: {status[:20]!r} is not one of {', '.join(k.STATUS_STYLE)}")
    return {"region": region, "tier": tier, "q": q, "status": status}


@login_required
def network_map(request):
    """Sites by coordinates, path directions coloured by health, shared carrier elements."""
    as_of = _as_of(request)
    data = p.map_data(s.map_inputs(at=as_of.at), as_of.query)
    shared = sorted((e for e in data.elements if e.site_pairs >= 2), key=lambda e: (-len(e.paths), e.name))
    latest = s.latest_measurement_time()
    return _respond(request, "dashboard/map.html", {
        "data": data,
        "shared": shared,
        "legend": p.legend(),
        "at_param": as_of.at_param,
        "gap_href": as_of.gap_href(request.path, latest),
        "latest_data": latest,
    }, fragments={"shared": "dashboard/_map_shared.html"}, figures={"map": fig.map_figure(data)})


# --------------------------------------------------------------------------- path page


def _path_page(request, src: str, dst: str, both: bool):
    if not inventory.path_pair_exists(src, dst):
        raise Http404(f"no path between {src} and {dst}")
    tr = _range(request)
    pairs = [(src, dst), (dst, src)] if both else [(src, dst)]
    # Maintenance on the pair's current routes: drawn on the charts; the work that explains a degradation (as the
    # diagnosis counts it) is left out of the derived figures.
    current = [inventory.path_current(a, b, at=_range_at(tr)) for a, b in pairs]
    maintenance = s.maintenance_for_paths([c for c in current if c], start=tr.start,
                                          end=tr.end + k.MAINTENANCE_HORIZON)
    planned = [(m.start, m.end) for m in maintenance if m.explaining and m.start < tr.end]
    directions = [s.direction_data(src=a, dst=b, start=tr.start, end=tr.end, bucket_s=tr.bucket_s,
                                   raw=tr.raw_tests, exclude=planned) for a, b in pairs]
    paths = [d.path for d in directions if d.path]
    ports = s.path_interfaces([d.path for d in directions], at=_range_at(tr))
    interfaces = list({i.pk: i for _, i in ports}.values())
    table, series = s.interface_series(interface_ids=[i.pk for i in interfaces], start=tr.start, end=tr.end,
                                       bucket_s=tr.bucket_s)
    if [p.pk for p in paths] != [c.pk for c in current if c]:  # the range's last versions differ from now's
        maintenance = s.maintenance_for_paths(paths, start=tr.start, end=tr.end + k.MAINTENANCE_HORIZON)
    findings = s.findings_for_paths(paths, pairs=pairs, start=tr.start, end=tr.end)
    marks = (p.maintenance_marks(m for m in maintenance if m.start < tr.end) + p.finding_marks(findings)
             + [mark for d in directions for mark in p.route_change_marks(d)]
             + p.discontinuity_marks(s.interface_discontinuities(interface_ids=[i.pk for i in interfaces],
                                                                   start=tr.start, end=tr.end)))
    figures = p.path_figures(directions=directions, tr=tr, tz=_tz(), marks=marks, ports=ports,
                             iface_series=series, iface_table=table)
    cells = s.path_observations(at=_range_at(tr), paths=paths)
    query = tr.query()
    # The boxes an open finding suspects (e.g. the shared element of a reverse-path loss): marked on the hops.
    suspects = {(f.subject or {}).get("equipment") for f in findings
                if f.status != FindingStatus.RESOLVED and f.severity in (k.WARNING, k.CRITICAL)}
    views = []
    for index, d in enumerate(directions):
        other = directions[1 - index] if both else None
        views.append({
            "data": d,
            "derived": p.derived_table(d, other),
            "cell": cells.get((d.src, d.dst)),
            "hops": [{"hop": h, "suspect": h.equipment.name in suspects,
                      "equipment_url": p.equipment_url(h.equipment.name, query),
                      "interface_url": p.interface_url(h.equipment.name, h.interface.name, query)
                      if h.interface_id else None} for h in (d.path.hops.all() if d.path else [])],
        })
    query_no_end = tr.query()
    derived_rows = [
        (rows[0][0], [row[1] for row in rows], rows[0][2]) for rows in zip(*(v["derived"] for v in views), strict=True)
    ]
    context = {
        "src": src, "dst": dst, "both": both, "directions": views, "derived_rows": derived_rows,
        "test_pairs": [f"{src}->{dst}", f"{dst}->{src}"] if both else [f"{src}->{dst}"],
        "tabs": [
            {"label": f"{src} → {dst}", "href": p.path_url(src, dst, query_no_end), "active": not both},
            {"label": f"{dst} → {src}", "href": p.path_url(dst, src, query_no_end), "active": False},
            {"label": "both directions", "href": p.pair_url(src, dst, query_no_end), "active": both},
        ],
        "findings": [(f, p.finding_url(f.pk), *p.subject_link(f.subject, query)) for f in findings],
        "maintenance": maintenance,
        "ports": p.port_rows(ports, directions, query),
        "iface_table": table,
        **_range_context(request, tr),
    }
    return _respond(request, "dashboard/path.html", context, figures=figures,
                    fragments={"summary": "dashboard/_path_summary.html", "details": "dashboard/_path_details.html"})


@login_required
def path_detail(request, src: str, dst: str):
    """One direction of a site pair."""
    return _path_page(request, src, dst, both=False)


@login_required
def pair_detail(request, src: str, dst: str):
    """Both directions of a site pair on the same charts."""
    return _path_page(request, src, dst, both=True)


# --------------------------------------------------------------------------- equipment, interfaces, trunks


@login_required
def equipment_list(request):
    return render(request, "dashboard/equipment_list.html",
                  {"rows": s.equipment_list(), "trunks": inventory.trunk_list()})


def _cells_for(crossings, tr: TimeRange):
    return s.path_observations(at=_range_at(tr), paths=[c.path for c in crossings])


def _crossing_rows(crossings, cells, query: str) -> list[dict]:
    return [{"crossing": c, "url": p.path_url(c.path.src.code, c.path.dst.code, query),
             "cell": cells.get((c.path.src.code, c.path.dst.code))} for c in crossings]


def _add_counter_figures(figures: dict, label: str, interfaces, trunks, series, *, tr: TimeRange, marks,
                         source: str) -> list[dict]:
    """Add the errors chart of ``interfaces`` and the charts of ``trunks`` to ``figures``; the trunks' views."""
    tz = _tz()
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
    tr = _range(request)
    query = tr.query()
    interfaces = list(equipment.interfaces.order_by("name"))
    trunks = inventory.trunk_list(equipment=equipment)
    members = {m.pk: m for t in trunks for m in p.sorted_members(t)}
    ids = [i.pk for i in interfaces] + [pk for pk in members if pk not in {i.pk for i in interfaces}]
    table, series = s.interface_series(interface_ids=ids, start=tr.start, end=tr.end, bucket_s=tr.bucket_s)
    latest = s.interface_latest(interface_ids=[i.pk for i in interfaces], at=tr.end)
    crossings = s.equipment_paths(equipment, at=_range_at(tr))
    cells = _cells_for(crossings, tr)
    findings = s.findings_for_elements(start=tr.start, end=tr.end, equipment=[name], trunks=[t.name for t in trunks])
    maintenance = s.maintenance_for_element(labels={name, *(t.name for t in trunks)}, equipment=name,
                                            start=tr.start, end=tr.end + k.MAINTENANCE_HORIZON)
    marks = (p.maintenance_marks(m for m in maintenance if m.start < tr.end) + p.finding_marks(findings)
             + p.discontinuity_marks(s.interface_discontinuities(interface_ids=[i.pk for i in interfaces],
                                                                   start=tr.start, end=tr.end)))
    tz = _tz()
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
        **_range_context(request, tr),
    }
    return _respond(request, "dashboard/equipment.html", context, figures=figures,
                    fragments={"interfaces": "dashboard/_equipment_interfaces.html"})


@login_required
def interface_detail(request, name: str, interface: str):
    """One port: paths leaving by it (per direction), counters, errors, its trunk's members side by side."""
    iface = found(inventory.interface_get(equipment=name, name=interface), f"interface {name}:{interface}")
    tr = _range(request)
    query = tr.query()
    trunks = list(iface.trunks.prefetch_related("members__equipment").order_by("name"))
    siblings = [m for t in trunks for m in p.sorted_members(t)]
    far = s.interface_far_end(iface, at=_range_at(tr))
    link = [iface, far] if far is not None else [iface]  # both ends: one's transmit is the other's receive
    ids = list(dict.fromkeys([i.pk for i in link] + [m.pk for m in siblings]))
    table, series = s.interface_series(interface_ids=ids, start=tr.start, end=tr.end, bucket_s=tr.bucket_s)
    latest_rows = s.interface_latest(interface_ids=[i.pk for i in link], at=tr.end)
    latest = latest_rows.get(iface.pk)
    by_port, unknown = s.interface_paths(iface, at=_range_at(tr))
    cells = _cells_for(by_port + unknown, tr)
    findings = s.findings_for_elements(start=tr.start, end=tr.end, interface=(name, interface),
                                       trunks=[t.name for t in trunks])
    label = f"{name}:{interface}"
    maintenance = s.maintenance_for_element(labels={name, label, *(t.name for t in trunks)}, equipment=None,
                                            start=tr.start, end=tr.end + k.MAINTENANCE_HORIZON)
    discontinuities = s.interface_discontinuities(interface_ids=[iface.pk], start=tr.start, end=tr.end)
    marks = (p.maintenance_marks(m for m in maintenance if m.start < tr.end) + p.finding_marks(findings)
             + p.discontinuity_marks(discontinuities))
    tz = _tz()
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
        **_range_context(request, tr),
    }
    return _respond(request, "dashboard/interface.html", context, figures=figures)


@login_required
def trunk_detail(request, name: str):
    """A bundle's members side by side, and the paths that hash onto it."""
    trunk = found(inventory.trunk_get(name), f"trunk {name}")
    tr = _range(request)
    query = tr.query()
    members = p.sorted_members(trunk)
    table, series = s.interface_series(interface_ids=[m.pk for m in members], start=tr.start, end=tr.end,
                                       bucket_s=tr.bucket_s)
    latest = s.interface_latest(interface_ids=[m.pk for m in members], at=tr.end)
    findings = s.findings_for_elements(start=tr.start, end=tr.end, trunks=[name])
    maintenance = s.maintenance_for_element(labels={name}, equipment=None, start=tr.start,
                                            end=tr.end + k.MAINTENANCE_HORIZON)
    marks = p.maintenance_marks(m for m in maintenance if m.start < tr.end) + p.finding_marks(findings)
    paths = inventory.path_list_through_trunk(trunk=trunk, at=_range_at(tr))
    tz = _tz()
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
        **_range_context(request, tr),
    }
    return _respond(request, "dashboard/trunk.html", context, figures=figures)


# --------------------------------------------------------------------------- findings


@login_required
def finding_list(request):
    filters = {name: request.GET.get(name, "") for name in ("status", "severity", "code", "site", "element")}
    filters["status"] = filters["status"] or "active"
    page = Paginator(s.finding_list_filtered(**filters), 50).get_page(request.GET.get("page"))
    rows = [(f, p.finding_url(f.pk), *p.subject_link(f.subject, p.finding_query_for(f))) for f in page]
    context = {
        "page": page, "rows": rows, "filters": filters,
        "statuses": [("active", "active (open + acknowledged)"), *FindingStatus.choices, ("all", "all")],
        "severities": Severity.choices, "codes": Code.choices,
        "filter_query": urlencode({key: value for key, value in filters.items() if value}),
    }
    return _respond(request, "dashboard/finding_list.html", context,
                    fragments={"table": "dashboard/_finding_table.html"})


@login_required
def finding_detail(request, pk: int):
    finding = found(s.finding_get(pk), f"finding {pk}")
    rows, tables = p.evidence_view({key: value for key, value in (finding.evidence or {}).items()
                                    if key != "derived"})
    derived_rows, _ = p.evidence_view((finding.evidence or {}).get("derived") or {})
    subject_text, subject_url = p.subject_link(finding.subject, p.finding_query_for(finding))
    return render(request, "dashboard/finding_detail.html", {
        "finding": finding,
        "subject_text": subject_text,
        "subject_url": subject_url,
        "evidence_rows": rows,
        "evidence_tables": tables,
        "derived_rows": derived_rows,
        "events": list(finding.events.all()),
        "can_acknowledge": user_is_operator(request.user),
        "form": AcknowledgeForm(),
        "test_pairs": _finding_pairs(finding),
    })


def _finding_pairs(finding) -> list[str]:
    """The site pair a "Test now" of the finding page tests: a path finding's subject (element findings name none)."""
    subject = finding.subject or {}
    return [f"{subject['src']}->{subject['dst']}"] if subject.get("src") and subject.get("dst") else []


@login_required
@require_POST
def finding_acknowledge(request, pk: int):
    """Operators take a finding in hand; viewers are refused (403)."""
    if not user_is_operator(request.user):
        raise PermissionDenied("acknowledging needs the operator role")
    finding = found(s.finding_get(pk), f"finding {pk}")
    form = AcknowledgeForm(request.POST)
    note = form.cleaned_data["note"] if form.is_valid() else ""
    try:
        finding_acknowledge_service(finding=finding, user=request.user, note=note, now=timezone.now())
    except ValueError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Finding {finding.code} acknowledged.")
    return redirect("dashboard-finding", pk=pk)


# --------------------------------------------------------------------------- an incident's charts


@login_required
def incident_charts(request, pk: int):
    """Both directions of an incident's first site pairs over its span (``wanmon.alerts.page.incident_view``), the
    onset marked: the path page's throughput and loss charts, small. The incident page loads them (JSON); on their
    own they are a page. In UTC, like the incident page and its e-mails."""
    if not apps.is_installed("wanmon.alerts"):
        raise Http404("no alerting")
    from wanmon.alerts.page import incident_view
    from wanmon.alerts.selectors import incident_get

    incident = found(incident_get(incident_id=pk), f"incident {pk}")
    now = timezone.now()
    view = incident_view(incident, now=now)
    tr = TimeRange(key=CUSTOM, start=view.start, end=view.end, bucket_s=bucket_for_span(view.end - view.start),
                   anchored=True)
    onset = ([fig.TimeMark(kind="onset", start=view.onset, label=f"Onset of incident #{incident.pk}",
                           detail=format_utc(view.onset, now))] if view.onset else [])
    query = tr.query()
    pairs, figures = [], {}
    for index, (src, dst) in enumerate(view.charted):
        directions = [s.direction_data(src=a, dst=b, start=tr.start, end=tr.end, bucket_s=tr.bucket_s,
                                       raw=tr.raw_tests) for a, b in ((src, dst), (dst, src))]
        current = [d.path for d in directions if d.path]
        maintenance = s.maintenance_for_paths(current, start=tr.start, end=tr.end)
        marks = onset + p.maintenance_marks(maintenance)
        charts = p.path_figures(directions=directions, tr=tr, tz=UTC, marks=marks, ports=(), iface_series={},
                                iface_table="")
        names = {metric: f"pair-{index}-{metric}" for metric in k.INCIDENT_CHARTS}
        figures.update({names[metric]: p.compact(charts[metric]) for metric in k.INCIDENT_CHARTS})
        pairs.append({"src": src, "dst": dst, "url": p.pair_url(src, dst, query), "figures": names})
    return _respond(request, "dashboard/incident_charts.html",
                    {"incident": incident, "view": view, "pairs": pairs, "range": tr},
                    fragments={"charts": "dashboard/_incident_charts.html"}, figures=figures)


# --------------------------------------------------------------------------- explorer and preferences


@login_required
def explore(request):
    """The query API as a form, with a chart and the CSV of the same query."""
    bound = "metric" in request.GET
    form = ExplorerForm(request.GET if bound else None)
    context: dict = {"form": form, "range_keys": list(k.RANGES)}
    figures = {}
    tr = None
    if bound and form.is_valid():
        data = form.cleaned_data
        try:
            tr = range_from_params(range_text=data.get("range") or (None if data.get("start") else k.DEFAULT_RANGE),
                                   start_text=data.get("start"), end_text=data.get("end"), tz=_tz(),
                                   now=timezone.now())
        except RangeError as exc:
            form.add_error(exc.field, exc.message)
    if tr is not None and form.is_valid():
        data = form.cleaned_data
        filters = {name: data.get(name) or None for name in ExplorerForm.FILTERS}
        try:
            result = measurement_query(metric=data["metric"], start=tr.start, end=tr.end,
                                       bucket_s=form.bucket_seconds(), aggregate=data["aggregate"],
                                       group_by=data.get("group_by") or None, **filters)
        except QueryError as exc:
            form.add_error(exc.field if exc.field in form.fields else None, exc.message)
        else:
            params = {"metric": result.metric, "aggregate": result.aggregate, "bucket": f"{result.bucket_s}s",
                      "start": iso_z(tr.start, "seconds", utc=True), "end": iso_z(tr.end, "seconds", utc=True),
                      **({"group_by": data["group_by"]} if data.get("group_by") else {}),
                      **{key: value for key, value in filters.items() if value}}
            api = reverse("query")
            figures["explore"] = fig.explorer_figure(
                metric=result.metric, aggregate=result.aggregate, series=result.series, start=tr.start, end=tr.end,
                tz=_tz(), source=f"source: {result.source}, {p.bucket_text(result.bucket_s)} buckets")
            context.update({
                "result": result, "range": tr,
                "csv_href": f"{api}?{urlencode({**params, 'format': 'csv'})}",
                "json_href": f"{api}?{urlencode({**params, 'format': 'json'})}",
                "summaries": [_series_summary(item) for item in result.series],
            })
    # A query that cannot be answered (an unknown site, a bad range) is a 400 showing the form and what is wrong,
    # never an empty chart.
    status = 400 if bound and not form.is_valid() else 200
    return render(request, "dashboard/explore.html", {**context, "figures": figures}, status=status)


def _series_summary(item: dict) -> dict:
    values = sorted(v for _, v in item["points"] if v is not None)
    return {"key": fig.series_name(item["key"]),
            "points": len(item["points"]), "min": values[0] if values else None,
            "median": statistics.median(values) if values else None,
            "p95": values[min(len(values) - 1, math.ceil(0.95 * len(values)) - 1)] if values else None,
            "avg": sum(values) / len(values) if values else None, "max": values[-1] if values else None}


@login_required
@require_http_methods(["GET", "POST"])
def preferences(request):
    """The time zone pages show times in (UTC by default)."""
    current = timezone.get_current_timezone()
    back = next_url(request, reverse("home"))
    if request.method == "POST":
        form = PreferenceForm(request.POST)
        if form.is_valid():
            preference = preference_set_time_zone(user=request.user, time_zone=form.cleaned_data["time_zone"])
            request.session[k.SESSION_TIME_ZONE_KEY] = preference.time_zone
            messages.success(request, f"Times are now shown in {preference.time_zone}.")
            return HttpResponseRedirect(back)
    else:
        form = PreferenceForm(initial={"time_zone": getattr(current, "key", "UTC")})
    return render(request, "dashboard/preferences.html", {"form": form, "next": back})
