"""Abstract models the apps share (no table of their own)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


def site_or_carrier_constraint() -> models.CheckConstraint:
    """A row that belongs to a site or to a carrier, never to both (a router, a calendar feed's token).

    Named per model (``%(app_label)s_%(class)s``), so each table keeps the constraint name its migration gave it.
    """
    return models.CheckConstraint(
        condition=~(Q(site__isnull=False) & Q(carrier__isnull=False)), name="%(app_label)s_%(class)s_site_or_carrier"
    )


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


class HashedToken(models.Model):
    """A bearer secret of which only the SHA-256 is stored (``wanmon.core.tokens``), with its first characters to
    recognise it in lists; revoking keeps the row (and its last use) for the record.

    The concrete token adds what it gives access to.
    """

    token_hash = models.CharField(max_length=64, unique=True)
    token_prefix = models.CharField(max_length=12)
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class ApiToken(HashedToken):
    """A person's API token (``Authorization: Token <key>``): only its SHA-256 is stored, and it expires.

    It acts as its user, with the user's roles; ``manage.py drf_create_token USER`` prints a new one once.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, blank=True, help_text="what it is for (a script, a notebook)")
    expires_at = models.DateTimeField()

    class Meta:
        ordering = ["user", "-created_at", "id"]

    def __str__(self) -> str:
        return f"{self.user} {self.token_prefix}..."
