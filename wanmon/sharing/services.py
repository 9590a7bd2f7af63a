"""Sharing writes: a carrier's link to an incident's evidence made, revoked, and every access to it logged."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from wanmon.alerts.hooks import CarrierLink
from wanmon.alerts.models import Incident
from wanmon.core.tokens import token_hash
from wanmon.inventory.models import Carrier
from wanmon.sharing.choices import ShareOrigin
from wanmon.sharing.constants import (
    SHARE_DAYS_MAX,
    SHARE_DAYS_MIN,
    SHARE_TOKEN_BYTES,
    SHARE_TOKEN_PREFIX_LEN,
    USER_AGENT_MAX_CHARS,
)
from wanmon.sharing.models import ShareAccess, ShareLink
from wanmon.sharing.report import incident_carriers

__all__ = [
    "ShareRefused",
    "share_access_record",
    "share_link_create",
    "share_link_revoke",
    "share_links_for_email",
    "share_token_of_url",
    "share_url",
]


class ShareRefused(ValueError):
    """The request is valid but the incident cannot be shared with that carrier (a 409 naming ``field``)."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


def share_url(token: str) -> str:
    """The address a carrier opens: WANMON_BASE_URL + /share/<token>."""
    return f"{settings.WANMON_BASE_URL.rstrip('/')}/share/{token}"


def share_token_of_url(url: str) -> str:
    """The token of a share URL (its last path segment); "" for anything else."""
    path = urlsplit(str(url).strip()).path.rstrip("/")
    head, _, token = path.rpartition("/")
    return token if head.endswith("/share") else ""


def share_link_create(*, incident: Incident, carrier: Carrier, days: int, now: datetime, user=None,
                      origin: str = ShareOrigin.API) -> tuple[ShareLink, str]:
    """A new link showing ``incident``'s evidence to ``carrier`` for ``days`` days; its URL is returned once (only
    the token's hash is kept). Refused (ShareRefused) when the carrier operates neither the incident's root element
    nor a box on its paths."""
    if isinstance(days, bool) or not isinstance(days, int) or not SHARE_DAYS_MIN <= days <= SHARE_DAYS_MAX:
        raise ValidationError({"days": [f"a whole number of days from {SHARE_DAYS_MIN} to {SHARE_DAYS_MAX}"]})
    operating = incident_carriers(incident, now=now)
    if carrier.code not in operating:
        raise ShareRefused("carrier", (
            f"carrier {carrier.code} operates neither the root element nor any box on the paths of incident "
            f"#{incident.pk}" + (f" (operated by: {', '.join(sorted(operating))})" if operating else
                                 " (no carrier operates its elements)")))
    token = secrets.token_urlsafe(SHARE_TOKEN_BYTES)
    with transaction.atomic():
        link = ShareLink.objects.create(
            incident=incident, carrier=carrier, token_hash=token_hash(token),
            token_prefix=token[:SHARE_TOKEN_PREFIX_LEN], expires_at=now + timedelta(days=days), origin=origin,
            created_by=user if user is not None and user.is_authenticated else None,
        )
    return link, share_url(token)


def share_link_revoke(*, incident: Incident, url: str, now: datetime, user=None) -> ShareLink:
    """Revoke the link of ``incident`` at ``url`` at once (its page answers 410 from now on). A URL that is no
    link of this incident is a ValidationError naming ``url``."""
    token = share_token_of_url(url)
    link = ShareLink.objects.filter(token_hash=token_hash(token), incident=incident).first() if token else None
    if link is None:
        raise ValidationError({"url": ["not a share link of this incident"]})
    if link.revoked_at is None:
        link.revoked_at = now
        link.revoked_by = user if user is not None and user.is_authenticated else None
        link.save(update_fields=["revoked_at", "revoked_by"])
    return link


def share_access_record(*, link: ShareLink, now: datetime, address: str | None, user_agent: str, fmt: str,
                        status: int) -> ShareAccess:
    """Log one request to a link (also a refused one: who still tries an expired link is worth knowing)."""
    access = ShareAccess.objects.create(link=link, time=now, address=address or None,
                                        user_agent=(user_agent or "")[:USER_AGENT_MAX_CHARS], format=fmt,
                                        status=status)
    if status == 200:
        ShareLink.objects.filter(pk=link.pk).update(last_used_at=now)
    return access


def share_links_for_email(incident: Incident, emails: Sequence[str], now: datetime) -> dict[str, CarrierLink]:
    """The alerting's hook (``wanmon.alerts.hooks``): for each recipient that is the NOC address of a carrier
    operating the incident's elements, a new link to the evidence scoped to that carrier, valid
    SHARING_EMAIL_LINK_DAYS days from now (the wall clock, also when the alerting replays a past). A new one each
    e-mail round: only a token's hash is kept, so an earlier link's URL cannot be written again."""
    wanted = {e.strip().lower() for e in emails if e}
    operating = incident_carriers(incident, now=now)
    if not wanted or not operating:
        return {}
    out: dict[str, CarrierLink] = {}
    days = int(settings.SHARING_EMAIL_LINK_DAYS)
    # the link opens for its days from when it is sent, also when the alerting runs in a replay's past
    now = max(now, timezone.now())
    for carrier in Carrier.objects.filter(code__in=operating).exclude(noc_email="").order_by("code"):
        address = carrier.noc_email.strip().lower()
        if address in wanted and address not in out:
            link, url = share_link_create(incident=incident, carrier=carrier, days=days, now=now,
                                          origin=ShareOrigin.EMAIL)
            out[address] = CarrierLink(carrier=carrier.code, url=url, expires_at=link.expires_at)
    return out
