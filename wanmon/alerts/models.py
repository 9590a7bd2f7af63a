"""Incidents (findings grouped by root cause), silences, routing, subscriptions and the e-mail sent-log."""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import models
from django.db.models import Q

from wanmon.alerts.choices import (
    IncidentEventKind,
    IncidentKind,
    IncidentStatus,
    MemberRole,
    NotificationKind,
    NotificationStatus,
    SilenceMatcher,
)
from wanmon.alerts.constants import SUBJECT_MAX_CHARS, TITLE_MAX_CHARS
from wanmon.core.models import TrailEvent
from wanmon.diagnosis import codes as finding_codes
from wanmon.diagnosis.choices import Severity
from wanmon.diagnosis.models import Finding

__all__ = ["Incident", "IncidentEvent", "IncidentMember", "Notification", "RoutingRule", "Silence", "Subscription"]


class Incident(models.Model):
    """Findings with one cause, e-mailed as one: an element and the paths it degrades, a maintenance window
    and what it explains, a site with many degraded paths, or the two directions of a site pair.

    ``key`` names the group (``element:geant-fra``, ``maintenance:GEANT-CHG-0042``, ``site:FZK``,
    ``pair:CERN<->FZK``); one active incident per key. The notification state (``notify_seq``,
    ``last_notified_*``) drives the group-interval and repeat-interval timers. A resolved incident whose findings
    come back within the reopen window is reopened (``reopen_count``), e-mailed once as returned if its resolution
    was e-mailed, and held longer before its next resolution (``policy.resolve_hold_s``).
    """

    key = models.CharField(max_length=400)
    kind = models.CharField(max_length=20, choices=IncidentKind.choices)
    status = models.CharField(max_length=20, choices=IncidentStatus.choices, default=IncidentStatus.OPEN)
    severity = models.CharField(max_length=10, choices=Severity.choices, help_text="highest of its active findings")
    code = models.CharField(max_length=40, help_text="code of the root (headline) finding")
    subject_text = models.CharField(max_length=SUBJECT_MAX_CHARS, help_text="geant-fra, site FZK, CERN<->FZK, ...")
    title = models.CharField(max_length=TITLE_MAX_CHARS)
    root_finding = models.ForeignKey(Finding, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    findings = models.ManyToManyField(Finding, through="IncidentMember", related_name="incidents")
    sites = models.JSONField(default=list, blank=True)
    paths = models.JSONField(default=list, blank=True, help_text="degraded path directions SRC->DST")
    elements = models.JSONField(default=list, blank=True, help_text="equipment / trunk names at the root")
    carriers = models.JSONField(default=list, blank=True)
    muted = models.BooleanField(default=False, help_text="every paging finding is silenced or inhibited")
    mute_reason = models.CharField(max_length=500, blank=True)
    muted_keys = models.JSONField(default=list, blank=True, help_text="code|subject of the muted findings")
    onset = models.DateTimeField(null=True, blank=True, help_text="when the problem began (earliest member onset)")
    opened_at = models.DateTimeField()
    changed_at = models.DateTimeField()
    cleared_at = models.DateTimeField(null=True, blank=True, help_text="all findings cleared; resolved after the hold")
    resolved_at = models.DateTimeField(null=True, blank=True)
    acknowledged_at = models.DateTimeField(null=True, blank=True)
    acknowledged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="acknowledged_incidents",
    )
    merged_into = models.ForeignKey("self", on_delete=models.SET_NULL, null=True, blank=True, related_name="merged")
    reopen_count = models.PositiveIntegerField(
        default=0, help_text="times its findings came back after its resolution (each lengthens the resolve hold)"
    )
    notify_seq = models.PositiveIntegerField(default=0, help_text="notification rounds so far")
    last_notified_at = models.DateTimeField(null=True, blank=True)
    last_notified_keys = models.JSONField(default=list, blank=True)
    last_notified_severity = models.CharField(max_length=10, blank=True)

    class Meta:
        ordering = ["-opened_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["key"],
                condition=~Q(status=IncidentStatus.RESOLVED),
                name="%(app_label)s_%(class)s_unique_active_key",
            )
        ]
        indexes = [models.Index(fields=["status", "severity"], name="alerts_incident_status_sev")]

    def __str__(self) -> str:
        return f"#{self.pk} {self.key} ({self.status})"

    @property
    def is_active(self) -> bool:
        return self.status != IncidentStatus.RESOLVED


