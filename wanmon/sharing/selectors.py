"""Sharing reads: a link by its token, and an incident's links with their accesses."""

from __future__ import annotations

from django.db.models import QuerySet

from wanmon.core.tokens import token_hash
from wanmon.sharing.models import ShareLink

__all__ = ["share_link_by_token", "share_link_list"]


def share_link_by_token(token: str) -> ShareLink | None:
    """The link whose token this is (revoked and expired ones too: they answer 410, and the try is logged)."""
    if not token:
        return None
    return ShareLink.objects.select_related("carrier", "incident").filter(token_hash=token_hash(token)).first()


def share_link_list(*, incident_id: int) -> QuerySet[ShareLink]:
    """An incident's links, newest first, each with its carrier and its number of accesses."""
    return ShareLink.objects.filter(incident_id=incident_id).select_related("carrier", "created_by").order_by(
        "-created_at", "-id")
