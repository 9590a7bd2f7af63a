"""Whether a window read from an e-mail has believable times (pure: no Django).

A parser that misreads a notice makes a window with wrong times, and a wrong window mutes real alerts
(circuit-maintenance-parser read Cogent's "10:00pm CT 11/3/2022" as 11 March: a 726-hour window). The
notice itself says enough to notice such readings, so a window is doubted, and held for review with the
reasons, when:

- it is far longer than the notice says: longer than a day and than ``DURATION_SLACK`` times the
  longest duration the text names ("Expected Outage/Downtime: 7 hours", "8 Days 23 Hours");
- it is far from the notice's own date (the e-mail's Date header): it starts more than
  ``AHEAD_MAX`` after it, or ended more than ``BEHIND_MAX`` before it;
- its start or end is the other reading of a numeric date of the text: the text writes dates month
  first (a date such as 11/25/2022 says so, or US time zones such as CT when none does) and names
  11/3/2022, and the parser read 11 March and no date the text names; or the other way round.

Each reason says what the notice says and what the parser read. A window without doubts is left to
the trust rules (``trust.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from wanmon.maintenance.parsed import ParsedWindow

__all__ = [
    "AHEAD_MAX", "BEHIND_MAX", "DURATION_SLACK", "TextDates", "text_dates", "text_longest_duration", "window_doubts",
]

#: A window may be this many times longer than the longest duration its notice names (and always a day).
DURATION_SLACK = 4
DURATION_FREE = timedelta(days=1)
#: A notice announces work at most this long ahead of its date ...
AHEAD_MAX = timedelta(days=180)
#: ... and tells of work that ended at most this long before it (a late completion notice, a forward).
BEHIND_MAX = timedelta(days=60)
#: A parsed UTC date may be a day off the local date the text names.
DATE_SLACK = timedelta(days=1)

_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_NUMERIC = re.compile(r"(?<![\d/.-])(\d{1,2})([/.-])(\d{1,2})\2(\d{4})(?![\d/.-]*\d)")
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})")
_DAY_MONTH = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?[\s-]+{_MONTH}[\s,-]+(\d{{4}})\b", re.IGNORECASE)
_MONTH_DAY = re.compile(rf"\b{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.IGNORECASE)
# Time zones of the US (month-first dates), as notices write them.
_US_ZONE = re.compile(
    r"\b(?:[ECMP][SD]?T|AKST|AKDT|HST)\b|\b(?:Eastern|Central|Mountain|Pacific)(?: (?:Standard|Daylight))? Time\b"
)
_DURATION = re.compile(r"\b(\d+(?:[.,]\d+)?)\s*(days?|hours?|hrs?|minutes?|mins?)\b", re.IGNORECASE)
_UNIT = {"d": timedelta(days=1), "h": timedelta(hours=1), "m": timedelta(minutes=1)}


def _day(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def text_longest_duration(text: str) -> timedelta | None:
    """The longest duration the text names ("7 hours", "8 Days", "30 minutes"), None when it names none."""
    longest = None
    for number, unit in _DURATION.findall(text):
        value = _UNIT[unit[0].lower()] * float(number.replace(",", "."))
        if value and (longest is None or value > longest):
            longest = value
    return longest


@dataclass(frozen=True)
class TextDates:
    """The dates a text names, and the other reading of its ambiguous numeric dates."""

    named: frozenset[date]
    #: the other reading of 11/3/2022 -> ("11/3/2022", the date the text means)
    swapped: dict[date, tuple[str, date]]
    order: str  # "month first", "day first" or "" (the text does not say)


def text_dates(text: str) -> TextDates:
    """The dates the text names, numeric ones in the text's own order.

    The order (day or month first) is what the unambiguous numeric dates say (a part above 12) when they
    agree, else month first when the text names a US time zone. Without either, both readings of 11/3/2022
    are dates it may name, and none is the other reading.
    """
    numeric = [(int(m.group(1)), int(m.group(3)), int(m.group(4)), m.group(0)) for m in _NUMERIC.finditer(text)]
    day_first = any(a > 12 >= b for a, b, _, _ in numeric)
    month_first = any(b > 12 >= a for a, b, _, _ in numeric)
    if day_first == month_first:  # neither or both: the zones may tell
        day_first, month_first = False, not day_first and bool(_US_ZONE.search(text))
    named: set[date] = set()
    swapped: dict[date, tuple[str, date]] = {}
    for a, b, year, written in numeric:
        meant = _day(year, a, b) if month_first else _day(year, b, a) if day_first else None
        if meant is None:  # no order known (or an impossible date): both readings are named
            named.update(d for d in (_day(year, a, b), _day(year, b, a)) if d is not None)
            continue
        named.add(meant)
        other = _day(year, b, a) if month_first else _day(year, a, b)
        if other is not None and other != meant:
            swapped.setdefault(other, (written, meant))
    for year, month, day in _ISO.findall(text):
        named.add(_day(int(year), int(month), int(day)))
    for day, month, year in _DAY_MONTH.findall(text):
        named.add(_day(int(year), _MONTHS.index(month[:3].lower()) + 1, int(day)))
    for month, day, year in _MONTH_DAY.findall(text):
        named.add(_day(int(year), _MONTHS.index(month[:3].lower()) + 1, int(day)))
    named.discard(None)
    order = "month first" if month_first else "day first" if day_first else ""
    return TextDates(frozenset(named), swapped, order)


def _near(moment: datetime, days: Iterable[date]) -> date | None:
    for d in days:
        if abs(moment.date() - d) <= DATE_SLACK:
            return d
    return None


def _hours(span: timedelta) -> str:
    return f"{span.total_seconds() / 3600:g} h"


def window_doubts(window: ParsedWindow, *, notice_date: datetime | None, text: str) -> list[str]:
    """Why the window's times are not believable, given the notice's date and text (empty: believable)."""
    doubts = []
    length = window.end - window.start
    stated = text_longest_duration(text)
    if stated is not None and length > max(DURATION_FREE, stated * DURATION_SLACK):
        doubts.append(f"the window lasts {_hours(length)}, the notice names no duration above {_hours(stated)}")
    if notice_date is not None:
        written = f"{notice_date:%Y-%m-%d}"
        if window.start - notice_date > AHEAD_MAX:
            doubts.append(f"the window starts {(window.start - notice_date).days} days after the notice's date "
                          f"({written})")
        elif notice_date - window.end > BEHIND_MAX:
            doubts.append(f"the window ended {(notice_date - window.end).days} days before the notice's date "
                          f"({written})")
    dates = text_dates(text)
    for edge, moment in (("start", window.start), ("end", window.end)):
        other = _near(moment, dates.swapped)
        if other is not None and _near(moment, dates.named) is None:
            written, meant = dates.swapped[other]
            doubts.append(f"the {edge} ({moment:%Y-%m-%d}) is {written} read the wrong way round: the text writes "
                          f"dates {dates.order}, {written} is {meant:%Y-%m-%d}")
    return doubts
