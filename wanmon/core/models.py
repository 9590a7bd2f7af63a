"""Abstract models the apps share (no table of their own)."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class TrailEvent(models.Model):
    """An entry of an audit trail: when, who (nobody for the system), a note and what else it carries.

    The concrete trail adds what the entry belongs to and its ``kind`` (with that trail's choices).
    """

    time = models.DateTimeField()
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    note = models.TextField(blank=True)
    data = models.JSONField(default=dict, blank=True)

    class Meta:
        abstract = True
        ordering = ["time", "id"]
