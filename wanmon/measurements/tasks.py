"""Thin Celery tasks of the measurements app: arguments are ids and ISO times, bodies call services."""

from __future__ import annotations

import logging
import threading
import time
from datetime import datetime

from celery import shared_task

from wanmon.measurements.rollups import retention_apply
from wanmon.measurements.services import measurements_catch_up, measurements_process

logger = logging.getLogger(__name__)


# ignore_result: nobody reads it, and storing it makes every enqueue from an ingest thread subscribe to the result
# backend first (which retries for long when Redis does not answer).
@shared_task(
    autoretry_for=(Exception,), retry_backoff=5, retry_kwargs={"max_retries": 5}, acks_late=True, ignore_result=True
)
def measurements_process_task(interface_since: dict[str, str]) -> dict:
    """Rates and rollups after an ingest batch committed (if this is lost, measurements_catch_up_task redoes it)."""
    done = measurements_process(interface_since={int(k): datetime.fromisoformat(v) for k, v in interface_since.items()})
    return {"rates": done.rates, "discontinuities": done.discontinuities}


@shared_task(acks_late=True)
def measurements_catch_up_task() -> dict:
    """Every minute: recompute interfaces whose samples are newer than their watermark (work lost in the broker)."""
    done = measurements_catch_up()
    if done.interfaces:
        logger.warning(
            "rates and rollups caught up",
            extra={"interfaces": done.interfaces, "rates": done.rates, "max_behind_s": max(done.behind_s.values())},
        )
    return {"interfaces": done.interfaces, "rates": done.rates, "discontinuities": done.discontinuities}


@shared_task(acks_late=True)
def retention_apply_task() -> dict:
    """Daily (crontab): drop chunks older than each table's retention."""
    return retention_apply()


# After a failed enqueue (broker down or blackholed) the next uploads do not try again for this long: each attempt
# costs up to the broker's socket timeouts in an ingest thread, and the catch-up computes what is not enqueued.
ENQUEUE_PAUSE_AFTER_FAILURE_S = 30.0
_enqueue_state = {"paused_until": 0.0}
_enqueue_lock = threading.Lock()


def measurements_process_enqueue(interface_since: dict[int, datetime], *, batch_id: str = "") -> bool:
    """Queue rates and rollups after an ingest commit; False (logged) when the broker cannot take it.

    Never raises and never retries: the samples are committed, and the catch-up (``measurements_catch_up_task``)
    computes their rates from the watermark when the broker is back, so a broker outage must not slow ingest.
    """
    if not interface_since:
        return True
    with _enqueue_lock:
        if time.monotonic() < _enqueue_state["paused_until"]:
            return False
    try:
        since = {str(k): v.isoformat() for k, v in interface_since.items()}
        # argsrepr: Celery would otherwise repr the whole mapping into the message headers on every upload.
        measurements_process_task.apply_async((since,), argsrepr=f"({len(since)} interfaces)", retry=False)
    except Exception as exc:
        with _enqueue_lock:
            _enqueue_state["paused_until"] = time.monotonic() + ENQUEUE_PAUSE_AFTER_FAILURE_S
        logger.warning(
            "could not enqueue measurement processing; the catch-up will compute it",
            extra={
                "batch_id": batch_id,
                "interfaces": len(interface_since),
                "error": f"{type(exc).__name__}: {exc}",
                "paused_s": ENQUEUE_PAUSE_AFTER_FAILURE_S,
            },
        )
        return False
    return True
