"""Thin Celery tasks of the diagnosis: the minute's cycle fans out into shards the workers take; the hourly prune
keeps the cycle rows to the last two days."""

import socket
from datetime import UTC, datetime

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from wanmon.alerts.tasks import alerts_process_task
from wanmon.diagnosis.shards import diagnosis_cycle_open, diagnosis_cycles_prune, diagnosis_shard_evaluate


@shared_task(bind=True, acks_late=True, autoretry_for=(Exception,), retry_backoff=10, retry_kwargs={"max_retries": 3})
def diagnosis_run_task(self, at: str | None = None) -> dict:
    """Every minute: plan a cycle (the paths with new evidence or open findings) and queue one task per shard,
    plus the elements shard, on the queue this task came from (Celery spreads them over the workers).
    ``at`` (ISO 8601) evaluates as of that time instead of now (a benchmark of stored data, a re-run)."""
    now = datetime.fromisoformat(at) if at else timezone.now()
    if timezone.is_naive(now):
        now = timezone.make_aware(now, UTC)
    plan = diagnosis_cycle_open(now=now)
    queue = (self.request.delivery_info or {}).get("routing_key")
    options = {"queue": queue} if queue else {}
    # the elements shard first: it is the longest (every interface no path crosses), and taken last it would run
    # alone after the path shards, one worker busy and the others idle
    diagnosis_shard_task.apply_async((plan.cycle_id, [], True), **options)
    for shard in plan.shards:
        diagnosis_shard_task.apply_async((plan.cycle_id, shard), **options)
    return {"cycle": plan.cycle_id, "planned": plan.planned, "shards": len(plan.shards) + 1}


@shared_task(bind=True, acks_late=True, autoretry_for=(Exception,), retry_backoff=5, retry_kwargs={"max_retries": 3})
def diagnosis_shard_task(self, cycle_id: int, path_ids: list[int], elements: bool = False) -> dict:
    """Evaluate one shard of a cycle (path version ids) and store its findings."""
    worker = self.request.hostname or socket.gethostname()
    result = diagnosis_shard_evaluate(
        cycle_id=cycle_id, path_ids=path_ids, elements=elements, worker=worker,
        tests=settings.WANMON_DIAGNOSIS_TESTS,
    )  # fmt: skip
    if result is None:
        return {"cycle": cycle_id, "skipped": True}
    if result.opened or result.resolved:
        # New or cleared findings: let the alerting look at once instead of at its next beat (latency).
        alerts_process_task.delay()
    return {"cycle": cycle_id, "opened": result.opened, "updated": len(result.updated), "resolved": result.resolved}


@shared_task(acks_late=True, autoretry_for=(Exception,), retry_backoff=60, retry_kwargs={"max_retries": 3})
def diagnosis_cycles_prune_task() -> dict:
    """Every hour: delete the cycle rows older than two days (one a minute would otherwise grow forever); the
    path evaluations of a pruned cycle keep their time and lose only the link (``on_delete=SET_NULL``)."""
    return {"deleted": diagnosis_cycles_prune(now=timezone.now())}