class IncidentMember(models.Model):
    """A finding of an incident, with its role (root cause, symptom, corroborating evidence)."""

    incident = models.ForeignKey(Incident, on_delete=models.CASCADE, related_name="members")
    finding = models.ForeignKey(Finding, on_delete=models.CASCADE, related_name="incident_memberships")
    role = models.CharField(max_length=10, choices=MemberRole.choices)
    added_at = models.DateTimeField()

    class Meta:
        ordering = ["incident", "id"]
        constraints = [
            models.UniqueConstraint(fields=["incident", "finding"], name="%(app_label)s_%(class)s_unique_finding")
        ]

    def __str__(self) -> str:
        return f"#{self.incident_id} {self.role} {self.finding_id}"


class IncidentEvent(TrailEvent):
    """History of an incident: opened, findings changed, muted, notified, acknowledged, resolved (who, when)."""

    incident = models.ForeignKey(Incident, on_delete=models.CASCADE, related_name="events")
    kind = models.CharField(max_length=20, choices=IncidentEventKind.choices)

    def __str__(self) -> str:
        return f"#{self.incident_id} {self.kind} {self.time:%Y-%m-%dT%H:%MZ}"


class Silence(models.Model):
    """Mutes the findings its matchers select from ``starts_at`` to ``ends_at`` (who, why, until when).

    ``matchers`` is ``{"code": ..., "site": ..., "path": "SRC->DST", "equipment": ...}``, any
    non-empty subset; all given must match. Expiring early sets ``expired_at`` (the row stays, for audit).
    """

    matchers = models.JSONField()
    comment = models.TextField()
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="alert_silences"
    )
    incident = models.ForeignKey(
        Incident, on_delete=models.SET_NULL, null=True, blank=True, related_name="silences",
        help_text="the incident it was created from, if any",
    )
    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)
    expired_at = models.DateTimeField(null=True, blank=True)
    expired_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    reminded_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-starts_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(ends_at__gt=models.F("starts_at")), name="%(app_label)s_%(class)s_ends_after_start"
            )
        ]

    def __str__(self) -> str:
        matchers = ", ".join(f"{k}={v}" for k, v in sorted((self.matchers or {}).items()))
        return f"silence #{self.pk} {{{matchers}}} until {self.ends_at:%Y-%m-%d %H:%M}Z"

    def clean(self) -> None:
        if not isinstance(self.matchers, dict) or not self.matchers:
            raise ValidationError({"matchers": "give at least one of code, site, path, equipment"})
        unknown = set(self.matchers) - set(SilenceMatcher.values)
        if unknown:
            raise ValidationError({"matchers": f"unknown matcher(s) {', '.join(sorted(unknown))}"})
        code = self.matchers.get(SilenceMatcher.CODE)
        if code is not None and not finding_codes.is_known(str(code)):
            raise ValidationError({"matchers": f"unknown finding code {code!r}"})
        if self.starts_at and self.ends_at and self.ends_at <= self.starts_at:
            raise ValidationError({"ends_at": "must be after starts_at"})

    def end_time(self) -> datetime:
        """When the silence stops muting: its end, or when it was expired early."""
        return min(self.ends_at, self.expired_at) if self.expired_at else self.ends_at

    def is_active_at(self, at: datetime) -> bool:
        return self.starts_at <= at < self.end_time()


