from django.apps import AppConfig


class SharingConfig(AppConfig):
    """Evidence shared with a carrier: read-only links to an incident's verdict, scoped to that carrier."""

    name = "wanmon.sharing"
    label = "sharing"
    verbose_name = "Sharing"

    def ready(self) -> None:
        # The alerting sits below this app and may not import it: its carrier's copy of an e-mail asks for the
        # link through a hook, answered here.
        from wanmon.alerts.hooks import carrier_links_provider_set
        from wanmon.sharing.services import share_links_for_email

        carrier_links_provider_set(share_links_for_email)
