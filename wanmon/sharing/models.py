"""Links that show an incident's evidence to a carrier without a login, and the log of every access to them."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from wanmon.core.models import HashedToken
from wanmon.sharing.choices import ShareFormat, ShareOrigin
from wanmon.sharing.constants import USER_AGENT_MAX_CHARS

__all__ = ["ShareAccess", "ShareLink"]


class ShareLink(HashedToken):
    """A read-only link to one incident's evidence scoped to one carrier: only its SHA-256 is stored; it opens until
    ``expires_at`` unless revoked (``revoked_at``) earlier."""

    incident = models.ForeignKey("alerts.Incident", on_delete=models.CASCADE, related_name="share_links")
    carrier = models.ForeignKey("inventory.Carrier", on_delete=models.CASCADE, related_name="share_links")
    expires_at = models.DateTimeField()
    origin = models.CharField(max_length=10, choices=ShareOrigin.choices, default=ShareOrigin.API)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="share_links"
    )
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["incident", "carrier"], name="sharing_link_incident_carrier")]

    def __str__(self) -> str:
        return f"#{self.incident_id} for {self.carrier} ({self.token_prefix}...)"


class ShareAccess(models.Model):
    """One request to a share link: when, from which address, in which form, and what it was answered (200; 410
    once expired or revoked)."""

    link = models.ForeignKey(ShareLink, on_delete=models.CASCADE, related_name="accesses")
    time = models.DateTimeField()
    address = models.GenericIPAddressField(null=True, blank=True)
    user_agent = models.CharField(max_length=USER_AGENT_MAX_CHARS, blank=True)
    format = models.CharField(max_length=10, choices=ShareFormat.choices, default=ShareFormat.HTML)
    status = models.PositiveSmallIntegerField()

    class Meta:
        ordering = ["-time", "-id"]
        indexes = [models.Index(fields=["link", "time"], name="sharing_access_link_time")]

    def __str__(self) -> str:
        return f"{self.link_id} {self.time:%Y-%m-%dT%H:%MZ} {self.address} {self.status}"
