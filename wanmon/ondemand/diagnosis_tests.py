"""Writes of the diagnosis-driven tests: queue the test that separates a finding's two explanations (through the
same policy as an operator's test), and record on the finding what its result says.

The road: a shard of the periodic cycle stores its findings, then calls ``diagnosis_tests_queue`` (through
``wanmon.diagnosis.hooks``) with those it opened, reopened or updated; the agent fetches the job, runs it and
uploads the result with its ``job_id``; the ingest completes the job (``job_results_link``) and, in the same
transaction, ``diagnosis_tests_settle`` stores the verdict on the job and on the finding (``Finding.tested``, and
a ``tested`` event on its trail). A job nobody ran (expired) is settled by the expiry task: the finding records
the failure, and the test is asked for again after ``WANMON_DIAGNOSIS_TESTS_RETRY_S``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q

from collectors.records.types import iso_z
from wanmon.diagnosis.choices import ACTIVE_STATUSES, EventKind
from wanmon.diagnosis.models import Finding, FindingEvent
from wanmon.inventory.choices import AgentScope
from wanmon.inventory.models import Agent
from wanmon.measurements.hooks import JobRefusal
from wanmon.ondemand.choices import JobKind, JobStatus
from wanmon.ondemand.models import Job
from wanmon.ondemand.policy import HEAVY_KINDS
from wanmon.ondemand.probes import PROBE_CODES, ProbeRequest, probe_requests, probe_verdict
from wanmon.ondemand.selectors import ACTIVE
from wanmon.ondemand.services import JobRequest, job_request, job_results_link

__all__ = ["diagnosis_tests_expired", "diagnosis_tests_queue", "diagnosis_tests_settle", "job_results_link_and_settle"]

logger = logging.getLogger(__name__)

SETTLED = (JobStatus.DONE, JobStatus.FAILED, JobStatus.REFUSED)


def _jobs_agent_site(site: str, now: datetime) -> bool:
    """Whether a site agent at ``site`` asked for jobs lately (its ``[jobs]`` are enabled and it runs)."""
    since = now - timedelta(seconds=settings.WANMON_DIAGNOSIS_TESTS_AGENT_SEEN_S)
    return Agent.objects.filter(
        site__code=site, revoked_at__isnull=True, scope=AgentScope.AGENT, jobs_polled_at__gte=since
    ).exists()


def _job_request(finding: Finding, probe: ProbeRequest, now: datetime) -> JobRequest | None:
    """The request as an agent can run it: from the direction's source when its agent asks for jobs, else (a
    throughput test) from the far site's agent measuring the reverse of its own direction (nuttcp -r)."""
    common = {"kind": probe.kind, "protocol": probe.protocol, "duration_s": probe.duration_s,
              "rate_bps": probe.rate_bps, "streams": probe.streams, "finding": finding.pk,
              "purpose": probe.purpose, "probe": probe.key, "host": probe.host}  # fmt: skip
    if _jobs_agent_site(probe.src, now):
        return JobRequest(src=probe.src, dst=probe.dst, reverse=False, **common)
    if probe.kind == JobKind.THROUGHPUT and not probe.host and _jobs_agent_site(probe.dst, now):
        return JobRequest(src=probe.dst, dst=probe.src, reverse=True, **common)
    return None


def _entry(finding: Finding, probe: str) -> dict[str, Any]:
    for item in finding.tested:
        if item.get("probe") == probe:
            return item
    item: dict[str, Any] = {"probe": probe}
    finding.tested = [*finding.tested, item]
    return item


def _record(finding: Finding, probe: str, note: str, now: datetime, **values: Any) -> None:
    """Update the finding's entry for ``probe`` and add a ``tested`` event to its trail."""
    item = _entry(finding, probe)
    item.update(values)
    finding.save(update_fields=["tested"])
    FindingEvent.objects.create(finding=finding, time=now, kind=EventKind.TESTED, note=note,
                                data={"probe": probe, **values})  # fmt: skip


def _heavy_job_active(src: str, dst: str) -> bool:
    """A throughput test queued or running between the two sites: the policy would refuse a second one, and
    recording that on the finding (and waiting half an hour to ask again) would be wrong for a wait of seconds."""
    pair = Q(src__code=src, dst__code=dst) | Q(src__code=dst, dst__code=src)
    return Job.objects.filter(pair, status__in=ACTIVE, kind__in=HEAVY_KINDS).exists()


