"""Diagnosis-driven tests through the production road (PostgreSQL): TCP tests stored through the ingest, the
periodic cycle finds WINDOW_LIMITED and asks for parallel streams within the policy, CERN's agent fetches the job
over its API, its result comes back through POST /api/v1/ingest with the job_id, and the verdict lands on the job
and the finding (its API, its page, its trail); refusals are recorded with the rule's reason, nothing is asked for
twice, from sites whose agent does not ask for jobs, or by a replay's cycle."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.ondemand.test_api import ingest, iso, throughput
from wanmon.diagnosis.models import Finding, FindingEvent
from wanmon.diagnosis.shards import diagnosis_cycle_run
from wanmon.ondemand.models import Job
from wanmon.ondemand.services import jobs_expire
from wanmon.ondemand.tasks import ondemand_jobs_expire_task

pytestmark = pytest.mark.django_db

WINDOW = 65536
RTT_MS = 100.0
ONE_STREAM_BPS = 5.2e6  # 64 KiB at 100 ms: W*8/RTT = 5.24 Mb/s, on a 10 Gb/s path


def window_limited_tests(client) -> None:
    """Three single-stream TCP tests CERN -> FZK held by their 64 KiB window, through the real ingest."""
    now = timezone.now()
    records = [
        throughput(
            None,
            time=iso(now - timedelta(minutes=m)),
            window_bytes=WINDOW,
            rtt_ms=RTT_MS,
            streams=1,
            throughput_bps=ONE_STREAM_BPS * (1 + 0.001 * m),
            dst_host="192.0.2.10",
        )  # fmt: skip
        for m in (30, 20, 10)
    ]
    assert ingest(client, *records).status_code == 200


def cycle(**kwargs):
    return diagnosis_cycle_run(now=timezone.now() + timedelta(seconds=1), **kwargs)


def window_finding() -> Finding:
    return Finding.objects.get(code="WINDOW_LIMITED", subject={"src": "CERN", "dst": "FZK"})


def test_a_finding_asks_for_its_test_and_the_result_through_the_ingest_marks_the_verdict(api_agent, api_operator, pair):
    window_limited_tests(api_agent)
    assert api_agent.get("/api/v1/agent/jobs").json()["jobs"] == []  # CERN's agent asks for jobs: none yet
    # when: the periodic cycle runs as the beat runs it (WANMON_DIAGNOSIS_TESTS on)
    cycle(tests=True)
    finding = window_finding()
    (job,) = Job.objects.filter(finding=finding)
    assert (job.kind, job.protocol, job.streams, job.probe, job.status, job.src.code, job.dst.code) == (
        "throughput", "tcp", 4, "parallel_streams", "queued", "CERN", "FZK",
    )  # fmt: skip
    assert job.budget_bytes > 0 and job.purpose == "WINDOW_LIMITED or the path? 4 parallel streams against 1"
    # idempotent: the next cycles ask for nothing more while it is pending
    cycle(tests=True)
    assert Job.objects.filter(finding=finding).count() == 1
    # then: the agent fetches it and uploads its result with the job_id
    (handed,) = api_agent.get("/api/v1/agent/jobs").json()["jobs"]
    assert (handed["id"], handed["streams"], handed["pin_host"]) == (job.pk, 4, False)
    result = throughput(job.pk, window_bytes=WINDOW, rtt_ms=RTT_MS, streams=4, throughput_bps=20.3e6)
    assert ingest(api_agent, result).status_code == 200, "the ingest took the result"
    job.refresh_from_db()
    finding.refresh_from_db()
    assert (job.status, job.verdict) == ("done", "confirmed")
    (tested,) = finding.tested
    assert (tested["probe"], tested["verdict"], tested["job"]) == ("parallel_streams", "confirmed", job.pk)
    # 20.3 Mb/s = 97 % of 4 x W*8/RTT (20.97 Mb/s), 3.9 x one stream
    assert tested["figures"]["share_of_window_limit"] == pytest.approx(20.3e6 / (4 * 5.24288e6), rel=1e-3)
    assert tested["figures"]["gain"] == pytest.approx(20.3e6 / (ONE_STREAM_BPS * 1.02), rel=1e-3)  # the median one
    assert tested["line"].endswith("-> window limit confirmed")
    assert 0 <= tested["after_finding_s"] < 60
    trail = FindingEvent.objects.filter(finding=finding, kind="tested").order_by("id")
    events = list(trail.values_list("note", flat=True))
    assert events[0] == "test asked for: WINDOW_LIMITED or the path? 4 parallel streams against 1"
    assert "window limit confirmed" in events[-1]
    # the finding's API and the test's API say it
    detail = api_operator.get(f"/api/v1/findings/{finding.pk}").json()
    assert detail["tested"][0]["verdict"] == "confirmed"
    assert api_operator.get(f"/api/v1/tests/{job.pk}").json()["verdict"] == "confirmed"
    # a later cycle keeps the verdict (the finding is updated, its tests are not asked for again)
    cycle(tests=True)
    finding.refresh_from_db()
    assert finding.tested[0]["verdict"] == "confirmed" and Job.objects.filter(finding=finding).count() == 1


def test_the_finding_page_shows_the_verdict(api_agent, client, operator, pair):
    window_limited_tests(api_agent)
    api_agent.get("/api/v1/agent/jobs")
    cycle(tests=True)
    finding = window_finding()
    (handed,) = api_agent.get("/api/v1/agent/jobs").json()["jobs"]
    ingest(api_agent, throughput(handed["id"], streams=4, throughput_bps=6.1e6))  # no gain: refuted
    client.force_login(operator)
    page = client.get(f"/findings/{finding.pk}/").content.decode()
    assert 'data-verdict="refuted"' in page and "-&gt; no gain, window limit refuted" in page, page[-3000:]


def test_a_refusal_is_recorded_on_the_findings_trail_with_the_rules_reason(api_agent, pair, settings):
    settings.WANMON_ONDEMAND_BUDGET_BYTES_PER_HOUR = 10**9  # 10 s at the path's 10 Gb/s needs 12.5 GB
    window_limited_tests(api_agent)
    api_agent.get("/api/v1/agent/jobs")
    cycle(tests=True)
    finding = window_finding()
    (job,) = Job.objects.filter(finding=finding)
    assert (job.status, job.rule) == ("refused", "byte_budget")
    (tested,) = finding.tested
    assert (tested["status"], tested["rule"]) == ("refused", "byte_budget")
    assert tested["reason"].startswith("byte_budget: CERN<->FZK has used 0 GB of its 1 GB per hour")
    note = FindingEvent.objects.get(finding=finding, kind="tested").note
    assert note == f"test refused: {tested['reason']}"
    cycle(tests=True)  # not asked again every minute: after WANMON_DIAGNOSIS_TESTS_RETRY_S
    assert Job.objects.filter(finding=finding).count() == 1


def test_a_test_nobody_runs_fails_on_the_finding_and_is_asked_again_later(api_agent, pair, settings):
    window_limited_tests(api_agent)
    api_agent.get("/api/v1/agent/jobs")
    cycle(tests=True)
    finding = window_finding()
    # the agent stops asking: the beat's expiry fails the job after the pickup timeout
    settings.WANMON_ONDEMAND_PICKUP_TIMEOUT_S = 60
    Finding.objects.filter(pk=finding.pk).update(first_seen_at=timezone.now() - timedelta(minutes=5))
    Job.objects.update(created_at=timezone.now() - timedelta(seconds=61))
    assert ondemand_jobs_expire_task() == 1
    finding.refresh_from_db()
    assert finding.tested[0]["status"] == "failed" and "did not fetch the test" in finding.tested[0]["reason"]
    api_agent.get("/api/v1/agent/jobs")  # back
    cycle(tests=True)
    assert Job.objects.filter(finding=finding).count() == 1  # not before WANMON_DIAGNOSIS_TESTS_RETRY_S
    settings.WANMON_DIAGNOSIS_TESTS_RETRY_S = 0
    cycle(tests=True)
    assert list(Job.objects.filter(finding=finding).values_list("status", flat=True)) == ["queued", "failed"]
    assert jobs_expire(now=timezone.now()) == 0


def test_nothing_is_asked_without_an_agent_asking_for_jobs_nor_by_a_replays_cycle(api_agent, pair):
    window_limited_tests(api_agent)
    cycle(tests=True)  # CERN's agent uploads but never asked for jobs ([jobs] enabled = false)
    assert Finding.objects.filter(code="WINDOW_LIMITED").exists()
    assert not Job.objects.exists()
    api_agent.get("/api/v1/agent/jobs")
    cycle()  # the replay's and the benchmarks' cycle: tests off
    assert not Job.objects.exists() and window_finding().tested == []


def test_a_direction_whose_source_runs_no_agent_is_measured_in_reverse_by_the_far_sites_agent(api_agent, pair):
    from wanmon.ondemand.diagnosis_tests import diagnosis_tests_queue

    now = timezone.now()
    finding = Finding.objects.create(
        code="TCP_ONLY_DEGRADATION", severity="warning", subject={"src": "FZK", "dst": "CERN"},
        subject_key="dst=CERN;src=FZK", start=now, end=now, first_seen_at=now, last_seen_at=now,
        evidence={"slow_throughput_median_bps": 4e8, "derived": {"rtt_ms": 10.0, "mss_bytes": 8948}},
    )  # fmt: skip
    api_agent.get("/api/v1/agent/jobs")  # only CERN has an agent, and it asks for jobs
    (job,) = diagnosis_tests_queue(finding_ids=[finding.pk], now=now)
    # FZK -> CERN measured by CERN's agent: nuttcp -r towards FZK, UDP at twice TCP's 400 Mb/s
    assert (job.src.code, job.dst.code, job.reverse, job.protocol, job.rate_bps) == ("CERN", "FZK", True, "udp", 8e8)
    assert diagnosis_tests_queue(finding_ids=[finding.pk], now=now) == []  # pending: not twice


@pytest.mark.parametrize("enabled", [True, False])
def test_the_beats_shards_follow_the_setting(api_agent, pair, settings, enabled):
    from wanmon.diagnosis.shards import diagnosis_cycle_open
    from wanmon.diagnosis.tasks import diagnosis_shard_task

    settings.WANMON_DIAGNOSIS_TESTS = enabled
    window_limited_tests(api_agent)
    api_agent.get("/api/v1/agent/jobs")
    plan = diagnosis_cycle_open(now=timezone.now() + timedelta(seconds=1))
    for shard in plan.shards:  # what diagnosis_run_task queues, run here by the worker's task itself
        diagnosis_shard_task.apply((plan.cycle_id, shard))
    assert window_finding().code == "WINDOW_LIMITED"
    assert list(Job.objects.values_list("probe", flat=True)) == (["parallel_streams"] if enabled else [])
