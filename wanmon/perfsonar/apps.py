from django.apps import AppConfig


class PerfsonarConfig(AppConfig):
    """perfSONAR toolkits as sources: pScheduler's http archiver posts runs here, pSConfig templates go out."""

    name = "wanmon.perfsonar"
    label = "perfsonar"
    verbose_name = "perfSONAR"
