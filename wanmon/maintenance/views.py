"""Maintenance pages (server-rendered): the calendar (month, week, list), a window, manual entry, uploads, feeds.

Every page needs a login; changes need an operator. The iCalendar feeds are the exception: calendar
clients cannot log in, so a feed URL carries a secret token instead (see FeedToken).
"""

from __future__ import annotations

import calendar as pycalendar
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import BadRequest, PermissionDenied, ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from wanmon.core.guard import year_problem
from wanmon.core.http import found
from wanmon.core.pages import form_act, form_add_refusal
from wanmon.core.permissions import user_is_operator
from wanmon.inventory.models import Carrier, Site
from wanmon.maintenance import feeds, imports, selectors, services
from wanmon.maintenance.choices import Source
from wanmon.maintenance.constants import FEED_PAST_DAYS
from wanmon.maintenance.forms import COMMON_ZONES, CommentForm, FeedTokenForm, UploadForm, WindowForm, affects_format
from wanmon.maintenance.ical import calendar_render
from wanmon.maintenance.models import CarrierNotice, FeedToken

VIEWS = ("month", "week", "list")
LIST_DAYS = 60


def _operator_required(request) -> None:
    if not user_is_operator(request.user):
        raise PermissionDenied("changing the maintenance calendar needs the operator role")


def _window_or_404(pk: int):
    return found(selectors.maintenance_window_get(pk), "such maintenance window")


def _operator_window(request, pk: int):
    """The window ``pk`` for a change: 403 unless the user is an operator, then 404 if there is no such window."""
    _operator_required(request)
    return _window_or_404(pk)


def _local_midnight(day: date) -> datetime:
    return timezone.make_aware(datetime.combine(day, datetime.min.time()), timezone.get_current_timezone())


@dataclass
class Day:
    """One day cell of the calendar with the occurrences overlapping it."""

    date: date
    in_month: bool
    today: bool
    items: list


def _span(view: str, anchor: date) -> tuple[date, date, date, date]:
    """(first day shown, day after the last, previous anchor, next anchor) of a view around ``anchor``."""
    if view == "month":
        first = anchor.replace(day=1)
        last = first.replace(day=pycalendar.monthrange(first.year, first.month)[1])
        start = first - timedelta(days=first.weekday())
        end = last + timedelta(days=7 - last.weekday())
        prev_anchor = (first - timedelta(days=1)).replace(day=1)
        next_anchor = last + timedelta(days=1)
        return start, end, prev_anchor, next_anchor
    if view == "week":
        start = anchor - timedelta(days=anchor.weekday())
        return start, start + timedelta(days=7), start - timedelta(days=7), start + timedelta(days=7)
    return anchor, anchor + timedelta(days=LIST_DAYS), anchor - timedelta(days=LIST_DAYS), anchor + timedelta(
        days=LIST_DAYS
    )


@login_required
@require_GET
def calendar_page(request):
    """The calendar: month grid, week, or list of occurrences, filtered by carrier and site."""
    view = request.GET.get("view") if request.GET.get("view") in VIEWS else "month"
    today = timezone.localdate()
    try:
        anchor = date.fromisoformat(request.GET.get("date", "")) if request.GET.get("date") else today
    except ValueError:
        anchor = today
    if problem := year_problem(anchor.year):  # the month around year 1 or 9999 overflows Python's dates
        raise BadRequest(f"date: {problem}")
    carrier = request.GET.get("carrier") or None
    site = request.GET.get("site") or None
    show_cancelled = request.GET.get("cancelled", "1") != "0"
    first, stop, prev_anchor, next_anchor = _span(view, anchor)
    start, end = _local_midnight(first), _local_midnight(stop)
    tp = selectors.topology_load(start=start, end=end)
    occurrences = selectors.maintenance_occurrence_list(
        start=start, end=end, carrier=carrier, site=site, include_cancelled=show_cancelled, topology=tp
    )
    rows = []
    for occ in occurrences:
        fp = selectors.maintenance_window_footprint(occ.window, start=occ.start, end=occ.end, topology=tp)
        rows.append({"occ": occ, "window": occ.window, "footprint": fp})
    weeks: list[list[Day]] = []
    if view in ("month", "week"):
        day = first
        while day < stop:
            lo, hi = _local_midnight(day), _local_midnight(day + timedelta(days=1))
            cell = Day(day, view == "week" or day.month == anchor.month, day == today,
                       [r for r in rows if r["occ"].start < hi and r["occ"].end > lo])
            if day.weekday() == 0:
                weeks.append([])
            weeks[-1].append(cell)
            day += timedelta(days=1)
    title = {
        "month": anchor.strftime("%B %Y"),
        "week": f"Week of {first:%Y-%m-%d}",
        "list": f"{first:%Y-%m-%d} to {stop - timedelta(days=1):%Y-%m-%d}",
    }[view]
    params = {"view": view, "carrier": carrier or "", "site": site or "", "cancelled": "1" if show_cancelled else "0"}
    return render(
        request,
        "maintenance/calendar.html",
        {
            "view": view,
            "views": VIEWS,
            "title": title,
            "weeks": weeks,
            "weekdays": ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"],
            "rows": rows,
            "anchor": anchor,
            "prev_anchor": prev_anchor,
            "next_anchor": next_anchor,
            "today": today,
            "params": params,
            "carriers": Carrier.objects.order_by("code"),
            "sites": Site.objects.order_by("code"),
            "carrier": carrier,
            "site": site,
            "show_cancelled": show_cancelled,
            "is_operator": user_is_operator(request.user),
            "held_count": selectors.maintenance_window_held_count(),
        },
    )


