"""End to end over HTTP against a live server, the way pScheduler's http archiver talks to it: a PUT per run with
the archive spec's headers, a retry of the same run after an error, a failed run, a run from a host the inventory
does not know that an operator maps later, and the toolkit's pSConfig agent fetching the template URL."""

from __future__ import annotations

import base64
import io
import json
import urllib.request

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection

from tests.perfsonar.conftest import archive_headers, load, send

pytestmark = pytest.mark.django_db(transaction=True)


def count(table: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM measurements_{table}")
        return cursor.fetchone()[0]


def test_archiver_conversation_over_http(live_server, ps_topo, settings):
    archive = f"{live_server.url}/api/v1/perfsonar/archive"
    headers = archive_headers(ps_topo["cern_token"])

    # A run, then pScheduler's retry of the same run (it retries on anything that is not a 2xx).
    body = load("pscheduler-archiver-http-throughput-1.json")
    assert send(archive, body, headers) == (200, {"run_id": body["id"], "accepted": 1, "duplicate": False,
                                                  "parked": False})
    assert send(archive, body, headers) == (200, {"run_id": body["id"], "accepted": 0, "duplicate": True,
                                                  "parked": False})
    assert count("throughputtest") == 1

    # A failed run is a failed test.
    failed = load("pscheduler-archiver-http-latency-1.json")
    failed["result"] = {"succeeded": False, "error": "twping: unable to open control connection", "diags": ""}
    status, answer = send(archive, failed, headers)
    assert (status, answer["accepted"]) == (200, 1)
    with connection.cursor() as cursor:
        cursor.execute("SELECT packets_sent, error FROM measurements_owamptest")
        assert cursor.fetchall() == [(None, "twping: unable to open control connection")]

    # A run between hosts the inventory does not know: parked, then an operator maps them through the API.
    trace = load("pscheduler-archiver-http-trace-1.json")
    assert send(archive, trace, headers)[1]["parked"] is True
    assert count("traceroute") == 0
    get_user_model().objects.create_user("noc", password="secret-pass", is_staff=True)
    settings.WANMON_API_BASIC_AUTH = True  # off by default; scripts may turn it on
    basic = {"Authorization": "Basic " + base64.b64encode(b"noc:secret-pass").decode(),
             "Content-Type": "application/json"}
    status, parked = send(f"{live_server.url}/api/v1/perfsonar/parked", b"", {"Authorization": basic["Authorization"]},
                          method="GET")
    assert status == 200 and parked["results"][0]["unresolved"] == ["lima-perfsonar-vm", "1.1.1.1"]
    mappings = f"{live_server.url}/api/v1/perfsonar/mappings"
    status, first = send(mappings, {"endpoint": "lima-perfsonar-vm", "site": "CERN", "host": "cern-ps01"}, basic,
                         method="POST")
    assert status == 200 and first["ingested"] == [] and first["still_parked"] == 1
    status, second = send(mappings, {"endpoint": "1.1.1.1", "site": "FZK"}, basic, method="POST")
    assert status == 200 and second["ingested"] == [trace["id"]]
    assert count("traceroute") == 1
    status, error = send(mappings, {"endpoint": "1.1.1.1", "site": "NOPE"}, basic, method="POST")
    assert status == 400 and error["errors"][0]["path"] == "site"

    # Wrong token, and neither endpoint at the token's site.
    assert send(archive, body, archive_headers("wrong"))[0] == 401
    other = load("pscheduler-archiver-http-rtt-1.json")
    assert send(archive, other, archive_headers(ps_topo["ral_token"]))[0] == 403


def test_psconfig_url_serves_the_template_over_http(live_server, ps_topo, settings):
    settings.WANMON_BASE_URL = live_server.url
    out = io.StringIO()
    call_command("psconfig_url", "--site", "RAL", stdout=out, stderr=io.StringIO())
    url = out.getvalue().strip()
    assert url.startswith(f"{live_server.url}/perfsonar/psconfig/")
    with urllib.request.urlopen(url, timeout=30) as response:
        template = json.loads(response.read())
    assert set(template["tasks"]) >= {"wanmon-star-throughput", "wanmon-mesh-trace"}
    spec = template["archives"]["wanmon"]
    assert spec["data"]["_url"] == f"{live_server.url}/api/v1/perfsonar/archive"
    # The toolkit archives with what the template says: a run between CERN and RAL is RAL's to send.
    body = load("pscheduler-archiver-http-rtt-1.json")
    body["test"]["spec"]["dest"] = "203.0.113.30"
    status, answer = send(spec["data"]["_url"], body, spec["data"]["_headers"])
    assert (status, answer["accepted"]) == (200, 1)
