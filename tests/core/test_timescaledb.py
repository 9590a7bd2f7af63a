"""The database is PostgreSQL with TimescaleDB: a real hypertable, inserts and a time_bucket query."""

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection

pytestmark = pytest.mark.django_db


def test_timescaledb_extension_installed():
    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'timescaledb'")
        (version,) = cursor.fetchone()
    major, minor = (int(x) for x in version.split(".")[:2])
    assert (major, minor) >= (2, 13)


def test_hypertable_create_insert_time_bucket():
    start = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
    with connection.cursor() as cursor:
        # given a hypertable with one-hour chunks
        cursor.execute(
            "CREATE TABLE probe_rates (time timestamptz NOT NULL, iface text NOT NULL, in_bps double precision)"
        )
        cursor.execute("SELECT create_hypertable('probe_rates', 'time', chunk_time_interval => interval '1 hour')")
        # when two hours of 1-minute samples go in: 1 Gb/s in the first hour, 3 Gb/s in the second
        rows = [(start + timedelta(minutes=i), "xe-1/0/0", 1e9 if i < 60 else 3e9) for i in range(120)]
        cursor.executemany("INSERT INTO probe_rates VALUES (%s, %s, %s)", rows)
        cursor.execute(
            "SELECT time_bucket('1 hour', time) AS bucket, avg(in_bps), count(*) FROM probe_rates "
            "GROUP BY bucket ORDER BY bucket"
        )
        buckets = cursor.fetchall()
        cursor.execute("SELECT count(*) FROM show_chunks('probe_rates')")
        (chunks,) = cursor.fetchone()
    # then each hour is its own bucket with the right mean, and the data sits in two chunks
    assert [(b[0], round(b[1]), b[2]) for b in buckets] == [
        (start, 1_000_000_000, 60),
        (start + timedelta(hours=1), 3_000_000_000, 60),
    ]
    assert chunks == 2


def test_drop_chunks_removes_old_data():
    start = datetime(2026, 1, 1, tzinfo=UTC)
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE probe_old (time timestamptz NOT NULL, v int)")
        cursor.execute("SELECT create_hypertable('probe_old', 'time', chunk_time_interval => interval '1 day')")
        cursor.executemany("INSERT INTO probe_old VALUES (%s, %s)", [(start + timedelta(days=d), d) for d in range(10)])
        cursor.execute("SELECT count(*) FROM drop_chunks('probe_old', older_than => %s::timestamptz)",
                       [start + timedelta(days=5)])
        (dropped,) = cursor.fetchone()
        cursor.execute("SELECT min(v), count(*) FROM probe_old")
        remaining = cursor.fetchone()
    assert dropped == 5
    assert remaining == (5, 5)