class IncidentFilter(models.Model):
    """What an incident must touch for a rule or subscription to apply (empty list: any)."""

    sites = models.JSONField(default=list, blank=True, help_text="site codes")
    carriers = models.JSONField(default=list, blank=True, help_text="carrier codes")
    codes = models.JSONField(default=list, blank=True, help_text="finding codes")
    min_severity = models.CharField(max_length=10, choices=Severity.choices, default=finding_codes.WARNING)
    is_active = models.BooleanField(default=True)

    class Meta:
        abstract = True

    def clean(self) -> None:
        for name in ("sites", "carriers", "codes"):
            value = getattr(self, name)
            if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
                raise ValidationError({name: "must be a list of codes"})
        unknown = [c for c in self.codes if not finding_codes.is_known(c)]
        if unknown:
            raise ValidationError({"codes": f"unknown finding code(s) {', '.join(unknown)}"})


class RoutingRule(IncidentFilter):
    """Extra recipients for the incidents that match (site, carrier, severity, code).

    Every matching rule adds its recipients; with ``replace_defaults`` the site NOC contacts are not
    added for the incidents it matches (e.g. a carrier's incidents go to its NOC only).
    """

    name = models.CharField(max_length=100, unique=True)
    recipients = models.JSONField(help_text="e-mail addresses")
    replace_defaults = models.BooleanField(default=False)
    comment = models.TextField(blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        super().clean()
        if not isinstance(self.recipients, list) or not self.recipients:
            raise ValidationError({"recipients": "give at least one e-mail address"})
        for address in self.recipients:
            try:
                if not isinstance(address, str):  # JSON allows numbers and lists here; validate_email does not
                    raise ValidationError("not text")
                validate_email(address)
            except ValidationError:
                raise ValidationError({"recipients": f"not an e-mail address: {address!r}"}) from None


class Subscription(IncidentFilter):
    """A user's own subscription: e-mail me (at my account's address) the incidents that match."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="alert_subscriptions")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["user", "id"]

    def __str__(self) -> str:
        return f"{self.user} sites={self.sites or '*'} codes={self.codes or '*'} >= {self.min_severity}"


class Notification(models.Model):
    """The sent-log: one e-mail to one recipient, exactly as rendered, with its delivery state.

    Unique per incident, kind, round (``sequence``) and recipient, so that a repeated run or a
    redelivered task can never create or send a second copy.
    """

    incident = models.ForeignKey(
        Incident, on_delete=models.CASCADE, null=True, blank=True, related_name="notifications"
    )
    silence = models.ForeignKey(Silence, on_delete=models.CASCADE, null=True, blank=True, related_name="notifications")
    kind = models.CharField(max_length=20, choices=NotificationKind.choices)
    sequence = models.PositiveIntegerField(default=0, help_text="the incident's notification round")
    recipient = models.EmailField()
    reason = models.CharField(max_length=300, blank=True, help_text="why this recipient")
    subject = models.CharField(max_length=300)
    body_text = models.TextField()
    body_html = models.TextField(blank=True)
    message_id = models.CharField(max_length=200)
    status = models.CharField(max_length=20, choices=NotificationStatus.choices, default=NotificationStatus.PENDING)
    created_at = models.DateTimeField()
    dispatched_at = models.DateTimeField(null=True, blank=True, help_text="last enqueued for sending")
    sent_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    last_error = models.TextField(blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["incident", "kind", "sequence", "recipient"],
                condition=Q(incident__isnull=False),
                name="%(app_label)s_%(class)s_unique_incident_round",
            ),
            models.UniqueConstraint(
                fields=["silence", "kind", "recipient"],
                condition=Q(silence__isnull=False),
                name="%(app_label)s_%(class)s_unique_silence_kind",
            ),
            models.CheckConstraint(
                condition=Q(incident__isnull=False) | Q(silence__isnull=False),
                name="%(app_label)s_%(class)s_about_something",
            ),
        ]
        indexes = [models.Index(fields=["status", "dispatched_at"], name="alerts_notification_status")]

    def __str__(self) -> str:
        return f"{self.kind} #{self.sequence} to {self.recipient} ({self.status})"
