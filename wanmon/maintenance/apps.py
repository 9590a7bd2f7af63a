from django.apps import AppConfig


class MaintenanceConfig(AppConfig):
    """Carriers' maintenance windows and what they affect."""

    name = "wanmon.maintenance"
    label = "maintenance"
    verbose_name = "Maintenance"

    def ready(self) -> None:
        from django.db.models.signals import post_save

        from wanmon.inventory.models import Circuit
        from wanmon.maintenance import checks  # noqa: F401 - registers the system checks
        from wanmon.maintenance.receivers import circuit_saved

        # Windows that named a circuit before the inventory had it are matched once it has (receivers.py says why).
        post_save.connect(circuit_saved, sender=Circuit, dispatch_uid="maintenance.circuit_saved")
