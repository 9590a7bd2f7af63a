"""Limits of the query and list APIs: rows and series per response, out-of-range values, pagination, rates per
user, the statement timeout of web reads, CSV cells a spreadsheet would run."""

import csv
import io
from datetime import UTC, datetime, timedelta

import pytest
from django.core.cache import cache
from django.db import connection

from wanmon.inventory.models import Equipment, Interface, Site

pytestmark = pytest.mark.django_db
T0 = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture
def many_interfaces(topo):
    """30 interfaces on geant-par with an hour of 1-minute rates each (60 points per series)."""
    par = topo["par"]
    ids = [Interface.objects.create(equipment=par, name=f"ge-0/0/{n}").id for n in range(30)]
    with connection.cursor() as c:
        c.execute(
            """INSERT INTO measurements_interfacerate (time, interface_id, interval_s, in_bps, out_bps)
               SELECT t, i, 60, 1e9, 1e8 FROM unnest(%s::bigint[]) i,
                      generate_series(%s::timestamptz, %s::timestamptz - interval '1 minute', interval '1 minute') t""",
            [ids, T0, T0 + timedelta(hours=1)],
        )
    return ids


def _query(client, **params):
    base = {"metric": "in_bps", "start": T0.isoformat(), "end": (T0 + timedelta(hours=1)).isoformat(), "bucket": "1m"}
    return client.get("/api/v1/query", {**base, **params})


def test_series_per_response_are_capped(admin_client, many_interfaces, settings):
    settings.WANMON_QUERY_MAX_SERIES = 10
    response = _query(admin_client, group_by="interface")
    assert response.status_code == 400, response.content
    (error,) = response.json()["errors"]
    assert error["path"] == "group_by" and "more than 10 series" in error["message"]
    # Filtered down, or grouped coarser, the same data is answered.
    assert _query(admin_client, group_by="equipment").status_code == 200
    assert len(_query(admin_client, interface="geant-par:ge-0/0/3").json()["series"]) == 1


def test_points_per_response_are_capped_across_series(admin_client, many_interfaces, settings):
    settings.WANMON_QUERY_MAX_POINTS = 1000  # 30 series x 60 points = 1800 > 1000, each series alone is fine
    response = _query(admin_client, group_by="interface")
    assert response.status_code == 400
    assert "more than 1000 points" in response.json()["errors"][0]["message"]
    settings.WANMON_QUERY_MAX_POINTS = 1800
    body = _query(admin_client, group_by="interface").json()
    assert len(body["series"]) == 30 and sum(len(s["points"]) for s in body["series"]) == 1800


@pytest.mark.parametrize("params,path", [
    ({"bucket": "99999999999999999999d"}, "bucket"),
    ({"bucket": "4000d"}, "bucket"),
    ({"bucket": "١٢s"}, "bucket"),  # Arabic-Indic digits pass str.isdigit()
    ({"start": "0001-01-01T00:00:00Z", "end": "0001-01-02T00:00:00Z"}, "start"),
    ({"start": None, "end": "0001-01-01T00:00:00Z"}, "end"),
    ({"end": "9999-12-31T23:59:59Z"}, "end"),
])
def test_out_of_range_values_are_400_not_500(admin_client, topo, params, path):
    query = {"metric": "in_bps", **{k: v for k, v in params.items() if v is not None}}
    response = admin_client.get("/api/v1/query", query)
    assert response.status_code == 400, response.content
    body = response.json()
    # the query API's own errors, or the site's input guard (wanmon/core/guard.py) for a year it refuses everywhere
    named = body["errors"][0]["path"] if "errors" in body else next(iter(body))
    assert named == path, body


