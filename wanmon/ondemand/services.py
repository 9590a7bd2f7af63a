"""Writes of the tests on demand: ask for a test (the policy decides), an agent fetches its jobs, the ingest links
a result to its job, jobs nobody ran fail with a reason."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction

from collectors.records import record_to_dict
from collectors.records.types import iso_z
from wanmon.inventory.models import Agent, Site
from wanmon.measurements.columns import TABLES
from wanmon.measurements.hooks import JobRefusal
from wanmon.ondemand import constants
from wanmon.ondemand.choices import JobKind, JobProtocol, JobStatus
from wanmon.ondemand.models import Job
from wanmon.ondemand.policy import Limits, Refusal, TestRequest, job_bytes, policy_check
from wanmon.ondemand.selectors import (
    ACTIVE,
    job_pair_state,
    job_path_capacity_bps,
    site_agent_for_tests,
    site_test_host,
)

__all__ = ["JobRequest", "job_request", "job_results_link", "jobs_claim", "jobs_expire", "policy_limits"]

logger = logging.getLogger(__name__)

# The wire type of the record that answers each kind of job.
RESULT_TYPES = {
    JobKind.THROUGHPUT: "throughput",
    JobKind.OWAMP: "owamp",
    JobKind.TRACEROUTE: "traceroute",
    JobKind.TRACEPATH: "traceroute",
}


def policy_limits() -> Limits:
    """The policy's numbers from the settings (WANMON_ONDEMAND_*), defaults in constants.py."""
    return Limits(
        max_duration_s=float(settings.WANMON_ONDEMAND_MAX_DURATION_S),
        max_rate_bps=float(settings.WANMON_ONDEMAND_MAX_RATE_BPS),
        budget_bytes_per_hour=int(
            settings.WANMON_ONDEMAND_BUDGET_BYTES_PER_HOUR
        ),
    )


@dataclass(frozen=True)
class JobRequest:
    """A test asked for: sites by code, the test, and what it is about (ids)."""

    src: str
    dst: str
    kind: str
    protocol: str | None = None
    duration_s: float | None = None
    rate_bps: float | None = None
    streams: int | None = None
    reverse: bool = False
    finding: int | None = None
    incident: int | None = None
    purpose: str = ""
    probe: str = ""  # a diagnosis-driven test: its key per finding (wanmon/ondemand/probes.py)
    host: str = ""  # the far address to test towards, instead of the agent's configured host


def _sites(request: JobRequest) -> tuple[Site, Site]:
    errors: dict[str, str] = {}
    sites = {s.code: s for s in Site.objects.filter(code__in=[request.src, request.dst])}
    for field in ("src", "dst"):
        if getattr(request, field) not in sites:
            errors[field] = f"unknown site {getattr(request, field)!r}"
    if not errors and request.src == request.dst:
        errors["dst"] = "a test needs two different sites"
    if errors:
        raise ValidationError(errors)
    return sites[request.src], sites[request.dst]


def _check_request(request: JobRequest) -> None:
    errors: dict[str, str] = {}
    if request.kind not in JobKind.values:
        errors["kind"] = f"must be one of {', '.join(JobKind.values)}"
    if request.protocol is not None and request.protocol not in JobProtocol.values:
        errors["protocol"] = "must be tcp or udp"
    elif request.protocol == JobProtocol.UDP and request.kind == JobKind.THROUGHPUT and not request.rate_bps:
        errors["rate_bps"] = "a UDP throughput test needs rate_bps (the offered rate)"
    if request.protocol is not None and request.kind != JobKind.THROUGHPUT:
        errors["protocol"] = "only throughput tests have a protocol"
    if request.streams is not None and request.kind != JobKind.THROUGHPUT:
        errors["streams"] = "only throughput tests have streams"
    if errors:
        raise ValidationError(errors)


def _subjects(request: JobRequest) -> dict[str, Any]:
    from django.apps import apps

    found: dict[str, Any] = {}
    for field, model in (("finding", "diagnosis.Finding"), ("incident", "alerts.Incident")):
        pk = getattr(request, field)
        if pk is None:
            continue
        obj = apps.get_model(model).objects.filter(pk=pk).first()
        if obj is None:
            raise ValidationError({field: f"no {field} {pk}"})
        found[field] = obj
    return found


@transaction.atomic
def job_request(*, request: JobRequest, requested_by: Any = None, now: datetime) -> tuple[Job, Refusal | None]:
    """Ask for a test now. Returns the job (queued, or refused with its rule and reason) and the refusal.

    Raises ValidationError naming the field for a request that cannot be a test at all (unknown site, no agent at
    ``src``, UDP without a rate...). The two sites' rows are locked while the policy looks at the pair, so that two
    requests at once cannot both pass "one heavy test at a time" or both spend the last of the budget.
    """
    _check_request(request)
    src, dst = _sites(request)
    subjects = _subjects(request)
    agent = site_agent_for_tests(src)
    if agent is None:
        raise ValidationError({"src": f"no agent is registered at site {src.code} to run the test"})
    list(Site.objects.select_for_update().filter(pk__in=[src.pk, dst.pk]).order_by("pk"))
    protocol = request.protocol or (JobProtocol.TCP if request.kind == JobKind.THROUGHPUT else "")
    duration_s = request.duration_s
    if duration_s is None and request.kind in (JobKind.THROUGHPUT, JobKind.OWAMP):
        duration_s = constants.DEFAULT_DURATION_S
    policy_request = TestRequest(
        kind=request.kind, protocol=protocol or "tcp", duration_s=duration_s, rate_bps=request.rate_bps,
        capacity_bps=job_path_capacity_bps(src=src, dst=dst, at=now),
    )  # fmt: skip
    limits = policy_limits()
    until = now + timedelta(seconds=policy_request.effective_duration_s + settings.WANMON_ONDEMAND_PICKUP_TIMEOUT_S)
    state = job_pair_state(src=src, dst=dst, now=now, until=until)
    refusal = policy_check(policy_request, state, limits, pair=f"{src.code}<->{dst.code}")
    job = Job.objects.create(
        kind=request.kind, src=src, dst=dst, agent=agent, protocol=protocol or JobProtocol.TCP,
        duration_s=duration_s, rate_bps=request.rate_bps, streams=request.streams, reverse=request.reverse,
        dst_host=request.host or site_test_host(dst), pin_host=bool(request.host), probe=request.probe[:120],
        purpose=request.purpose[:200], requested_by=requested_by,
        created_at=now, budget_bytes=0 if refusal else job_bytes(policy_request, limits),
        status=JobStatus.REFUSED if refusal else JobStatus.QUEUED,
        rule=refusal.rule.value if refusal else "", reason=refusal.reason if refusal else "",
        finished_at=now if refusal else None, **subjects,
    )  # fmt: skip
    logger.info(
        "test on demand %s", job.status,
        extra={"job": job.pk, "kind": job.kind, "src": src.code, "dst": dst.code, "rule": job.rule},
    )  # fmt: skip
    return job, refusal


