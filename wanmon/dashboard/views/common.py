"""What every dashboard page does with its request: the display time zone, the as-of time, the range and its
links, and the answer (the page, or ``?format=json`` with its fragments and figures)."""

from __future__ import annotations

from datetime import datetime
from urllib.parse import urlencode

from django.core.exceptions import BadRequest
from django.http import JsonResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils import timezone

from collectors.records.types import iso_z
from wanmon.dashboard import constants as k
from wanmon.dashboard import selectors as s
from wanmon.dashboard.ranges import (
    AsOf,
    RangeError,
    TimeRange,
    parse_time_param,
    range_from_params,
)


def display_tz():
    return timezone.get_current_timezone()


def as_of_param(request) -> AsOf:
    try:
        return AsOf(now=timezone.now(), at_param=parse_time_param("at", request.GET.get("at"), display_tz()))
    except RangeError as exc:
        raise BadRequest(str(exc)) from exc


def range_param(request) -> TimeRange:
    """The page's range from ``range``, ``start`` and ``end``; a parameter that cannot be read is a 400 naming it."""
    try:
        return range_from_params(range_text=request.GET.get("range"), start_text=request.GET.get("start"),
                                 end_text=request.GET.get("end"), tz=display_tz(), now=timezone.now())
    except RangeError as exc:
        raise BadRequest(str(exc)) from exc


def range_at(tr: TimeRange) -> datetime:
    """The instant a range page reads its path versions, crossings and health at: the range's chosen end, else now."""
    return tr.end if tr.anchored else timezone.now()


def respond(request, template: str, context: dict, *, fragments: dict[str, str] | None = None,
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


def range_links(request, tr: TimeRange) -> list[dict]:
    links = []
    for key in k.RANGES:
        params = {"range": key}
        if tr.anchored:
            params["end"] = iso_z(tr.end, "seconds", utc=True)
        links.append({"key": key, "href": f"{request.path}?{urlencode(params)}", "active": key == tr.key})
    return links


def range_context(request, tr: TimeRange) -> dict:
    latest = s.latest_measurement_time()
    show_latest = latest is not None and latest < tr.start  # everything stored is older than the range
    return {
        "range": tr,
        "range_links": range_links(request, tr),
        "range_query": tr.query(),
        "latest_data": latest,
        "latest_data_href": (f"{request.path}?{urlencode({'range': tr.key, 'end': iso_z(latest, 'seconds', utc=True)})}"
                             if show_latest else None),
        "now_href": f"{request.path}?{urlencode({'range': tr.key})}" if tr.anchored else None,
    }
