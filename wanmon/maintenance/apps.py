from django.apps import AppConfig


class MaintenanceConfig(AppConfig):
    """Carriers' maintenance windows and what they affect."""

    name = "wanmon.maintenance"
    label = "maintenance"
    verbose_name = "Maintenance"

    def ready(self) -> None:
        from wanmon.maintenance import checks  # noqa: F401 - registers the system checks
