"""BCOP iCalendar of maintenance notices in and out (pure: bytes <-> dataclasses, no Django).

The BCOP ("A machine parseable standard for formatting maintenance notifications", NANOG,
github.com/jda/maintnote-std) extends RFC 5545 VEVENTs with X-MAINTNOTE-PROVIDER, -ACCOUNT,
-MAINTENANCE-ID (1+, the primary one marked X-MAINTNOTE-PRECEDENCE=PRIMARY), -OBJECT-ID (1+,
optionally with ALTREP), -IMPACT and -STATUS. UID + SEQUENCE identify and order updates.

Reading is lenient where real calendars are (values padded with spaces, a missing SEQUENCE, a
DURATION instead of DTEND, a plain calendar without X-MAINTNOTE properties) and says so in
``problems``; writing follows the BCOP strictly, without METHOD (BCOP 3.4.1), so that subscribed
calendar clients show the events without treating them as invitations.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from icalendar import Calendar, Event, vCalAddress, vDuration, vRecur, vText

from wanmon.maintenance.parsed import (
    ParsedObject,
    ParsedWindow,
    ParseResult,
    http_url,
    impact_normalise,
    status_normalise,
    utc,
)
from wanmon.maintenance.recurrence import rrule_check

PARSER_NAME = "bcop-icalendar"
PRODID = "-//wanmon//maintenance calendar//EN"
X_PROVIDER = "X-MAINTNOTE-PROVIDER"
X_ACCOUNT = "X-MAINTNOTE-ACCOUNT"
X_MAINTENANCE_ID = "X-MAINTNOTE-MAINTENANCE-ID"
X_OBJECT_ID = "X-MAINTNOTE-OBJECT-ID"
X_IMPACT = "X-MAINTNOTE-IMPACT"
X_STATUS = "X-MAINTNOTE-STATUS"
X_PRECEDENCE = "X-MAINTNOTE-PRECEDENCE"
# Per-object impact: not in the BCOP text, but the parameter circuit-maintenance-parser reads.
X_OBJECT_IMPACT = "X-MAINTNOTE-OBJECT-IMPACT"
RFC_STATUS = {"TENTATIVE": "tentative", "CONFIRMED": "confirmed", "CANCELLED": "cancelled"}


class CalendarInvalid(ValueError):
    """The bytes are not an iCalendar object."""


def looks_like_icalendar(raw: bytes) -> bool:
    """Whether ``raw`` starts (after a BOM and blank lines) with BEGIN:VCALENDAR."""
    head = raw[:200].lstrip(b"\xef\xbb\xbf \t\r\n").upper()
    return head.startswith(b"BEGIN:VCALENDAR")


def _all(component, name: str) -> list:
    value = component.get(name)
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def _text(component, name: str) -> str:
    values = _all(component, name)
    return str(values[0]).strip() if values else ""


def _tz_name(prop) -> str:
    tzid = prop.params.get("TZID") if hasattr(prop, "params") else None
    if tzid:
        return str(tzid)
    tz = getattr(prop.dt, "tzinfo", None)
    name = getattr(tz, "key", None) or getattr(tz, "zone", None)
    return str(name) if name else "UTC"


def _organizer(component) -> str:
    prop = component.get("ORGANIZER")
    if prop is None:
        return ""
    address = str(prop).strip()
    if address.lower().startswith("mailto:"):
        address = address[7:]
    cn = str(prop.params.get("CN") or "").strip() if hasattr(prop, "params") else ""
    return f"{cn} <{address}>" if cn and cn.lower() != address.lower() else address


def _maintenance_ids(component) -> tuple[str, tuple[str, ...]]:
    ids = _all(component, X_MAINTENANCE_ID)
    primary = [i for i in ids if str(i.params.get(X_PRECEDENCE, "")).strip().upper() == "PRIMARY"]
    ordered = primary + [i for i in ids if i not in primary]
    names = list(dict.fromkeys(str(i).strip() for i in ordered if str(i).strip()))
    return (names[0], tuple(names[1:])) if names else ("", ())


def _objects(component, where: str, problems: list[str]) -> tuple[ParsedObject, ...]:
    out = []
    for obj in _all(component, X_OBJECT_ID):
        name = str(obj).strip()
        if not name:
            continue
        own = obj.params.get(X_OBJECT_IMPACT)
        altrep = str(obj.params.get("ALTREP", "")).strip()
        if altrep and not http_url(altrep):
            problems.append(f"{where}: ALTREP of {name} is not an http(s) URL, dropped")
        out.append(
            ParsedObject(object_id=name, impact=impact_normalise(own) if own else None, altrep=http_url(altrep))
        )
    return tuple(out)


def _event_window(event, index: int) -> tuple[ParsedWindow | None, list[str]]:
    problems: list[str] = []
    uid = _text(event, "UID")
    where = f"VEVENT {index + 1}" + (f" (UID {uid})" if uid else "")
    start_prop = event.get("DTSTART")
    if start_prop is None:
        return None, [f"{where}: no DTSTART, skipped"]
    start = utc(start_prop.dt)
    if getattr(start_prop.dt, "tzinfo", True) is None:
        problems.append(f"{where}: floating DTSTART read as UTC")
    end_prop = event.get("DTEND")
    if end_prop is not None:
        end = utc(end_prop.dt)
    elif event.get("DURATION") is not None:
        end = start + event.get("DURATION").dt
    else:
        return None, [f"{where}: neither DTEND nor DURATION, skipped"]
    if end <= start:
        return None, [f"{where}: DTEND {end:%Y-%m-%dT%H:%MZ} is not after DTSTART, skipped"]

    reference, aliases = _maintenance_ids(event)
    bcop = bool(reference) or event.get(X_IMPACT) is not None
    if not reference:
        reference = uid or f"event-{index + 1}"
        if not bcop:
            problems.append(f"{where}: not a BCOP maintenance event (no {X_MAINTENANCE_ID}); read as a plain event")
        else:
            problems.append(f"{where}: no {X_MAINTENANCE_ID}; the maintenance is known by its UID {reference}")
    if bcop:
        # Required by the BCOP; wanmon needs them only to name the carrier (the import's own carrier does too).
        problems += [f"{where}: no {name}" for name in (X_PROVIDER, X_ACCOUNT) if not _text(event, name)]
    if event.get("DTSTAMP") is None:
        problems.append(f"{where}: no DTSTAMP (RFC 5545 requires it): its updates are ordered by SEQUENCE alone")
    impact = impact_normalise(_text(event, X_IMPACT))
    status_text = _text(event, X_STATUS)
    status = status_normalise(status_text) if status_text else RFC_STATUS.get(_text(event, "STATUS").upper())
    if status_text and status is None and status_text.upper() != "NO-CHANGE":
        problems.append(f"{where}: unknown {X_STATUS} {status_text!r} ignored")
    sequence_text = _text(event, "SEQUENCE")
    try:
        sequence = int(sequence_text) if sequence_text else None
    except ValueError:
        sequence = None
        problems.append(f"{where}: SEQUENCE {sequence_text!r} is not a number")
    stamp_prop = event.get("DTSTAMP")
    rrule = event.get("RRULE")
    rrule_text = rrule.to_ical().decode() if rrule is not None else ""
    if rrule_text:
        try:
            rrule_check(rrule_text)
        except ValueError as exc:
            return None, [f"{where} ({reference}): RRULE refused: {exc}"]
    objects = _objects(event, where, problems)
    if bcop and not objects:
        problems.append(f"{where}: no {X_OBJECT_ID}")
    window = ParsedWindow(
        reference=reference,
        aliases=aliases,
        uid=uid,
        sequence=sequence,
        stamp=utc(stamp_prop.dt) if stamp_prop is not None else None,
        start=start,
        end=end,
        source_tz=_tz_name(start_prop),
        status=status,
        impact=impact,
        objects=objects,
        provider=_text(event, X_PROVIDER),
        account=_text(event, X_ACCOUNT),
        organizer=_organizer(event),
        summary=_text(event, "SUMMARY"),
        description=_text(event, "DESCRIPTION"),
        rrule=rrule_text,
        parser=PARSER_NAME,
        problems=tuple(problems),
        bcop=bcop,
    )
    return window, problems


def ical_parse(raw: bytes) -> ParseResult:
    """Every VEVENT of one or more VCALENDARs in ``raw`` as a window; raises CalendarInvalid on non-iCalendar."""
    try:
        calendars = Calendar.from_ical(raw, multiple=True)
    except (ValueError, IndexError, KeyError, TypeError) as exc:
        raise CalendarInvalid(f"not an iCalendar object: {exc}") from None
    result = ParseResult(parser=PARSER_NAME, content_type="text/calendar")
    index = 0
    for calendar in calendars:
        for event in calendar.walk("VEVENT"):
            window, problems = _event_window(event, index)
            index += 1
            result.problems.extend(problems)
            if window is not None:
                result.windows.append(window)
    if index == 0:
        result.problems.append("the calendar has no VEVENT")
    return result


# --------------------------------------------------------------------------- export


# One X-MAINTNOTE-OBJECT-ID of an exported event: what a parsed one says, written back.
ExportObject = ParsedObject


@dataclass(frozen=True)
class ExportWindow:
    """Everything one exported VEVENT says, prepared by the selectors (times in UTC)."""

    uid: str
    sequence: int
    start: datetime
    end: datetime
    stamp: datetime
    last_modified: datetime
    reference: str
    summary: str
    status: str
    impact: str
    provider: str
    account: str
    organizer: str = ""
    aliases: tuple[str, ...] = ()
    objects: tuple[ExportObject, ...] = ()
    description: str = ""
    location: str = ""
    url: str = ""
    rrule: str = ""
    categories: tuple[str, ...] = field(default_factory=lambda: ("Maintenance",))


def _bcop_value(value: str) -> str:
    return value.upper()


def _event(w: ExportWindow) -> Event:
    event = Event()
    event.add("uid", w.uid)
    event.add("sequence", w.sequence)
    event.add("dtstamp", w.stamp.astimezone(UTC))
    event.add("last-modified", w.last_modified.astimezone(UTC))
    event.add("dtstart", w.start.astimezone(UTC))
    event.add("dtend", w.end.astimezone(UTC))
    if w.rrule:
        event.add("rrule", vRecur.from_ical(w.rrule))
    event.add("summary", w.summary)
    if w.description:
        event.add("description", w.description)
    if w.location:
        event.add("location", w.location)
    if http_url(w.url):
        event.add("url", w.url)
    event.add("categories", list(w.categories))
    # Shown as free time: a maintenance window must not block the reader's own agenda.
    event.add("transp", "TRANSPARENT")
    rfc_status = {"tentative": "TENTATIVE", "cancelled": "CANCELLED"}.get(w.status, "CONFIRMED")
    event.add("status", rfc_status)
    if w.organizer:
        name, _, address = w.organizer.rpartition("<")
        organizer = vCalAddress(f"mailto:{address.rstrip('>').strip() if address else w.organizer}")
        if name.strip():
            organizer.params["cn"] = vText(name.strip())
        event.add("organizer", organizer)
    event.add(X_PROVIDER, w.provider)
    event.add(X_ACCOUNT, w.account)
    event.add(X_MAINTENANCE_ID, w.reference, parameters={X_PRECEDENCE: "PRIMARY"})
    for alias in w.aliases:
        event.add(X_MAINTENANCE_ID, alias, parameters={X_PRECEDENCE: "NON-PRIMARY"})
    for obj in w.objects:
        params = {}
        if http_url(obj.altrep):
            params["ALTREP"] = obj.altrep
        if obj.impact and obj.impact != w.impact:
            params[X_OBJECT_IMPACT] = _bcop_value(obj.impact)
        event.add(X_OBJECT_ID, obj.object_id, parameters=params or None)
    event.add(X_IMPACT, _bcop_value(w.impact))
    event.add(X_STATUS, _bcop_value(w.status))
    return event


def calendar_render(
    windows: Iterable[ExportWindow], *, name: str, description: str = "", refresh: timedelta = timedelta(hours=1)
) -> bytes:
    """A VCALENDAR of BCOP events that calendar clients (Outlook, Thunderbird) can subscribe to."""
    calendar = Calendar()
    calendar.add("prodid", PRODID)
    calendar.add("version", "2.0")
    calendar.add("calscale", "GREGORIAN")
    calendar.add("x-wr-calname", name)
    if description:
        calendar.add("x-wr-caldesc", description)
    calendar.add("x-wr-timezone", "UTC")
    # How often subscribers should reload (RFC 7986 REFRESH-INTERVAL; X-PUBLISHED-TTL for Outlook).
    calendar.add("refresh-interval", vDuration(refresh), parameters={"VALUE": "DURATION"})
    calendar.add("x-published-ttl", vDuration(refresh))
    for w in windows:
        calendar.add_component(_event(w))
    return calendar.to_ical()


def window_export_objects(labels: Sequence[tuple[str, str | None, str]]) -> tuple[ExportObject, ...]:
    """(object id, impact, altrep) triples as export objects, first occurrence of each id kept."""
    seen: dict[str, ExportObject] = {}
    for object_id, impact, altrep in labels:
        seen.setdefault(object_id, ExportObject(object_id, impact, altrep))
    return tuple(seen.values())
