"""Read-only checks of the services wanmon depends on (used by /healthz and /readyz)."""

from __future__ import annotations

import threading
import time
from dataclasses import asdict, dataclass, field

import redis
from django.conf import settings
from django.db import connection

HEARTBEAT_KEY = "wanmon:heartbeat:beat"


@dataclass
class ComponentStatus:
    ok: bool
    detail: dict = field(default_factory=dict)
    error: str | None = None

    def as_dict(self) -> dict:
        data = asdict(self)
        if data["error"] is None:
            del data["error"]
        return data


def database_status() -> ComponentStatus:
    """PostgreSQL reachable and TimescaleDB installed (with its version and licence edition)."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_setting('server_version')")
            pg_version = cursor.fetchone()[0]
            cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'timescaledb'")
            row = cursor.fetchone()
            cursor.execute("SELECT current_setting('timescaledb.license', true)")
            licence = cursor.fetchone()[0]
    except Exception as exc:  # any driver error means "down"; the message says why
        return ComponentStatus(ok=False, error=f"{type(exc).__name__}: {exc}".strip())
    if row is None:
        return ComponentStatus(ok=False, detail={"postgresql": pg_version}, error="timescaledb extension missing")
    return ComponentStatus(ok=True, detail={"postgresql": pg_version, "timescaledb": row[0], "license": licence})


def database_ping(timeout_ms: int = 1000) -> ComponentStatus:
    """The database answers ``SELECT 1`` within ``timeout_ms`` (for /readyz: cheap, no catalogue reads)."""
    try:
        with connection.cursor() as cursor:
            cursor.execute(f"SET statement_timeout = {int(timeout_ms)}")
            try:
                cursor.execute("SELECT 1")
            finally:
                cursor.execute("RESET statement_timeout")
    except Exception as exc:
        return ComponentStatus(ok=False, error=f"{type(exc).__name__}: {exc}".strip())
    return ComponentStatus(ok=True)


def redis_client() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=1.0, socket_timeout=1.0)


def redis_status() -> ComponentStatus:
    """Redis answers PING."""
    try:
        client = redis_client()
        started = time.monotonic()
        client.ping()
        return ComponentStatus(ok=True, detail={"ping_ms": round((time.monotonic() - started) * 1000, 2)})
    except Exception as exc:
        return ComponentStatus(ok=False, error=f"{type(exc).__name__}: {exc}")


def celery_status(timeout_s: float = 1.0) -> ComponentStatus:
    """At least one Celery worker answers a broadcast ping; also reports the age of beat's last heartbeat."""
    from wanmon.celery import app

    try:
        replies = app.control.ping(timeout=timeout_s) or []
    except Exception as exc:
        return ComponentStatus(ok=False, error=f"{type(exc).__name__}: {exc}")
    workers = sorted(name for reply in replies for name in reply)
    detail: dict = {"workers": workers}
    try:
        beat = redis_client().get(HEARTBEAT_KEY)
        detail["beat_heartbeat_age_s"] = round(time.time() - float(beat), 1) if beat else None
    except Exception:
        detail["beat_heartbeat_age_s"] = None
    if not workers:
        return ComponentStatus(ok=False, detail=detail, error="no Celery worker answered ping")
    return ComponentStatus(ok=True, detail=detail)


# A broadcast ping waits its whole timeout for replies, so one check costs a web thread a second. The answer
# is kept for CELERY_STATUS_TTL_S and computed by one thread at a time: a burst of health requests (a
# load balancer, a monitoring system, someone's script) costs one ping, not a thread each.
CELERY_STATUS_TTL_S = 10.0
_celery_lock = threading.Lock()
_celery_cached: tuple[float, ComponentStatus] | None = None


def celery_status_shared(now: float | None = None) -> ComponentStatus:
    """celery_status() at most once per CELERY_STATUS_TTL_S per process; others get the last answer."""
    global _celery_cached
    now = time.monotonic() if now is None else now
    cached = _celery_cached
    if cached is not None and now - cached[0] < CELERY_STATUS_TTL_S:
        return cached[1]
    if not _celery_lock.acquire(blocking=cached is None):
        return cached[1]  # another thread is pinging: the previous answer is fresh enough meanwhile
    try:
        cached = _celery_cached
        if cached is not None and now - cached[0] < CELERY_STATUS_TTL_S:
            return cached[1]
        status = celery_status()
        # Only a success is kept for the TTL. A failure is the answer of the moment: the next request pings again
        # (one thread at a time; the others get this answer meanwhile), so a worker that has just come up is seen
        # at once by every web process, not 10 s later by those that asked before it was up.
        _celery_cached = (time.monotonic() if status.ok else now - CELERY_STATUS_TTL_S, status)
        return status
    finally:
        _celery_lock.release()


def celery_status_forget() -> None:
    """Drop the kept Celery answer (tests that stop or start a worker)."""
    global _celery_cached
    _celery_cached = None


def health_report() -> tuple[bool, dict]:
    """Overall health: every component must be ok."""
    components = {"database": database_status(), "redis": redis_status(), "celery": celery_status_shared()}
    ok = all(c.ok for c in components.values())
    return ok, {"status": "ok" if ok else "error", **{k: v.as_dict() for k, v in components.items()}}
