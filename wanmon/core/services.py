"""Writes of the core app: personal API tokens."""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from wanmon.core.models import ApiToken
from wanmon.core.tokens import TOKEN_PREFIX_LEN, token_hash

__all__ = ["api_token_create", "api_token_revoke_all", "api_tokens_revoke"]


@transaction.atomic
def api_token_create(
    *, user, days: int | None = None, name: str = "", now: datetime | None = None
) -> tuple[ApiToken, str]:
    """A new API token of ``user``, valid ``days`` (settings.WANMON_API_TOKEN_DAYS by default), and its secret.

    The secret is returned here and never again: only its SHA-256 and first characters are stored.
    """
    days = settings.WANMON_API_TOKEN_DAYS if days is None else days
    if days < 1:
        raise ValueError("a token is valid for at least 1 day")
    secret = secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=user, name=name, token_hash=token_hash(secret), token_prefix=secret[:TOKEN_PREFIX_LEN],
        expires_at=(now or timezone.now()) + timedelta(days=days),
    )
    return token, secret


def api_tokens_revoke(*, tokens: QuerySet[ApiToken], now: datetime | None = None) -> int:
    """Revoke the active ones of ``tokens`` at once (the row stays, with its last use); how many were."""
    return tokens.filter(revoked_at__isnull=True).update(revoked_at=now or timezone.now())


def api_token_revoke_all(*, user, now: datetime | None = None) -> int:
    """Revoke every active API token of ``user`` at once; how many were."""
    return api_tokens_revoke(tokens=ApiToken.objects.filter(user=user), now=now)
