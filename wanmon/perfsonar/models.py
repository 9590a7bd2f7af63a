"""Archived pScheduler runs, operator-mapped endpoint names and the read-only tokens of pSConfig templates."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from wanmon.core.models import HashedToken
from wanmon.perfsonar.choices import RunState

__all__ = ["EndpointAlias", "PerfsonarRun", "PsconfigToken"]


class PerfsonarRun(models.Model):
    """One pScheduler run received from a toolkit's http archiver: ingested, parked until mapped, or ignored.

    The run id is unique: a retry of the same run, from any agent, is a duplicate. A parked run keeps its
    whole body (and the endpoint names to map) until the names resolve; an ingested one keeps only its
    identity and the ingest batch its records went into.
    """

    run_id = models.CharField(max_length=200, unique=True)
    agent = models.ForeignKey("inventory.Agent", on_delete=models.SET_NULL, null=True, related_name="perfsonar_runs")
    state = models.CharField(max_length=20, choices=RunState.choices)
    test_type = models.CharField(max_length=50)
    tool = models.CharField(max_length=100, blank=True)
    tool_version = models.CharField(max_length=100, blank=True)
    run_start = models.DateTimeField(null=True, blank=True)
    source = models.CharField(max_length=255, blank=True, help_text="the source endpoint as the run names it")
    dest = models.CharField(max_length=255, blank=True)
    unresolved = models.JSONField(default=list, blank=True, help_text="endpoint names the inventory does not know")
    body = models.JSONField(null=True, blank=True, help_text="the archived body, kept while parked")
    batch_id = models.UUIDField(null=True, blank=True, help_text="the ingest batch of its records")
    accepted = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    received_at = models.DateTimeField(auto_now_add=True)
    ingested_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-received_at", "-id"]
        indexes = [models.Index(fields=["state", "received_at"], name="perfsonar_run_state")]

    def __str__(self) -> str:
        return f"{self.test_type} run {self.run_id} ({self.state})"


class EndpointAlias(models.Model):
    """An operator's answer to "which site is this address or name?" for perfSONAR endpoints.

    Hosts in the inventory have one address and a short name; toolkits name endpoints by FQDN or by any of
    their addresses. An alias maps one such name (lower case, no port) to a site and optionally a host.
    """

    endpoint = models.CharField(max_length=255, unique=True)
    site = models.ForeignKey("inventory.Site", on_delete=models.CASCADE, related_name="perfsonar_aliases")
    host = models.ForeignKey(
        "inventory.Host", on_delete=models.CASCADE, null=True, blank=True, related_name="perfsonar_aliases"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["endpoint"]

    def __str__(self) -> str:
        return f"{self.endpoint} -> {self.host or self.site}"


class PsconfigToken(HashedToken):
    """The read-only secret in a pSConfig template's URL, for one site (or, without a site, the whole mesh).

    The secret is derived from the server's secret key and ``nonce`` (so ``psconfig_url`` can print the URL
    again); only its SHA-256 is looked up. ``archive_agent`` is the agent whose token the site's template
    puts in its http archive (derived the same way from ``archive_nonce``): a read token never writes.
    """

    site = models.ForeignKey(
        "inventory.Site", on_delete=models.CASCADE, null=True, blank=True, related_name="psconfig_tokens"
    )
    nonce = models.CharField(max_length=64)
    archive_agent = models.ForeignKey(
        "inventory.Agent", on_delete=models.SET_NULL, null=True, blank=True, related_name="psconfig_tokens"
    )
    archive_nonce = models.CharField(max_length=64, blank=True)

    class Meta:
        ordering = ["site__code", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["site"],
                condition=Q(revoked_at__isnull=True),
                nulls_distinct=False,
                name="%(app_label)s_%(class)s_unique_active_site",
            )
        ]

    def __str__(self) -> str:
        return f"pSConfig {self.site.code if self.site_id else 'mesh'} {self.token_prefix}..."
