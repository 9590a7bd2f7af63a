"""GET /api/v1/query picks the right rollup and returns the numbers the rollups hold."""

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection

pytestmark = pytest.mark.django_db
T0 = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture
def hourly(topo):
    """90 days of 1-hour rollups and 2 days of raw 1-minute rates for geant-par:xe-1/0/0."""
    iid = topo["xe"].id
    with connection.cursor() as c:
        c.execute(
            """INSERT INTO measurements_interfacerate_1h (time, interface_id, samples, covered_s, in_bps_avg,
                   in_bps_max, in_bps_p95, out_bps_avg, out_bps_max, out_bps_p95)
               SELECT t, %s, 60, 3600, 1e9 + extract(hour from t) * 1e8, 2e9, 1.8e9, 5e8, 6e8, 5.5e8
               FROM generate_series(%s::timestamptz, %s::timestamptz - interval '1 hour', interval '1 hour') t""",
            [iid, T0, T0 + timedelta(days=90)],
        )
        c.execute(
            """INSERT INTO measurements_interfacerate (time, interface_id, interval_s, in_bps, out_bps)
               SELECT t, %s, 60, 3e9, 1e9
               FROM generate_series(%s::timestamptz, %s::timestamptz, interval '1 minute') t""",
            [iid, T0, T0 + timedelta(days=2)],
        )
    return iid


def test_90_day_hourly_series_comes_from_the_1h_rollup(admin_client, hourly):
    response = admin_client.get("/api/v1/query", {"metric": "in_bps", "interface": "geant-par:xe-1/0/0",
                                                  "start": T0.isoformat(), "end": (T0 + timedelta(days=90)).isoformat(),
                                                  "bucket": "1h"})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["source"] == "measurements_interfacerate_1h"
    (series,) = body["series"]
    assert series["key"] == {"equipment": "geant-par", "interface": "xe-1/0/0"}
    assert len(series["points"]) == 90 * 24
    assert series["points"][5][1] == pytest.approx(1.5e9)  # 05:00: 1e9 + 5 * 1e8


def test_12h_max_reads_the_hourly_rollup_and_csv_export(admin_client, hourly):
    params = {"metric": "in_bps", "equipment": "geant-par", "start": T0.isoformat(),
              "end": (T0 + timedelta(days=10)).isoformat(), "bucket": "12h", "aggregate": "max", "group_by": "all"}
    body = admin_client.get("/api/v1/query", params).json()
    assert body["source"] == "measurements_interfacerate_1h"
    assert [v for _, v in body["series"][0]["points"]] == [2e9] * 20
    csv = admin_client.get("/api/v1/query", {**params, "format": "csv"})
    lines = csv.content.decode().splitlines()
    assert lines[0] == "time,in_bps_max" and len(lines) == 21 and lines[1].endswith(",2000000000.0")


def test_short_range_reads_raw_rates(admin_client, hourly):
    body = admin_client.get("/api/v1/query", {"metric": "in_bps", "start": T0.isoformat(),
                                              "end": (T0 + timedelta(hours=1)).isoformat()}).json()
    assert body["source"] == "measurements_interfacerate" and body["bucket_s"] == 60
    assert body["series"][0]["points"][0][1] == pytest.approx(3e9)


@pytest.mark.parametrize("params,path", [
    ({"metric": "bogus"}, "metric"),
    ({"metric": "in_bps", "bucket": "5 parsecs"}, "bucket"),
    ({"metric": "in_bps", "aggregate": "p42"}, "aggregate"),
    ({"metric": "in_bps", "start": "2026-01-02T00:00:00Z", "end": "2026-01-01T00:00:00Z"}, "end"),
    ({"metric": "in_bps", "group_by": "path"}, "group_by"),
])
def test_bad_queries_are_400_naming_the_parameter(admin_client, topo, params, path):
    response = admin_client.get("/api/v1/query", params)
    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == path


def test_query_requires_login(client, topo):
    assert client.get("/api/v1/query", {"metric": "in_bps"}).status_code in (401, 403)


@pytest.mark.parametrize(("params", "field", "message"), [
    ({"metric": "throughput_bps", "src": "CRN"}, "src", "unknown site 'CRN'"),
    ({"metric": "in_bps", "equipment": "geant-pra"}, "equipment", "unknown equipment 'geant-pra'"),
    ({"metric": "in_bps", "interface": "geant-par:xe-9/9/9"}, "interface", "unknown interface 'geant-par:xe-9/9/9'"),
    ({"metric": "in_bps", "carrier": "GAENT"}, "carrier", "unknown carrier 'GAENT'"),
])
def test_a_misspelt_name_is_a_400_naming_it_not_an_empty_series(admin_client, hourly, params, field, message):
    response = admin_client.get("/api/v1/query", params)
    assert response.status_code == 400
    assert response.json() == {"errors": [{"path": field, "message": message}]}
    # the CSV of the same query says so as CSV, not as a Python dict
    csv = admin_client.get("/api/v1/query", {**params, "format": "csv"})
    assert csv.status_code == 400
    assert csv.content.decode().splitlines() == ["path,message", f"{field},{message}"]


def test_median_and_percentiles_per_bucket(admin_client, hourly):
    # one hour of 1-minute rates: 3e9 in each; with a spread, the median is the middle value
    with connection.cursor() as c:
        c.execute("UPDATE measurements_interfacerate SET in_bps = extract(minute from time) * 1e8 "
                  "WHERE time >= %s AND time < %s", [T0, T0 + timedelta(hours=1)])
    params = {"metric": "in_bps", "interface": "geant-par:xe-1/0/0", "start": T0.isoformat(),
              "end": (T0 + timedelta(hours=1)).isoformat(), "bucket": "1h", "group_by": "all"}
    median = admin_client.get("/api/v1/query", {**params, "aggregate": "median"}).json()
    assert median["series"][0]["points"][0][1] == pytest.approx(29.5e8)  # minutes 0..59: (29 + 30) / 2
    p99 = admin_client.get("/api/v1/query", {**params, "aggregate": "p99"}).json()
    assert p99["series"][0]["points"][0][1] == pytest.approx(58.41e8)
