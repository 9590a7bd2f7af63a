"""The alerting settings (``ALERTS_*`` in wanmon/settings.py, read from the environment), with defaults."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from wanmon.diagnosis import codes

DEFAULTS = {
    "ALERTS_PROCESS_INTERVAL_S": 15,
    "ALERTS_GROUP_WAIT_S": 30,
    "ALERTS_GROUP_INTERVAL_S": 300,
    "ALERTS_REPEAT_INTERVAL_S": 4 * 3600,
    "ALERTS_RESOLVE_HOLD_S": 180,
    "ALERTS_SITE_INCIDENT_MIN_PATHS": 3,
    "ALERTS_MIN_SEVERITY": codes.WARNING,
    "ALERTS_SEND_RESOLVED": True,
    "ALERTS_SEND_RESOLVED_WHEN_MUTED": True,
    "ALERTS_DEFAULT_RECIPIENTS": [],
    "ALERTS_SILENCE_MAX_DURATION_S": 7 * 24 * 3600,
    "ALERTS_SILENCE_REMINDER_S": 3600,
    "ALERTS_REDISPATCH_AFTER_S": 120,
    "ALERTS_CELERY_QUEUE": None,
}


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

    def get(name):
        return getattr(settings, name, DEFAULTS[name])

    recipients = get("ALERTS_DEFAULT_RECIPIENTS")
    if isinstance(recipients, str):
        recipients = [r.strip() for r in recipients.split(",") if r.strip()]
    min_severity = str(get("ALERTS_MIN_SEVERITY")).lower()
    # Info findings never page, whatever the setting says.
    if codes.SEVERITY_ORDER.get(min_severity, 0) < codes.SEVERITY_ORDER[codes.WARNING]:
        min_severity = codes.WARNING
    return AlertSettings(
        process_interval_s=int(get("ALERTS_PROCESS_INTERVAL_S")),
        group_wait_s=int(get("ALERTS_GROUP_WAIT_S")),
        group_interval_s=int(get("ALERTS_GROUP_INTERVAL_S")),
        repeat_interval_s=int(get("ALERTS_REPEAT_INTERVAL_S")),
        resolve_hold_s=int(get("ALERTS_RESOLVE_HOLD_S")),
        site_incident_min_paths=max(2, int(get("ALERTS_SITE_INCIDENT_MIN_PATHS"))),
        min_severity=min_severity,
        send_resolved=bool(get("ALERTS_SEND_RESOLVED")),
        send_resolved_when_muted=bool(get("ALERTS_SEND_RESOLVED_WHEN_MUTED")),
        default_recipients=tuple(recipients),
        silence_max_duration_s=int(get("ALERTS_SILENCE_MAX_DURATION_S")),
        silence_reminder_s=int(get("ALERTS_SILENCE_REMINDER_S")),
        redispatch_after_s=int(get("ALERTS_REDISPATCH_AFTER_S")),
        celery_queue=get("ALERTS_CELERY_QUEUE") or None,
    )