def _due(previous: Job | None, now: datetime) -> bool:
    """Whether a test of this key may be asked for: never asked, or the last one failed or was refused long
    enough ago (a done one is final; an active one is pending)."""
    if previous is None:
        return True
    if previous.active or previous.status == JobStatus.DONE:
        return False
    retry_s = settings.WANMON_DIAGNOSIS_TESTS_RETRY_S
    return (previous.finished_at or previous.created_at) <= now - timedelta(seconds=retry_s)


def _queue_one(finding: Finding, probes: Sequence[ProbeRequest], now: datetime) -> Job | None:
    keys = [p.key for p in probes]
    latest: dict[str, Job] = {}
    # this episode's tests: a finding reopened after it was resolved is tested again
    episode = Job.objects.filter(finding=finding, probe__in=keys, created_at__gte=_episode_opened_at(finding))
    for job in episode.order_by("created_at", "id"):
        latest[job.probe] = job
    if any(j.active for j in latest.values()):
        return None  # one discriminating test of a finding at a time (a trunk's addresses one after the other)
    for probe in probes:
        if not _due(latest.get(probe.key), now):
            continue
        request = _job_request(finding, probe, now)
        if request is None:
            logger.info("no agent asks for jobs at %s or %s", probe.src, probe.dst, extra={"finding": finding.pk})
            return None
        if request.kind in HEAVY_KINDS and _heavy_job_active(request.src, request.dst):
            return None  # another finding's test (or an operator's) is on the pair now: ask at the next cycle
        try:
            job, refusal = job_request(request=request, now=now)
        except ValidationError as exc:
            logger.info("diagnosis-driven test not asked for: %s", exc, extra={"finding": finding.pk})
            return None
        if refusal is not None:
            _record(finding, probe.probe, f"test refused: {refusal.reason}", now, job=job.pk, key=probe.key,
                    status=JobStatus.REFUSED, rule=refusal.rule.value, reason=refusal.reason,
                    queued_at=iso_z(now))  # fmt: skip
        else:
            _record(finding, probe.probe, f"test asked for: {probe.purpose}", now, job=job.pk, key=probe.key,
                    status=JobStatus.QUEUED, purpose=probe.purpose, queued_at=iso_z(now), verdict="",
                    reason="", line="")  # fmt: skip
        return job
    return None


def diagnosis_tests_queue(*, finding_ids: Iterable[int], now: datetime) -> list[Job]:
    """Ask for the discriminating test of each active finding among ``finding_ids`` whose code has one, within the
    policy of the tests on demand (a refusal is recorded on the finding with the rule's reason).

    Idempotent: at most one pending test per finding (and one job per test key until it fails or is refused, then
    again after WANMON_DIAGNOSIS_TESTS_RETRY_S). Only sites whose agent asks for jobs are asked; without one
    nothing is queued (a replay's sites, an agent with ``[jobs] enabled = false``).
    """
    duration_s = settings.WANMON_DIAGNOSIS_TESTS_DURATION_S
    queued: list[Job] = []
    ids = list(finding_ids)
    findings = Finding.objects.filter(pk__in=ids, status__in=ACTIVE_STATUSES, code__in=PROBE_CODES).order_by("pk")
    for pk in findings.values_list("pk", flat=True):
        with transaction.atomic():
            finding = Finding.objects.select_for_update().filter(pk=pk, status__in=ACTIVE_STATUSES).first()
            if finding is None:
                continue
            probes = probe_requests(finding.code, finding.subject, finding.evidence, duration_s=duration_s)
            job = _queue_one(finding, probes, now) if probes else None
            if job is not None and job.status == JobStatus.QUEUED:
                queued.append(job)
    return queued


def _episode_opened_at(finding: Finding) -> datetime:
    """When the finding's episode was opened: its first cycle, or the one that reopened it. (A cycle's 'now', which a
    cycle run by hand may set a moment ahead of the clock: the time to the verdict is counted from 0 then.)"""
    reopened = (
        FindingEvent.objects.filter(finding=finding, kind=EventKind.REOPENED)
        .order_by("-time")
        .values_list("time", flat=True)
        .first()
    )
    return max(finding.first_seen_at, reopened) if reopened else finding.first_seen_at


