"""Guards against silently wrong windows: a window far longer than its notice says, far from the notice's date, or
whose dates are the text's read the wrong way round is held for review with the reasons, whoever vouched for it.

The real case: circuit-maintenance-parser alone reads Cogent's "10:00pm CT 11/3/2022 ... 5:00am CT 11/4/2022"
(7 hours) day first, 11 March to 11 April 2022, 726 hours. wanmon hands Cogent's dates to it the way it reads
them (carrier_parser.py); with the library's own reading restored, the guards must catch the window.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from django.core.management import call_command

from tests.maintenance.conftest import CARRIERS
from wanmon.diagnosis.selectors import maintenance_windows_overlapping
from wanmon.inventory.models import Carrier
from wanmon.maintenance import carrier_parser
from wanmon.maintenance.carrier_notices import carrier_notice_parse
from wanmon.maintenance.choices import EventKind, Review
from wanmon.maintenance.imports import maintenance_import_file
from wanmon.maintenance.models import MaintenanceWindow
from wanmon.maintenance.parsed import ParsedWindow
from wanmon.maintenance.plausibility import text_dates, text_longest_duration, window_doubts
from wanmon.maintenance.selectors import maintenance_matches_for_element
from wanmon.maintenance.services import maintenance_window_review


def utc(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


COGENT_DOUBTS = [
    "the window lasts 726 h, the notice names no duration above 7 h",
    "the window ended 206 days before the notice's date (2022-11-03)",
    "the start (2022-03-12) is 11/3/2022 read the wrong way round: the text writes dates month first, "
    "11/3/2022 is 2022-11-03",
    "the end (2022-04-11) is 11/4/2022 read the wrong way round: the text writes dates month first, "
    "11/4/2022 is 2022-11-04",
]


@pytest.fixture
def library_reading(monkeypatch):
    """circuit-maintenance-parser's own reading of Cogent's dates (day first), as without wanmon's correction."""
    monkeypatch.setattr(carrier_parser.TextParserCogent1, "parse_text", carrier_parser._cogent_parse_text)


def test_the_librarys_cogent_window_is_doubted_for_all_three_reasons(library_reading):
    result = carrier_notice_parse((CARRIERS / "cogent3.eml").read_bytes(), provider="cogent")
    (window,) = result.windows
    assert (window.start, window.end) == (utc(2022, 3, 12, 4), utc(2022, 4, 11, 10))
    assert result.date == utc(2022, 11, 3, 11, 44)
    assert window_doubts(window, notice_date=result.date, text=result.text) == COGENT_DOUBTS


def test_wanmons_cogent_window_is_the_notices_and_believed():
    result = carrier_notice_parse((CARRIERS / "cogent3.eml").read_bytes(), provider="cogent")
    (window,) = result.windows
    assert (window.start, window.end) == (utc(2022, 11, 4, 3), utc(2022, 11, 4, 10))  # 10pm-5am CDT, 7 hours
    assert window_doubts(window, notice_date=result.date, text=result.text) == []


@pytest.mark.django_db
def test_a_doubted_window_is_held_even_from_an_operator_and_mutes_nothing_until_accepted(topology, library_reading,
                                                                                        operator):
    cogent = Carrier.objects.get(code="COGENT")
    (n,) = maintenance_import_file(path=CARRIERS / "cogent3.eml", carrier=cogent, parser="cogent").notices
    assert n.trusted  # the command line vouches for the source, not for the parser's reading
    (w,) = n.windows
    assert w.doubts == COGENT_DOUBTS and w.review == Review.HELD
    window = MaintenanceWindow.objects.get()
    assert window.review == Review.HELD and window.review_note.startswith("times doubtful: the window lasts 726 h")
    assert window.events.filter(kind=EventKind.HELD).get().note == window.review_note
    during = utc(2022, 3, 20)
    (match,) = maintenance_matches_for_element("circuit:1-300123456", during)
    assert not match.mutes
    assert maintenance_windows_overlapping(during - timedelta(hours=1), during) == []
    # an operator who has read the notice decides
    maintenance_window_review(window=window, accept=True, user=operator)
    (match,) = maintenance_matches_for_element("circuit:1-300123456", during)
    assert match.mutes


