"""Recurring windows (pure): an RFC 5545 RRULE applied to a window's UTC start, checked and expanded.

A rule may repeat at most daily. Carriers announce weekly or monthly slots; a rule repeating every
second or minute (FREQ=SECONDLY, or BYHOUR/BYMINUTE/BYSECOND lists giving several times a day) names
no real maintenance, and expanding it from a start a year back costs tens of millions of steps on every
diagnosis run, calendar page and feed. Such rules are refused on entry; one already stored is read as
its first occurrence only. Expansion starts near the range asked, not at the rule's first occurrence.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from dateutil.rrule import DAILY, WEEKLY, rrule, rruleset, rrulestr

#: A rule without an end is not expanded further than this many occurrences from the range asked.
MAX_OCCURRENCES = 1000

_FREQ_NAMES = {0: "YEARLY", 1: "MONTHLY", 2: "WEEKLY", 3: "DAILY", 4: "HOURLY", 5: "MINUTELY", 6: "SECONDLY"}

__all__ = ["MAX_OCCURRENCES", "rrule_check", "rrule_moments", "rrule_last_end"]


def _rules(text: str, dtstart: datetime) -> list[rrule]:
    parsed = rrulestr(text.strip().removeprefix("RRULE:"), dtstart=dtstart)
    return list(parsed._rrule) if isinstance(parsed, rruleset) else [parsed]  # noqa: SLF001 - no public accessor


def _check(rule: rrule) -> None:
    if rule._freq > DAILY:  # noqa: SLF001 - dateutil keeps the parsed parts private
        raise ValueError(f"FREQ={_FREQ_NAMES[rule._freq]} repeats more often than daily")  # noqa: SLF001
    for part, name in ((rule._byhour, "BYHOUR"), (rule._byminute, "BYMINUTE"), (rule._bysecond, "BYSECOND")):  # noqa: SLF001
        if len(part or ()) > 1:
            raise ValueError(f"{name} with {len(part)} values repeats more often than daily")


def rrule_check(text: str, *, dtstart: datetime | None = None) -> None:
    """Raise ValueError (with the reason) when ``text`` is no RRULE or repeats more often than daily."""
    try:
        rules = _rules(text, dtstart or datetime(2000, 1, 1, tzinfo=UTC))
    except (ValueError, TypeError, KeyError, IndexError) as exc:
        raise ValueError(f"not an RFC 5545 RRULE: {exc}") from None
    for rule in rules:
        _check(rule)


def _start_near(rule: rrule, dtstart: datetime, lo: datetime) -> datetime:
    """A later start giving the same occurrences from ``lo`` on: whole periods of a DAILY/WEEKLY rule without COUNT.

    Days and weeks in UTC all have the same length, so moving the start by whole periods keeps every
    occurrence (and the rule's week alignment); COUNT counts from the first occurrence, so it forbids it.
    """
    if rule._count or rule._freq not in (DAILY, WEEKLY) or lo <= dtstart:  # noqa: SLF001
        return dtstart
    period = timedelta(days=rule._interval * (7 if rule._freq == WEEKLY else 1))  # noqa: SLF001
    periods = (lo - dtstart) // period - 1
    return dtstart + periods * period if periods > 0 else dtstart


def rrule_moments(
    text: str, *, dtstart: datetime, lo: datetime, hi: datetime, limit: int = MAX_OCCURRENCES
) -> list[datetime] | None:
    """Starts of the rule's occurrences in [lo, hi) (at most ``limit``); None when the rule is refused/unreadable."""
    dtstart = dtstart.astimezone(UTC)
    try:
        rules = _rules(text, dtstart)
        for rule in rules:
            _check(rule)
    except (ValueError, TypeError, KeyError, IndexError):
        return None
    moments: set[datetime] = set()
    for rule in rules:
        near = rule.replace(dtstart=_start_near(rule, dtstart, lo))
        for moment in near.xafter(lo, inc=True, count=limit):
            if moment >= hi:
                break
            moments.add(moment)
    return sorted(moments)[:limit]


def rrule_last_end(*, start: datetime, end: datetime, rrule_text: str) -> datetime | None:
    """End of the last occurrence of a rule with COUNT or UNTIL; None for a rule without end; ``end`` without rule.

    Raises ValueError for a rule that is unreadable or repeats more often than daily.
    """
    if not rrule_text:
        return end
    rrule_check(rrule_text)
    rules = _rules(rrule_text, start.astimezone(UTC))
    if any(not (rule._count or rule._until) for rule in rules):  # noqa: SLF001
        return None
    last = None
    for rule in rules:
        for i, moment in enumerate(rule):
            last = moment if last is None or moment > last else last
            if i >= MAX_OCCURRENCES:
                break
    return (last + (end - start)) if last is not None else end