def test_csv_cells_that_a_spreadsheet_would_run_are_escaped(admin_client, topo):
    site = Site.objects.create(code="EVIL", name="x")
    names = ["=HYPERLINK(\"http://x\")", "+1", "-2", "@SUM(A1)", "\tTAB", "\rCR", "plain"]
    for name in names:
        iface = Interface.objects.create(equipment=Equipment.objects.create(name=f"eq{names.index(name)}", site=site),
                                         name=name)
        with connection.cursor() as c:
            c.execute("INSERT INTO measurements_interfacerate (time, interface_id, interval_s, in_bps) "
                      "VALUES (%s, %s, 60, 5)", [T0 + timedelta(minutes=1), iface.id])
    response = _query(admin_client, site="EVIL", format="csv")
    assert response.status_code == 200
    rows = list(csv.reader(io.StringIO(response.content.decode(), newline="")))
    cells = sorted(row[2] for row in rows[1:])
    assert cells == sorted(["'=HYPERLINK(\"http://x\")", "'+1", "'-2", "'@SUM(A1)", "'\tTAB", "'\rCR", "plain"])
    assert [row[3] for row in rows[1:]] == ["5.0"] * len(names)  # numbers are left as numbers (negative ones too)


def test_list_limit_is_capped_and_bad_values_are_400(admin_client, db, settings):
    for n in range(5):
        Site.objects.create(code=f"S{n}", name=f"site {n}")
    settings.WANMON_API_MAX_LIMIT = 2
    body = admin_client.get("/api/v1/sites/", {"limit": 100}).json()
    assert body["count"] == 5 and len(body["results"]) == 2
    for bad in ({"offset": 10**30}, {"limit": -1}, {"offset": "x"}):
        response = admin_client.get("/api/v1/sites/", bad)
        assert response.status_code == 400, (bad, response.content)


def test_per_user_rate_limit(admin_client, db, settings):
    cache.clear()
    settings.WANMON_API_USER_RATE = "3/min"
    codes = [admin_client.get("/api/v1/sites/").status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    cache.clear()


@pytest.mark.django_db(transaction=True)
def test_a_slow_read_is_cut_by_the_statement_timeout_with_a_clear_503(admin_client, settings, monkeypatch):
    from wanmon.measurements import selectors

    settings.WANMON_WEB_STATEMENT_TIMEOUT_MS = 200
    real_run = selectors._run

    def slow_run(sql, *args):
        with connection.cursor() as c:
            c.execute("SELECT pg_sleep(5)")  # stands for an expensive aggregation
        return real_run(sql, *args)

    monkeypatch.setattr(selectors, "_run", slow_run)
    Site.objects.create(code="CERN", name="CERN")
    started = datetime.now(UTC)
    response = _query(admin_client)
    elapsed = (datetime.now(UTC) - started).total_seconds()
    assert response.status_code == 503
    assert "200 ms" in response.json()["errors"][0]["message"]
    assert elapsed < 3
    # The limit is per request: the connection is back to no limit afterwards.
    with connection.cursor() as c:
        c.execute("SHOW statement_timeout")
        assert c.fetchone()[0] == "0"


def test_discovered_interfaces_are_capped_per_device(client, topo, settings):
    from tests.measurements.test_ingest_api import batch, post, snmp

    settings.WANMON_INGEST_MAX_INTERFACES_PER_DEVICE = 3  # geant-par already has xe-1/0/0
    records = [snmp(1000, 5, interface=f"new-{n}") for n in range(4)]
    response = post(client, batch(records), topo["cern_token"])
    assert response.status_code == 400, response.content
    errors = response.json()["errors"]
    assert [e["path"] for e in errors] == ["records[2].interface", "records[3].interface"]
    assert "more than 3 interfaces" in errors[0]["message"] and "'geant-par'" in errors[0]["message"]
    assert Interface.objects.filter(equipment=topo["par"]).count() == 1  # nothing of the batch stored
    ok = post(client, batch(records[:2]), topo["cern_token"])
    assert ok.status_code == 200, ok.content
    assert Interface.objects.filter(equipment=topo["par"]).count() == 3


def test_rate_limits_count_in_the_process_when_redis_is_down(admin_client, db, settings):
    from wanmon.core.throttling import cache_breaker

    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache",
                                   "LOCATION": "redis://127.0.0.1:1/0",
                                   "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5}}}
    settings.WANMON_API_USER_RATE = "3/min"
    try:  # answered (no 500), and still limited: counted in this process while the cache fails
        assert [admin_client.get("/api/v1/sites/").status_code for _ in range(4)] == [200, 200, 200, 429]
    finally:
        cache_breaker.reset()
