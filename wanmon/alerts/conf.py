"""The alerting settings (``ALERTS_*`` in wanmon/settings.py, read from the environment, with their defaults there)."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from wanmon.diagnosis import codes


@dataclass(frozen=True)
class AlertSettings:
    """Timers (Alertmanager semantics) and policy of the alerting pipeline.

    - ``group_wait_s``: a new incident waits this long before its first e-mail, so that findings
      arriving together are sent together;
    - ``group_interval_s``: after an e-mail, new findings or a higher severity wait this long;
    - ``repeat_interval_s``: an unchanged, unacknowledged open incident is e-mailed again after this;
    - ``resolve_hold_s``: an incident whose findings all cleared is resolved only after this long
      without recurrence (flap damping: a finding that clears and returns sends nothing);
    - ``site_incident_min_paths``: this many degraded paths of one site become one site incident.
    """

    process_interval_s: int
    group_wait_s: int
    group_interval_s: int
    repeat_interval_s: int
    resolve_hold_s: int
    site_incident_min_paths: int
    min_severity: str
    send_resolved: bool
    send_resolved_when_muted: bool
    default_recipients: tuple[str, ...]
    silence_max_duration_s: int
    silence_reminder_s: int
    redispatch_after_s: int
    celery_queue: str | None

    @property
    def min_severity_rank(self) -> int:
        return codes.SEVERITY_ORDER.get(self.min_severity, codes.SEVERITY_ORDER[codes.WARNING])


def alert_settings() -> AlertSettings:
    """The current settings (read at each call, so that override_settings and env changes apply)."""

    recipients = settings.ALERTS_DEFAULT_RECIPIENTS
    if isinstance(recipients, str):
        recipients = [r.strip() for r in recipients.split(",") if r.strip()]
    min_severity = str(settings.ALERTS_MIN_SEVERITY).lower()
    # Info findings never page, whatever the setting says.
    if codes.SEVERITY_ORDER.get(min_severity, 0) < codes.SEVERITY_ORDER[codes.WARNING]:
        min_severity = codes.WARNING
    return AlertSettings(
        process_interval_s=int(settings.ALERTS_PROCESS_INTERVAL_S),
        group_wait_s=int(settings.ALERTS_GROUP_WAIT_S),
        group_interval_s=int(settings.ALERTS_GROUP_INTERVAL_S),
        repeat_interval_s=int(settings.ALERTS_REPEAT_INTERVAL_S),
        resolve_hold_s=int(settings.ALERTS_RESOLVE_HOLD_S),
        site_incident_min_paths=max(2, int(settings.ALERTS_SITE_INCIDENT_MIN_PATHS)),
        min_severity=min_severity,
        send_resolved=bool(settings.ALERTS_SEND_RESOLVED),
        send_resolved_when_muted=bool(settings.ALERTS_SEND_RESOLVED_WHEN_MUTED),
        default_recipients=tuple(recipients),
        silence_max_duration_s=int(settings.ALERTS_SILENCE_MAX_DURATION_S),
        silence_reminder_s=int(settings.ALERTS_SILENCE_REMINDER_S),
        redispatch_after_s=int(settings.ALERTS_REDISPATCH_AFTER_S),
        celery_queue=settings.ALERTS_CELERY_QUEUE or None,
    )
