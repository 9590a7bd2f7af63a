from django.apps import AppConfig


class MeasurementsConfig(AppConfig):
    """Hypertables of measurements, the agent ingest, counter rates, rollups, retention and data-mining reads."""

    name = "wanmon.measurements"
    label = "measurements"
    verbose_name = "Measurements"
