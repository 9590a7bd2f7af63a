"""An incident's charts, linked from the incident page."""

from __future__ import annotations

from datetime import UTC

from django.apps import apps
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.utils import timezone

from wanmon.core.http import found
from wanmon.core.times import format_utc
from wanmon.dashboard import constants as k
from wanmon.dashboard import figures as fig
from wanmon.dashboard import presenters as p
from wanmon.dashboard import selectors as s
from wanmon.dashboard.ranges import (
    CUSTOM,
    TimeRange,
    bucket_for_span,
)
from wanmon.dashboard.views.common import (
    respond,
)


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
    return respond(request, "dashboard/incident_charts.html",
                    {"incident": incident, "view": view, "pairs": pairs, "range": tr},
                    fragments={"charts": "dashboard/_incident_charts.html"}, figures=figures)
