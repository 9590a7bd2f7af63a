"""Repeat rules: finer than daily is refused with the event named; expansion stays near the range asked."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest
from dateutil.rrule import rrulestr
from django.core.exceptions import ValidationError
from django.utils import timezone

from wanmon.inventory.models import Carrier
from wanmon.maintenance.choices import CarrierNoticeStatus, Source
from wanmon.maintenance.imports import carrier_notice_import
from wanmon.maintenance.models import MaintenanceWindow
from wanmon.maintenance.recurrence import rrule_check, rrule_moments
from wanmon.maintenance.selectors import window_occurrences
from wanmon.maintenance.services import feed_token_create, maintenance_window_create

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "rule, reason",
    [
        ("FREQ=SECONDLY", "FREQ=SECONDLY repeats more often than daily"),
        ("FREQ=MINUTELY;INTERVAL=30", "FREQ=MINUTELY repeats more often than daily"),
        ("FREQ=HOURLY;INTERVAL=24", "FREQ=HOURLY repeats more often than daily"),
        ("FREQ=DAILY;BYHOUR=1,2,3", "BYHOUR with 3 values repeats more often than daily"),
        ("FREQ=WEEKLY;BYMINUTE=0,30", "BYMINUTE with 2 values repeats more often than daily"),
        ("FREQ=FORTNIGHTLY", "not an RFC 5545 RRULE"),
    ],
)
def test_rules_finer_than_daily_are_refused(rule, reason):
    with pytest.raises(ValueError, match=reason):
        rrule_check(rule)


@pytest.mark.parametrize("rule", ["FREQ=DAILY", "FREQ=WEEKLY;BYDAY=TU;BYHOUR=2", "FREQ=MONTHLY;BYDAY=1SU;COUNT=12"])
def test_daily_and_slower_rules_pass(rule):
    rrule_check(rule)


def test_an_imported_secondly_rule_is_refused_naming_the_event(topology, api_operator):
    raw = (
        b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//x//y//EN\r\nBEGIN:VEVENT\r\nUID:storm-1\r\nSEQUENCE:0\r\n"
        b"DTSTAMP:20260101T000000Z\r\nDTSTART:20250101T000000Z\r\nDTEND:20250101T000001Z\r\n"
        b"RRULE:FREQ=SECONDLY\r\nX-MAINTNOTE-MAINTENANCE-ID:STORM-1\r\nX-MAINTNOTE-IMPACT:OUTAGE\r\n"
        b"X-MAINTNOTE-OBJECT-ID:C-1234567\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    )
    report = carrier_notice_import(raw=raw, source=Source.ICAL_FILE, carrier=Carrier.objects.get(code="COLT"))
    assert report.status == CarrierNoticeStatus.FAILED and report.windows == []
    assert report.problems == [
        "VEVENT 1 (UID storm-1) (STORM-1): RRULE refused: FREQ=SECONDLY repeats more often than daily"
    ]
    assert not MaintenanceWindow.objects.exists()
    # by hand: a 400 naming the field and the window
    r = api_operator.post("/api/v1/maintenance/windows", {
        "reference": "MY-1", "start": "2026-03-01T00:00:00Z", "end": "2026-03-01T01:00:00Z",
        "rrule": "FREQ=MINUTELY", "affects": ["geant-ams"]}, format="json")
    assert r.status_code == 400
    assert r.json()["rrule"] == ["MY-1: RRULE refused: FREQ=MINUTELY repeats more often than daily"]
    with pytest.raises(ValidationError):
        maintenance_window_create(reference="MY-2", start=datetime(2026, 3, 1, tzinfo=UTC),
                                  end=datetime(2026, 3, 1, 1, tzinfo=UTC), rrule="FREQ=HOURLY")


def test_a_stored_secondly_rule_a_year_back_costs_no_cpu(topology, operator, client):
    from wanmon.diagnosis.selectors import maintenance_windows_overlapping

    now = timezone.now()
    client.force_login(operator)
    _, secret = feed_token_create(name="noc")

    def read_the_calendar() -> tuple[float, str]:
        """The diagnosis, the calendar page and the feed read the calendar; seconds taken and the feed."""
        began = time.monotonic()
        assert maintenance_windows_overlapping(now - timedelta(hours=6), now) == []
        assert client.get("/maintenance/?view=list").status_code == 200
        body = client.get(f"/maintenance/feeds/{secret}/all.ics").content.decode()
        return time.monotonic() - began, body

    read_the_calendar()  # warm: URL resolution, templates
    baseline_s, _ = read_the_calendar()
    # given a rule stored before the check existed (a year of seconds: 31 million occurrences; expanding a
    # month of it took 25 s before)
    window = MaintenanceWindow.objects.create(
        reference="STORM-2", carrier=Carrier.objects.get(code="COLT"), start=now - timedelta(days=365),
        end=now - timedelta(days=365) + timedelta(seconds=1), rrule="FREQ=SECONDLY",
    )
    elapsed_s, body = read_the_calendar()
    # then it costs about nothing more: the rule counts as its first occurrence only, and does not repeat in the feed
    assert elapsed_s < 3 * baseline_s + 1.0, f"{elapsed_s:.2f} s with the rule, {baseline_s:.2f} s without"
    assert "STORM-2" in body and "FREQ=SECONDLY" not in body
    assert len(window_occurrences(window, now - timedelta(days=366), now)) == 1


@pytest.mark.parametrize("rule", ["FREQ=DAILY", "FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,TH", "FREQ=DAILY;INTERVAL=3",
                                  "FREQ=MONTHLY;BYDAY=1SU", "FREQ=DAILY;UNTIL=20300101T000000Z"])
def test_expansion_near_the_range_gives_every_occurrence(rule):
    # given a rule that started ten years ago at 02:00 UTC
    start = datetime(2016, 3, 1, 2, 0, tzinfo=UTC)
    lo, hi = datetime(2026, 5, 3, tzinfo=UTC), datetime(2026, 6, 20, tzinfo=UTC)
    # the oracle: dateutil expanding from the first occurrence
    expected = [m for m in rrulestr(rule, dtstart=start).between(lo, hi, inc=True) if m < hi]
    began = time.monotonic()
    assert rrule_moments(rule, dtstart=start, lo=lo, hi=hi) == expected
    assert time.monotonic() - began < 0.5
    assert expected  # the test compares something
