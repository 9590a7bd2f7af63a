from django.apps import AppConfig


class AlertsConfig(AppConfig):
    """Alerting: incidents grouped by root cause, silences, inhibition, routing and the e-mail sent-log."""

    name = "wanmon.alerts"
    label = "alerts"
    verbose_name = "Alerts"
