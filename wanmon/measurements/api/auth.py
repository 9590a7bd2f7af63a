"""Agent authentication (bearer token) and the per-agent ingest rate limit."""

from __future__ import annotations

from rest_framework import authentication, exceptions, permissions, throttling

from wanmon.core.throttling import CacheFallbackMixin
from wanmon.core.tokens import token_hash
from wanmon.inventory.choices import AgentScope
from wanmon.inventory.models import Agent


class AgentPrincipal:
    """The authenticated caller of the ingest API: an agent, not a Django user."""

    is_authenticated = True
    is_staff = False

    def __init__(self, agent: Agent):
        self.agent = agent
        self.pk = f"agent:{agent.pk}"

    def __str__(self) -> str:
        return f"agent {self.agent.name}"


class AgentTokenAuthentication(authentication.BaseAuthentication):
    """``Authorization: Bearer <token>`` of a registered, unrevoked agent."""

    keyword = "Bearer"

    def authenticate(self, request):
        header = request.META.get("HTTP_AUTHORIZATION", "")
        if not header:
            return None
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise exceptions.AuthenticationFailed("expected 'Authorization: Bearer <agent token>'")
        token = token.strip()
        if len(token) > 200:
            raise exceptions.AuthenticationFailed("invalid agent token")
        try:  # token_hash is unique: get() spares the ORDER BY that first() would add on every upload
            agent = Agent.objects.select_related("site").get(token_hash=token_hash(token), revoked_at__isnull=True)
        except Agent.DoesNotExist:
            raise exceptions.AuthenticationFailed("invalid or revoked agent token") from None
        return AgentPrincipal(agent), token

    def authenticate_header(self, request) -> str:
        return 'Bearer realm="wanmon-ingest"'


class AgentScopeAllowed(permissions.BasePermission):
    """The agent's token is one this endpoint accepts (the view's ``agent_scopes``): the archive token of a pSConfig
    template, which anyone fetching the template reads, archives perfSONAR runs and uploads nothing else."""

    def has_permission(self, request, view) -> bool:
        user = request.user
        if not isinstance(user, AgentPrincipal):
            return False
        allowed = getattr(view, "agent_scopes", (AgentScope.AGENT,))
        if user.agent.scope in allowed:
            return True
        self.message = (
            f"the token of agent {user.agent.name!r} archives perfSONAR runs only (/api/v1/perfsonar/archive): "
            "upload measurements with a site agent's token (manage.py agent_create)"
        )
        return False


class AgentIngestThrottle(CacheFallbackMixin, throttling.SimpleRateThrottle):
    """Per-agent request rate (settings WANMON_INGEST_RATE_LIMIT, e.g. '600/min'); 429 + Retry-After.

    While Redis fails the count is kept in the process (wanmon/core/throttling.py): an upload waits on a
    blackholed Redis at most once per pause, and an agent token that floods ingest is still refused.
    """

    scope = "ingest"

    def get_rate(self):
        from django.conf import settings

        return settings.WANMON_INGEST_RATE_LIMIT

    def get_cache_key(self, request, view):
        user = getattr(request, "user", None)
        if isinstance(user, AgentPrincipal):
            return f"throttle_ingest_agent_{user.agent.pk}"
        return None
