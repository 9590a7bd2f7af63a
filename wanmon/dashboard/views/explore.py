"""The explorer (any metric over any range, as chart, table or CSV) and the user's preferences."""

from __future__ import annotations

import math
import statistics
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_http_methods

from collectors.records.types import iso_z
from wanmon.core.pages import next_url
from wanmon.dashboard import constants as k
from wanmon.dashboard import figures as fig
from wanmon.dashboard import presenters as p
from wanmon.dashboard.forms import ExplorerForm, PreferenceForm
from wanmon.dashboard.ranges import (
    RangeError,
    range_from_params,
)
from wanmon.dashboard.services import preference_set_time_zone
from wanmon.dashboard.views.common import (
    display_tz,
)
from wanmon.measurements.selectors import QueryError, measurement_query


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
                                   start_text=data.get("start"), end_text=data.get("end"), tz=display_tz(),
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
                tz=display_tz(), source=f"source: {result.source}, {p.bucket_text(result.bucket_s)} buckets")
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
