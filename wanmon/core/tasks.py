"""Thin Celery tasks of the core app."""

import time

from celery import shared_task

from wanmon.core.selectors import HEARTBEAT_KEY, redis_client


@shared_task(ignore_result=True)
def heartbeat_task() -> None:
    """Scheduled by beat every minute: lets /healthz tell how long ago beat last fired."""
    redis_client().set(HEARTBEAT_KEY, str(time.time()), ex=3600)


@shared_task
def echo_task(value):
    """Round-trip probe: returns its argument (used by the test suite and operators' smoke checks)."""
    return value
