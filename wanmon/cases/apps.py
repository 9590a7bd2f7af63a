from django.apps import AppConfig


class CasesConfig(AppConfig):
    """The case memory: solved incidents with their cause, similar cases, notes and hypotheses."""

    name = "wanmon.cases"
    label = "cases"
    verbose_name = "Case memory"

    def ready(self) -> None:
        # The alerting's pages, API and e-mails show similar cases and notes through its hooks (it must not import
        # this app, which sits above it).
        from wanmon.alerts import hooks
        from wanmon.cases import selectors, services, views

        hooks.case_memory_provider_set(
            hooks.CaseMemory(
                similar_cases=selectors.similar_case_rows,
                page_context=views.incident_page_context,
                notes_for_mail=selectors.note_rows_unmailed,
                notes_mailed=services.incident_notes_mark_mailed,
            )
        )
