"""Read replica routing: the read side (dashboard pages, query API, findings lists) reads from a PostgreSQL
streaming replica when one is configured (``DATABASE_REPLICA_URL`` -> the ``replica`` alias); everything else,
and every write, goes to the primary.

Reads are routed per request, not per model: the ingest, the diagnosis and the alerting read what they are about
to write and must see their own writes, so only code running inside ``replica_reads()`` reads from the replica:
GET and HEAD requests through ``ReplicaReadsMiddleware`` (pages, the query and findings APIs), never
administration, log-in or health checks. Raw SQL of the read side takes its connection from
``read_connection()``. A replica lags the primary by its replay delay (usually well under a second): a page may
show a finding a moment late, never a wrong one.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings

REPLICA = "replica"
_reading = contextvars.ContextVar("wanmon_replica_reads", default=False)


def replica_configured() -> bool:
    return REPLICA in settings.DATABASES


@contextmanager
def replica_reads() -> Iterator[None]:
    """Within this block, ORM reads go to the replica (when configured); writes still go to the primary."""
    token = _reading.set(True)
    try:
        yield
    finally:
        _reading.reset(token)


# Requests never read from the replica: administration, log-in, health checks (they probe the primary).
PRIMARY_ONLY_PREFIXES = ("/admin/", "/accounts/", "/healthz", "/livez", "/readyz")
# Sessions, users and log-in throttling are read right after they are written (a log-in, then the next page).
PRIMARY_ONLY_APPS = frozenset({"sessions", "auth", "axes", "contenttypes", "admin"})


class ReplicaReadsMiddleware:
    """GET and HEAD requests (pages, the query and findings APIs) read from the replica when one is configured."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if (
            request.method in ("GET", "HEAD")
            and replica_configured()
            and not request.path.startswith(PRIMARY_ONLY_PREFIXES)
        ):
            with replica_reads():
                return self.get_response(request)
        return self.get_response(request)


def read_alias() -> str:
    """The alias raw SQL of the read side should use (``connections[read_alias()]``)."""
    return REPLICA if _reading.get() and replica_configured() else "default"


def read_connection():
    """The connection raw SQL of the read side uses: the replica inside ``replica_reads()``, else the primary."""
    from django.db import connections

    return connections[read_alias()]


class ReplicaRouter:
    """Django database router: reads inside ``replica_reads()`` -> ``replica``, all else -> ``default``."""

    def db_for_read(self, model, **hints):
        return "default" if model._meta.app_label in PRIMARY_ONLY_APPS else read_alias()

    def db_for_write(self, model, **hints):
        return "default"

    def allow_relation(self, obj1, obj2, **hints):
        return True  # the replica is a copy of the primary: objects from either relate

    def allow_migrate(self, db, app_label, model_name=None, **hints):
        return db == "default"  # a streaming replica is read-only; it follows the primary's schema
