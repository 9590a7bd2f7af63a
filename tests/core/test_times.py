"""The one time format of pages and e-mails (wanmon.core.times): the date only where it is not today's, no seconds."""

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from wanmon.core.times import format_clock, format_duration_hm, format_since, format_since_utc, format_utc

NOW = datetime(2026, 3, 1, 1, 16, 42, tzinfo=UTC)


def test_a_time_of_today_is_the_clock_alone_and_another_day_adds_the_date():
    assert format_utc(datetime(2026, 3, 1, 0, 25, 59, tzinfo=UTC), NOW) == "00:25 UTC"
    assert format_utc(datetime(2026, 2, 27, 13, 10, tzinfo=UTC), NOW) == "27 Feb 13:10 UTC"
    assert format_utc(datetime(2026, 3, 2, 9, 0, tzinfo=UTC), NOW) == "02 Mar 09:00 UTC"  # tomorrow is not today
    assert format_utc(datetime(2025, 11, 27, 13, 10, tzinfo=UTC), NOW) == "27 Nov 2025 13:10 UTC"
    assert format_utc(None, NOW) == "–"


def test_today_is_the_day_of_the_zone_shown():
    # 23:30 UTC on 28 Feb is 00:30 on 1 Mar in Zurich: today there, yesterday in UTC
    late = datetime(2026, 2, 28, 23, 30, tzinfo=UTC)
    assert format_clock(late, NOW, ZoneInfo("Europe/Zurich")) == "00:30"
    assert format_utc(late, NOW) == "28 Feb 23:30 UTC"


def test_durations_to_the_minute_then_in_days():
    assert [format_duration_hm(s) for s in (20, 45 * 60, 12 * 3600, 12 * 3600 + 5 * 60, 47 * 3600 + 59 * 60,
                                            1.6 * 86400 + 12 * 3600, 40 * 86400)] == [
        "< 1 min", "45 min", "12 h", "12 h 05 min", "47 h 59 min", "2.1 d", "40 d"]


def test_since_an_onset_ongoing_or_ended():
    onset = datetime(2026, 2, 28, 13, 10, tzinfo=UTC)
    assert format_since_utc(onset, NOW) == "since 28 Feb 13:10 UTC, 12 h 07 min, ongoing as of 01:16 UTC"
    assert format_since_utc(onset, NOW, end=datetime(2026, 3, 1, 1, 16, tzinfo=UTC)) == (
        "28 Feb 13:10 UTC – 01:16 UTC, 12 h 06 min")
    today = datetime(2026, 3, 1, 0, 25, tzinfo=UTC)
    assert format_since_utc(today, NOW) == "since 00:25 UTC, 52 min, ongoing as of 01:16 UTC"
    assert format_since_utc(None, NOW) == ""


def test_the_dashboard_form_of_since_in_the_page_zone_names_no_zone():
    now = datetime(2026, 3, 1, 1, 10, tzinfo=UTC)
    assert format_since(datetime(2026, 2, 28, 13, 10, tzinfo=UTC), now, UTC) == "since 28 Feb 13:10, 12 h"
    assert format_since(datetime(2026, 2, 28, 13, 5, tzinfo=UTC), now, UTC) == "since 28 Feb 13:05, 12 h 05 min"
    assert format_since(datetime(2026, 3, 1, 0, 25, tzinfo=UTC), now, UTC) == "since 00:25, 45 min"
    # in the page's zone: 01:25 in Zurich is the same day as 02:10
    assert format_since(datetime(2026, 3, 1, 0, 25, tzinfo=UTC), now, ZoneInfo("Europe/Zurich")) == (
        "since 01:25, 45 min")
    assert format_since(None, now, UTC) == ""
