"""Dispatch through real Celery workers to the real SMTP server: retries, redelivery and worker crashes never
lose an e-mail and never send one twice."""

import os
import signal
import time
from datetime import timedelta
from pathlib import Path

import pytest

from tests.alerts.conftest import FZK, NOC, SCENARIO_NOW
from tests.alerts.test_pipeline import replay_at
from wanmon.alerts.models import Notification
from wanmon.alerts.services import alerts_process
from wanmon.alerts.tasks import alerts_send_notification_task

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]
T = SCENARIO_NOW


def _pool_child(pid: int) -> int:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        if children:
            return int(children[0])
        time.sleep(0.1)
    raise AssertionError("the worker has no pool process")


def _wait_status(notification_id: int, status: str, timeout_s: float) -> Notification:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        n = Notification.objects.get(pk=notification_id)
        if n.status == status:
            return n
        time.sleep(0.1)
    return Notification.objects.get(pk=notification_id)


def test_notifications_are_sent_by_the_worker_after_commit_and_a_redelivered_task_sends_nothing(smtp, worker_factory):
    worker_factory()
    replay_at(FZK, T)
    result = alerts_process(now=T, flush=True)  # enqueued for the worker once committed
    (notification_id,) = result.notifications

    (mail,) = smtp.wait_for(1, 30)
    assert mail.rcpt_tos == [NOC] and "geant-fra" in mail.subject
    assert _wait_status(notification_id, "sent", 10).status == "sent"
    again = [alerts_send_notification_task.apply_async((notification_id,), queue=worker_factory.queue)
             for _ in range(2)]
    assert [r.get(timeout=30) for r in again] == ["sent", "sent"]
    assert len(smtp.wait_for(2, 2)) == 1
    assert Notification.objects.get().attempts == 1


def test_a_worker_killed_in_the_middle_of_sending_loses_nothing_and_duplicates_nothing(smtp, worker_factory, settings):
    settings.ALERTS_REDISPATCH_AFTER_S = 0
    worker = worker_factory()
    replay_at(FZK, T)
    smtp.stall_next_rcpt = True
    (notification_id,) = alerts_process(now=T, flush=True).notifications
    assert smtp.rcpt_stalled.wait(30), "the worker never started sending"

    worker.kill()  # SIGKILL worker and pool process while they hold the row in the SMTP dialogue
    smtp.release.set()
    assert smtp.wait_for(1, 1) == []
    crashed = Notification.objects.get(pk=notification_id)
    assert (crashed.status, crashed.attempts, crashed.sent_at) == ("pending", 0, None)  # rolled back

    worker_factory()  # the restarted worker
    # The broker hands the lost task back only after its visibility timeout; the beat's next run re-enqueues
    # what was dispatched but never sent.
    assert alerts_process(now=T + timedelta(minutes=1)).redispatched == [notification_id]
    (mail,) = smtp.wait_for(1, 60)
    assert mail.rcpt_tos == [NOC]
    # ... and when the original task does come back, it finds the notification sent.
    late = alerts_send_notification_task.apply_async((notification_id,), queue=worker_factory.queue)
    assert late.get(timeout=60) == "sent"
    assert len(smtp.wait_for(2, 2)) == 1
    sent = Notification.objects.get(pk=notification_id)
    assert (sent.status, sent.attempts) == ("sent", 1)


def test_a_pool_process_killed_mid_send_is_redelivered_and_sends_once(smtp, worker_factory):
    """acks_late + reject_on_worker_lost: Celery redelivers at once; the row lock makes the retry the only send."""
    worker = worker_factory()
    replay_at(FZK, T)
    smtp.stall_next_rcpt = True
    (notification_id,) = alerts_process(now=T, flush=True).notifications
    assert smtp.rcpt_stalled.wait(30)
    os.kill(_pool_child(worker.proc.pid), signal.SIGKILL)
    smtp.release.set()
    (mail,) = smtp.wait_for(1, 60)
    assert mail.rcpt_tos == [NOC]
    assert _wait_status(notification_id, "sent", 10).attempts == 1
    assert len(smtp.wait_for(2, 3)) == 1
