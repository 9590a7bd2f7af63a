from django.apps import AppConfig


class OndemandConfig(AppConfig):
    """Tests on demand: jobs the site agents fetch over their own connection, the policy that protects production
    traffic, and the results linked to the findings and incidents they were asked for."""

    name = "wanmon.ondemand"
    label = "ondemand"
    verbose_name = "Tests on demand"

    def ready(self) -> None:
        # The ingest (measurements, below this app) links a record carrying a job_id to its job through a hook.
        # It also settles the diagnosis-driven tests on their findings in that transaction, and the diagnosis
        # (below too) asks for them through its own hook once a shard's findings are stored.
        from wanmon.diagnosis.hooks import findings_tester_set
        from wanmon.measurements.hooks import job_results_linker_set
        from wanmon.ondemand.diagnosis_tests import diagnosis_tests_queue, job_results_link_and_settle

        job_results_linker_set(job_results_link_and_settle)
        findings_tester_set(diagnosis_tests_queue)
