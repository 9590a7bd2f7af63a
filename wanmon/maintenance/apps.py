from django.apps import AppConfig


class MaintenanceConfig(AppConfig):
    """Carriers' maintenance windows and what they affect."""

    name = "wanmon.maintenance"
    label = "maintenance"
    verbose_name = "Maintenance"

    def ready(self) -> None:
        # Feed tokens are in URL paths: keep them out of the access and request logs of this process.
        from wanmon.maintenance import checks  # noqa: F401 - registers the system checks
        from wanmon.maintenance.logfilters import logging_filters_install

        logging_filters_install()
