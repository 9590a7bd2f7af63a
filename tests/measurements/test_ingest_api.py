"""Contract tests of POST /api/v1/ingest (docs/contracts.md#ingest-api): every answer, all or nothing, idempotency."""

import gzip
import json
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.utils import timezone

pytestmark = pytest.mark.django_db


def _now_iso(delta_s: float = 0) -> str:
    return (timezone.now() + timedelta(seconds=delta_s)).astimezone(UTC).isoformat().replace("+00:00", "Z")


def throughput(**over):
    record = {"type": "throughput", "time": _now_iso(-60), "src": "CERN", "dst": "FZK", "tool": "nuttcp",
              "protocol": "tcp", "duration_s": 10, "streams": 1, "window_bytes": 4194304, "mss_bytes": 1448,
              "throughput_bps": 9.0e8, "retransmits": 3, "rtt_ms": 12.5, "tool_version": "8.2.2"}
    record.update(over)
    return record


def snmp(ticks: int, octets: int, time: str | None = None, **over):
    record = {"type": "snmp", "time": time or _now_iso(-60), "equipment": "geant-par", "interface": "xe-1/0/0",
              "sys_uptime_ticks": ticks, "oper_status": "up",
              "counters": {"hc_in_octets": octets, "hc_out_octets": 12, "in_errors": 0, "in_discards": 0}}
    record.update(over)
    return record


def batch(records, batch_id=None):
    return {"batch_id": batch_id or str(uuid.uuid4()), "agent_version": "1.0.0", "sent_at": _now_iso(),
            "records": records}


def post(client, body, token, **headers):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return client.post("/api/v1/ingest", data=data, content_type=headers.pop("content_type", "application/json"),
                       HTTP_AUTHORIZATION=f"Bearer {token}", **headers)


def counts():
    with connection.cursor() as c:
        out = {}
        for t in ("ingestbatch", "throughputtest", "snmpsample", "owamptest", "traceroute", "hosttcp"):
            c.execute(f"SELECT count(*) FROM measurements_{t}")
            out[t] = c.fetchone()[0]
    return out


def test_accepts_a_batch_and_stores_every_record(client, topo):
    body = batch([throughput(), snmp(1000, 5), throughput(protocol="udp", offered_bps=5e8, packets_sent=78116,
                                                         packets_lost=3, retransmits=None)])
    response = post(client, body, topo["cern_token"])
    assert response.status_code == 200, response.content
    assert response.json() == {"batch_id": body["batch_id"], "accepted": 3, "duplicate": False}
    assert counts() | {} == {"ingestbatch": 1, "throughputtest": 2, "snmpsample": 1, "owamptest": 0,
                             "traceroute": 0, "hosttcp": 0}
    with connection.cursor() as c:
        c.execute("SELECT throughput_bps, retransmits, extra->>'tool_version' FROM measurements_throughputtest "
                  "WHERE protocol = 'tcp'")
        assert c.fetchone() == (9.0e8, 3, "8.2.2")
        c.execute("SELECT packets_lost, retransmits FROM measurements_throughputtest WHERE protocol = 'udp'")
        assert c.fetchone() == (3, None)  # unknown retransmits stay unknown, never 0
    topo["cern_agent"].refresh_from_db()
    assert topo["cern_agent"].version == "1.0.0" and topo["cern_agent"].last_seen_at is not None


def test_replayed_batch_is_acknowledged_and_stored_once(client, topo):
    body = batch([throughput(), throughput(dst="RAL")])
    first = post(client, body, topo["cern_token"])
    second = post(client, body, topo["cern_token"])
    assert first.json()["duplicate"] is False
    assert second.status_code == 200 and second.json() == {"batch_id": body["batch_id"], "accepted": 0,
                                                           "duplicate": True}
    assert counts()["throughputtest"] == 2


def test_gzip_body_is_accepted(client, topo):
    body = gzip.compress(json.dumps(batch([throughput()])).encode())
    response = post(client, body, topo["cern_token"], HTTP_CONTENT_ENCODING="gzip")
    assert response.status_code == 200 and response.json()["accepted"] == 1


def test_invalid_record_rejects_the_whole_batch_with_paths(client, topo):
    body = batch([throughput(), throughput(throughput_bps=-5), snmp(1, 2**64)])
    response = post(client, body, topo["cern_token"])
    assert response.status_code == 400
    paths = {e["path"] for e in response.json()["errors"]}
    assert "records[1].throughput_bps" in paths
    assert any(p.startswith("records[2].counters.hc_in_octets") for p in paths)
    assert counts()["throughputtest"] == 0 and counts()["ingestbatch"] == 0


