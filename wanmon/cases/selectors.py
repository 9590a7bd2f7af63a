"""Reads of the case memory: an incident's fingerprint, the cases it resembles, its notes."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from django.db.models import QuerySet

from wanmon.alerts.choices import IncidentKind, MemberRole
from wanmon.alerts.emails import incident_url
from wanmon.alerts.models import Incident
from wanmon.cases.constants import SIMILAR_CASES_SHOWN
from wanmon.cases.fingerprint import MemberFacts, fingerprint_build
from wanmon.cases.models import Case, IncidentNote
from wanmon.cases.similarity import SUGGEST_THRESHOLD, CaseMatch, Fingerprint, cases_rank
from wanmon.diagnosis import text
from wanmon.inventory.models import Equipment, Trunk

__all__ = [
    "case_list",
    "incident_fingerprint",
    "incident_similar_cases",
    "note_list",
    "note_rows",
    "note_rows_unmailed",
    "similar_case_rows",
]

_KIND_OF_INCIDENT = {
    IncidentKind.PAIR: "site pair",
    IncidentKind.SITE: "site",
    IncidentKind.MAINTENANCE: "maintenance window",
}


def _equipment_kind(name: str, interface: str | None) -> tuple[str, str]:
    """(``carrier equipment`` | ``site port`` | ..., the carrier or site operating it) of an equipment name."""
    equipment = Equipment.objects.select_related("carrier", "site").filter(name=name).first()
    part = "port" if interface else "equipment"
    if equipment is None:
        return f"unknown {part}", ""
    if equipment.carrier_id:
        return f"carrier {part}", equipment.carrier.code
    return f"site {part}", equipment.site.code if equipment.site_id else ""


def _trunk_operator(name: str) -> str:
    trunk = (
        Trunk.objects.filter(name=name)
        .prefetch_related("members__equipment__carrier", "members__equipment__site")
        .first()
    )
    for member in trunk.members.all() if trunk else ():
        equipment = member.equipment
        if equipment.carrier_id:
            return equipment.carrier.code
        if equipment.site_id:
            return equipment.site.code
    return ""


def _root_element(incident: Incident, root_subject: Mapping) -> tuple[str, str, str]:
    """(name, kind, operator) of the incident's root element: an equipment or port, a trunk, a host, or the site
    pair / site / window an incident of another kind is about."""
    if "trunk" in root_subject:
        return str(root_subject["trunk"]), "trunk", _trunk_operator(str(root_subject["trunk"]))
    if "equipment" in root_subject:
        name = str(root_subject["equipment"])
        kind, operator = _equipment_kind(name, root_subject.get("interface"))
        return name, kind, operator
    if "host" in root_subject:
        return str(root_subject["host"]), "host", str(root_subject.get("site", ""))
    if incident.kind == IncidentKind.ELEMENT and incident.elements:
        name = incident.elements[0].removeprefix("trunk:")
        kind, operator = _equipment_kind(name, None)
        return name, kind, operator
    kind = _KIND_OF_INCIDENT.get(incident.kind, "path" if root_subject.get("src") else "")
    return incident.subject_text, kind, ""


def incident_fingerprint(*, incident: Incident, at: datetime | None = None) -> Fingerprint:
    """The fingerprint of ``incident`` from its member findings (resolved ones too) and the inventory; its
    duration runs from its onset to its resolution (or ``at``)."""
    members = list(incident.members.select_related("finding").order_by("id"))
    facts = [MemberFacts(m.finding.code, m.role, m.finding.subject or {}, m.finding.evidence or {}) for m in members]
    root = next((m.finding for m in members if m.role == MemberRole.ROOT), None)
    if root is None and members:
        root = members[0].finding
    name, kind, operator = _root_element(incident, (root.subject or {}) if root else {})
    return fingerprint_build(
        root_code=incident.code,
        incident_kind=incident.kind,
        members=facts,
        elements=incident.elements or [],
        paths=incident.paths or [],
        root_element=name,
        root_element_kind=kind,
        root_operator=operator,
        onset=incident.onset or incident.opened_at,
        end=incident.resolved_at or at or incident.changed_at,
    )


def case_list() -> QuerySet[Case]:
    """Every case, newest first."""
    return Case.objects.select_related("incident", "resolved_by").order_by("-resolved_at", "-id")


def incident_similar_cases(
    *, incident: Incident, limit: int = SIMILAR_CASES_SHOWN, threshold: float = SUGGEST_THRESHOLD
) -> list[tuple[Case, CaseMatch]]:
    """The cases of other incidents ``incident`` resembles at ``threshold`` or more, best first."""
    cases = {c.id: c for c in case_list().exclude(incident=incident)}
    if not cases:
        return []
    query = incident_fingerprint(incident=incident)
    ranked = cases_rank(
        query, ((c.id, Fingerprint.from_dict(c.fingerprint)) for c in cases.values()), threshold=threshold, limit=limit
    )
    return [(cases[case_id], match) for case_id, match in ranked]


def case_headline(case: Case) -> str:
    """``looks like case 17: dirty patch at geant-gva, cleaned by GEANT, 2 days``."""
    took = f", {text.duration(case.took_s)}" if case.took_s else ""
    return f"looks like case {case.id}: {case.cause}, {case.fix}{took}"


def similar_case_rows(incident: Incident) -> list[dict]:
    """The similar cases as the API, the page and the e-mails show them, best first."""
    return [
        {
            "case": case.id,
            "incident": case.incident_id,
            "score": match.score,
            "why": match.why,
            "cause": case.cause,
            "fix": case.fix,
            "ticket": case.ticket,
            "responsible": case.responsible,
            "took_s": case.took_s,
            "took": text.duration(case.took_s) if case.took_s else "",
            "headline": case_headline(case),
            "url": incident_url(case.incident_id),
        }
        for case, match in incident_similar_cases(incident=incident)
    ]


def note_list(*, incident: Incident) -> QuerySet[IncidentNote]:
    """The notes of an incident, oldest first."""
    return IncidentNote.objects.filter(incident=incident).select_related("author").order_by("created_at", "id")


def _note_row(note: IncidentNote) -> dict:
    return {
        "id": note.id,
        "author": note.author.get_username() if note.author else "",
        "text": note.text,
        "is_hypothesis": note.is_hypothesis,
        "confirm_by": note.confirm_by,
        "created_at": note.created_at,
        "mailed": note.mailed_at is not None,
    }


def note_rows(incident: Incident) -> list[dict]:
    """The notes and hypotheses of an incident as its page shows them, oldest first."""
    return [_note_row(n) for n in note_list(incident=incident)]


def note_rows_unmailed(incident: Incident) -> list[dict]:
    """The notes no e-mail of the incident's thread carried yet, oldest first."""
    return [_note_row(n) for n in note_list(incident=incident).filter(mailed_at__isnull=True)]