@transaction.atomic
def jobs_claim(*, agent: Agent, now: datetime) -> list[Job]:
    """The jobs ``agent`` is to run: queued ones become running (fetched now); running ones not reported yet are
    given again (the agent restarted before its result was spooled: it runs them once more). The agent is marked
    as asking for jobs (``jobs_polled_at``): the diagnosis asks only such agents for its tests."""
    Agent.objects.filter(pk=agent.pk).update(jobs_polled_at=now)
    jobs = list(
        Job.objects.select_for_update()
        .select_related("src", "dst")
        .filter(agent=agent, status__in=ACTIVE)
        .order_by("created_at", "id")
    )
    for job in jobs:
        if job.status == JobStatus.QUEUED:
            job.status, job.picked_at = JobStatus.RUNNING, now
            job.save(update_fields=["status", "picked_at"])
    return jobs


def job_results_link(records: Sequence[Any], *, agent: Agent | None, batch_id: str, now: datetime) -> list[JobRefusal]:
    """Link uploaded records carrying a ``job_id`` to their jobs (called by the ingest inside its transaction).

    A job is done with its record as the result, or failed when the record says the test failed (its ``error``).
    A result arriving after the job timed out still completes it: the test did run. Refused: a job that does not
    exist (400) or that another agent was given (403); a job already answered keeps its first result.
    """
    ids = {r.job_id for r in records}
    jobs = {j.pk: j for j in Job.objects.select_for_update().filter(pk__in=ids)}
    refusals: list[JobRefusal] = []
    for record in records:
        job = jobs.get(record.job_id)
        if job is None:
            refusals.append(JobRefusal(record, 400, f"no test job {record.job_id}"))
        elif agent is not None and job.agent_id != agent.pk:
            refusals.append(JobRefusal(record, 403, f"test job {record.job_id} was given to another agent"))
    if refusals:
        return refusals
    for record in records:
        job = jobs[record.job_id]
        if job.result is not None or job.status == JobStatus.REFUSED:
            continue
        kind = type(record).__struct_config__.tag
        error = getattr(record, "error", None)
        job.result = {k: v for k, v in record_to_dict(record).items() if v is not None}
        job.result_table = TABLES[kind].name
        job.result_time = record.time
        job.result_batch_id = batch_id
        late = job.status == JobStatus.FAILED
        job.status = JobStatus.FAILED if error else JobStatus.DONE
        job.reason = f"the test failed: {error}" if error else ("result arrived after the timeout" if late else "")
        job.finished_at = now
        job.save(
            update_fields=["result", "result_table", "result_time", "result_batch_id", "status", "reason",
                           "finished_at"]
        )  # fmt: skip
    return []


def _deadline_s(job: Job) -> float:
    return (job.duration_s or constants.DEFAULT_DURATION_S) * (2 if job.reverse else 1) + float(
        settings.WANMON_ONDEMAND_REPORT_MARGIN_S
    )


@transaction.atomic
def jobs_expire(*, now: datetime) -> int:
    """Fail the jobs whose agent did not fetch them within the pickup timeout, or did not report within their
    duration plus the report margin, each with a reason naming the agent and when it was last heard of."""
    pickup_s = float(settings.WANMON_ONDEMAND_PICKUP_TIMEOUT_S)
    failed = 0
    # of=self: the agent is joined (nullable) for the reason's words, only the jobs are locked
    jobs = Job.objects.select_for_update(skip_locked=True, of=("self",)).select_related("agent")
    jobs = jobs.filter(status__in=ACTIVE)
    for job in jobs:
        agent = job.agent.name if job.agent else "(deleted agent)"
        seen = job.agent.last_seen_at if job.agent else None
        heard = f"last heard from {iso_z(seen)}" if seen else "never heard from"
        if job.status == JobStatus.QUEUED and job.created_at <= now - timedelta(seconds=pickup_s):
            job.reason = f"agent {agent} did not fetch the test within {pickup_s:g} s ({heard}): is it running?"
        elif job.status == JobStatus.RUNNING and job.picked_at <= now - timedelta(seconds=_deadline_s(job)):
            job.reason = (
                f"agent {agent} fetched the test at {iso_z(job.picked_at)} but no result came within "
                f"{_deadline_s(job):g} s ({heard})"
            )
        else:
            continue
        job.status, job.finished_at = JobStatus.FAILED, now
        job.save(update_fields=["status", "reason", "finished_at"])
        failed += 1
    return failed
