"""Choice sets of maintenance windows (BCOP maintenance-notification vocabulary)."""

from django.db import models


class Impact(models.TextChoices):
    """What a window does to an affected object; unknown is treated as outage."""

    NO_IMPACT = "no-impact", "No impact"
    REDUCED_REDUNDANCY = "reduced-redundancy", "Reduced redundancy"
    AT_RISK = "at-risk", "At risk"
    DEGRADED = "degraded", "Degraded"
    OUTAGE = "outage", "Outage"


# Impacts under which a degradation on the working path is expected (MAINTENANCE_EXPLAINED).
EXPLAINING_IMPACTS = frozenset({Impact.AT_RISK, Impact.DEGRADED, Impact.OUTAGE})

# From harmless to worst: the impact of a window on a path is the worst of its elements on that path.
IMPACT_ORDER = (Impact.NO_IMPACT, Impact.REDUCED_REDUNDANCY, Impact.AT_RISK, Impact.DEGRADED, Impact.OUTAGE)


class Status(models.TextChoices):
    """Lifecycle of a window (BCOP X-MAINTNOTE-STATUS)."""

    TENTATIVE = "tentative", "Tentative"
    CONFIRMED = "confirmed", "Confirmed"
    CANCELLED = "cancelled", "Cancelled"
    IN_PROCESS = "in-process", "In process"
    COMPLETED = "completed", "Completed"


# Statuses of work that is (still) going to happen or happening: the ones that explain and get notices.
LIVE_STATUSES = frozenset({Status.TENTATIVE, Status.CONFIRMED, Status.IN_PROCESS})


class Behaviour(models.TextChoices):
    """What wanmon does during a window on the paths it touches (when its impact explains a degradation)."""

    MUTE = "mute", "Mute: explain degradations, send no alert"
    SKIP = "skip", "Skip: also pause scheduled tests on the affected paths"
    RUN = "run", "Run: keep testing and alerting as usual (informational window)"


class Source(models.TextChoices):
    """How a window reached wanmon."""

    MANUAL = "manual", "Entered by hand"
    API = "api", "REST API"
    ICAL_FILE = "ical-file", "iCalendar file"
    ICAL_URL = "ical-url", "iCalendar URL"
    EMAIL = "email", "Carrier e-mail"
    MAILDIR = "maildir", "Mailbox directory"


class Review(models.TextChoices):
    """Whether a window may act (explain, mute, skip tests, notify): only an accepted one does.

    Windows from a source wanmon cannot trust (a sender on no carrier's list, DKIM/SPF not passing, a
    calendar of unknown origin) are held until an operator approves them: a forged notice must not
    silence a real outage.
    """

    ACCEPTED = "accepted", "Accepted"
    HELD = "held", "Held for review"
    REJECTED = "rejected", "Rejected"


class CarrierNotificationStatus(models.TextChoices):
    """Outcome of parsing one raw carrier notification."""

    PARSED = "parsed", "Parsed"
    PARTIAL = "partial", "Parsed with problems"
    FAILED = "failed", "Not parsed"


class EventKind(models.TextChoices):
    """Audit trail entries of a window."""

    CREATED = "created", "Created"
    UPDATED = "updated", "Updated"
    CANCELLED = "cancelled", "Cancelled"
    IGNORED = "ignored", "Older notification ignored"
    COMMENT = "comment", "Comment"
    NOTICE = "notice", "Notice sent"
    HELD = "held", "Held for review"
    REVIEWED = "reviewed", "Reviewed"


class SiteNoticeKind(models.TextChoices):
    """E-mails to the contacts of the sites a window touches."""

    ADVANCE = "advance", "Advance notice"
    CHANGED = "changed", "Window changed"
    CANCELLED = "cancelled", "Window cancelled"
    ENDED_DEGRADED = "ended-degraded", "Window ended, path still degraded"
