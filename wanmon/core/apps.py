from django.apps import AppConfig


class CoreConfig(AppConfig):
    """Cross-cutting pieces: TimescaleDB extension, health, home page, shared helpers."""

    name = "wanmon.core"
    label = "core"
    verbose_name = "wanmon core"

    def ready(self) -> None:
        from wanmon.core import schema  # noqa: F401 - registers the OpenAPI descriptions of our auth classes
        from wanmon.core.logfilters import logging_filters_install

        # Feed and pSConfig tokens are in URL paths: keep them out of the access and request logs of this process.
        logging_filters_install()
