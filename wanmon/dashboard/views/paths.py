"""A path's page: one direction, or both directions of a site pair."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404

from wanmon.dashboard import constants as k
from wanmon.dashboard import presenters as p
from wanmon.dashboard import selectors as s
from wanmon.dashboard.views.common import (
    display_tz,
    range_at,
    range_context,
    range_param,
    respond,
)
from wanmon.diagnosis.choices import FindingStatus
from wanmon.inventory import selectors as inventory


def _path_page(request, src: str, dst: str, both: bool):
    if not inventory.path_pair_exists(src, dst):
        raise Http404(f"no path between {src} and {dst}")
    tr = range_param(request)
    pairs = [(src, dst), (dst, src)] if both else [(src, dst)]
    # Maintenance on the pair's current routes: drawn on the charts; the work that explains a degradation (as the
    # diagnosis counts it) is left out of the derived figures.
    current = [inventory.path_current(a, b, at=range_at(tr)) for a, b in pairs]
    maintenance = s.maintenance_for_paths([c for c in current if c], start=tr.start,
                                          end=tr.end + k.MAINTENANCE_HORIZON)
    planned = [(m.start, m.end) for m in maintenance if m.explaining and m.start < tr.end]
    directions = [s.direction_data(src=a, dst=b, start=tr.start, end=tr.end, bucket_s=tr.bucket_s,
                                   raw=tr.raw_tests, exclude=planned) for a, b in pairs]
    paths = [d.path for d in directions if d.path]
    ports = s.path_interfaces([d.path for d in directions], at=range_at(tr))
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
    figures = p.path_figures(directions=directions, tr=tr, tz=display_tz(), marks=marks, ports=ports,
                             iface_series=series, iface_table=table)
    cells = s.path_observations(at=range_at(tr), paths=paths)
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
        **range_context(request, tr),
    }
    return respond(request, "dashboard/path.html", context, figures=figures,
                    fragments={"summary": "dashboard/_path_summary.html", "details": "dashboard/_path_details.html"})


@login_required
def path_detail(request, src: str, dst: str):
    """One direction of a site pair."""
    return _path_page(request, src, dst, both=False)


@login_required
def pair_detail(request, src: str, dst: str):
    """Both directions of a site pair on the same charts."""
    return _path_page(request, src, dst, both=True)
