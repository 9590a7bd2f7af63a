"""PUT/POST /api/v1/perfsonar/archive (docs/contracts.md#perfsonar-archive): every captured run stored as the
agent's records, and every answer."""

from __future__ import annotations

import json

import pytest
from django.db import connection

from tests.perfsonar.conftest import ARCHIVER_FIXTURES, load, load_real
from wanmon.perfsonar.choices import RunState
from wanmon.perfsonar.models import PerfsonarRun
from wanmon.perfsonar.services import perfsonar_endpoint_map, run_batch_id

pytestmark = pytest.mark.django_db

URL = "/api/v1/perfsonar/archive"


def put(client, body, token, method="put", **headers):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    send = getattr(client, method)
    extra = {"HTTP_AUTHORIZATION": f"Bearer {token}"} if token else {}
    return send(URL, data=data, content_type="application/json", **extra, **headers)


def rows(table: str, columns: str) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {columns} FROM measurements_{table} ORDER BY time")
        return cursor.fetchall()


def as_json(value):
    """jsonb as the raw cursor returns it (text) or already decoded."""
    return json.loads(value) if isinstance(value, str) else value


def site_codes(row_ids: tuple[int, int]) -> tuple[str, str]:
    from wanmon.inventory.models import Site

    codes = dict(Site.objects.values_list("id", "code"))
    return codes[row_ids[0]], codes[row_ids[1]]


def test_iperf3_run_is_stored_as_a_throughput_test_of_the_agent(client, ps_topo):
    body = load("pscheduler-archiver-http-throughput-1.json")
    response = put(client, body, ps_topo["cern_token"])
    assert response.status_code == 200, response.content
    assert response.json() == {"run_id": body["id"], "accepted": 1, "duplicate": False, "parked": False}
    (row,) = rows("throughputtest", "src_id, dst_id, tool, protocol, throughput_bps, retransmits, rtt_ms, mss_bytes, "
                                    "duration_s, src_host, dst_host, agent_id, batch_id, extra")
    assert site_codes(row[:2]) == ("CERN", "FZK")  # 192.168.1.104 is cern-ps01, 192.168.1.101 fzk-ps01
    assert row[2:4] == ("iperf3", "tcp")
    assert row[4] == pytest.approx(942617924.239199)
    assert row[5] == 7 and row[6] == pytest.approx(5.802) and row[7] == 1448
    assert row[8] == pytest.approx(10.001663)
    assert row[9:11] == ("cern-ps01", "fzk-ps01")
    assert row[11] == ps_topo["cern_agent"].pk
    assert str(row[12]) == run_batch_id(body["id"])
    extra = as_json(row[13])
    assert extra["tool_version"] == "1.0"
    assert json.loads(extra["raw_excerpt"])["pscheduler"]["run"] == body["id"]
    assert PerfsonarRun.objects.get(run_id=body["id"]).state == RunState.INGESTED


def test_post_is_accepted_like_put(client, ps_topo):
    body = load("pscheduler-archiver-http-latency-1.json")
    response = put(client, body, ps_topo["cern_token"], method="post")
    assert response.status_code == 200, response.content
    (row,) = rows("owamptest", "packets_sent, packets_lost, delay_min_ms, delay_median_ms, delay_max_ms, "
                               "clock_error_ms, jitter_ms")
    assert row[:2] == (100, 0)
    assert row[2] == -15.5 and row[4] == -11.71
    # jitter: P95 - P50 of the histogram's 100 delays (collectors/delay.py), stored as sent
    assert row[5] == 27.47 and row[6] == 1.31


def test_rtt_run_is_an_owamp_row_of_half_round_trips(client, ps_topo):
    body = load("pscheduler-archiver-http-rtt-1.json")
    assert put(client, body, ps_topo["cern_token"]).status_code == 200
    (row,) = rows("owamptest", "packets_sent, packets_lost, delay_min_ms, delay_max_ms, extra")
    assert row[:2] == (10, 0)
    assert row[2] == pytest.approx(0.725 / 2) and row[3] == pytest.approx(1.301 / 2)  # one-way estimates
    assert as_json(row[4])["tool"] == "twping"
    assert json.loads(as_json(row[4])["raw_excerpt"])["pscheduler"]["round_trip"] is True


