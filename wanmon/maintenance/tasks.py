"""Thin Celery tasks of the maintenance app (beat schedule in settings.py)."""

from celery import shared_task
from django.utils import timezone

from wanmon.maintenance.imports import maintenance_sources_poll
from wanmon.maintenance.services import maintenance_window_rematch
from wanmon.maintenance.site_notices import site_notices_send


@shared_task(acks_late=True, autoretry_for=(Exception,), retry_backoff=30, retry_kwargs={"max_retries": 3})
def maintenance_notices_task() -> dict:
    """Every minute: the site notices due (advance, change, cancellation, "ended but still degraded"), each once."""
    return site_notices_send(now=timezone.now()).as_dict()


@shared_task(acks_late=True, autoretry_for=(Exception,), retry_backoff=60, retry_kwargs={"max_retries": 2})
def maintenance_sources_poll_task() -> dict:
    """Hourly: import the iCalendar URL of every enabled maintenance source."""
    return maintenance_sources_poll(now=timezone.now()).totals()


@shared_task(acks_late=True, autoretry_for=(Exception,), retry_backoff=30, retry_kwargs={"max_retries": 3})
def maintenance_window_rematch_task() -> int:
    """After the inventory gained or renamed circuits (receivers.py): match the windows' unmatched objects again."""
    return maintenance_window_rematch(now=timezone.now())
