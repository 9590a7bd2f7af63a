from django.apps import AppConfig


class MaintenanceConfig(AppConfig):
    """Carriers' maintenance windows and what they affect."""

    name = "wanmon.maintenance"
    label = "maintenance"
    verbose_name = "Maintenance"
