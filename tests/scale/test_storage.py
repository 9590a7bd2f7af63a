"""Storage at scale on the Apache edition (the Debian build here): the edition is detected at run time, nothing
beyond Apache-2 is enabled, and the query API answers the same before and after."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection

from wanmon.inventory.models import Equipment, Interface
from wanmon.measurements.rollups import interface_rollups_refresh
from wanmon.measurements.selectors import measurement_query
from wanmon.measurements.storage import storage_policies_apply, timescale_license

pytestmark = pytest.mark.django_db


def test_the_apache_edition_gets_no_compression_and_the_same_answers():
    if timescale_license() != "apache":
        pytest.skip(f"this database runs the {timescale_license()} edition, not the Apache one tested here")
    eq = Equipment.objects.create(name="r1")
    iface = Interface.objects.create(equipment=eq, name="et-0/0/0", speed_mbps=100_000)
    end = datetime(2026, 6, 1, tzinfo=UTC)
    start = end - timedelta(days=3)
    with connection.cursor() as c:
        c.execute(
            """INSERT INTO measurements_interfacerate (time, interface_id, interval_s, in_bps, out_bps)
               SELECT t, %s, 60, 4e9 + 3e9 * sin(extract(epoch from t) / 13751.0), 1e9
               FROM generate_series(%s::timestamptz, %s::timestamptz - interval '1 minute', interval '1 minute') t""",
            [iface.id, start, end],
        )
    interface_rollups_refresh(interface_ids=[iface.id], since=start)

    def ask(bucket_s: int):
        result = measurement_query(metric="in_bps", start=start, end=end, bucket_s=bucket_s, aggregate="avg",
                                   interface="r1:et-0/0/0")
        return [(p[0], round(p[1], 3)) for s in result.series for p in s["points"]]

    before = {b: ask(b) for b in (300, 3600)}
    assert len(before[3600]) == 72 and len(before[300]) == 864
    report = storage_policies_apply()
    assert report.license == "apache" and not report.community and report.compression == []
    with connection.cursor() as c:
        c.execute("SELECT count(*) FROM timescaledb_information.hypertables WHERE compression_enabled")
        assert c.fetchone()[0] == 0
    assert {b: ask(b) for b in (300, 3600)} == before