def _settle_finding(finding: Finding, jobs: Sequence[Job], now: datetime) -> None:
    """Store what the settled jobs of ``finding`` say: a verdict once every test of a probe has its result."""
    duration_s = settings.WANMON_DIAGNOSIS_TESTS_DURATION_S
    probes = probe_requests(finding.code, finding.subject, finding.evidence, duration_s=duration_s)
    by_probe: dict[str, list[ProbeRequest]] = {}
    for p in probes:
        by_probe.setdefault(p.probe, []).append(p)
    for job in jobs:
        probe = next((p for p in probes if p.key == job.probe), None)
        if probe is None:
            continue
        if job.status != JobStatus.DONE:
            _record(finding, probe.probe, f"test {job.pk} {job.status}: {job.reason}", now, job=job.pk,
                    key=job.probe, status=job.status, reason=job.reason, verdict="", line="")  # fmt: skip
            continue
        keys = [p.key for p in by_probe[probe.probe]]
        done = {j.probe: j for j in Job.objects.filter(finding=finding, probe__in=keys, status=JobStatus.DONE)}
        if set(keys) - done.keys():
            _record(finding, probe.probe, f"test {job.pk} done ({len(done)} of {len(keys)})", now, job=job.pk,
                    key=job.probe, status="running", reason=f"{len(done)} of {len(keys)} tests done")  # fmt: skip
            continue
        results = [done[key].result or {} for key in keys]
        verdict = probe_verdict(finding.code, finding.evidence, results)
        after_s = max(0.0, (now - _episode_opened_at(finding)).total_seconds())
        for j in done.values():
            j.verdict, j.verdict_reason = verdict.verdict.value, verdict.reason
            j.save(update_fields=["verdict", "verdict_reason"])
        _record(
            finding, probe.probe, f"{verdict.line} ({verdict.reason})", now, job=job.pk, jobs=sorted(j.pk for j in
            done.values()), key=job.probe, status=JobStatus.DONE, verdict=verdict.verdict.value,
            reason=verdict.reason, line=verdict.line, figures=dict(verdict.figures), verdict_at=iso_z(now),
            after_finding_s=round(after_s, 1),
        )  # fmt: skip
        logger.info(
            "diagnosis-driven test %s", verdict.verdict.value,
            extra={"finding": finding.pk, "code": finding.code, "job": job.pk, "after_finding_s": after_s},
        )  # fmt: skip


def diagnosis_tests_settle(*, job_ids: Iterable[int], now: datetime) -> int:
    """Record on their findings what the settled diagnosis-driven jobs among ``job_ids`` say (their verdict, or
    that they failed). Returns the jobs looked at. Runs inside the ingest's transaction or the expiry's."""
    jobs = list(
        Job.objects.filter(pk__in=list(job_ids), status__in=SETTLED, finding__isnull=False)
        .exclude(probe="")
        .order_by("finding_id", "id")
    )
    by_finding: dict[int, list[Job]] = {}
    for job in jobs:
        by_finding.setdefault(job.finding_id, []).append(job)
    for finding_id, group in by_finding.items():
        finding = Finding.objects.select_for_update().filter(pk=finding_id).first()
        if finding is not None and finding.code in PROBE_CODES:
            _settle_finding(finding, group, now)
    return len(jobs)


def job_results_link_and_settle(
    records: Sequence[Any], *, agent: Agent | None, batch_id: str, now: datetime
) -> list[JobRefusal]:
    """The ingest's hook: link the results to their jobs (``job_results_link``), then settle the diagnosis-driven
    ones on their findings, in the ingest's transaction."""
    refusals = job_results_link(records, agent=agent, batch_id=batch_id, now=now)
    if not refusals:
        diagnosis_tests_settle(job_ids={r.job_id for r in records}, now=now)
    return refusals


@transaction.atomic
def diagnosis_tests_expired(*, now: datetime) -> int:
    """Record on their findings the diagnosis-driven jobs ``jobs_expire`` failed at ``now`` (no agent ran them)."""
    failed = Job.objects.filter(status=JobStatus.FAILED, finished_at=now, finding__isnull=False).exclude(probe="")
    return diagnosis_tests_settle(job_ids=list(failed.values_list("pk", flat=True)), now=now)
