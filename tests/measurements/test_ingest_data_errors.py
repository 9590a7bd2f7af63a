"""What a collector really sends reaches the tables, and data the database refuses is the data's fault.

A 503 tells an agent to keep its spool and retry, so it must only ever mean "the database is unavailable":
a value PostgreSQL refuses or a conflict with stored rows is a 400 or 409 naming the record, which the agent
parks while the rest of its data goes on. Agent samples that would have the recompute rewrite history
(an agent whose clock booted at 2000-01-01) are refused, and no recompute deletes rates or rollups that
have no raw samples left behind them.
"""

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.utils import timezone

from tests.measurements.conftest import make_agent
from tests.measurements.test_ingest_api import _now_iso, batch, counts, post, snmp, throughput
from wanmon.inventory.models import Interface
from wanmon.measurements.services import measurements_process

pytestmark = pytest.mark.django_db


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _rows(sql: str, params=()) -> list[tuple]:
    with connection.cursor() as c:
        c.execute(sql, params)
        return c.fetchall()


# --- what collectors send ----------------------------------------------------------------------


@pytest.mark.parametrize("speed_mbps", [10000.0, 2.048, 0.064, 100000.0])
def test_fractional_and_float_interface_speeds_are_stored_exactly(client, topo, speed_mbps):
    # The SNMP collector reports ifHighSpeed as a float and ifSpeed / 1e6 below 1 Gb/s (an E1: 2.048).
    response = post(client, batch([snmp(100, 10**9, speed_mbps=speed_mbps)]), topo["cern_token"])

    assert response.status_code == 200, response.content
    assert _rows("SELECT speed_mbps FROM measurements_snmpsample") == [(speed_mbps,)]


def test_a_discovered_e1_is_registered_without_a_made_up_speed(client, topo):
    response = post(client, batch([snmp(100, 10**9, interface="e1-0/0/3", speed_mbps=2.048)]), topo["cern_token"])

    assert response.status_code == 200, response.content
    assert Interface.objects.get(name="e1-0/0/3").speed_mbps == 2  # whole Mbit/s in the inventory
    assert _rows("SELECT speed_mbps FROM measurements_snmpsample") == [(2.048,)]


def test_interface_names_as_long_as_the_wire_schema_allows_are_stored(client, topo):
    name = "TenGigE0/0/0/1." + "ü" * 113  # 128 characters, unicode
    response = post(client, batch([snmp(100, 10**9, interface=name)]), topo["cern_token"])

    assert response.status_code == 200, response.content
    assert Interface.objects.filter(equipment=topo["par"], name=name).exists()


def test_a_sample_without_sysuptime_is_stored(client, topo):
    record = snmp(100, 10**9)
    del record["sys_uptime_ticks"]

    response = post(client, batch([record]), topo["cern_token"])

    assert response.status_code == 200, response.content
    assert _rows("SELECT sys_uptime_ticks, hc_in_octets FROM measurements_snmpsample") == [(None, 10**9)]


def test_a_renumbered_interface_whose_ifindex_another_holds_is_registered_without_it(client, topo):
    # xe-1/0/0 holds ifIndex 501 in the inventory; after a reboot the device gives 501 to a new port.
    response = post(client, batch([snmp(100, 10**9, interface="xe-1/0/9", if_index=501)]), topo["cern_token"])

    assert response.status_code == 200, response.content
    new = Interface.objects.get(equipment=topo["par"], name="xe-1/0/9")
    assert new.if_index is None
    assert Interface.objects.get(pk=topo["xe"].pk).if_index == 501
    assert counts()["snmpsample"] == 1


# --- database errors the data causes ----------------------------------------------------------------


@pytest.fixture
def refusing_store(db):
    """PostgreSQL refuses (as for a value it cannot store) the sample with ifIndex 4242 and the throughput test
    with 7 retransmits, the latter as a conflict with a stored row."""
    refusals = {
        "measurements_snmpsample": "NEW.if_index = 4242 THEN RAISE EXCEPTION 'value out of range for this column' "
                                   "USING ERRCODE = 'numeric_value_out_of_range'",
        "measurements_throughputtest": "NEW.retransmits = 7 THEN RAISE EXCEPTION 'duplicate key value' "
                                       "USING ERRCODE = 'unique_violation'",
    }
    with connection.cursor() as c:
        for table, refusal in refusals.items():
            c.execute(f"""CREATE FUNCTION {table}_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
                          BEGIN IF {refusal}; END IF; RETURN NEW; END $$""")
            c.execute(f"CREATE TRIGGER wanmon_test_refuse BEFORE INSERT ON {table} "
                      f"FOR EACH ROW EXECUTE FUNCTION {table}_refuse()")


def _polls(n: int) -> list[dict]:
    start = timezone.now() - timedelta(minutes=n + 1)
    return [snmp(100 + i * 6000, 10**9 + i * 10**8, time=_iso(start + timedelta(minutes=i)), if_index=501)
            for i in range(n)]


@pytest.mark.parametrize("n, bad", [(5, 3), (30, 26)])
def test_a_value_the_database_refuses_is_a_400_naming_the_record_and_nothing_is_kept(client, topo, refusing_store,
                                                                                      n, bad):
    records = [throughput(time=_now_iso(-300)), *_polls(n)]
    records[1 + bad]["if_index"] = 4242
    before = counts()

    response = post(client, batch(records), topo["cern_token"])

    assert response.status_code == 400, response.content
    [error] = response.json()["errors"]
    assert error["path"] == f"records[{1 + bad}]"
    assert "out of range" in error["message"]
    assert counts() == before