def test_unknown_site_is_a_400_naming_the_field(client, topo):
    response = post(client, batch([throughput(dst="XYZ")]), topo["cern_token"])
    assert response.status_code == 400
    assert response.json()["errors"] == [{"path": "records[0].dst", "message": "unknown site 'XYZ'"}]


@pytest.mark.parametrize("header", [None, "Bearer nope", "Token abc", "Bearer "])
def test_missing_or_bad_token_is_401(client, topo, header):
    extra = {"HTTP_AUTHORIZATION": header} if header is not None else {}
    response = client.post("/api/v1/ingest", data=json.dumps(batch([throughput()])),
                           content_type="application/json", **extra)
    assert response.status_code == 401
    assert counts()["ingestbatch"] == 0


def test_revoked_agent_is_401(client, topo):
    topo["cern_agent"].revoked_at = timezone.now()
    topo["cern_agent"].save()
    assert post(client, batch([throughput()]), topo["cern_token"]).status_code == 401


def test_records_of_other_sites_or_unassigned_equipment_are_403_naming_the_record(client, topo):
    # RAL's agent sends a CERN->FZK test, a CERN host_tcp and polls geant-par it is not assigned to.
    host_tcp = {"type": "host_tcp", "time": _now_iso(-5), "site": "CERN", "host": "cern-dt01",
                "tcp_rmem": [4096, 87380, 4194304], "tcp_wmem": [4096, 65536, 4194304], "rmem_max": 4194304,
                "wmem_max": 4194304, "congestion_control": "cubic", "mtu": 9000}
    body = batch([throughput(src="RAL", dst="CERN"), throughput(), host_tcp, snmp(1, 1)])
    response = post(client, body, topo["ral_token"])
    assert response.status_code == 403
    errors = response.json()["errors"]
    assert [e["path"] for e in errors] == ["records[1]", "records[2]", "records[3]"]
    assert "between CERN and FZK" in errors[0]["message"]
    assert "geant-par" in errors[2]["message"]
    assert counts()["ingestbatch"] == 0


def test_body_too_large_is_413(client, topo, settings):
    settings.WANMON_INGEST_MAX_BODY_BYTES = 2000
    response = post(client, batch([throughput() for _ in range(20)]), topo["cern_token"])
    assert response.status_code == 413
    bomb = gzip.compress(b"[" + b" " * 100_000 + b"]")
    response = post(client, bomb, topo["cern_token"], HTTP_CONTENT_ENCODING="gzip")
    assert response.status_code == 413


def test_too_many_records_is_413(client, topo, settings):
    settings.WANMON_INGEST_MAX_RECORDS = 5
    response = post(client, batch([throughput() for _ in range(6)]), topo["cern_token"])
    assert response.status_code == 413
    assert response.json()["errors"][0]["path"] == "records"


def test_rate_limit_is_429_with_retry_after(client, topo, settings):
    from django.core.cache import cache

    cache.clear()
    settings.WANMON_INGEST_RATE_LIMIT = "3/min"
    codes = [post(client, batch([throughput()]), topo["cern_token"]).status_code for _ in range(5)]
    assert codes == [200, 200, 200, 429, 429]
    response = post(client, batch([throughput()]), topo["cern_token"])
    assert int(response["Retry-After"]) > 0
    # the limit is per agent: another agent is not throttled
    ral_ok = post(client, batch([throughput(src="RAL", dst="CERN")]), topo["ral_token"])
    assert ral_ok.status_code == 200
    cache.clear()


def test_wrong_content_type_and_encoding_are_415(client, topo):
    body = json.dumps(batch([throughput()])).encode()
    assert post(client, body, topo["cern_token"], content_type="text/plain").status_code == 415
    assert post(client, body, topo["cern_token"], HTTP_CONTENT_ENCODING="br").status_code == 415


def test_ingest_is_in_the_openapi_schema(admin_client):
    schema = admin_client.get("/api/schema/?format=json").json()
    assert "/api/v1/ingest" in schema["paths"]
    assert set(schema["paths"]["/api/v1/ingest"]["post"]["responses"]) >= {"200", "400", "401", "403", "413", "429"}


def test_naive_and_future_timestamps_are_rejected(client, topo):
    naive = throughput(time=datetime(2026, 3, 1, 11, 0).isoformat())
    future = throughput(time=_now_iso(3600))
    response = post(client, batch([naive, future]), topo["cern_token"])
    assert response.status_code == 400
    paths = [e["path"] for e in response.json()["errors"]]
    assert "records[0].time" in paths and "records[1].time" in paths
