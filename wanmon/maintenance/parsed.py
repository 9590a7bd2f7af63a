"""What a parser makes of a carrier notice (pure: no Django), and the BCOP vocabulary normalisers."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, tzinfo
from urllib.parse import urlsplit

from wanmon.core.guard import one_line

# BCOP X-MAINTNOTE-IMPACT values (and the spellings carriers and parsers use) -> wanmon Impact values.
_IMPACTS = {
    "no-impact": "no-impact",
    "none": "no-impact",
    "no-service-impact": "no-impact",
    "reduced-redundancy": "reduced-redundancy",
    "at-risk": "at-risk",
    "degraded": "degraded",
    "outage": "outage",
}
# BCOP X-MAINTNOTE-STATUS (plus circuit-maintenance-parser's RE-SCHEDULED / NO-CHANGE) -> wanmon Status.
_STATUSES = {
    "tentative": "tentative",
    "confirmed": "confirmed",
    "cancelled": "cancelled",
    "canceled": "cancelled",
    "in-process": "in-process",
    "completed": "completed",
    "re-scheduled": "confirmed",
    "rescheduled": "confirmed",
}
NO_CHANGE = "no-change"
# From harmless to worst: the one ranking of impacts (the impact of a window on a path is the worst of its
# elements on that path, ``impact_worst``).
IMPACT_ORDER = ("no-impact", "reduced-redundancy", "at-risk", "degraded", "outage")


def _token(value: object) -> str:
    return str(value or "").strip().lower().replace("_", "-").replace(" ", "-")


def impact_normalise(value: object) -> str:
    """A BCOP impact as wanmon stores it. Empty, x-name and unknown values mean outage (BCOP 3.6.5)."""
    return _IMPACTS.get(_token(value), "outage")


def impact_worst(impacts: Iterable[str]) -> str:
    """The worst of some impacts (outage when there are none: unknown means outage)."""
    values = [impact_normalise(i) for i in impacts]
    return max(values, key=IMPACT_ORDER.index) if values else "outage"


def status_normalise(value: object) -> str | None:
    """A BCOP status as wanmon stores it; None when absent, NO-CHANGE or unknown (keep what is known)."""
    return _STATUSES.get(_token(value))


def utc(moment: datetime | date, *, default_tz: tzinfo = UTC) -> datetime:
    """An aware UTC datetime; dates are midnight, naive (floating) times are read in ``default_tz``."""
    if not isinstance(moment, datetime):
        moment = datetime.combine(moment, time(0, 0))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=default_tz)
    return moment.astimezone(UTC)


def http_url(value: object) -> str:
    """``value`` when it is an absolute http(s) URL with a host, else "".

    Carriers' links (ALTREP) end up in pages and in calendars other people open: a ``javascript:`` or
    ``data:`` link there runs script in a reader's session, so only http and https are ever kept.
    """
    text = str(value or "").strip()
    if not text or len(text) > 1000 or any(ord(c) < 0x21 or c in '"<>\\`' for c in text):
        return ""
    try:
        parts = urlsplit(text)
    except ValueError:
        return ""
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return ""
    return text


def compact(identifier: str) -> str:
    """A circuit id without whitespace and case: '/OGYX/123456/   /ZYO /' and '/ogyx/123456//zyo/' are one."""
    return "".join(str(identifier).split()).lower()


@dataclass(frozen=True)
class ParsedObject:
    """An announced object (X-MAINTNOTE-OBJECT-ID): the carrier's id, its own impact if given, its ALTREP."""

    object_id: str
    impact: str | None = None
    altrep: str = ""


@dataclass(frozen=True)
class ParsedWindow:
    """One maintenance window read from a carrier notice, times in UTC.

    ``uid`` is empty and ``sequence`` None when the source has none (a carrier e-mail without
    iCalendar): then the notice's stamp alone orders updates. ``status`` None means "not
    given / no change".
    """

    reference: str
    start: datetime
    end: datetime
    impact: str = "outage"
    status: str | None = None
    aliases: tuple[str, ...] = ()
    uid: str = ""
    sequence: int | None = None
    stamp: datetime | None = None
    source_tz: str = "UTC"
    objects: tuple[ParsedObject, ...] = ()
    provider: str = ""
    account: str = ""
    organizer: str = ""
    summary: str = ""
    description: str = ""
    rrule: str = ""
    parser: str = ""
    problems: tuple[str, ...] = ()
    bcop: bool = True  # False: a plain calendar event without X-MAINTNOTE properties

    def __post_init__(self):
        # A carrier's reference (an .ics \n escape, a folded e-mail header) becomes one line: it goes into e-mail
        # headers and log lines (wanmon/core/guard.py); a whole notice is not refused for it.
        object.__setattr__(self, "reference", one_line(self.reference))
        object.__setattr__(self, "aliases", tuple(one_line(a) for a in self.aliases))


@dataclass
class ParseResult:
    """Every window one carrier notice yields, the parser used, and what could not be read."""

    windows: list[ParsedWindow] = field(default_factory=list)
    parser: str = ""
    problems: list[str] = field(default_factory=list)
    sender: str = ""
    subject: str = ""
    message_id: str = ""
    content_type: str = ""
    # Authentication-Results headers of an e-mail, topmost (the receiving MTA's) first.
    authentication_results: tuple[str, ...] = ()
    # What an e-mail itself says, to check a parser's reading against (plausibility.py): its Date header (UTC)
    # and its subject and text (HTML without tags), empty for a calendar.
    date: datetime | None = None
    text: str = ""
