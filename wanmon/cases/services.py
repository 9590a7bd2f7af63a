"""Writes of the case memory: resolving an incident with its cause (the case), notes and hypotheses.

Resolving an incident that is still open or acknowledged marks it resolved at once, by the operator, with the
event saying so. The alerting does not argue: if its findings are still evidenced (or come back), its next run
reopens the incident through the existing reopen logic (``alerts.selectors.incident_resolved_holding``: a finding of
an incident resolved within the hour reopens it; ``reopen_count`` + 1 and the longer resolve hold), and the case
stays recorded. Resolving an incident already resolved (by its evidence clearing) only records the case. Resolving
again updates the case (the people's words and the fingerprint).
"""

from __future__ import annotations

from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import transaction

from wanmon.alerts.choices import ACTIVE_INCIDENT_STATUSES, IncidentEventKind, IncidentStatus
from wanmon.alerts.models import Incident, IncidentEvent
from wanmon.cases.choices import ResponsibleKind
from wanmon.cases.models import Case, IncidentNote
from wanmon.cases.selectors import incident_fingerprint
from wanmon.diagnosis import codes
from wanmon.inventory.models import Carrier, Equipment, Host, Site

__all__ = ["case_resolve", "incident_note_create", "incident_notes_mark_mailed", "responsible_parse"]

_RESPONSIBLE_MODELS = {
    ResponsibleKind.SITE: (Site, "code"),
    ResponsibleKind.CARRIER: (Carrier, "code"),
    ResponsibleKind.EQUIPMENT: (Equipment, "name"),
    ResponsibleKind.HOST: (Host, "name"),
}


def responsible_parse(value: str) -> tuple[str, str]:
    """``site:CODE``, ``carrier:CODE``, ``equipment:NAME`` or ``host:NAME`` -> (kind, name), checked against the
    inventory; ValidationError naming ``responsible`` otherwise. Empty: ("", "")."""
    value = (value or "").strip()
    if not value:
        return "", ""
    kind, sep, name = value.partition(":")
    kinds = ", ".join(f"{k}:..." for k in ResponsibleKind.values)
    if not sep or kind not in ResponsibleKind.values or not name.strip():
        raise ValidationError({"responsible": f"give one of {kinds}, not {value[:100]!r}"})
    model, field = _RESPONSIBLE_MODELS[ResponsibleKind(kind)]
    name = name.strip()
    if not model.objects.filter(**{field: name}).exists():
        raise ValidationError({"responsible": f"no {kind} {name[:100]!r} in the inventory"})
    return kind, name


def case_resolve(
    *, incident: Incident, user, cause: str, fix: str, now: datetime, ticket: str = "", responsible: str = ""
) -> Case:
    """Resolve ``incident`` with its cause: store (or update) its case and mark it resolved if it is still active
    (see the module docstring for what the alerting does next). A merged incident is refused (ValueError): its
    findings live on in the incident it merged into."""
    cause, fix = cause.strip(), fix.strip()
    if not cause:
        raise ValidationError({"cause": "say what caused the problem"})
    if not fix:
        raise ValidationError({"fix": "say what fixed it (or what was done)"})
    kind, name = responsible_parse(responsible)
    with transaction.atomic():
        incident = Incident.objects.select_for_update().get(pk=incident.pk)
        if incident.merged_into_id:
            raise ValueError(f"incident #{incident.id} was merged into #{incident.merged_into_id}: resolve that one")
        was_active = incident.status in ACTIVE_INCIDENT_STATUSES
        if was_active:
            incident.status = IncidentStatus.RESOLVED
            incident.resolved_at = now
            incident.save(update_fields=["status", "resolved_at"])
        start = incident.onset or incident.opened_at
        took_s = max((incident.resolved_at - start).total_seconds(), 0.0) if incident.resolved_at else None
        fingerprint = incident_fingerprint(incident=incident, at=now).as_dict()
        case, created = Case.objects.update_or_create(
            incident=incident,
            defaults={
                "fingerprint": fingerprint,
                "cause": cause,
                "fix": fix,
                "ticket": ticket.strip(),
                "responsible_kind": kind,
                "responsible_name": name,
                "resolved_by": user,
                "resolved_at": now,
                "took_s": took_s,
            },
        )
        note = ("resolved by hand with its cause" if was_active else "cause recorded") + f": {cause}; fix: {fix}"
        IncidentEvent.objects.create(
            incident=incident,
            time=now,
            kind=IncidentEventKind.RESOLVED,
            note=note[:2000],
            user=user,
            data={
                "case": case.id,
                "by_operator": True,
                "was_active": was_active,
                "ticket": case.ticket,
                "responsible": case.responsible,
                "updated": not created,
            },
        )
    return case


def incident_note_create(
    *, incident: Incident, user, text: str, now: datetime, is_hypothesis: bool = False, confirm_by: str = ""
) -> IncidentNote:
    """An operator's note on ``incident``; a hypothesis may name the finding code or the test that would confirm it
    (a finding code must be one of the catalogue's). The next e-mail of the incident's thread carries it."""
    text, confirm_by = text.strip(), confirm_by.strip()
    if not text:
        raise ValidationError({"text": "a note needs some text"})
    if confirm_by and not is_hypothesis:
        raise ValidationError({"confirm_by": "only a hypothesis names what would confirm it (set is_hypothesis)"})
    word = confirm_by.split()[0] if confirm_by else ""
    if word.isupper() and "_" in word and not codes.is_known(word):
        raise ValidationError({"confirm_by": f"unknown finding code {word[:60]!r}"})
    return IncidentNote.objects.create(
        incident=incident, author=user, text=text, is_hypothesis=is_hypothesis, confirm_by=confirm_by, created_at=now
    )


def incident_notes_mark_mailed(*, incident: Incident, note_ids: list[int], now: datetime) -> None:
    """The e-mail of the incident's thread written ``now`` carried these notes: the next one does not repeat them."""
    IncidentNote.objects.filter(incident=incident, pk__in=note_ids, mailed_at__isnull=True).update(mailed_at=now)
