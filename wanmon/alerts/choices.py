"""Choice sets of incidents, silences and notifications."""

from django.db import models


class IncidentStatus(models.TextChoices):
    OPEN = "open", "Open"
    ACKNOWLEDGED = "acknowledged", "Acknowledged"
    RESOLVED = "resolved", "Resolved"


ACTIVE_INCIDENT_STATUSES = (IncidentStatus.OPEN, IncidentStatus.ACKNOWLEDGED)


class IncidentKind(models.TextChoices):
    """What gathers the findings of an incident (its group key says which element, site, pair or window)."""

    ELEMENT = "element", "Root-cause element (equipment, interface, trunk)"
    MAINTENANCE = "maintenance", "Maintenance window"
    SITE = "site", "Many paths of one site"
    PAIR = "pair", "Both directions of a site pair"
    SINGLE = "single", "A finding of its own"


class MemberRole(models.TextChoices):
    ROOT = "root", "Root cause"
    SYMPTOM = "symptom", "Symptom"
    RELATED = "related", "Related / corroborating"


class IncidentEventKind(models.TextChoices):
    OPENED = "opened", "Opened"
    CHANGED = "changed", "Findings changed"
    MUTED = "muted", "Muted"
    UNMUTED = "unmuted", "Unmuted"
    NOTIFIED = "notified", "Notified"
    ACKNOWLEDGED = "acknowledged", "Acknowledged"
    CLEARED = "cleared", "Evidence cleared (resolve hold)"
    RECURRED = "recurred", "Recurred during the resolve hold"
    REOPENED = "reopened", "Reopened: a finding came back soon after the resolution"
    RESOLVED = "resolved", "Resolved"
    MERGED = "merged", "Merged into another incident"


class NotificationKind(models.TextChoices):
    FIRING = "firing", "First notice / problem persists after a mute"
    UPDATE = "update", "New findings or higher severity"
    REPEAT = "repeat", "Still open (repeat interval)"
    RESOLVED = "resolved", "Resolved"
    SILENCE_REMINDER = "silence_reminder", "Silence about to expire"


class NotificationStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    SENT = "sent", "Sent"
    FAILED = "failed", "Failed (will be retried)"
    ABANDONED = "abandoned", "Abandoned after the last retry"


class SilenceMatcher(models.TextChoices):
    """Names a silence may match on (all given must match)."""

    CODE = "code", "Finding code"
    SITE = "site", "Site code (path end, host site)"
    PATH = "path", "Path direction SRC->DST"
    EQUIPMENT = "equipment", "Equipment (finding subject or incident root)"
