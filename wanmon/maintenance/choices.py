"""Choice sets of maintenance windows (the BCOP vocabulary of carriers' maintenance notices)."""

from wanmon.core.choices import text_choices

Impact = text_choices("Impact", {
    "no-impact": "No impact",
    "reduced-redundancy": "Reduced redundancy",
    "at-risk": "At risk",
    "degraded": "Degraded",
    "outage": "Outage",
}, doc="What a window does to an affected object; unknown is treated as outage.")


# Impacts under which a degradation on the working path is expected (MAINTENANCE_EXPLAINED).
EXPLAINING_IMPACTS = frozenset({Impact.AT_RISK, Impact.DEGRADED, Impact.OUTAGE})
# The order of impacts, from harmless to worst, is parsed.IMPACT_ORDER (with impact_worst, the one ranking).


Status = text_choices("Status", {
    "tentative": "Tentative",
    "confirmed": "Confirmed",
    "cancelled": "Cancelled",
    "in-process": "In process",
    "completed": "Completed",
}, doc="Lifecycle of a window (BCOP X-MAINTNOTE-STATUS).")


# Statuses of work that is (still) going to happen or happening: the ones that explain and get notices.
LIVE_STATUSES = frozenset({Status.TENTATIVE, Status.CONFIRMED, Status.IN_PROCESS})


Behaviour = text_choices("Behaviour", {
    "mute": "Mute: explain degradations, send no alert",
    "skip": "Skip: also pause scheduled tests on the affected paths",
    "run": "Run: keep testing and alerting as usual (informational window)",
}, doc="What wanmon does during a window on the paths it touches (when its impact explains a degradation).")


Source = text_choices("Source", {
    "manual": "Entered by hand",
    "api": "REST API",
    "ical-file": "iCalendar file",
    "ical-url": "iCalendar URL",
    "email": "Carrier e-mail",
    "maildir": "Mailbox directory",
}, doc="How a window reached wanmon.")


Review = text_choices("Review", {
    "accepted": "Accepted",
    "held": "Held for review",
    "rejected": "Rejected",
}, doc=(
    "Whether a window may act (explain, mute, skip tests, notify): only an accepted one does. Windows from a source "
    "wanmon cannot trust (a sender on no carrier's list, DKIM/SPF not passing, a calendar of unknown origin) are "
    "held until an operator approves them: a forged notice must not silence a real outage."
))


CarrierNoticeStatus = text_choices("CarrierNoticeStatus", {
    "parsed": "Parsed",
    "partial": "Parsed with problems",
    "failed": "Not parsed",
}, doc="Outcome of parsing one raw carrier notice.")


EventKind = text_choices("EventKind", {
    "created": "Created",
    "updated": "Updated",
    "cancelled": "Cancelled",
    "ignored": "Older carrier notice ignored",
    "comment": "Comment",
    "notice": "Site notice sent",
    "held": "Held for review",
    "reviewed": "Reviewed",
}, doc="Audit trail entries of a window.")


SiteNoticeKind = text_choices("SiteNoticeKind", {
    "advance": "Advance notice",
    "changed": "Window changed",
    "cancelled": "Window cancelled",
    "ended-degraded": "Window ended, path still degraded",
}, doc="E-mails to the contacts of the sites a window touches.")
