"""BCOP iCalendar in and out, without a database: the standard's own examples, leniency, round trips."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from icalendar import Calendar

from tests.maintenance.conftest import BCOP, CARRIERS
from wanmon.maintenance.carrier_notices import carrier_notice_parse
from wanmon.maintenance.ical import CalendarInvalid, ExportObject, ExportWindow, calendar_render, ical_parse
from wanmon.maintenance.parsed import compact, impact_normalise, impact_worst, status_normalise


def one(path):
    result = ical_parse(path.read_bytes())
    assert len(result.windows) == 1, result.problems
    return result.windows[0]


def test_bcop_initial_notification_example():
    # given the BCOP 3.8.1 example, when parsed
    w = one(BCOP / "1-initial.ics")
    # then every BCOP field is read, times in UTC
    assert w.reference == "WorkOrder-31415"
    assert w.uid == "42" and w.sequence == 1
    assert w.start == datetime(2015, 10, 10, 8, 0, tzinfo=UTC)
    assert w.end == datetime(2015, 10, 10, 10, 0, tzinfo=UTC)
    assert w.stamp == datetime(2015, 10, 10, 0, 10, tzinfo=UTC)
    assert w.status == "tentative" and w.impact == "no-impact"
    assert w.provider == "example.com" and w.account == "137.035999173"
    assert w.organizer == "Example NOC <noone@example.com>"
    assert [o.object_id for o in w.objects] == ["acme-widgets-as-a-service"]
    assert w.summary == "Maint Note Example" and w.source_tz == "UTC"


@pytest.mark.parametrize(
    ("name", "sequence", "status", "start_day"),
    [
        ("1-initial.ics", 1, "tentative", 10),
        ("2-updated.ics", 2, "confirmed", 12),
        ("3-cancelled.ics", 3, "cancelled", 12),
        ("4-open.ics", 3, "in-process", 12),
        ("5-closed.ics", 4, "completed", 12),  # "X-MAINTNOTE-STATUS: COMPLETED" has a stray space
    ],
)
def test_every_bcop_workflow_example(name, sequence, status, start_day):
    w = one(BCOP / name)
    assert (w.uid, w.sequence, w.status) == ("42", sequence, status)
    assert w.start == datetime(2015, 10, start_day, 8, 0, tzinfo=UTC)
    assert w.end - w.start == timedelta(hours=2)


def test_precedence_aliases_altrep_per_object_impact_and_zone():
    raw = b"""BEGIN:VCALENDAR\r
