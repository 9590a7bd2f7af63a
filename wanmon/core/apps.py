from django.apps import AppConfig


class CoreConfig(AppConfig):
    """Cross-cutting pieces: TimescaleDB extension, health, home page, shared helpers."""

    name = "wanmon.core"
    label = "core"
    verbose_name = "wanmon core"

    def ready(self) -> None:
        from wanmon.core import schema  # noqa: F401 - registers the OpenAPI descriptions of our auth classes
