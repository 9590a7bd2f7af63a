from django.apps import AppConfig


class DiagnosisConfig(AppConfig):
    """The expert system: evidence, rules, correlation, findings and their lifecycle, scenario replay."""

    name = "wanmon.diagnosis"
    label = "diagnosis"
    verbose_name = "Diagnosis"

    def ready(self) -> None:
        # The maintenance app may not import the diagnosis (it sits below it): its "ended but still degraded"
        # notice asks through a hook, answered here.
        from wanmon.diagnosis.maintenance_windows import paths_degraded_since
        from wanmon.maintenance.hooks import degraded_paths_provider_set

        degraded_paths_provider_set(paths_degraded_since)
