from django.apps import AppConfig


class DashboardConfig(AppConfig):
    """The NOC web dashboard: server-rendered pages with Plotly charts, every asset served locally."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "wanmon.dashboard"
    label = "dashboard"
    verbose_name = "Dashboard"
