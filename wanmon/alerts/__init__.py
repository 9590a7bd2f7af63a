"""Alerting: from findings to the right e-mail, once per incident.

- ``grouping`` (pure): findings -> incidents by root cause (shared element over its symptom paths,
  maintenance window over what it explains, host over its pairs, many paths of one site, site pairs);
- ``policy`` (pure): silence matching, routing filters, the Alertmanager-like timers, the resolve hold (longer
  for an incident that came back after its resolution: ``resolve_hold_s``);
- ``services.alerts_process(now=...)``: the one processing run, called by ``tasks.alerts_process_task``
  (beat, every ALERTS_PROCESS_INTERVAL_S) and by ``manage.py replay --keep --notify`` through
  ``services.alerts_process_now`` (timers treated as elapsed, e-mails sent synchronously);
- ``silences``: create, change and expire silences;
- ``models.Notification``: the sent-log (what went to whom, when, and whether it was delivered);
- pages ``/incidents/``, ``/incidents/<id>``, ``/silences/``; API ``/api/v1/incidents``, ``silences``,
  ``notifications``, ``routing-rules``, ``subscriptions``.

Settings (environment variables of the same name, see ``conf.AlertSettings``): ALERTS_PROCESS_INTERVAL_S (15),
ALERTS_GROUP_WAIT_S (30), ALERTS_GROUP_INTERVAL_S (300), ALERTS_REPEAT_INTERVAL_S (14400), ALERTS_RESOLVE_HOLD_S
(180), ALERTS_SITE_INCIDENT_MIN_PATHS (3), ALERTS_MIN_SEVERITY (warning; info never pages), ALERTS_SEND_RESOLVED
(true), ALERTS_SEND_RESOLVED_WHEN_MUTED (true), ALERTS_DEFAULT_RECIPIENTS (comma list, used when nobody else
matches), ALERTS_SILENCE_MAX_DURATION_S (7 days), ALERTS_SILENCE_REMINDER_S (3600), ALERTS_REDISPATCH_AFTER_S (120),
ALERTS_CELERY_QUEUE (optional dedicated queue for the e-mail tasks). E-mail goes through Django's SMTP backend
(EMAIL_HOST, EMAIL_PORT, EMAIL_HOST_USER, EMAIL_HOST_PASSWORD, EMAIL_USE_TLS, DEFAULT_FROM_EMAIL); links use
WANMON_BASE_URL.
"""
