"""Choice sets of maintenance windows (BCOP maintenance-notification vocabulary)."""

from django.db import models


class Impact(models.TextChoices):
    """What a window does to an affected object; unknown is treated as outage."""

    NO_IMPACT = "no-impact", "No impact"
    REDUCED_REDUNDANCY = "reduced-redundancy", "Reduced redundancy"
    AT_RISK = "at-risk", "At risk"
    DEGRADED = "degraded", "Degraded"
    OUTAGE = "outage", "Outage"


# Impacts under which a degradation on the working path is expected (MAINTENANCE_EXPLAINED).
EXPLAINING_IMPACTS = frozenset({Impact.AT_RISK, Impact.DEGRADED, Impact.OUTAGE})


class Status(models.TextChoices):
    TENTATIVE = "tentative", "Tentative"
    CONFIRMED = "confirmed", "Confirmed"
    CANCELLED = "cancelled", "Cancelled"
    IN_PROCESS = "in-process", "In process"
    COMPLETED = "completed", "Completed"
