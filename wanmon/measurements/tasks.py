"""Thin Celery tasks of the measurements app: arguments are ids and ISO times, bodies call services."""

from __future__ import annotations

from datetime import datetime

from celery import shared_task

from wanmon.measurements.rollups import retention_apply
from wanmon.measurements.services import measurements_process


@shared_task(autoretry_for=(Exception,), retry_backoff=5, retry_kwargs={"max_retries": 5}, acks_late=True)
def measurements_process_task(interface_since: dict[str, str]) -> dict:
    """Rates and rollups after an ingest batch committed."""
    done = measurements_process(interface_since={int(k): datetime.fromisoformat(v) for k, v in interface_since.items()})
    return {"rates": done.rates, "discontinuities": done.discontinuities}


@shared_task(acks_late=True)
def retention_apply_task() -> dict:
    """Daily: drop chunks older than each table's retention."""
    return retention_apply()