def test_every_captured_run_is_accepted(client, ps_topo):
    perfsonar_endpoint_map(endpoint="lima-perfsonar-vm", site=ps_topo["cern"])
    perfsonar_endpoint_map(endpoint="192.0.2.1", site=ps_topo["fzk"])
    perfsonar_endpoint_map(endpoint="1.1.1.1", site=ps_topo["ral"])
    for name in ARCHIVER_FIXTURES:
        body = load(name)
        response = put(client, body, ps_topo["cern_token"])
        assert response.status_code == 200, (name, response.content)
        assert response.json()["accepted"] == 1, name
    assert len(rows("throughputtest", "time")) == 1
    assert len(rows("owamptest", "time")) == 3  # latency, rtt, rtt with all packets lost
    (trace,) = rows("traceroute", "hops, src_id, dst_id")
    assert trace[0] == ["192.168.1.1", None, None, None, None, None, None, "1.1.1.1"]
    assert site_codes(trace[1:]) == ("CERN", "RAL")
    lost = [r for r in rows("owamptest", "packets_sent, packets_lost, delay_min_ms") if r[0] == 5]
    assert lost == [(5, 5, None)]


def test_a_retried_run_is_a_duplicate_and_stored_once(client, ps_topo):
    body = load("pscheduler-archiver-http-throughput-1.json")
    assert put(client, body, ps_topo["cern_token"]).json()["duplicate"] is False
    again = put(client, body, ps_topo["cern_token"])
    assert again.status_code == 200
    assert again.json() == {"run_id": body["id"], "accepted": 0, "duplicate": True, "parked": False}
    assert len(rows("throughputtest", "time")) == 1


def test_a_failed_run_is_stored_as_a_failed_test(client, ps_topo):
    body = load("pscheduler-archiver-http-throughput-1.json")
    body["result"] = {"succeeded": False, "error": "Unable to connect to server", "diags": "iperf3 -c ..."}
    response = put(client, body, ps_topo["cern_token"])
    assert response.status_code == 200, response.content
    (row,) = rows("throughputtest", "throughput_bps, error, extra")
    assert row[0] is None and row[1] == "Unable to connect to server"
    assert as_json(row[2])["stderr_excerpt"] == "iperf3 -c ..."


def test_unknown_endpoints_are_parked_then_ingested_once_mapped(client, ps_topo):
    body = load("pscheduler-archiver-http-trace-1.json")  # lima-perfsonar-vm -> 1.1.1.1: both unknown
    response = put(client, body, ps_topo["cern_token"])
    assert response.status_code == 200
    assert response.json() == {"run_id": body["id"], "accepted": 0, "duplicate": False, "parked": True}
    parked = PerfsonarRun.objects.get(run_id=body["id"])
    assert parked.state == RunState.PARKED and parked.unresolved == ["lima-perfsonar-vm", "1.1.1.1"]
    assert put(client, body, ps_topo["cern_token"]).json()["parked"] is True  # a retry stays parked, once
    assert rows("traceroute", "hops") == []

    first = perfsonar_endpoint_map(endpoint="LIMA-perfsonar-vm.", site=ps_topo["cern"], host=ps_topo["hosts"]["cern"])
    assert first.ingested == [] and first.still_parked == 1
    parked.refresh_from_db()
    assert parked.unresolved == ["1.1.1.1"]  # what is left to map
    second = perfsonar_endpoint_map(endpoint="1.1.1.1", site=ps_topo["fzk"])
    assert second.ingested == [body["id"]]
    (row,) = rows("traceroute", "hops, src_id, dst_id, agent_id")
    assert row[0][-1] == "1.1.1.1" and site_codes(row[1:3]) == ("CERN", "FZK")
    assert row[3] == ps_topo["cern_agent"].pk
    parked.refresh_from_db()
    assert parked.state == RunState.INGESTED and parked.body is None and parked.accepted == 1
    assert put(client, body, ps_topo["cern_token"]).json() == {
        "run_id": body["id"], "accepted": 0, "duplicate": True, "parked": False}


