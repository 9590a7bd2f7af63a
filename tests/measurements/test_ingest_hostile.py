"""Whatever the body, the ingest answers 4xx with a clear error, never a 5xx, and stores nothing."""

import gzip
import json
import uuid

import pytest

from tests.measurements.test_ingest_api import batch, counts, post, snmp, throughput

pytestmark = pytest.mark.django_db

HOSTILE_BODIES = [
    b"",
    b"{",
    b"null",
    b"[]",
    b'"just a string"',
    b"12345",
    b'{"batch_id": "x"}',
    b"\xff\xfe\x00garbage",
    b'{"batch_id": "6f1c0c8e-1b7e-4c8a-9a53-2f3f1c1d9e01", "agent_version": "1", "sent_at": "2026-01-01T00:00:00Z",'
    b' "records": {"type": "throughput"}}',
    json.dumps(batch([throughput(throughput_bps=float("nan"))])).encode(),
    json.dumps(batch([throughput(throughput_bps=float("inf"))])).encode(),
    json.dumps(batch([throughput(throughput_bps=10**400)])).encode(),
    json.dumps(batch([snmp(1, -1)])).encode(),
    json.dumps(batch([snmp(1, 2**64)])).encode(),
    json.dumps(batch([snmp(2**32, 1)])).encode(),
    json.dumps(batch([throughput(type="pingpong")])).encode(),
    json.dumps(batch([throughput(src="CE\x00RN")])).encode(),
    json.dumps(batch([throughput(src="\ud800")]), ensure_ascii=True).encode(),
    json.dumps(batch([throughput(src={"nested": ["deep"]})])).encode(),
    json.dumps(batch([throughput(time="2026-03-01 11:00")])).encode(),
    json.dumps(batch([throughput(time="9999-12-31T23:59:59Z")])).encode(),
    json.dumps(batch([throughput(time="1970-01-01T00:00:00Z")])).encode(),
    json.dumps(batch([throughput(src="CERN", dst="CERN")])).encode(),
    json.dumps(batch([throughput(duration_s="ten")])).encode(),
    json.dumps(batch([[1, 2, 3]])).encode(),
    json.dumps(batch(["record"])).encode(),
    json.dumps(batch([throughput()], batch_id="not-a-uuid")).encode(),
    json.dumps({**batch([throughput()]), "records": None}).encode(),
    b"[" * 100_000 + b"]" * 100_000,
    b'{"batch_id": ' + b'"' + b"a" * 1_000_000 + b'"}',
    json.dumps(batch([snmp(1, 1, counters={"hc_in_octets": 1, "bogus_counter": 2})])).encode(),
    json.dumps(batch([snmp(1, 1, counters=[1, 2])])).encode(),
    json.dumps(batch([{"type": "owamp", "time": "2026-03-01T11:00:00Z", "src": "CERN", "dst": "FZK",
                       "packets_sent": 10, "packets_lost": 20, "duplicates": 0, "reordered": 0}])).encode(),
    "{\"batch_id\": \"é\u2028\ufeff\"}".encode(),
]


@pytest.mark.parametrize("body", HOSTILE_BODIES, ids=[f"body{i}" for i in range(len(HOSTILE_BODIES))])
def test_hostile_body_gets_a_clear_4xx_and_changes_nothing(client, topo, body):
    before = counts()
    response = post(client, body, topo["cern_token"])
    assert 400 <= response.status_code < 500, (response.status_code, response.content[:300])
    errors = response.json()["errors"]
    assert errors and all(isinstance(e["path"], str) and e["message"] for e in errors)
    assert counts() == before


def test_hostile_gzip_bodies(client, topo):
    for body in (b"not gzip at all", gzip.compress(b"{")[:-4], gzip.compress(b"\x00" * 10)):
        response = post(client, body, topo["cern_token"], HTTP_CONTENT_ENCODING="gzip")
        assert 400 <= response.status_code < 500
    assert counts()["ingestbatch"] == 0


def test_valid_batch_after_hostile_ones_still_works(client, topo):
    for body in HOSTILE_BODIES[:10]:
        post(client, body, topo["cern_token"])
    ok = post(client, batch([throughput()], batch_id=str(uuid.uuid4())), topo["cern_token"])
    assert ok.status_code == 200 and ok.json()["accepted"] == 1
