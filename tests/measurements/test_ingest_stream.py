"""Streamed ingest: a batch larger than one chunk is decoded and stored chunk by chunk in one transaction.

The chunk size is set to 10 records here so that small batches span several chunks; every outcome
must be the one of the whole-batch path: all or nothing, every error listed, exactly once.
"""

import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from tests.measurements.test_ingest_api import _now_iso, batch, counts, post, snmp, throughput
from wanmon.inventory.models import Equipment, Interface

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def small_chunks(settings):
    settings.WANMON_INGEST_STREAM_CHUNK_RECORDS = 10


def owamp() -> dict:
    return {"type": "owamp", "time": _now_iso(-60), "src": "CERN", "dst": "FZK", "packets_sent": 600,
            "packets_lost": 0, "delay_min_ms": 9.8, "delay_median_ms": 10.1, "delay_max_ms": 12.0}


def _polls(n: int, interface: str = "xe-1/0/0", equipment: str = "geant-par") -> list[dict]:
    start = timezone.now() - timedelta(hours=2)
    return [
        snmp(100 + 6000 * i, 10**12 + 75 * 10**9 * i, time=(start + timedelta(minutes=i)).isoformat(),
             interface=interface, equipment=equipment)
        for i in range(n)
    ]


def test_a_batch_of_several_chunks_is_stored_whole_with_its_other_record_types(client, topo):
    records = _polls(25) + [throughput(), owamp()] + _polls(12, interface="xe-9/9/9")  # a new interface late
    response = post(client, batch(records), topo["cern_token"])
    assert response.status_code == 200, response.content
    assert response.json()["accepted"] == 39
    assert counts() | {} == {"ingestbatch": 1, "throughputtest": 1, "snmpsample": 37, "owamptest": 1,
                             "traceroute": 0, "hosttcp": 0}
    discovered = Interface.objects.get(equipment__name="geant-par", name="xe-9/9/9")
    with connection.cursor() as c:
        c.execute("SELECT count(*), min(hc_in_octets), max(hc_in_octets) FROM measurements_snmpsample "
                  "WHERE interface_id = %s", [topo["xe"].id])
        assert c.fetchone() == (25, 10**12, 10**12 + 75 * 10**9 * 24)
        c.execute("SELECT count(*) FROM measurements_snmpsample WHERE interface_id = %s", [discovered.id])
        assert c.fetchone() == (12,)
    assert "decode;dur=" in response.headers["Server-Timing"]


def test_an_invalid_record_in_a_late_chunk_refuses_the_whole_batch_listing_every_error(client, topo):
    records = _polls(34)
    records[3]["counters"]["hc_in_octets"] = -1
    records[31]["oper_status"] = "sideways"
    records[32]["equipment"] = "geant par"
    before = counts()
    response = post(client, batch(records), topo["cern_token"])
    assert response.status_code == 400
    paths = [e["path"] for e in response.json()["errors"]]
    assert paths == ["records[3].counters.hc_in_octets", "records[31].oper_status", "records[32].equipment"]
    assert counts() == before


def test_unknown_equipment_in_a_late_chunk_is_a_400_naming_every_record_and_nothing_is_stored(client, topo):
    records = _polls(15) + _polls(3, equipment="nowhere-router") + _polls(5) + _polls(2, equipment="nowhere-router")
    before = counts()
    response = post(client, batch(records), topo["cern_token"])
    assert response.status_code == 400
    assert [e["path"] for e in response.json()["errors"]] == [
        f"records[{i}].equipment" for i in (15, 16, 17, 23, 24)
    ]
    assert counts() == before


def test_unassigned_equipment_in_a_late_chunk_is_a_403_and_nothing_is_stored(client, topo):
    Interface.objects.create(equipment=Equipment.objects.create(name="other-router"), name="xe-1/0/0")
    records = _polls(22) + _polls(1, equipment="other-router")
    before = counts()
    response = post(client, batch(records), topo["cern_token"])
    assert response.status_code == 403
    assert response.json()["errors"] == [
        {"path": "records[22]", "message": "agent 'cern-agent-1' is not assigned to poll equipment 'other-router'"}
    ]
    assert counts() == before
    assert not Interface.objects.filter(equipment__name="geant-par").exclude(name="xe-1/0/0").exists()


def test_a_streamed_batch_sent_twice_is_stored_once(client, topo):
    body = batch(_polls(23), batch_id=str(uuid.uuid4()))
    assert post(client, body, topo["cern_token"]).json()["duplicate"] is False
    again = post(client, body, topo["cern_token"])
    assert again.status_code == 200 and again.json() == {"batch_id": body["batch_id"], "accepted": 0,
                                                         "duplicate": True}
    assert counts()["snmpsample"] == 23 and counts()["ingestbatch"] == 1


@pytest.fixture
def failing_store(db):
    """The database fails while storing the SNMP sample with ifIndex 4242 (as a full disk or a lost link would)."""
    with connection.cursor() as c:
        c.execute("""CREATE FUNCTION wanmon_test_fail() RETURNS trigger LANGUAGE plpgsql AS $$
                     BEGIN IF NEW.if_index = 4242 THEN RAISE EXCEPTION 'could not extend file: No space left';
                     END IF; RETURN NEW; END $$""")
        c.execute("CREATE TRIGGER wanmon_test_fail BEFORE INSERT ON measurements_snmpsample "
                  "FOR EACH ROW EXECUTE FUNCTION wanmon_test_fail()")


def test_a_database_failure_while_copying_is_a_503_the_agent_retries_and_nothing_is_kept(client, topo, failing_store):
    records = _polls(30)
    records[26]["if_index"] = 4242
    before = counts()
    response = post(client, batch(records), topo["cern_token"])
    assert response.status_code == 503
    assert response["Retry-After"] == "30"
    assert response.json() == {"errors": [{"path": "", "message": "database unavailable, retry later"}]}
    assert counts() == before  # not even the batch id: the retry will be stored
