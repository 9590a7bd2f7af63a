from django.apps import AppConfig


class OndemandConfig(AppConfig):
    """Tests on demand: jobs the site agents fetch over their own connection, the policy that protects production
    traffic, and the results linked to the findings and incidents they were asked for."""

    name = "wanmon.ondemand"
    label = "ondemand"
    verbose_name = "Tests on demand"

    def ready(self) -> None:
        # The ingest (measurements, below this app) links a record carrying a job_id to its job through a hook.
        from wanmon.measurements.hooks import job_results_linker_set
        from wanmon.ondemand.services import job_results_link

        job_results_linker_set(job_results_link)
