"""Maintenance windows announced by carriers, the inventory objects each one touches, and their provenance."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q

from wanmon.core.models import HashedToken, TrailEvent, site_or_carrier_constraint
from wanmon.maintenance.choices import (
    Behaviour,
    CarrierNoticeStatus,
    EventKind,
    Impact,
    Review,
    SiteNoticeKind,
    Source,
    Status,
)

__all__ = [
    "FeedToken",
    "MaintenanceAffect",
    "MaintenanceEvent",
    "CarrierNotice",
    "SiteNotice",
    "MaintenanceSource",
    "MaintenanceWindow",
]


class CarrierNotice(models.Model):
    """One incoming carrier notice as received (iCalendar or e-mail), kept verbatim, with what its parsing
    produced. (Outgoing e-mails to the sites are :class:`SiteNotice`; the alerts' e-mails are ``Notification``.)"""

    received_at = models.DateTimeField(auto_now_add=True)
    source = models.CharField(max_length=20, choices=Source.choices)
    origin = models.CharField(max_length=1000, blank=True, help_text="file name, URL or mailbox key")
    content_type = models.CharField(max_length=100, blank=True)
    message_id = models.CharField(max_length=998, blank=True)
    sender = models.CharField(max_length=320, blank=True)
    subject = models.CharField(max_length=998, blank=True)
    raw = models.BinaryField(help_text="the notice exactly as received")
    sha256 = models.CharField(max_length=64, unique=True, help_text="of raw: the same bytes are imported once")
    parser = models.CharField(max_length=200, blank=True, help_text="parser that produced the windows")
    status = models.CharField(
        max_length=20, choices=CarrierNoticeStatus.choices, default=CarrierNoticeStatus.PARSED
    )
    report = models.JSONField(default=dict, blank=True, help_text="windows created/updated/ignored, unmatched objects")
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="carrier_notices",
    )

    class Meta:
        # The table keeps the model's first name (MaintenanceNotification): renaming the model moved no row.
        db_table = "maintenance_maintenancenotification"
        ordering = ["-received_at", "-id"]

    def __str__(self) -> str:
        return f"{self.source} {self.origin or self.sha256[:12]}"


class MaintenanceWindow(models.Model):
    """A scheduled intervention: when, by whom, its status and its default impact (UTC times)."""

    reference = models.CharField(max_length=200, help_text="the carrier's maintenance id")
    carrier = models.ForeignKey(
        "inventory.Carrier", on_delete=models.PROTECT, null=True, blank=True, related_name="maintenance_windows"
    )
    summary = models.CharField(max_length=500, blank=True)
    start = models.DateTimeField()
    end = models.DateTimeField()
    source_tz = models.CharField(max_length=64, default="UTC")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.CONFIRMED)
    impact = models.CharField(max_length=20, choices=Impact.choices, default=Impact.OUTAGE)
    uid = models.CharField("iCalendar UID", max_length=255, blank=True)
    sequence = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # --- 0002: BCOP identification, recurrence, behaviour and provenance
    aliases = models.JSONField(default=list, blank=True, help_text="other maintenance ids (BCOP NON-PRIMARY)")
    provider = models.CharField(max_length=200, blank=True, help_text="X-MAINTNOTE-PROVIDER as announced")
    account = models.CharField(max_length=200, blank=True, help_text="X-MAINTNOTE-ACCOUNT")
    stamp = models.DateTimeField(null=True, blank=True, help_text="DTSTAMP of the carrier notice applied last")
    organizer = models.CharField(max_length=320, blank=True)
    description = models.TextField(blank=True)
    rrule = models.CharField(
        "recurrence rule", max_length=500, blank=True, help_text="RFC 5545 RRULE, applied to the UTC start"
    )
    recurrence_end = models.DateTimeField(
        null=True, blank=True, help_text="end of the last occurrence (empty: the rule has no end)"
    )
    behaviour = models.CharField(max_length=10, choices=Behaviour.choices, default=Behaviour.MUTE)
    source = models.CharField(max_length=20, choices=Source.choices, default=Source.MANUAL)
    parser = models.CharField(max_length=200, blank=True)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="maintenance_windows_authored",
    )
    carrier_notice = models.ForeignKey(
        CarrierNotice,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="windows",
        help_text="the carrier notice applied last",
    )
    unmatched_objects = models.JSONField(
        default=list, blank=True, help_text="announced objects not found in the inventory: [{object_id, impact}]"
    )
    revision = models.PositiveIntegerField(default=0, help_text="counts material changes (times, status, impact...)")
    # --- 0003: trust of the source; only accepted windows explain, mute, skip tests or notify
    review = models.CharField(max_length=10, choices=Review.choices, default=Review.ACCEPTED)
    review_note = models.CharField(max_length=500, blank=True, help_text="why the source was trusted or held")
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="maintenance_windows_reviewed",
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["start", "reference"]
        constraints = [
            models.CheckConstraint(
                condition=Q(end__gt=models.F("start")), name="%(app_label)s_%(class)s_end_after_start"
            ),
            models.UniqueConstraint(
                fields=["carrier", "reference"], name="%(app_label)s_%(class)s_unique_carrier_reference"
            ),
            models.UniqueConstraint(
                fields=["carrier", "uid"], condition=~Q(uid=""), name="%(app_label)s_%(class)s_unique_carrier_uid"
            ),
        ]
        indexes = [
            models.Index(fields=["start", "end"], name="maintenance_window_span"),
            models.Index(fields=["review"], name="maintenance_window_review"),
        ]

    def __str__(self) -> str:
        return f"{self.reference} {self.start:%Y-%m-%d %H:%M}Z"

    def clean(self) -> None:
        if self.start and self.end and self.end <= self.start:
            raise ValidationError({"end": "must be after start"})

    @property
    def duration_s(self) -> float:
        return (self.end - self.start).total_seconds()

    @property
    def is_recurring(self) -> bool:
        return bool(self.rrule)

    @property
    def is_accepted(self) -> bool:
        return self.review == Review.ACCEPTED


