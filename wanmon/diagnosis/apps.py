from django.apps import AppConfig


class DiagnosisConfig(AppConfig):
    """The expert system: evidence, rules, correlation, findings and their lifecycle, scenario replay."""

    name = "wanmon.diagnosis"
    label = "diagnosis"
    verbose_name = "Diagnosis"
