"""Thin Celery task of the tests on demand (beat schedule in settings.py)."""

from celery import shared_task
from django.utils import timezone

from wanmon.ondemand.diagnosis_tests import diagnosis_tests_expired
from wanmon.ondemand.services import jobs_expire


@shared_task(acks_late=True, autoretry_for=(Exception,), retry_backoff=15, retry_kwargs={"max_retries": 2})
def ondemand_jobs_expire_task() -> int:
    """Every 15 s: jobs no agent fetched, or whose result did not come in time, fail with the reason (a
    diagnosis-driven one also on its finding's trail)."""
    now = timezone.now()
    failed = jobs_expire(now=now)
    if failed:
        diagnosis_tests_expired(now=now)
    return failed
