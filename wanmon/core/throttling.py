"""Per-user request rates of the API (429 with Retry-After past them).

The rates are read from the settings on every request (WANMON_API_USER_RATE for logged-in users and
tokens, WANMON_API_ANON_RATE for anonymous callers). The counters live in the cache (Redis): when it
is down the request is let through, as for the ingest rate limit, rather than failing with a 500.
"""

from __future__ import annotations

import logging

from django.conf import settings
from rest_framework import throttling

logger = logging.getLogger(__name__)


class _FailOpen:
    def allow_request(self, request, view):
        try:
            return super().allow_request(request, view)
        except Exception:  # the cache is down: answering matters more than counting
            logger.warning("API rate limit unavailable (cache error); allowing the request", exc_info=True)
            return True


class UserRateThrottle(_FailOpen, throttling.UserRateThrottle):
    """Requests per logged-in user (or per agent on endpoints without their own limit)."""

    def get_rate(self):
        return getattr(settings, "WANMON_API_USER_RATE", None) or None


class AnonRateThrottle(_FailOpen, throttling.AnonRateThrottle):
    """Requests per client address without a login (most answer 403, but each still costs a request)."""

    def get_rate(self):
        return getattr(settings, "WANMON_API_ANON_RATE", None) or None

    def get_ident(self, request):
        from wanmon.core.auth import client_ip

        return client_ip(request) or super().get_ident(request)