def test_a_parked_run_another_site_sent_is_refused_when_mapped(client, ps_topo):
    body = load("pscheduler-archiver-http-trace-1.json")
    put(client, body, ps_topo["ral_token"])  # parked: RAL's agent sent it
    perfsonar_endpoint_map(endpoint="lima-perfsonar-vm", site=ps_topo["cern"])
    result = perfsonar_endpoint_map(endpoint="1.1.1.1", site=ps_topo["fzk"])
    assert result.ingested == [] and "may not archive runs between CERN and FZK" in result.rejected[body["id"]]
    assert PerfsonarRun.objects.get(run_id=body["id"]).state == RunState.REJECTED
    assert rows("traceroute", "hops") == []


def test_neither_endpoint_at_the_tokens_site_is_403(client, ps_topo):
    body = load("pscheduler-archiver-http-throughput-1.json")  # CERN -> FZK
    response = put(client, body, ps_topo["ral_token"])
    assert response.status_code == 403
    (error,) = response.json()["errors"]
    assert error["path"] == "test.spec" and "RAL" in error["message"]
    assert rows("throughputtest", "time") == [] and not PerfsonarRun.objects.exists()


@pytest.mark.parametrize("token", [None, "not-a-token"])
def test_no_or_bad_token_is_401(client, ps_topo, token):
    response = put(client, load("pscheduler-archiver-http-rtt-1.json"), token)
    assert response.status_code == 401
    assert not PerfsonarRun.objects.exists()


def test_a_malformed_body_is_400_naming_the_field(client, ps_topo):
    body = load("pscheduler-archiver-http-throughput-1.json")
    del body["test"]["spec"]["dest"]
    response = put(client, body, ps_topo["cern_token"])
    assert response.status_code == 400
    assert {"path": "test.spec.dest", "message": "required: the test's destination (a host name or address)"} in (
        response.json()["errors"])
    bad = load("pscheduler-archiver-http-latency-1.json")
    bad["result"]["packets-lost"] = 101  # more lost than sent: the wire schema refuses it, named in the body
    response = put(client, bad, ps_topo["cern_token"])
    assert response.status_code == 400
    (error,) = response.json()["errors"]
    assert error["path"] == "result.packets-lost" and "101 lost is more than the 100 packets sent" in error["message"]
    assert not PerfsonarRun.objects.exists()


def test_udp_loss_beyond_the_packets_sent_is_400_at_the_results_lost(client, ps_topo):
    body = load_real("nuttcp-parser-main-2.json")  # 1485 of 259593 lost
    body["test"]["spec"].update(source="192.168.1.104", dest="192.168.1.101")  # cern-ps01 -> fzk-ps01
    body["result"]["summary"]["summary"]["lost"] = 259594
    response = put(client, body, ps_topo["cern_token"])
    assert response.status_code == 400
    (error,) = response.json()["errors"]
    assert error["path"] == "result.summary.summary.lost"
    assert "259594 lost is more than the 259593 packets sent" in error["message"]
    body["result"]["summary"]["summary"]["lost"] = 1485
    assert put(client, body, ps_topo["cern_token"]).json()["accepted"] == 1
    (row,) = rows("throughputtest", "protocol, packets_sent, packets_lost")
    assert row == ("udp", 259593, 1485)


@pytest.mark.parametrize("raw", [b"", b"{", b"[1, 2]", b"\xff\xfe", b'{"id": "x"}' * 2, b"null"])
def test_hostile_bodies_are_400_never_500(client, ps_topo, raw):
    response = put(client, raw, ps_topo["cern_token"])
    assert response.status_code == 400, response.content
    assert response.json()["errors"]