@login_required
@require_GET
def window_page(request, pk: int):
    """One window: times, status, impact, what it touches (paths, sites, mute), provenance and audit trail."""
    window = _window_or_404(pk)
    occurrences = selectors.window_occurrences(window, timezone.now() - timedelta(days=1))[:10] if window.rrule else []
    footprint = selectors.maintenance_window_footprint(window)
    return render(
        request,
        "maintenance/window.html",
        {
            "window": window,
            "footprint": footprint,
            "occurrences": occurrences,
            "events": window.events.select_related("user", "carrier_notice").order_by("time", "id"),
            "site_notices": window.site_notices.order_by("created_at"),
            "comment_form": CommentForm(),
            "is_operator": user_is_operator(request.user),
        },
    )


def _window_form_page(request, form: WindowForm, window=None):
    return render(request, "maintenance/form.html", {"form": form, "window": window, "zones": COMMON_ZONES})


def _form_saved(request, form: WindowForm, done: str, save, **arguments):
    """``save(user=..., **arguments)`` for a valid form: the redirect to the saved window with a message, or None
    with the service's refusals put on the form's fields."""
    try:
        window = save(user=request.user, **arguments)
    except ValidationError as exc:
        form_add_refusal(form, exc)
        return None
    messages.success(request, f"Maintenance {window.reference} {done}.")
    return redirect("maintenance-window", pk=window.pk)


@login_required
@require_http_methods(["GET", "POST"])
def window_create_page(request):
    _operator_required(request)
    form = WindowForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        saved = _form_saved(request, form, "saved", services.maintenance_window_create, **form.service_arguments())
        if saved is not None:
            return saved
    return _window_form_page(request, form)


@login_required
@require_http_methods(["GET", "POST"])
def window_edit_page(request, pk: int):
    window = _operator_window(request, pk)
    if request.method == "POST":
        form = WindowForm(request.POST)
        if form.is_valid():
            saved = _form_saved(request, form, "updated", services.maintenance_window_update, window=window,
                                **form.service_arguments())
            if saved is not None:
                return saved
    else:
        zone = ZoneInfo(window.source_tz or "UTC")
        form = WindowForm(initial={
            "reference": window.reference,
            "carrier": window.carrier.code if window.carrier_id else None,
            "summary": window.summary,
            "description": window.description,
            "source_tz": window.source_tz,
            "start": window.start.astimezone(zone).replace(tzinfo=None),
            "end": window.end.astimezone(zone).replace(tzinfo=None),
            "status": window.status,
            "impact": window.impact,
            "behaviour": window.behaviour,
            "rrule": window.rrule,
            "affects": affects_format(window),
        })
    return _window_form_page(request, form, window)


@login_required
@require_POST
def window_cancel_page(request, pk: int):
    window = _operator_window(request, pk)
    services.maintenance_window_cancel(window=window, user=request.user, note=request.POST.get("note", ""))
    messages.success(request, f"Maintenance {window.reference} cancelled; sites already told will hear of it.")
    return redirect("maintenance-window", pk=pk)


@login_required
@require_POST
def window_comment_page(request, pk: int):
    window = _operator_window(request, pk)

    def comment(data: dict) -> str:
        services.maintenance_window_comment(window=window, text=data["text"], user=request.user)
        return "Comment added."

    form_act(request, CommentForm(request.POST), comment)
    return redirect(reverse("maintenance-window", kwargs={"pk": pk}) + "#trail")


