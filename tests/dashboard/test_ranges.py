"""The time range picker: spans, buckets, and the rollup table each range reads; the instant the overview shows."""

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from collectors.records.types import iso_z
from wanmon.dashboard import constants as k
from wanmon.dashboard.ranges import AsOf, RangeError, parse_time, parse_time_param, resolve_range
from wanmon.dashboard.selectors import interface_table_for_bucket

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("key", "span", "table"),
    [("6h", timedelta(hours=6), "measurements_interfacerate"),
     ("24h", timedelta(days=1), "measurements_interfacerate_5m"),
     ("7d", timedelta(days=7), "measurements_interfacerate_1h"),
     ("30d", timedelta(days=30), "measurements_interfacerate_1h"),
     ("90d", timedelta(days=90), "measurements_interfacerate_1d"),
     ("1y", timedelta(days=365), "measurements_interfacerate_1d")],
)
def test_each_range_reads_its_rollup(key, span, table):
    tr = resolve_range(key=key, end=None, now=NOW)
    assert tr.end - tr.start == span
    assert interface_table_for_bucket(tr.bucket_s) == table
    # a few hundred points per series at most
    assert span.total_seconds() / tr.bucket_s <= 1000


def test_default_and_unknown_range_and_anchor():
    assert resolve_range(key=None, end=None, now=NOW).key == k.DEFAULT_RANGE
    assert resolve_range(key="2w", end=None, now=NOW).key == k.DEFAULT_RANGE
    free = resolve_range(key="6h", end=None, now=NOW)
    assert not free.anchored and free.end == NOW and free.raw_tests
    anchored = resolve_range(key="7d", end=NOW - timedelta(days=1), now=NOW)
    assert anchored.anchored and not anchored.raw_tests
    assert anchored.query() == "range=7d&end=2026-02-28T12%3A00%3A00Z"


def test_parse_time_accepts_links_and_form_values_in_the_users_zone():
    assert parse_time("2026-03-01T12:00:00Z", UTC) == NOW
    assert parse_time(iso_z(NOW, 'seconds', utc=True), UTC) == NOW
    # datetime-local inputs carry wall-clock time of the zone shown on the page
    assert parse_time("2026-03-01T13:00", ZoneInfo("Europe/Zurich")) == NOW
    assert parse_time("yesterday", UTC) is None
    assert parse_time("", UTC) is None


@pytest.mark.parametrize("text", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-14:00", "99991231T235959-14:00",
                                  "1899-12-31T23:59:59Z", "3000-01-01"])
def test_a_time_outside_the_years_wanmon_accepts_is_refused_naming_the_parameter(text):
    # in UTC, year 1 at +01:00 is year 0 and 9999 at -14:00 year 10000: Python cannot hold them (OverflowError)
    with pytest.raises(RangeError, match=r"^end: year \d+ is outside the years wanmon accepts \(1900 to 2999\)"):
        parse_time_param("end", text, UTC)
    assert parse_time(text, UTC) is None
    assert parse_time_param("end", "2999-12-31T23:59:59-14:00", UTC) == datetime(3000, 1, 1, 13, 59, 59, tzinfo=UTC)


def test_as_of_now_links_a_data_gap_and_a_chosen_instant_is_carried_by_links():
    now = AsOf(now=NOW)
    old = NOW - k.DATA_GAP_NOTICE_AFTER - timedelta(seconds=1)
    assert now.at == NOW and now.query == ""
    assert now.gap_href("/map/", old) == "/map/?at=2026-03-01T10%3A59%3A59Z"
    assert now.gap_href("/map/", NOW - k.DATA_GAP_NOTICE_AFTER) is None and now.gap_href("/map/", None) is None
    chosen = AsOf(now=NOW, at_param=old)
    assert chosen.at == old and chosen.query == "end=2026-03-01T10%3A59%3A59Z"
    assert chosen.gap_href("/map/", old - timedelta(days=1)) is None
