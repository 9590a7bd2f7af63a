"""The overview (grid and findings) and the map."""

from __future__ import annotations

from urllib.parse import urlencode

from django.apps import apps
from django.contrib.auth.decorators import login_required
from django.core.exceptions import BadRequest
from django.http import HttpResponseBadRequest

from wanmon.dashboard import constants as k
from wanmon.dashboard import figures as fig
from wanmon.dashboard import presenters as p
from wanmon.dashboard import selectors as s
from wanmon.dashboard.views.common import (
    as_of_param,
    respond,
)
from wanmon.inventory import selectors as inventory


@login_required
def overview(request):
    """Site-by-site grid (MaDDash style), open findings, maintenance and silent agents."""
    as_of = as_of_param(request)
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
    return respond(request, "dashboard/overview.html", context, fragments=fragments)


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
    as_of = as_of_param(request)
    data = p.map_data(s.map_inputs(at=as_of.at), as_of.query)
    shared = sorted((e for e in data.elements if e.site_pairs >= 2), key=lambda e: (-len(e.paths), e.name))
    latest = s.latest_measurement_time()
    return respond(request, "dashboard/map.html", {
        "data": data,
        "shared": shared,
        "legend": p.legend(),
        "at_param": as_of.at_param,
        "gap_href": as_of.gap_href(request.path, latest),
        "latest_data": latest,
    }, fragments={"shared": "dashboard/_map_shared.html"}, figures={"map": fig.map_figure(data)})