def test_the_documentation_example_which_is_not_json_is_400(client, ps_topo):
    from tests.perfsonar.conftest import toolout

    response = put(client, toolout("pscheduler-transform-input-doc-1.txt").read_bytes(), ps_topo["cern_token"])
    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == ""
    assert "malformed JSON" in response.json()["errors"][0]["message"]


def test_other_test_types_are_acknowledged_and_ignored(client, ps_topo):
    body = load("pscheduler-archiver-plugin-input-1.json")  # a simplestream run, old shape
    response = put(client, body, ps_topo["cern_token"])
    assert response.status_code == 200
    answer = response.json()
    assert answer["accepted"] == 0 and answer["parked"] is False and "simplestream" in answer["ignored"]
    assert put(client, body, ps_topo["cern_token"]).json()["duplicate"] is True


def test_body_limit_is_413(client, ps_topo, settings):
    settings.WANMON_INGEST_MAX_BODY_BYTES = 1000
    response = put(client, load("pscheduler-archiver-http-throughput-1.json"), ps_topo["cern_token"])
    assert response.status_code == 413


@pytest.mark.parametrize(
    ("where", "value"),
    [("id", "run\u0000id"), ("tool", {"name": "iperf3", "version": "1.0\u0000"}), ("reference", {"x": "\u0000"}),
     ("reference", {"x": "\ud800"})],
)
def test_values_postgresql_cannot_store_are_400_not_503(client, ps_topo, where, value):
    body = load("pscheduler-archiver-http-trace-1.json")  # unknown endpoints: the whole body would be kept
    body[where] = value
    raw = json.dumps(body).encode()  # json escapes NUL and lone surrogates as \\u0000, \\ud800
    response = put(client, raw, ps_topo["cern_token"])
    assert response.status_code in (200, 400), response.content
    if response.status_code == 400:
        assert response.json()["errors"][0]["message"]
    throughput = load("pscheduler-archiver-http-throughput-1.json")  # known endpoints: ingested
    throughput[where] = value
    response = put(client, json.dumps(throughput).encode(), ps_topo["cern_token"])
    assert response.status_code in (200, 400), response.content


@pytest.mark.parametrize("content_type", ["application/x-www-form-urlencoded", "text/plain; charset=utf-8", ""])
def test_the_archivers_json_is_read_whatever_its_content_type(client, ps_topo, content_type):
    # The archive spec sets no Content-Type header: the HTTP client of pScheduler chooses one.
    body = json.dumps(load("pscheduler-archiver-http-rtt-1.json")).encode()
    response = client.put(URL, data=body, content_type=content_type,
                          HTTP_AUTHORIZATION=f"Bearer {ps_topo['cern_token']}")
    assert response.status_code == 200, response.content
    assert response.json()["accepted"] == 1
    assert client.put(URL, data=body, content_type="image/png",
                      HTTP_AUTHORIZATION=f"Bearer {ps_topo['cern_token']}").status_code == 415


def test_the_agents_ingest_rate_limit_is_429_with_retry_after(client, ps_topo, settings):
    settings.WANMON_INGEST_RATE_LIMIT = "2/min"
    body = load("pscheduler-archiver-http-rtt-1.json")
    answers = []
    for _ in range(3):
        answers.append(put(client, body, ps_topo["cern_token"]))
    assert [a.status_code for a in answers] == [200, 200, 429]
    assert int(answers[-1]["Retry-After"]) > 0


def test_a_database_outage_is_503_with_retry_after(client, ps_topo, monkeypatch):
    from django.db import OperationalError

    def down(**kwargs):
        raise OperationalError("connection to server at 127.0.0.1 failed")

    monkeypatch.setattr("wanmon.perfsonar.views.perfsonar_run_archive", down)
    response = put(client, load("pscheduler-archiver-http-rtt-1.json"), ps_topo["cern_token"])
    assert response.status_code == 503 and response["Retry-After"] == "30"
