"""Request rates of the API and of ingest (429 with Retry-After past them), and what they do when Redis is away.

The rates are read from the settings on every request (WANMON_API_USER_RATE for logged-in users and
tokens, WANMON_API_ANON_RATE for anonymous callers, WANMON_INGEST_RATE_LIMIT per agent in
wanmon/measurements/api/auth.py). The counters live in the cache (Redis).

When the cache fails (Redis down, or blackholed: every read then costs the client's socket timeout, 5 s),
the process counts in its own memory for ``CACHE_PAUSE_AFTER_FAILURE_S`` and does not touch Redis; after
that one request tries Redis again while the others keep counting locally. Counting locally rather than
letting every request through keeps a limit in force during the outage (a runaway or stolen agent token
cannot flood ingest): it is per process, so with N web processes a caller gets at most N times its rate,
and no request ever waits on Redis more than once per pause.
"""

from __future__ import annotations

import logging
import threading
import time

from django.conf import settings
from django.core.cache.backends.locmem import LocMemCache
from rest_framework import throttling

logger = logging.getLogger(__name__)

# As the ingest's enqueue (wanmon/measurements/tasks.py): one failure, then this long without trying Redis.
CACHE_PAUSE_AFTER_FAILURE_S = 30.0


class CacheBreaker:
    """Whether the rate limits may use the shared cache now, and the process-local cache they use meanwhile."""

    def __init__(self, pause_s: float) -> None:
        self.pause_s = pause_s
        self.local = LocMemCache("wanmon-throttle-fallback", {"OPTIONS": {"MAX_ENTRIES": 10_000}})
        self._lock = threading.Lock()
        self._down_until = 0.0  # monotonic time; 0 while the shared cache works

    def use_shared(self) -> bool:
        """True if this request should use Redis: it works, or the pause is over and this request is the one that
        tries again (the pause is extended meanwhile, so concurrent requests do not all wait on it)."""
        with self._lock:
            if not self._down_until:
                return True
            now = time.monotonic()
            if now < self._down_until:
                return False
            self._down_until = now + self.pause_s
            return True

    def failed(self, exc: Exception) -> None:
        with self._lock:
            self._down_until = time.monotonic() + self.pause_s
        # At most once per pause and process: only one request at a time tries the shared cache.
        logger.warning(
            "rate limit cache unavailable; counting in this process",
            extra={"error": f"{type(exc).__name__}: {exc}", "paused_s": self.pause_s},
        )

    def succeeded(self) -> None:
        if self._down_until:
            with self._lock:
                self._down_until = 0.0

    def reset(self) -> None:
        """Back to the shared cache, local counts forgotten (tests that break the cache on purpose)."""
        with self._lock:
            self._down_until = 0.0
        self.local.clear()


cache_breaker = CacheBreaker(CACHE_PAUSE_AFTER_FAILURE_S)


class CacheFallbackMixin:
    """A DRF rate throttle that counts in the process (``cache_breaker.local``) while the shared cache fails."""

    def allow_request(self, request, view):
        if not cache_breaker.use_shared():
            self.cache = cache_breaker.local
            return super().allow_request(request, view)
        try:
            allowed = super().allow_request(request, view)
        except Exception as exc:  # the cache is down: answering matters more than a shared count
            cache_breaker.failed(exc)
            self.cache = cache_breaker.local
            return super().allow_request(request, view)
        cache_breaker.succeeded()
        return allowed


class UserRateThrottle(CacheFallbackMixin, throttling.UserRateThrottle):
    """Requests per logged-in user (or per agent on endpoints without their own limit)."""

    def get_rate(self):
        return settings.WANMON_API_USER_RATE or None


class AnonRateThrottle(CacheFallbackMixin, throttling.AnonRateThrottle):
    """Requests per client address without a login (most answer 403, but each still costs a request)."""

    def get_rate(self):
        return settings.WANMON_API_ANON_RATE or None

    def get_ident(self, request):
        from wanmon.core.auth import client_ip

        return client_ip(request) or super().get_ident(request)
