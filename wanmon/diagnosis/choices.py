"""Choice sets of stored findings."""

from django.db import models

from wanmon.diagnosis import codes


class FindingStatus(models.TextChoices):
    OPEN = "open", "Open"
    ACKNOWLEDGED = "acknowledged", "Acknowledged"
    RESOLVED = "resolved", "Resolved"


ACTIVE_STATUSES = (FindingStatus.OPEN, FindingStatus.ACKNOWLEDGED)

Severity = models.TextChoices("Severity", [(s, s) for s in codes.SEVERITIES])
Code = models.TextChoices("Code", [(c, c) for c in codes.CODES])


class EventKind(models.TextChoices):
    OPENED = "opened", "Opened"
    UPDATED = "updated", "Updated"
    ACKNOWLEDGED = "acknowledged", "Acknowledged"
    RESOLVED = "resolved", "Resolved"
    REOPENED = "reopened", "Reopened"
