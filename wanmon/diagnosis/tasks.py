"""Thin Celery tasks of the diagnosis."""

from celery import shared_task
from django.utils import timezone

from wanmon.alerts.tasks import alerts_process_task
from wanmon.diagnosis.services import diagnosis_run


@shared_task(acks_late=True, autoretry_for=(Exception,), retry_backoff=10, retry_kwargs={"max_retries": 3})
def diagnosis_run_task() -> dict:
    """Every minute: evaluate all paths with the evidence of the last hours and update the findings."""
    result = diagnosis_run(now=timezone.now())
    if result.opened or result.resolved:
        # New or cleared findings: let the alerting look at once instead of at its next beat (latency).
        alerts_process_task.delay()
    return {"opened": result.opened, "updated": len(result.updated), "resolved": result.resolved}
