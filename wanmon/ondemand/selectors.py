"""Reads of the tests on demand: one job, an agent's pending jobs, what a site pair is doing now (for the policy),
the jobs a finding, an incident or a path page shows."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db.models import F, Q, QuerySet, Sum

from wanmon.inventory.choices import AgentScope, HostRole
from wanmon.inventory.models import Agent, Host, Site
from wanmon.inventory.selectors import path_current
from wanmon.maintenance.selectors import maintenance_windows_affecting_path
from wanmon.ondemand.choices import JobStatus
from wanmon.ondemand.models import Job
from wanmon.ondemand.policy import HEAVY_KINDS, PathState

__all__ = [
    "ACTIVE",
    "finding_tested_lines",
    "job_get",
    "job_list_for_agent",
    "job_list_for_finding",
    "job_list_for_incident",
    "job_list_for_path",
    "job_pair_state",
    "job_path_capacity_bps",
    "site_agent_for_tests",
    "site_test_host",
]

ACTIVE = (JobStatus.QUEUED, JobStatus.RUNNING)
BUDGET_WINDOW = timedelta(hours=1)
PAGE_JOBS = 10  # the latest tests a page shows


def _queryset() -> QuerySet[Job]:
    return Job.objects.select_related("src", "dst", "agent", "requested_by")


def job_get(pk: int) -> Job | None:
    """One job with its sites, agent and requester."""
    return _queryset().filter(pk=pk).first()


def job_list_for_agent(agent: Agent) -> list[Job]:
    """The jobs ``agent`` has to run (queued, or fetched and not reported yet), oldest first."""
    return list(_queryset().filter(agent=agent, status__in=ACTIVE).order_by("created_at", "id"))


def _pair_q(src: Site, dst: Site) -> Q:
    return Q(src=src, dst=dst) | Q(src=dst, dst=src)


def job_pair_state(*, src: Site, dst: Site, now: datetime, until: datetime) -> PathState:
    """What the site pair (both directions) is doing for the policy: bytes of its tests on demand since an hour ago
    (refused ones excluded, failed ones included: their bytes may have been sent), its active throughput job, and
    the maintenance in force over [now, until) that cuts or degrades either direction."""
    jobs = Job.objects.filter(_pair_q(src, dst)).exclude(status=JobStatus.REFUSED)
    used = jobs.filter(created_at__gte=now - BUDGET_WINDOW).aggregate(n=Sum("budget_bytes"))["n"] or 0
    heavy = jobs.filter(status__in=ACTIVE, kind__in=HEAVY_KINDS).order_by("created_at").values_list("id", flat=True)
    references: dict[str, None] = {}
    for a, b in ((src.code, dst.code), (dst.code, src.code)):
        for match in maintenance_windows_affecting_path((a, b), now, until):
            if match.mutes:  # accepted, and its impact on the path is one that degrades or cuts it
                references[match.window.reference] = None
    return PathState(bytes_last_hour=int(used), heavy_job_id=heavy.first(), maintenance=tuple(references))


def job_path_capacity_bps(*, src: Site, dst: Site, at: datetime) -> float | None:
    """The capacity of the path src -> dst in force at ``at`` (None when unknown)."""
    path = path_current(src, dst, at=at)
    return path.capacity_bps if path is not None else None


def site_agent_for_tests(site: Site) -> Agent | None:
    """The agent that runs tests from ``site``: its site agent (not an archive token) that reported last."""
    agents = Agent.objects.filter(site=site, revoked_at__isnull=True, scope=AgentScope.AGENT)
    return agents.order_by(F("last_seen_at").desc(nulls_last=True), "id").first()


def site_test_host(site: Site) -> str:
    """The registered test host of ``site`` (its address, else its name), '' when it has none."""
    host = Host.objects.filter(site=site, role=HostRole.TEST).order_by("name").first()
    if host is None:
        return ""
    return host.address or host.name


def job_list_for_finding(finding_id: int) -> list[Job]:
    """The latest tests asked for about a finding, newest first."""
    return list(_queryset().filter(finding_id=finding_id)[:PAGE_JOBS])


def job_list_for_incident(incident_id: int) -> list[Job]:
    """The latest tests asked for about an incident or one of its findings, newest first."""
    return list(
        _queryset().filter(Q(incident_id=incident_id) | Q(finding__incidents__id=incident_id)).distinct()[:PAGE_JOBS]
    )


def job_list_for_path(src: str, dst: str) -> list[Job]:
    """The latest tests between the two sites (either direction), newest first."""
    return list(_queryset().filter(Q(src__code=src, dst__code=dst) | Q(src__code=dst, dst__code=src))[:PAGE_JOBS])


def _minutes(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


def finding_tested_lines(finding_id: int) -> list[dict]:
    """The diagnosis-driven tests of a finding as its page says them: "tested: UDP at 9.4 Mb/s clean -> TCP-only
    confirmed, 41 s after the finding", or the test's status and reason while there is no verdict."""
    from wanmon.diagnosis.models import Finding

    tested = Finding.objects.filter(pk=finding_id).values_list("tested", flat=True).first() or []
    lines = []
    for item in tested:
        if item.get("verdict"):
            text = f"{item.get('line')}, {_minutes(item.get('after_finding_s') or 0)} after the finding"
        else:
            text = f"{item.get('status', '')}: {item.get('reason') or item.get('purpose') or ''}".rstrip(": ")
        lines.append({"probe": item.get("probe"), "verdict": item.get("verdict") or "", "text": text,
                      "job": item.get("job"), "reason": item.get("reason", "")})  # fmt: skip
    return lines
