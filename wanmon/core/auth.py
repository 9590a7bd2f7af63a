"""Password guessing protection and how API callers authenticate.

Every password check costs a PBKDF2 hash (Django hashes a dummy password for unknown users too), so
guessing on /accounts/login/, /admin/ or the API is both an attack on accounts and a cheap way to load
the web servers. django-axes counts failed logins per client address and, past
``WANMON_LOGIN_FAILURE_LIMIT``, refuses further attempts from that address for
``WANMON_LOGIN_COOLOFF_MIN`` minutes before any hash is computed (429).

The API accepts the session (browser) and personal tokens (``Authorization: Token <key>``, DRF's
authtoken); HTTP Basic, which sends a password with every request, only when
``WANMON_API_BASIC_AUTH`` is set. Site agents use their own bearer tokens on the ingest and archive
endpoints (wanmon/measurements/api/auth.py), untouched by all this.
"""

from __future__ import annotations

from axes.backends import AxesStandaloneBackend
from axes.handlers.proxy import AxesProxyHandler
from axes.helpers import get_credentials
from django.conf import settings
from rest_framework import exceptions
from rest_framework.authentication import BasicAuthentication


def client_ip(request) -> str | None:
    """The caller's address for lockouts: behind the TLS proxy (WANMON_BEHIND_PROXY) the address the proxy
    appended last to X-Forwarded-For (earlier entries are whatever the client claimed), else REMOTE_ADDR."""
    meta = request.META
    if getattr(settings, "WANMON_BEHIND_PROXY", False):
        forwarded = meta.get("HTTP_X_FORWARDED_FOR", "").split(",")[-1].strip()
        if forwarded:
            return forwarded
    return meta.get("REMOTE_ADDR")


class LockoutBackend(AxesStandaloneBackend):
    """django-axes' lockout check, first among the authentication backends.

    A call without a request (the test client's ``login()``, code calling ``authenticate()`` directly) is
    not a guess over the network: it is passed on to the next backend instead of refused.
    """

    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username, password, **kwargs)


class OptionalBasicAuthentication(BasicAuthentication):
    """HTTP Basic for the API, only when settings.WANMON_API_BASIC_AUTH is true (read per request).

    A locked-out address gets 429 with Retry-After instead of another password check.
    """

    def authenticate(self, request):
        if not getattr(settings, "WANMON_API_BASIC_AUTH", False):
            return None
        return super().authenticate(request)

    def authenticate_credentials(self, userid, password, request=None):
        if request is not None:
            django_request = getattr(request, "_request", request)
            credentials = get_credentials(username=userid)
            if not AxesProxyHandler.is_allowed(django_request, credentials):
                cooloff = settings.AXES_COOLOFF_TIME
                wait_s = int(cooloff.total_seconds()) if cooloff else None
                raise exceptions.Throttled(
                    wait=wait_s, detail="too many failed logins from this address; try again later"
                )
        return super().authenticate_credentials(userid, password, request)

    def authenticate_header(self, request):
        if not getattr(settings, "WANMON_API_BASIC_AUTH", False):
            return None
        return super().authenticate_header(request)
