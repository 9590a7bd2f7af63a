"""Incident pages: list, detail (onset, suspects, actions, links to every finding, path, element and window;
sent-log, history) with acknowledge and silence forms for operators, and the silences page. Every change goes
through the services."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST

from wanmon.alerts import hooks, selectors, services, silences
from wanmon.alerts.choices import IncidentStatus
from wanmon.alerts.forms import AcknowledgeForm, SilenceForm
from wanmon.alerts.models import Silence
from wanmon.alerts.page import incident_page
from wanmon.core.http import found
from wanmon.core.pages import form_act, form_add_refusal, next_redirect
from wanmon.core.permissions import user_is_operator
from wanmon.core.times import format_utc

STATUS_FILTERS = ["active", *IncidentStatus.values, "all"]


@login_required
def incident_list(request):
    status = request.GET.get("status", "active")
    if status not in STATUS_FILTERS:
        status = "active"
    incidents = selectors.incident_list(status=None if status == "all" else status,
                                        site=request.GET.get("site") or None)[:500]
    return render(request, "alerts/incident_list.html",
                  {"incidents": incidents, "status": status, "statuses": STATUS_FILTERS, "now": timezone.now()})


@login_required
def incident_detail(request, pk: int):
    """The page an on-call engineer works from (wanmon/alerts/page.py); its charts are loaded from the dashboard."""
    incident = found(selectors.incident_get(incident_id=pk), "such incident")
    now = timezone.now()
    silence_form = SilenceForm(initial={**silences.incident_default_matchers(incident)}) if incident.is_active else None
    return render(request, "alerts/incident_detail.html", {
        "incident": incident,
        "page": incident_page(incident, now=now),
        "now": now,
        "notifications": incident.notifications.order_by("-created_at", "-id"),
        "events": incident.events.all(),
        "silences": incident.silences.select_related("author").order_by("-starts_at"),
        "can_operate": user_is_operator(request.user),
        "ack_form": AcknowledgeForm(),
        "silence_form": silence_form,
        # The case memory, above the alerting, answers through its hooks (wanmon/alerts/hooks.py).
        **hooks.page_context(incident),
    })


def _require_operator(request) -> None:
    if not user_is_operator(request.user):
        raise PermissionDenied("operators only")


def _operator_incident(request, pk: int):
    """The incident ``pk`` for an operator's action: 403 for anyone else, then 404 if there is no such incident."""
    _require_operator(request)
    return get_object_or_404(selectors.incident_list(), pk=pk)


@login_required
@require_POST
def incident_acknowledge(request, pk: int):
    incident = _operator_incident(request, pk)

    def acknowledge(data: dict) -> str:
        services.incident_acknowledge(incident=incident, user=request.user, note=data["note"], now=timezone.now())
        return f"Incident #{pk} acknowledged: no more reminders; updates still come."

    form_act(request, AcknowledgeForm(request.POST), acknowledge)
    return redirect("alerts:incident-detail", pk=pk)


@login_required
@require_POST
def incident_silence(request, pk: int):
    incident = _operator_incident(request, pk)
    form = SilenceForm(request.POST)

    def silence(data: dict) -> str:
        created = silences.silence_create(author=request.user, now=timezone.now(), incident=incident,
                                          **form.service_arguments())
        return f"Silence #{created.id} mutes it until {format_utc(created.ends_at, timezone.now())}."

    form_act(request, form, silence)
    return redirect("alerts:incident-detail", pk=pk)


@login_required
def silence_list(request):
    now = timezone.now()
    latest = Silence.objects.select_related("author", "expired_by", "incident").order_by("-starts_at", "-id")[:300]
    if request.method == "POST":
        _require_operator(request)
        form = SilenceForm(request.POST)
        if form.is_valid():
            try:
                silence = silences.silence_create(author=request.user, now=now, **form.service_arguments())
                messages.success(request, f"Silence #{silence.id} created.")
                return redirect("alerts:silence-list")
            except ValidationError as exc:
                form_add_refusal(form, exc)
    else:
        form = SilenceForm()
    rows = [{"silence": s, "active": s.is_active_at(now), "ended": s.end_time() <= now} for s in latest]
    return render(request, "alerts/silence_list.html",
                  {"rows": rows, "form": form, "can_operate": user_is_operator(request.user)})


@login_required
@require_POST
def silence_expire(request, pk: int):
    _require_operator(request)
    silence = get_object_or_404(Silence, pk=pk)
    silences.silence_expire(silence=silence, user=request.user, now=timezone.now())
    messages.success(request, f"Silence #{pk} expired; what it muted is e-mailed at the next run if still active.")
    return next_redirect(request, reverse("alerts:silence-list"))