VERSION:2.0\r
PRODID:-//test//\r
BEGIN:VTIMEZONE\r
TZID:Europe/Zurich\r
BEGIN:STANDARD\r
DTSTART:19701025T030000\r
TZOFFSETFROM:+0200\r
TZOFFSETTO:+0100\r
RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU\r
END:STANDARD\r
BEGIN:DAYLIGHT\r
DTSTART:19700329T020000\r
TZOFFSETFROM:+0100\r
TZOFFSETTO:+0200\r
RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU\r
END:DAYLIGHT\r
END:VTIMEZONE\r
BEGIN:VEVENT\r
SUMMARY:Fibre repair Geneva\r
DTSTART;TZID=Europe/Zurich:20260310T020000\r
DURATION:PT3H\r
DTSTAMP:20260301T090000Z\r
UID:geant-chg-42@geant.example\r
SEQUENCE:0\r
X-MAINTNOTE-PROVIDER:geant.org\r
X-MAINTNOTE-ACCOUNT:CERN\r
X-MAINTNOTE-MAINTENANCE-ID;X-MAINTNOTE-PRECEDENCE=NON-PRIMARY:EXT-910938356\r
X-MAINTNOTE-MAINTENANCE-ID;X-MAINTNOTE-PRECEDENCE=PRIMARY:GEANT-CHG-0042\r
X-MAINTNOTE-OBJECT-ID;ALTREP="https://example.org/maintenance?id=2718281828459":2718281828459\r
X-MAINTNOTE-OBJECT-ID;X-MAINTNOTE-OBJECT-IMPACT=REDUCED-REDUNDANCY:lag-member-2\r
X-MAINTNOTE-IMPACT:SOMETHING-NEW\r
X-MAINTNOTE-STATUS:CONFIRMED\r
ORGANIZER:mailto:noc@geant.example\r
END:VEVENT\r
END:VCALENDAR\r
"""
    result = ical_parse(raw)
    (w,) = result.windows
    assert w.reference == "GEANT-CHG-0042" and w.aliases == ("EXT-910938356",)
    # 02:00 in Geneva on 10 March (CET, +01:00) is 01:00 UTC; DURATION instead of DTEND
    assert w.start == datetime(2026, 3, 10, 1, 0, tzinfo=UTC)
    assert w.end == datetime(2026, 3, 10, 4, 0, tzinfo=UTC)
    assert w.source_tz == "Europe/Zurich"
    # an impact the BCOP does not know is an outage (3.6.5); objects keep their own impact and ALTREP
    assert w.impact == "outage"
    assert [(o.object_id, o.impact, o.altrep) for o in w.objects] == [
        ("2718281828459", None, "https://example.org/maintenance?id=2718281828459"),
        ("lag-member-2", "reduced-redundancy", ""),
    ]
    assert w.sequence == 0 and w.organizer == "noc@geant.example"


def _cal(*lines: bytes) -> bytes:
    return b"\r\n".join([b"BEGIN:VCALENDAR", b"VERSION:2.0", b"BEGIN:VEVENT", *lines, b"END:VEVENT",
                         b"END:VCALENDAR", b""])


def test_broken_and_partial_calendars_say_what_is_wrong():
    with pytest.raises(CalendarInvalid):
        ical_parse(b"BEGIN:VCALENDAR\r\nthis is not ical\r\n")
    no_end = _cal(b"UID:x", b"DTSTART:20260101T000000Z")
    result = ical_parse(no_end)
    assert result.windows == [] and "neither DTEND nor DURATION" in result.problems[0]
    plain = _cal(b"UID:p1", b"DTSTART:20260101T000000Z", b"DTEND:20260101T010000Z", b"SUMMARY:lunch")
    result = ical_parse(plain)
    assert result.windows[0].bcop is False and result.windows[0].reference == "p1"
    assert "not a BCOP maintenance event" in result.problems[0]


def test_third_party_bcop_calendars_from_circuit_maintenance_parser_data():
    # PCCW's real calendar: X-MAINTNOTE-OBJECT-ID values with colons and parameters, a VALARM inside
    result = ical_parse((CARRIERS / "pccw.ics").read_bytes())
    (w,) = result.windows
    assert w.reference == "INC0123456789AB" and w.sequence == 0
    assert w.start == datetime(2024, 11, 26, 1, 0, tzinfo=UTC) and w.end == datetime(2024, 11, 26, 10, 0, tzinfo=UTC)
    assert len(w.objects) == 2 and w.objects[0].object_id.startswith("ABC(XXX)-DEF(XXX) EP4321")
    assert w.impact == "outage" and w.status == "confirmed"


def test_vocabulary_normalisers():
    assert impact_normalise("REDUCED-REDUNDANCY") == "reduced-redundancy"
    assert impact_normalise(" no_impact ") == "no-impact"
    assert impact_normalise("") == "outage" and impact_normalise("X-CUSTOM") == "outage"
    assert impact_worst(["no-impact", "degraded", "reduced-redundancy"]) == "degraded"
    assert impact_worst([]) == "outage"
    assert status_normalise(" COMPLETED") == "completed"
    assert status_normalise("RE-SCHEDULED") == "confirmed"
    assert status_normalise("NO-CHANGE") is None and status_normalise("") is None
    assert compact("/OGYX/123456/   /ZYO /") == compact("/ogyx/123456/ /zyo/") == "/ogyx/123456//zyo/"


def _export(**kw) -> ExportWindow:
    base = {
        "uid": "w-1@wanmon",
        "sequence": 3,
        "start": datetime(2026, 3, 10, 3, 0, tzinfo=UTC),
        "end": datetime(2026, 3, 10, 4, 30, tzinfo=UTC),
        "stamp": datetime(2026, 3, 1, 9, 0, tzinfo=UTC),
        "last_modified": datetime(2026, 3, 2, 9, 0, tzinfo=UTC),
        "reference": "SURF-CHG-17",
        "aliases": ("EXT-1",),
        "summary": "[SURFNET] SURF-CHG-17 degraded: upgrade",
        "status": "confirmed",
        "impact": "degraded",
        "provider": "SURFNET",
        "account": "wanmon",
        "organizer": "SURF NOC <noc@surf.example>",
        "objects": (ExportObject("surfnet-asd"), ExportObject("circuit:C-1", "reduced-redundancy", "https://x.example/c?a=1&b=2")),
        "description": "line one\nline two; with, punctuation",
        "url": "https://wanmon.example.org/maintenance/1/",
    }
    base.update(kw)
    return ExportWindow(**base)


def test_export_is_valid_bcop_that_parses_back():
    body = calendar_render([_export(), _export(uid="w-2@wanmon", status="cancelled", rrule="FREQ=WEEKLY;COUNT=3")],
                           name="wanmon maintenance")
    # RFC 5545: CRLF line ends, lines folded at 75 octets, no METHOD (BCOP 3.4.1)
    assert b"\r\n" in body and b"METHOD" not in body
    assert all(len(line) <= 75 for line in body.split(b"\r\n"))
    calendar = Calendar.from_ical(body)
    assert str(calendar["PRODID"]) == "-//wanmon//maintenance calendar//EN" and str(calendar["VERSION"]) == "2.0"
    events = calendar.walk("VEVENT")
    assert len(events) == 2 and events[1]["STATUS"] == "CANCELLED"
    assert events[0]["DTSTART"].to_ical() == b"20260310T030000Z"
    # our own reader and a third-party one (circuit-maintenance-parser's ICal) read the same window back
    (w, w2) = ical_parse(body).windows
    assert (w.reference, w.aliases, w.uid, w.sequence, w.status, w.impact) == (
        "SURF-CHG-17", ("EXT-1",), "w-1@wanmon", 3, "confirmed", "degraded")
    assert [(o.object_id, o.impact, o.altrep) for o in w.objects] == [
        ("surfnet-asd", None, ""), ("circuit:C-1", "reduced-redundancy", "https://x.example/c?a=1&b=2")]
    assert w2.status == "cancelled" and w2.rrule == "FREQ=WEEKLY;COUNT=3"
    # circuit-maintenance-parser reads BCOP too, but only a single MAINTENANCE-ID (the standard allows several)
    from circuit_maintenance_parser.parser import ICal

    single = calendar_render([_export(aliases=())], name="x")
    (third,) = ICal.parse_ical(Calendar.from_ical(single))
    assert third["maintenance_id"] == "SURF-CHG-17" and third["sequence"] == 3
    assert third["start"] == int(datetime(2026, 3, 10, 3, 0, tzinfo=UTC).timestamp())
    assert [(c.circuit_id, c.impact.value) for c in third["circuits"]] == [
        ("surfnet-asd", "DEGRADED"), ("circuit:C-1", "REDUCED-REDUNDANCY")]


def test_calendar_subscription_headers():
    body = calendar_render([], name="wanmon maintenance - CERN", refresh=timedelta(minutes=30))
    calendar = Calendar.from_ical(body)
    assert str(calendar["X-WR-CALNAME"]) == "wanmon maintenance - CERN"
    assert b"REFRESH-INTERVAL;VALUE=DURATION:PT30M" in body and b"X-PUBLISHED-TTL:PT30M" in body


def test_email_with_bcop_attachment_uses_the_attachment():
    # euNetworks' cancellation: a BCOP calendar part (no object id, status CANCELLED)
    result = carrier_notice_parse((CARRIERS / "eunetworks_cancel.eml").read_bytes())
    assert result.parser == "bcop-icalendar (e-mail attachment)"
    assert result.sender == "maintenance@eunetworks.com"
    (w,) = result.windows
    assert (w.reference, w.uid, w.sequence, w.status) == ("02345678", "02345678@euNetworks.com", 2, "cancelled")
    assert w.start == datetime(2023, 10, 6, 23, 0, tzinfo=UTC) and w.end == datetime(2023, 10, 7, 17, 0, tzinfo=UTC)
    assert w.objects == ()
