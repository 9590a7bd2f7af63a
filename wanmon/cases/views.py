"""The incident page's case memory actions (the section itself is rendered with the incident page): resolve with a
cause, add a note or hypothesis. Operators only; every change goes through the services."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect
from django.utils import timezone
from django.views.decorators.http import require_POST

from wanmon.alerts.models import Incident
from wanmon.cases import selectors, services
from wanmon.cases.forms import NoteForm, ResolveForm
from wanmon.core.pages import form_act
from wanmon.core.permissions import user_is_operator


def incident_page_context(incident: Incident) -> dict:
    """What the incident page (rendered by the alerting, through its hooks) shows of the case memory: the similar
    cases, the incident's own case, its notes and hypotheses, and the forms (shown to operators only)."""
    return {
        "case_memory_template": "cases/_incident_cases.html",
        "similar_cases": selectors.similar_case_rows(incident),
        "case": selectors.case_list().filter(incident=incident).first(),
        "notes": selectors.note_rows(incident),
        "note_form": NoteForm(),
        "resolve_form": ResolveForm(),
    }


def _operator_incident(request, pk: int) -> Incident:
    """403 for anyone but an operator, then 404 if there is no such incident."""
    if not user_is_operator(request.user):
        raise PermissionDenied("operators only")
    return get_object_or_404(Incident, pk=pk)


@login_required
@require_POST
def incident_resolve(request, pk: int):
    incident = _operator_incident(request, pk)

    def resolve(data: dict) -> str:
        case = services.case_resolve(incident=incident, user=request.user, now=timezone.now(), **data)
        return f"Incident #{pk} resolved; its cause is case {case.id} of the case memory."

    form_act(request, ResolveForm(request.POST), resolve)
    return redirect("alerts:incident-detail", pk=pk)


@login_required
@require_POST
def incident_note(request, pk: int):
    incident = _operator_incident(request, pk)

    def note(data: dict) -> str:
        services.incident_note_create(incident=incident, user=request.user, now=timezone.now(), **data)
        return "Note added: the next e-mail about this incident carries it."

    form_act(request, NoteForm(request.POST), note)
    return redirect("alerts:incident-detail", pk=pk)
