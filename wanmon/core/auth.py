"""Password guessing protection and how API callers authenticate.

Every password check costs a PBKDF2 hash (Django hashes a dummy password for unknown users too), so
guessing on /accounts/login/, /admin/ or the API is both an attack on accounts and a cheap way to load
the web servers. django-axes counts failed logins per account and per client address and, past
``WANMON_LOGIN_FAILURE_LIMIT`` on either, refuses further attempts on that account or from that address
for ``WANMON_LOGIN_COOLOFF_MIN`` minutes before any hash is computed (429 with Retry-After). A successful
login forgets only that account's own failures from that address (:class:`LockoutHandler`).

The API accepts the session (browser) and personal tokens (``Authorization: Token <key>``,
:class:`ApiTokenAuthentication`: stored as a hash, expiring); HTTP Basic, which sends a password with
every request, only when ``WANMON_API_BASIC_AUTH`` is set. Site agents use their own bearer tokens on the
ingest and archive endpoints (wanmon/measurements/api/auth.py), untouched by all this.
"""

from __future__ import annotations

from axes.backends import AxesStandaloneBackend
from axes.handlers.database import AxesDatabaseHandler
from axes.handlers.proxy import AxesProxyHandler
from axes.helpers import get_client_username, get_credentials
from axes.models import AccessAttempt
from django.conf import settings
from django.http import HttpResponse
from django.utils import timezone
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, BasicAuthentication, get_authorization_header

from collectors.records.types import iso_z
from wanmon.core.models import ApiToken
from wanmon.core.tokens import token_hash


def client_ip(request) -> str | None:
    """The caller's address for lockouts: behind the TLS proxy (WANMON_BEHIND_PROXY) the address the proxy
    appended last to X-Forwarded-For (earlier entries are whatever the client claimed), else REMOTE_ADDR."""
    meta = request.META
    if settings.WANMON_BEHIND_PROXY:
        forwarded = meta.get("HTTP_X_FORWARDED_FOR", "").split(",")[-1].strip()
        if forwarded:
            return forwarded
    return meta.get("REMOTE_ADDR")


def lockout_retry_after_s() -> int | None:
    """Seconds until a locked-out caller may try again: the whole cool-off, since every attempt during a lockout
    counts as a failure and starts it again (axes' AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT)."""
    cooloff = settings.AXES_COOLOFF_TIME
    return int(cooloff.total_seconds()) if cooloff else None


LOCKOUT_MESSAGE = "too many failed logins for this account or from this address; try again later"


def lockout_response(request, original_response=None, credentials=None) -> HttpResponse:
    """The 429 of a lockout on the login page and the admin (settings.AXES_LOCKOUT_CALLABLE), with Retry-After."""
    wait_s = lockout_retry_after_s()
    text = LOCKOUT_MESSAGE if wait_s is None else f"{LOCKOUT_MESSAGE} (in {max(1, round(wait_s / 60))} min)"
    response = HttpResponse(text + "\n", status=429, content_type="text/plain; charset=utf-8")
    if wait_s is not None:
        response["Retry-After"] = str(wait_s)
    return response


class LockoutHandler(AxesDatabaseHandler):
    """axes' database handler, except that a successful login forgets only that account's failures from that
    address.

    axes' reset deletes every attempt matching any lockout parameter: with the address among them, one good login to
    one's own account would forget the guesses at everyone else's from the same address, and nine guesses at a
    colleague's password, one good login, repeated, would never lock. Failures at the account from other addresses
    stay too: they are someone else's guesses, not the owner's typos.
    """

    def reset_user_attempts(self, request, credentials=None) -> int:
        username = get_client_username(request, credentials)
        count, _ = AccessAttempt.objects.filter(username=username, ip_address=request.axes_ip_address).delete()
        return count


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
        if not settings.WANMON_API_BASIC_AUTH:
            return None
        return super().authenticate(request)

    def authenticate_credentials(self, userid, password, request=None):
        if request is not None:
            django_request = getattr(request, "_request", request)
            credentials = get_credentials(username=userid)
            if not AxesProxyHandler.is_allowed(django_request, credentials):
                raise exceptions.Throttled(wait=lockout_retry_after_s(), detail=LOCKOUT_MESSAGE)
        return super().authenticate_credentials(userid, password, request)

    def authenticate_header(self, request):
        if not settings.WANMON_API_BASIC_AUTH:
            return None
        return super().authenticate_header(request)


# last_used_at is written at most this often per token: a script polling every second costs no write per request.
LAST_USED_RESOLUTION_S = 300


class ApiTokenAuthentication(BaseAuthentication):
    """``Authorization: Token <key>``: a person's API token (:class:`wanmon.core.models.ApiToken`), looked up by its
    SHA-256, refused once revoked or expired or when its user is inactive."""

    keyword = "Token"

    def authenticate(self, request):
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() != self.keyword.lower().encode():
            return None
        if len(parts) != 2 or len(parts[1]) > 200:
            raise exceptions.AuthenticationFailed("expected 'Authorization: Token <key>' with one key")
        try:
            secret = parts[1].decode("ascii")
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed("invalid token") from None
        now = timezone.now()
        try:
            token = ApiToken.objects.select_related("user").get(token_hash=token_hash(secret), revoked_at__isnull=True)
        except ApiToken.DoesNotExist:
            raise exceptions.AuthenticationFailed("invalid or revoked token") from None
        if token.expires_at <= now:
            raise exceptions.AuthenticationFailed(
                f"token expired at {iso_z(token.expires_at, 'seconds')}; a new one: manage.py drf_create_token USER"
            )
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed("user inactive or deleted")
        if token.last_used_at is None or (now - token.last_used_at).total_seconds() > LAST_USED_RESOLUTION_S:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        return token.user, token

    def authenticate_header(self, request) -> str:
        return self.keyword
