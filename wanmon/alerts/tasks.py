"""Thin Celery tasks of the alerting pipeline."""

from celery import shared_task
from django.utils import timezone

from wanmon.alerts.constants import SEND_BUSY_RETRY_S, SEND_TASK_MAX_RETRIES, SEND_TASK_NAME
from wanmon.alerts.services import BUSY, NotificationSendError, alerts_process, notification_send


@shared_task(ignore_result=True)
def alerts_process_task() -> dict:
    """Every ALERTS_PROCESS_INTERVAL_S: group findings into incidents, apply silences and timers, enqueue e-mails."""
    return alerts_process(now=timezone.now()).as_dict()


@shared_task(
    name=SEND_TASK_NAME,
    bind=True,
    acks_late=True,
    autoretry_for=(NotificationSendError,),
    retry_backoff=30,
    retry_backoff_max=900,
    retry_jitter=True,
    max_retries=SEND_TASK_MAX_RETRIES,
)
def alerts_send_notification_task(self, notification_id: int) -> str:
    """Send one e-mail of the sent-log; a notification already sent (or being sent) is not sent again."""
    outcome = notification_send(notification_id=notification_id)
    if outcome == BUSY:
        raise self.retry(countdown=SEND_BUSY_RETRY_S)
    return outcome