class MaintenanceAffect(models.Model):
    """One inventory object a window touches, with its own impact (defaults to the window's)."""

    window = models.ForeignKey(MaintenanceWindow, on_delete=models.CASCADE, related_name="affects")
    equipment = models.ForeignKey(
        "inventory.Equipment", on_delete=models.CASCADE, null=True, blank=True, related_name="maintenance_affects"
    )
    interface = models.ForeignKey(
        "inventory.Interface", on_delete=models.CASCADE, null=True, blank=True, related_name="maintenance_affects"
    )
    trunk = models.ForeignKey(
        "inventory.Trunk", on_delete=models.CASCADE, null=True, blank=True, related_name="maintenance_affects"
    )
    circuit = models.ForeignKey(
        "inventory.Circuit", on_delete=models.CASCADE, null=True, blank=True, related_name="maintenance_affects"
    )
    site = models.ForeignKey(
        "inventory.Site", on_delete=models.CASCADE, null=True, blank=True, related_name="maintenance_affects"
    )
    impact = models.CharField(max_length=20, choices=Impact.choices, blank=True)
    # --- 0002
    path = models.ForeignKey(
        "inventory.Path",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="maintenance_affects",
        help_text="a path direction (any version of its site pair)",
    )
    object_id = models.CharField(
        max_length=200, blank=True, help_text="the carrier's identifier (X-MAINTNOTE-OBJECT-ID)"
    )
    altrep = models.URLField(max_length=1000, blank=True, help_text="ALTREP of the object id: where to read more")

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(equipment__isnull=False)
                | Q(interface__isnull=False)
                | Q(trunk__isnull=False)
                | Q(circuit__isnull=False)
                | Q(site__isnull=False)
                | Q(path__isnull=False),
                name="%(app_label)s_%(class)s_targets_something",
            )
        ]

    def __str__(self) -> str:
        return f"{self.window.reference} -> {self.label}"

    @property
    def label(self) -> str:
        """The affected object as the topology document names it."""
        if self.interface_id:
            return f"{self.interface.equipment.name}:{self.interface.name}"
        if self.equipment_id:
            return self.equipment.name
        if self.trunk_id:
            return self.trunk.name
        if self.circuit_id:
            return f"circuit:{self.circuit.cid}"
        if self.path_id:
            return f"path:{self.path.src.code}->{self.path.dst.code}"
        return f"site:{self.site.code}"

    @property
    def effective_impact(self) -> str:
        return self.impact or self.window.impact


