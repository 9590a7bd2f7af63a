"""Cases (an incident resolved with its cause, and its fingerprint) and the operators' notes on incidents."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from wanmon.alerts.models import Incident
from wanmon.cases.choices import ResponsibleKind
from wanmon.cases.constants import CAUSE_MAX_CHARS, CONFIRM_BY_MAX_CHARS, TICKET_MAX_CHARS

__all__ = ["Case", "IncidentNote"]


class Case(models.Model):
    """What was learnt from one incident: its fingerprint (codes, root element and its kind, paths, figures) and
    what the people said (cause, fix, ticket, who was responsible). One per incident; resolving it again updates it.

    ``fingerprint`` is ``similarity.Fingerprint.as_dict()`` as of the resolution; ``took_s`` is from the incident's
    onset to its resolution (how long the problem lasted, shown as "2 days" with a similar case).
    """

    incident = models.OneToOneField(Incident, on_delete=models.CASCADE, related_name="case")
    fingerprint = models.JSONField()
    cause = models.CharField(max_length=CAUSE_MAX_CHARS)
    fix = models.CharField(max_length=CAUSE_MAX_CHARS)
    ticket = models.CharField(max_length=TICKET_MAX_CHARS, blank=True)
    responsible_kind = models.CharField(max_length=20, choices=ResponsibleKind.choices, blank=True)
    responsible_name = models.CharField(max_length=100, blank=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="resolved_cases"
    )
    resolved_at = models.DateTimeField()
    took_s = models.FloatField(null=True, blank=True, help_text="from the incident's onset to its resolution")

    class Meta:
        ordering = ["-resolved_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(responsible_kind="", responsible_name="")
                | (~Q(responsible_kind="") & ~Q(responsible_name="")),
                name="%(app_label)s_%(class)s_responsible_both_or_neither",
            )
        ]

    def __str__(self) -> str:
        return f"case {self.pk}: #{self.incident_id} {self.cause[:60]}"

    @property
    def responsible(self) -> str:
        return f"{self.responsible_kind}:{self.responsible_name}" if self.responsible_kind else ""


class IncidentNote(models.Model):
    """An operator's note on an incident; a hypothesis names the finding or test that would confirm it. The next
    e-mail of the incident's thread carries the notes written since the previous one (``mailed_at``)."""

    incident = models.ForeignKey(Incident, on_delete=models.CASCADE, related_name="notes")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="incident_notes"
    )
    text = models.TextField()
    is_hypothesis = models.BooleanField(default=False)
    confirm_by = models.CharField(
        max_length=CONFIRM_BY_MAX_CHARS,
        blank=True,
        help_text="a hypothesis: the finding code or the test that would confirm it",
    )
    created_at = models.DateTimeField()
    mailed_at = models.DateTimeField(null=True, blank=True, help_text="when an e-mail of the thread carried it")

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(is_hypothesis=True) | Q(confirm_by=""),
                name="%(app_label)s_%(class)s_confirm_by_only_for_hypotheses",
            )
        ]

    def __str__(self) -> str:
        kind = "hypothesis" if self.is_hypothesis else "note"
        return f"#{self.incident_id} {kind} {self.created_at:%Y-%m-%dT%H:%MZ}"
