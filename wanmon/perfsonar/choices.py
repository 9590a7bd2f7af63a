"""Choice sets of the perfSONAR app."""

from django.db import models


class RunState(models.TextChoices):
    """What became of one archived pScheduler run."""

    INGESTED = "ingested", "Ingested"
    PARKED = "parked", "Parked: an endpoint is not in the inventory"
    REJECTED = "rejected", "Refused when its endpoints were mapped"
    IGNORED = "ignored", "Ignored: not a measurement wanmon uses"