class MaintenanceEvent(TrailEvent):
    """Audit trail of a window: created, updated (with the changes), ignored carrier notices, comments, site notices."""

    window = models.ForeignKey(MaintenanceWindow, on_delete=models.CASCADE, related_name="events")
    kind = models.CharField(max_length=20, choices=EventKind.choices)
    # A user's maintenance events are reachable from the user (the other trails' are not).
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="maintenance_events"
    )
    carrier_notice = models.ForeignKey(
        CarrierNotice, on_delete=models.SET_NULL, null=True, blank=True, related_name="events"
    )
    changes = models.JSONField(default=dict, blank=True, help_text="{field: [before, after]}")
    data = None  # what else an entry carries is in ``changes`` and ``carrier_notice``

    def __str__(self) -> str:
        return f"{self.window.reference} {self.kind} {self.time:%Y-%m-%dT%H:%MZ}"


class MaintenanceSource(models.Model):
    """How to read one carrier's notices: its senders, its parser, an optional calendar URL to poll."""

    carrier = models.ForeignKey("inventory.Carrier", on_delete=models.CASCADE, related_name="maintenance_sources")
    parser = models.CharField(
        max_length=50,
        blank=True,
        help_text="circuit-maintenance-parser provider (e.g. 'zayo', 'colt'); empty: BCOP iCalendar only",
    )
    senders = models.JSONField(
        default=list, blank=True, help_text="e-mail addresses or '@domain' whose messages come from this carrier"
    )
    provider_names = models.JSONField(
        default=list, blank=True, help_text="X-MAINTNOTE-PROVIDER values this carrier uses (e.g. 'example.com')"
    )
    url = models.URLField(max_length=1000, blank=True, help_text="an iCalendar feed to poll")
    # --- 0005
    mailbox = models.CharField(
        max_length=1000,
        blank=True,
        help_text="a Maildir (or directory) only this carrier's notices reach: what is imported from it is "
        "the carrier's",
    )
    enabled = models.BooleanField(default=True)
    last_polled_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)

    class Meta:
        ordering = ["carrier__code", "id"]

    def __str__(self) -> str:
        return f"{self.carrier.code} ({self.parser or 'bcop'})"


class FeedToken(HashedToken):
    """A secret that lets a calendar client read iCalendar feeds; only its SHA-256 is stored."""

    name = models.CharField(max_length=200)
    site = models.ForeignKey(
        "inventory.Site",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="maintenance_feed_tokens",
        help_text="restrict the token to this site's feed",
    )
    carrier = models.ForeignKey(
        "inventory.Carrier",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="maintenance_feed_tokens",
        help_text="restrict the token to this carrier's feed",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="feed_tokens"
    )

    class Meta:
        ordering = ["name", "id"]
        constraints = [site_or_carrier_constraint()]

    def __str__(self) -> str:
        return f"{self.name} ({self.token_prefix}...)"


class SiteNotice(models.Model):
    """Sent-log of the outgoing notices to the sites' contacts: one row per window, occurrence, kind, revision and
    recipient (sent once). (Incoming carrier e-mails are :class:`CarrierNotice`.)"""

    window = models.ForeignKey(MaintenanceWindow, on_delete=models.CASCADE, related_name="site_notices")
    kind = models.CharField(max_length=20, choices=SiteNoticeKind.choices)
    recipient = models.EmailField()
    occurrence_start = models.DateTimeField(
        help_text="the occurrence of a recurring window; 1970-01-01 for single windows (they may move)"
    )
    revision = models.PositiveIntegerField(default=0, help_text="key part: the window revision for changes, else 0")
    window_revision = models.PositiveIntegerField(default=0, help_text="the window revision the e-mail described")
    subject = models.CharField(max_length=998, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "maintenance_maintenancenotice"  # the table and its constraint keep the model's former name
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["window", "kind", "recipient", "occurrence_start", "revision"],
                name="maintenance_maintenancenotice_unique_notice",
            )
        ]

    def __str__(self) -> str:
        return f"{self.window.reference} {self.kind} -> {self.recipient}"