@login_required
@require_http_methods(["GET", "POST"])
def import_page(request):
    """Upload a carrier notice (.ics or .eml) and see what it did."""
    _operator_required(request)
    form = UploadForm(request.POST or None, request.FILES or None)
    report = None
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        name = upload.name or "upload"
        report = imports.carrier_notice_import(
            raw=upload.read(),
            source=Source.ICAL_FILE if name.lower().endswith((".ics", ".ical")) else Source.EMAIL,
            origin=f"upload:{name}",
            carrier=form.cleaned_data["carrier"],
            parser=form.cleaned_data["parser"] or None,
            user=request.user,
            vouched_by=imports.vouched_by_user(request.user),
        )
    recent = CarrierNotice.objects.select_related("uploaded_by").defer("raw")[:20]
    return render(request, "maintenance/import.html", {"form": form, "report": report, "recent": recent})


@login_required
@require_GET
def review_page(request):
    """Windows held for review (from a source wanmon cannot trust) and the latest decisions; operators decide."""
    return render(
        request,
        "maintenance/review.html",
        {
            "held": selectors.maintenance_window_review_queue(),
            "decided": selectors.maintenance_window_reviewed_recently(),
            "is_operator": user_is_operator(request.user),
        },
    )


@login_required
@require_POST
def window_review_page(request, pk: int):
    """Accept or reject a window held for review (operators)."""
    window = _operator_window(request, pk)
    decision = request.POST.get("decision")
    if decision not in ("accept", "reject"):
        return HttpResponse("decision must be 'accept' or 'reject'", status=400, content_type="text/plain")
    services.maintenance_window_review(window=window, accept=decision == "accept", user=request.user,
                                       note=request.POST.get("note", ""))
    verb = "accepted: it explains and mutes from now on" if decision == "accept" else "rejected"
    messages.success(request, f"Maintenance {window.reference} {verb}.")
    if request.POST.get("next") == "queue":
        return redirect("maintenance-review")
    return redirect("maintenance-window", pk=pk)


@login_required
@require_GET
def carrier_notice_raw_page(request, pk: int):
    """A carrier notice exactly as received, as text (operators: it may hold customer details, or a fetched body)."""
    _operator_required(request)
    n = get_object_or_404(CarrierNotice, pk=pk)
    return HttpResponse(bytes(n.raw), content_type="text/plain; charset=utf-8")


@login_required
@require_http_methods(["GET", "POST"])
def feed_token_page(request):
    """Create a calendar subscription token; its URLs are shown once."""
    _operator_required(request)
    form = FeedTokenForm(request.POST or None)
    created = None
    if request.method == "POST" and form.is_valid():
        token, secret = services.feed_token_create(
            name=form.cleaned_data["name"], site=form.cleaned_data["site"], carrier=form.cleaned_data["carrier"],
            user=request.user,
        )
        created = {"token": token, "urls": services.feed_urls(secret, site=token.site, carrier=token.carrier),
                   "all": services.feed_urls(secret) if token.site is None and token.carrier is None else None}
    tokens = FeedToken.objects.select_related("site", "carrier", "created_by").order_by("-created_at")[:50]
    return render(request, "maintenance/feeds.html", {"form": form, "created": created, "tokens": tokens})


@never_cache
@require_GET
def feed(request, token: str, scope: str = "all", code: str | None = None):
    """An iCalendar feed (all, per site, per carrier) for calendar clients; the token is the credential."""
    feed_token = feeds.feed_token_get(token)
    if feed_token is None:
        raise Http404("unknown feed")
    site = carrier = None
    if scope == "site":
        site = Site.objects.filter(code=code).first()
        if site is None or (feed_token.site_id and feed_token.site_id != site.pk) or feed_token.carrier_id:
            raise Http404("unknown feed")
    elif scope == "carrier":
        carrier = Carrier.objects.filter(code=code).first()
        if carrier is None or (feed_token.carrier_id and feed_token.carrier_id != carrier.pk) or feed_token.site_id:
            raise Http404("unknown feed")
    elif feed_token.site_id or feed_token.carrier_id:
        raise Http404("unknown feed")
    windows = feeds.maintenance_export_windows(site=site, carrier=carrier, past_days=FEED_PAST_DAYS)
    name = "wanmon maintenance" + (f" - {site.code}" if site else f" - {carrier.code}" if carrier else "")
    body = calendar_render(windows, name=name, description="Carrier maintenance windows known to wanmon (BCOP)")
    services.feed_token_mark_used(token=feed_token)
    response = HttpResponse(body, content_type="text/calendar; charset=utf-8")
    filename = (site.code if site else carrier.code if carrier else "all").lower()
    response["Content-Disposition"] = f'inline; filename="wanmon-maintenance-{filename}.ics"'
    return response


__all__ = [
    "calendar_page",
    "feed",
    "feed_token_page",
    "import_page",
    "carrier_notice_raw_page",
    "review_page",
    "window_cancel_page",
    "window_comment_page",
    "window_create_page",
    "window_edit_page",
    "window_page",
    "window_review_page",
]
