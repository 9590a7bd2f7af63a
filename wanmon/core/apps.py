from django.apps import AppConfig


class CoreConfig(AppConfig):
    """Cross-cutting pieces: TimescaleDB extension, health, home page, shared helpers."""

    name = "wanmon.core"
    label = "core"
    verbose_name = "wanmon core"
