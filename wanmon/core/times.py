"""Times as pages and e-mails print them (pure): a clock time with its date only when it is not today's, and since
when and for how long something holds.

Two presets are the one form of the incident pages, the incident list and the alerts e-mails: :func:`format_utc`
and :func:`format_since_utc`. They are in UTC whatever a user chose for the dashboard's charts and tables: an e-mail
is forwarded, a page link pasted in a ticket, both read by people in other zones, so each time names its zone. They
give no seconds: an on-call engineer compares minutes with the carriers' tickets, and seconds would only suggest a
precision the five-minute diagnosis cycle does not have.
"""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo

ZONE_UTC = "UTC"


def format_clock(moment: datetime, now: datetime, tz: tzinfo = UTC) -> str:
    """``moment`` as a wall-clock time of ``tz`` to the minute, the date added only when it is not ``now``'s day
    there: ``13:10``; ``27 Nov 13:10`` on another day; ``27 Nov 2025 13:10`` in another year."""
    local, today = moment.astimezone(tz), now.astimezone(tz)
    if local.date() == today.date():
        return local.strftime("%H:%M")
    if local.year == today.year:
        return local.strftime("%d %b %H:%M")
    return local.strftime("%d %b %Y %H:%M")


def format_utc(moment: datetime | None, now: datetime, empty: str = "–") -> str:
    """The time of the incident pages and e-mails: ``13:10 UTC`` today, ``27 Nov 13:10 UTC`` on another day
    (:func:`format_clock` in UTC, zone named); ``empty`` for no time."""
    if not isinstance(moment, datetime):
        return empty
    return f"{format_clock(moment, now, UTC)} {ZONE_UTC}"


def format_duration_hm(seconds: float) -> str:
    """How long, to the minute: ``< 1 min``, ``45 min``, ``12 h``, ``12 h 05 min``; from two days on in days,
    ``1.6 d`` (minutes no longer matter)."""
    minutes = round(max(seconds, 0.0) / 60)
    if minutes < 1:
        return "< 1 min"
    if minutes < 60:
        return f"{minutes} min"
    if minutes < 48 * 60:
        hours, rest = divmod(minutes, 60)
        return f"{hours} h" + (f" {rest:02d} min" if rest else "")
    return f"{minutes / 1440:.2g} d" if minutes < 10 * 1440 else f"{minutes / 1440:.0f} d"


def format_since(onset: datetime | None, now: datetime, tz: tzinfo = UTC, empty: str = "", *,
                 end: datetime | None = None, zone: str = "") -> str:
    """Since when a state holds and for how long, in ``tz`` (times by :func:`format_clock`):
    ``since 13:10, 12 h 05 min``; ``since 27 Nov 22:05, 1.6 d``.

    ``end``: the state is over, it is a span: ``13:10 – 01:16, 12 h 06 min``.
    ``zone``: every time names that zone, and an ongoing state says as of when it was so, for text read later than
    it was written (an e-mail, a page left open): ``since 13:10 UTC, 12 h 05 min, ongoing as of 01:16 UTC``.
    ``empty`` for no onset."""
    if not isinstance(onset, datetime):
        return empty

    def clock(moment: datetime) -> str:
        return format_clock(moment, now, tz) + (f" {zone}" if zone else "")

    if end is not None:
        return f"{clock(onset)} – {clock(end)}, {format_duration_hm((end - onset).total_seconds())}"
    text = f"since {clock(onset)}, {format_duration_hm((now - onset).total_seconds())}"
    return text + (f", ongoing as of {clock(now)}" if zone else "")


def format_since_utc(onset: datetime | None, now: datetime, *, end: datetime | None = None, empty: str = "") -> str:
    """The onset and duration of the incident pages and e-mails: ``since 13:10 UTC, 12 h 05 min, ongoing as of
    01:16 UTC``, or when it ended ``13:10 UTC – 01:16 UTC, 12 h 06 min`` (:func:`format_since` in UTC, zone named)."""
    return format_since(onset, now, UTC, empty, end=end, zone=ZONE_UTC)
