"""The case memory: an incident resolved with its cause becomes a case; a new incident is compared with the cases
(``similarity``, pure and explained) and the closest ones are shown on its page, in its e-mails and in the API.
Operators also keep notes and hypotheses on an incident; the next e-mail of its thread carries them.

The app sits above the alerting (it reads incidents); the alerting reaches it only through
``wanmon.alerts.hooks``, whose providers ``apps.CasesConfig.ready`` registers. docs/cases.md says how a case is
matched.
"""
