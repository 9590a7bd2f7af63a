"""Choice sets of stored findings."""

from django.db import models

from wanmon.core.choices import ACTIVE_LIFECYCLE, Lifecycle
from wanmon.diagnosis import codes

# A finding goes open -> acknowledged -> resolved as the incident that gathers it does.
FindingStatus = Lifecycle
ACTIVE_STATUSES = ACTIVE_LIFECYCLE

Severity = models.TextChoices("Severity", [(s, s) for s in codes.SEVERITIES])
Code = models.TextChoices("Code", [(c, c) for c in codes.CODES])


class EventKind(models.TextChoices):
    OPENED = "opened", "Opened"
    UPDATED = "updated", "Updated"
    ACKNOWLEDGED = "acknowledged", "Acknowledged"
    RESOLVED = "resolved", "Resolved"
    REOPENED = "reopened", "Reopened"
    TESTED = "tested", "Tested"