@pytest.mark.django_db
def test_the_commands_report_says_why_a_window_is_held(library_reading, topology, capsys):
    call_command("maintenance_import_file", str(CARRIERS / "cogent3.eml"), "--carrier", "COGENT", "--parser", "cogent")
    out = capsys.readouterr().out
    assert "HELD FOR REVIEW, times doubtful: the window lasts 726 h, the notice names no duration above 7 h" in out


def _window(start: datetime, end: datetime) -> ParsedWindow:
    return ParsedWindow(reference="X", start=start, end=end)


@pytest.mark.parametrize(
    ("text", "named", "swapped", "order"),
    [
        # a US time zone: month first
        ("Start time: 10:00pm CT 11/3/2022", {date(2022, 11, 3)}, {date(2022, 3, 11)}, "month first"),
        # a date with a day above 12 says day first, whatever the zone
        ("from 25/11/2022 to 02/12/2022 EST", {date(2022, 11, 25), date(2022, 12, 2)}, {date(2022, 2, 12)},
         "day first"),
        # nothing says: both readings are named, none is wrong
        ("06/8/2021 22:00:00 GMT", {date(2021, 8, 6), date(2021, 6, 8)}, set(), ""),
        # dates that contradict each other: no order
        ("11/25/2022 and 25/11/2022 and 3/4/2022", {date(2022, 11, 25), date(2022, 4, 3), date(2022, 3, 4)}, set(),
         ""),
        # month names and ISO dates are never ambiguous
        ("Aug 29, 2022 15:00 UTC; 12-Feb-2024 09:00; 2021-11-01T06:01Z; 3rd November 2022",
         {date(2022, 8, 29), date(2024, 2, 12), date(2021, 11, 1), date(2022, 11, 3)}, set(), ""),
    ],
)
def test_text_dates(text, named, swapped, order):
    dates = text_dates(text)
    assert (set(dates.named), set(dates.swapped), dates.order) == (named, swapped, order)


def test_durations_the_text_names():
    assert text_longest_duration("Expected impact duration: Up to 04 Hours 05 Minutes") == timedelta(hours=4)
    assert text_longest_duration("8 Days 23 Hours 58 Minutes") == timedelta(days=8)
    assert text_longest_duration("an outage of 1.5 hrs, or 30 mins") == timedelta(hours=1.5)
    assert text_longest_duration("no duration here, Day 3 of 3") is None


def test_a_long_window_is_believed_when_the_notice_names_no_duration_or_a_long_one():
    start = utc(2024, 12, 22)
    nine_days = _window(start, start + timedelta(days=9))
    assert window_doubts(nine_days, notice_date=start - timedelta(days=30), text="work over 8 Days 23 Hours") == []
    assert window_doubts(nine_days, notice_date=None, text="no duration named") == []
    # the usual short outage inside a night's window is no doubt either
    night = _window(start, start + timedelta(hours=8))
    assert window_doubts(night, notice_date=None, text="outage of 30 minutes within the window") == []
    long_day = _window(start, start + timedelta(hours=30))
    assert window_doubts(long_day, notice_date=None, text="outage of 30 minutes") == [
        "the window lasts 30 h, the notice names no duration above 0.5 h"]


def test_distance_from_the_notices_date():
    start = utc(2025, 3, 31, 14)
    window = _window(start, start + timedelta(hours=1))
    assert window_doubts(window, notice_date=start - timedelta(days=179), text="") == []
    assert window_doubts(window, notice_date=start - timedelta(days=181), text="") == [
        "the window starts 181 days after the notice's date (2024-10-01)"]
    assert window_doubts(window, notice_date=start + timedelta(days=59), text="") == []  # a late completion notice
    assert window_doubts(window, notice_date=start + timedelta(days=62), text="") == [
        "the window ended 61 days before the notice's date (2025-06-01)"]
