"""Tests on demand over HTTP: an operator asks, the agent fetches its job with its token, the result comes back
through the ingest as an ordinary record with its job_id and completes the job; every policy rule refuses with its
reason; jobs nobody runs fail with a reason."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.utils import timezone

from wanmon.inventory.models import Carrier
from wanmon.maintenance.services import maintenance_window_create
from wanmon.ondemand.models import Job
from wanmon.ondemand.services import jobs_expire

pytestmark = pytest.mark.django_db


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def ingest(client, *records: dict, schema_version: int | None = 2):
    body = {"batch_id": str(uuid.uuid4()), "agent_version": "1.0.0", "sent_at": iso(timezone.now()),
            "records": list(records)}  # fmt: skip
    if schema_version is not None:
        body["schema_version"] = schema_version
    return client.post("/api/v1/ingest", body, format="json")


def throughput(job_id: int | None, **extra) -> dict:
    record = {"type": "throughput", "time": iso(timezone.now() - timedelta(seconds=12)), "src": "CERN", "dst": "FZK",
              "tool": "nuttcp", "protocol": "tcp", "duration_s": 10.0, "throughput_bps": 9.4e8, **extra}  # fmt: skip
    if job_id is not None:
        record["job_id"] = job_id
    return record


def ask(client, **fields):
    return client.post("/api/v1/tests", {"src": "CERN", "dst": "FZK", "kind": "throughput", **fields}, format="json")


def test_asked_fetched_run_and_stored_as_an_ordinary_measurement_linked_to_its_job(api_operator, api_agent, pair):
    # given: an operator asks for a 10 s TCP test CERN -> FZK
    asked = ask(api_operator, duration_s=10)
    assert asked.status_code == 201, asked.content
    job_id = asked.json()["id"]
    assert asked.json() == {"id": job_id, "status": "queued"}
    # when: CERN's agent asks for work
    fetched = api_agent.get("/api/v1/agent/jobs")
    assert fetched.status_code == 200
    assert fetched.json()["jobs"] == [
        {"id": job_id, "kind": "throughput", "src": "CERN", "dst": "FZK", "host": pair.fzk_host, "protocol": "tcp",
         "duration_s": 10.0, "rate_bps": None, "streams": None, "reverse": False, "pin_host": False}
    ]  # fmt: skip
    assert api_operator.get(f"/api/v1/tests/{job_id}").json()["status"] == "running"
    # a fetched job not reported yet is handed again (the agent may have restarted before spooling its result)
    assert [j["id"] for j in api_agent.get("/api/v1/agent/jobs").json()["jobs"]] == [job_id]
    # then: the result comes back through the ingest as an ordinary record
    stored = ingest(api_agent, throughput(job_id))
    assert stored.status_code == 200, stored.content
    test = api_operator.get(f"/api/v1/tests/{job_id}").json()
    assert (test["status"], test["reason"], test["result"]["throughput_bps"], test["result"]["job_id"]) == (
        "done",
        "",
        9.4e8,
        job_id,
    )
    assert test["result_table"] == "measurements_throughputtest"
    with connection.cursor() as cursor:
        cursor.execute("SELECT throughput_bps, (extra->>'job_id')::int FROM measurements_throughputtest")
        assert cursor.fetchall() == [(9.4e8, job_id)]
    assert api_agent.get("/api/v1/agent/jobs").json()["jobs"] == []


def test_a_failed_test_fails_its_job_with_the_tools_error(api_operator, api_agent, pair):
    job_id = ask(api_operator).json()["id"]
    api_agent.get("/api/v1/agent/jobs")
    record = throughput(job_id, error="connect failed: Connection refused")
    del record["throughput_bps"]
    assert ingest(api_agent, record).status_code == 200
    test = api_operator.get(f"/api/v1/tests/{job_id}").json()
    assert (test["status"], test["reason"]) == ("failed", "the test failed: connect failed: Connection refused")


def test_an_old_agents_batch_without_job_ids_is_still_accepted(api_agent, pair):
    assert ingest(api_agent, throughput(None), schema_version=None).status_code == 200
    assert ingest(api_agent, throughput(None), schema_version=1).status_code == 200


def test_a_job_id_the_centre_did_not_give_this_agent_is_refused_naming_the_record(api_operator, api_agent, pair):
    from wanmon.core.tokens import token_hash
    from wanmon.inventory.models import Agent

    missing = ingest(api_agent, throughput(None), throughput(999))
    assert missing.status_code == 400
    assert missing.json()["errors"] == [{"path": "records[1].job_id", "message": "no test job 999"}]
    # a second agent at CERN sends the result of a job given to the first one
    job_id = ask(api_operator).json()["id"]
    Agent.objects.create(site=pair.cern, name="cern-agent-2", token_hash=token_hash("t" * 40), token_prefix="tttt")
    api_agent.credentials(HTTP_AUTHORIZATION=f"Bearer {'t' * 40}")
    foreign = ingest(api_agent, throughput(job_id))
    assert foreign.status_code == 403
    assert foreign.json()["errors"] == [
        {"path": "records[0].job_id", "message": f"test job {job_id} was given to another agent"}
    ]
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM measurements_throughputtest")
        assert cursor.fetchone() == (0,)  # nothing of either batch stored


def refused(response, status: int, rule: str, reason: str, client) -> None:
    assert response.status_code == status, response.content
    body = response.json()
    assert (body["status"], body["rule"], body["reason"]) == ("refused", rule, reason)
    assert body["errors"] == [{"path": "", "message": reason}]
    stored = client.get(f"/api/v1/tests/{body['id']}").json()
    assert (stored["status"], stored["reason"]) == ("refused", reason)


def test_each_policy_rule_refuses_over_http_with_its_reason(api_operator, pair, settings):
    refused(ask(api_operator, duration_s=45), 422, "duration_cap",
            "duration_cap: 45 s is longer than the 30 s a test on demand may last", api_operator)  # fmt: skip
    refused(ask(api_operator, protocol="udp", rate_bps=3e9), 422, "rate_cap",
            "rate_cap: 3000 Mb/s is above the 2000 Mb/s a test on demand may send", api_operator)  # fmt: skip
    first = ask(api_operator, duration_s=10).json()["id"]
    refused(ask(api_operator, duration_s=10), 409, "one_heavy_test",
            f"one_heavy_test: throughput test {first} is already queued or running on CERN<->FZK; one at a time",
            api_operator)  # fmt: skip
    Job.objects.filter(pk=first).update(status="done")
    # the first test counted 12.5 GB (10 Gb/s path x 10 s); the budget is lowered to 20 GB
    settings.WANMON_ONDEMAND_BUDGET_BYTES_PER_HOUR = 20 * 10**9
    refused(ask(api_operator, duration_s=10), 409, "byte_budget",
            "byte_budget: CERN<->FZK has used 12.5 GB of its 20 GB per hour for tests on demand; this test needs "
            "12.5 GB", api_operator)  # fmt: skip
    # announced outage work on the carrier router both directions cross
    now = timezone.now()
    maintenance_window_create(
        reference="GEANT-CHG-0042",
        carrier=Carrier.objects.get(code="GEANT"),
        start=now - timedelta(minutes=10),
        end=now + timedelta(hours=1),
        affects=["geant-fra"],
    )
    refused(ask(api_operator, kind="tracepath"), 409, "maintenance",
            "maintenance: CERN<->FZK is under announced maintenance (GEANT-CHG-0042); a test now would measure the "
            "work", api_operator)  # fmt: skip
    assert list(Job.objects.order_by("id").values_list("status", flat=True)) == [
        "refused",
        "refused",
        "done",
        "refused",
        "refused",
        "refused",
    ]


def test_bad_requests_name_the_field_and_viewers_may_read_but_not_ask(api_operator, api_viewer, pair):
    cases = [
        ({"src": "NOPE"}, "src", "unknown site 'NOPE'"),
        ({"dst": "CERN"}, "dst", "a test needs two different sites"),
        ({"kind": "iperf"}, "kind", '"iperf" is not a valid choice.'),
        ({"protocol": "udp"}, "rate_bps", "a UDP throughput test needs rate_bps (the offered rate)"),
        ({"finding": 12345}, "finding", "no finding 12345"),
        ({"duration_s": "soon"}, "duration_s", "A valid number is required."),
    ]
    for fields, field, message in cases:
        response = ask(api_operator, **fields)
        assert response.status_code == 400, (fields, response.content)
        assert message in str(response.json()[field]), (fields, response.json())
    assert ask(api_viewer).status_code == 403
    job_id = ask(api_operator, kind="owamp").json()["id"]
    assert api_viewer.get(f"/api/v1/tests/{job_id}").json()["status"] == "queued"
    assert api_viewer.get("/api/v1/tests/999999").status_code == 404


def test_no_agent_at_the_source_site_is_a_400_naming_src(api_operator, pair):
    response = ask(api_operator, src="FZK", dst="CERN")
    assert response.status_code == 400
    assert response.json()["src"] == ["no agent is registered at site FZK to run the test"]


def test_jobs_nobody_runs_fail_with_a_reason_and_a_late_result_still_completes(api_operator, api_agent, pair):
    now = timezone.now()
    waiting = ask(api_operator, kind="owamp", duration_s=10).json()["id"]
    Job.objects.filter(pk=waiting).update(created_at=now - timedelta(seconds=121))
    assert jobs_expire(now=now) == 1
    test = api_operator.get(f"/api/v1/tests/{waiting}").json()
    assert test["status"] == "failed"
    assert test["reason"] == "agent cern-agent did not fetch the test within 120 s (never heard from): is it running?"
    heavy = ask(api_operator, duration_s=10).json()["id"]
    api_agent.get("/api/v1/agent/jobs")  # fetched, then silence
    Job.objects.filter(pk=heavy).update(picked_at=now - timedelta(seconds=131))
    assert jobs_expire(now=now) == 1
    reason = api_operator.get(f"/api/v1/tests/{heavy}").json()["reason"]
    assert reason.startswith("agent cern-agent fetched the test at ") and reason.endswith(
        "but no result came within 130 s (never heard from)"
    )
    # the agent was only slow: its result still completes the job
    assert ingest(api_agent, throughput(heavy)).status_code == 200
    test = api_operator.get(f"/api/v1/tests/{heavy}").json()
    assert (test["status"], test["reason"]) == ("done", "result arrived after the timeout")


def test_the_agent_jobs_endpoint_needs_an_agent_token(client, pair):
    assert client.get("/api/v1/agent/jobs").status_code in (401, 403)
    assert client.get("/api/v1/agent/jobs", HTTP_AUTHORIZATION="Bearer nope").status_code == 401