def test_a_value_refused_in_a_late_chunk_of_a_streamed_batch_names_its_record(client, topo, refusing_store, settings):
    settings.WANMON_INGEST_STREAM_CHUNK_RECORDS = 8  # chunks of 2, then 8: the COPY reopens between them
    records = _polls(40)
    records[33]["if_index"] = 4242
    response = post(client, batch(records), topo["cern_token"])

    assert response.status_code == 400, response.content
    assert [e["path"] for e in response.json()["errors"]] == ["records[33]"]
    assert counts()["snmpsample"] == 0


def test_a_conflict_with_stored_rows_is_a_409_naming_the_record(client, topo, refusing_store):
    records = [throughput(time=_now_iso(-300), retransmits=1), throughput(time=_now_iso(-200), retransmits=7)]

    response = post(client, batch(records), topo["cern_token"])

    assert response.status_code == 409, response.content
    assert [e["path"] for e in response.json()["errors"]] == ["records[1]"]
    assert counts()["throughputtest"] == 0


# --- batch ids are unique per agent ------------------------------------------------------------------


def test_another_agent_reusing_a_batch_id_is_new_data_and_the_same_agent_is_a_duplicate(client, topo):
    other, other_token = make_agent(topo["cern"], "cern-agent-2")
    batch_id = str(uuid.uuid4())

    first = post(client, batch([throughput(time=_now_iso(-300))], batch_id=batch_id), topo["cern_token"])
    second = post(client, batch([throughput(time=_now_iso(-200))], batch_id=batch_id), other_token)
    again = post(client, batch([throughput(time=_now_iso(-200))], batch_id=batch_id), other_token)

    assert first.json()["duplicate"] is False
    assert second.status_code == 200 and second.json()["duplicate"] is False
    assert again.json()["duplicate"] is True
    assert counts()["throughputtest"] == 2


# --- history is protected ----------------------------------------------------------------------------


def _history(client, topo, hours: int = 3) -> None:
    """Three hours of 1-minute polls, their rates and rollups (computed as the worker does)."""
    start = timezone.now() - timedelta(hours=hours)
    records = [snmp(1000 + i * 6000, 10**12 + i * 75 * 10**8, time=_iso(start + timedelta(minutes=i)))
               for i in range(hours * 60)]
    assert post(client, batch(records), topo["cern_token"]).status_code == 200
    measurements_process(interface_since={topo["xe"].id: start})


def _rollups() -> dict[str, list[tuple]]:
    return {level: _rows(f"SELECT time, samples, in_bps_avg, in_bps_max FROM measurements_interfacerate_{level} "
                         "ORDER BY time") for level in ("5m", "1h", "1d")}


def test_one_sample_dated_2000_is_refused_and_leaves_every_rollup_unchanged(client, topo):
    _history(client, topo)
    before = _rollups()
    rates = _rows("SELECT count(*) FROM measurements_interfacerate")

    response = post(client, batch([snmp(50, 10**9, time="2000-01-01T00:00:00Z")]), topo["cern_token"])

    assert response.status_code == 400, response.content
    [error] = response.json()["errors"]
    assert error["path"] == "records[0].time"
    assert "retention of raw SNMP samples" in error["message"] and "clock" in error["message"]
    assert _rollups() == before
    assert _rows("SELECT count(*) FROM measurements_interfacerate") == rates
    assert before["5m"] and before["1h"]


def test_a_sample_days_older_than_the_interfaces_newest_is_refused_but_late_data_is_not(client, topo):
    _history(client, topo, hours=1)

    stale = post(client, batch([snmp(50, 10**9, time=_iso(timezone.now() - timedelta(days=3)))]), topo["cern_token"])
    late = post(client, batch([snmp(50, 10**9, time=_iso(timezone.now() - timedelta(hours=2)))]), topo["cern_token"])

    assert stale.status_code == 400
    assert stale.json()["errors"][0]["path"] == "records[0].time"
    assert "days older than the newest sample of geant-par:xe-1/0/0" in stale.json()["errors"][0]["message"]
    assert late.status_code == 200


def test_a_recompute_from_long_ago_keeps_rates_and_rollups_whose_raw_samples_are_gone(client, topo):
    # given: rates and rollups of 60 days ago, whose raw samples retention has already dropped
    _history(client, topo, hours=1)
    old = timezone.now() - timedelta(days=60)
    with connection.cursor() as c:
        c.execute("INSERT INTO measurements_interfacerate (time, interface_id, interval_s, in_bps) "
                  "VALUES (%s, %s, 60, 5e9)", [old, topo["xe"].id])
    from wanmon.measurements.rollups import interface_rollups_refresh
    interface_rollups_refresh(interface_ids=[topo["xe"].id], since=old - timedelta(days=1))
    before = _rollups()
    assert any(row[0] <= old for row in before["1d"])

    # when: a trusted recompute is asked to start 30 years back
    measurements_process(interface_since={topo["xe"].id: datetime(2000, 1, 1, tzinfo=UTC)})

    # then: the old rate and every rollup are still there, unchanged
    assert _rows("SELECT count(*) FROM measurements_interfacerate WHERE time < %s", [old + timedelta(seconds=1)]) \
        == [(1,)]
    assert _rollups() == before
