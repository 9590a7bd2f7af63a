"""Tests on demand at the site: the agent asks the centre for jobs and runs them with its collectors.

No inbound port is needed at a site: the agent asks ``GET /api/v1/agent/jobs`` (docs/contracts.md#tests-on-demand)
over the connection and token it uploads with, every ``[jobs] poll_s`` while it has jobs, and backing off (doubling)
to ``idle_poll_max_s`` while it has none. Nothing is measured while no job is pending: a poll is one small GET.

Each job runs with the agent's own table of its kind towards the job's ``dst`` (its host, ports, window and the
other options: the first ``[[nuttcp]]`` for a throughput job, ``[[owamp]]`` for owamp, ``[[traceroute]]`` for
traceroute and tracepath), the job's own settings (protocol, duration, rate, streams, direction) taking precedence;
without such a table it runs towards the destination's registered test host the centre sends (``host``). A table
with ``interval_s = 0`` serves jobs only and is never scheduled. A job runs through the scheduler like any collector
(its exclusive groups: never beside another throughput test of this agent or another test to the same host) and its
records carry the ``job_id``; they are spooled like any record and the uploader sends them (a job's result survives
an agent restart in the spool). A job whose result is spooled is remembered (``jobs-done.json`` in the spool
directory), so the centre handing it again (it does until the result arrives) does not run it twice; a job fetched
but not finished when the agent stopped is handed again and run after the restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from agents.adapters import THROUGHPUT_GROUP, host_group
from agents.clock import SYSTEM_CLOCK, Clock
from agents.config import AgentConfig
from collectors import nuttcp, owamp, traceroute
from collectors.runner import CommandRunner

__all__ = ["DONE_FILE", "AgentJob", "DoneJobs", "JobCollector", "job_collector", "jobs_forever", "parse_jobs"]

logger = logging.getLogger(__name__)

DONE_FILE = "jobs-done.json"
DONE_KEPT = 1000  # job ids remembered (the centre stops handing a job once its result is stored)
KINDS = ("throughput", "owamp", "traceroute", "tracepath")
_MARGIN_S = 15.0  # beyond the tool's own deadline before the scheduler gives up on a job


@dataclass(frozen=True)
class AgentJob:
    """One job as the centre hands it (the fields of ``GET /api/v1/agent/jobs``)."""

    id: int
    kind: str
    dst: str
    host: str = ""
    protocol: str | None = None
    duration_s: float | None = None
    rate_bps: float | None = None
    streams: int | None = None
    reverse: bool = False
    pin_host: bool = False  # the centre names the far address (a diagnosis-driven test per host): it wins


def _job(item: Any) -> AgentJob | None:
    if not isinstance(item, Mapping):
        return None
    try:
        job = AgentJob(
            id=int(item["id"]), kind=str(item["kind"]), dst=str(item["dst"]), host=str(item.get("host") or ""),
            protocol=item.get("protocol") or None,
            duration_s=float(item["duration_s"]) if item.get("duration_s") else None,
            rate_bps=float(item["rate_bps"]) if item.get("rate_bps") else None,
            streams=int(item["streams"]) if item.get("streams") else None, reverse=bool(item.get("reverse")),
            pin_host=bool(item.get("pin_host")),
        )  # fmt: skip
    except (KeyError, TypeError, ValueError):
        return None
    return job if job.kind in KINDS and job.id > 0 else None


def parse_jobs(content: Any) -> tuple[list[AgentJob], float | None]:
    """The jobs of the centre's answer and the ``poll_s`` it asks for; malformed items are logged and skipped."""
    if not isinstance(content, Mapping) or not isinstance(content.get("jobs"), list):
        raise ValueError("not the centre's job list")
    jobs = []
    for item in content["jobs"]:
        job = _job(item)
        if job is None:
            logger.error("job not understood: skipped", extra={"job": str(item)[:200]})
        else:
            jobs.append(job)
    poll_s = content.get("poll_s")
    return jobs, float(poll_s) if isinstance(poll_s, int | float) and poll_s > 0 else None


class JobCollector:
    """One job as a scheduler collector: run once (not scheduled), its records tagged with the ``job_id``."""

    on_demand = True  # the scheduler gives its records no schedule_interval_s
    interval_s = 0.0

    def __init__(
        self, job: AgentJob, *, site: str, run: Callable[[datetime], list[dict[str, Any]]],
        errors: Callable[[datetime, str], list[dict[str, Any]]], timeout_s: float, groups: tuple[str, ...],
    ) -> None:  # fmt: skip
        self.job = job
        self.site = site
        self.name = f"job[{job.id}]:{job.kind}:{job.dst}"
        self.timeout_s = timeout_s
        self.exclusive_groups = groups
        self._run = run
        self._errors = errors

    def _tagged(self, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        # A job without any host fails with a record that names no far host (an empty one would be refused).
        return [
            {**{k: v for k, v in record.items() if v != "" or k not in ("dst_host", "src_host")}, "job_id": self.job.id}
            for record in records
        ]

    def collect(self, now: datetime) -> list[dict[str, Any]]:
        """Run the test now."""
        return self._tagged(self._run(now))

    def error_records(self, now: datetime, message: str) -> list[dict[str, Any]]:
        """The job's failure as a record (the centre fails the job with this error)."""
        return self._tagged(self._errors(now, message))


def _table(tables: tuple[Any, ...], dst: str) -> Any | None:
    return next((t for t in tables if t.dst == dst), None)


def _throughput(job: AgentJob, config: AgentConfig, runner: CommandRunner, retrans: Any) -> JobCollector:
    base = _table(config.nuttcp, job.dst) or nuttcp.NuttcpConfig(dst=job.dst, host=job.host or "")
    if job.pin_host and job.host:
        base = dataclasses.replace(base, host=job.host)
    protocol = job.protocol or base.protocol
    rate_bps = job.rate_bps or (base.rate_bps if protocol == base.protocol else None)
    test = dataclasses.replace(
        base, protocol=protocol, duration_s=job.duration_s or base.duration_s, rate_bps=rate_bps,
        streams=job.streams or base.streams, reverse=False, interval_s=None,
    )  # fmt: skip
    direction = nuttcp.REVERSE if job.reverse else nuttcp.FORWARD
    site = config.agent.site

    def errors(now: datetime, message: str) -> list[dict[str, Any]]:
        ends = {"src_site": site, "dst_site": job.dst}
        return [nuttcp.error_record(test, direction=direction, time=now, error=message, **ends)]

    def run(now: datetime) -> list[dict[str, Any]]:
        if not test.host:
            return errors(now, f"no [[nuttcp]] table towards {job.dst} and the centre knows no test host there")
        return nuttcp.run_test(
            runner, test, src_site=site, dst_site=job.dst, now=now, retrans_counter=retrans, directions=(direction,)
        )

    groups = (THROUGHPUT_GROUP, host_group(test.host)) if test.host else (THROUGHPUT_GROUP,)
    return JobCollector(job, site=site, run=run, errors=errors, timeout_s=test.timeout_s + _MARGIN_S, groups=groups)


def _owamp(job: AgentJob, config: AgentConfig, runner: CommandRunner) -> JobCollector:
    base = _table(config.owamp, job.dst) or owamp.OwampConfig(dst=job.dst, host=job.host or "")
    packets = round(job.duration_s / base.packet_interval_s) if job.duration_s else base.packets
    test = dataclasses.replace(base, packets=max(1, packets), directions="from" if job.reverse else "to")
    site = config.agent.site

    def errors(now: datetime, message: str) -> list[dict[str, Any]]:
        return [
            owamp.error_record(direction=test.directions, host=test.host, src_site=site, dst_site=job.dst, time=now,
                               error=message)
        ]  # fmt: skip

    def run(now: datetime) -> list[dict[str, Any]]:
        if not test.host:
            return errors(now, f"no [[owamp]] table towards {job.dst} and the centre knows no test host there")
        return owamp.run_test(runner, test, src_site=site, dst_site=job.dst, now=now)

    groups = (host_group(test.host),) if test.host else ()
    return JobCollector(job, site=site, run=run, errors=errors, timeout_s=test.timeout_s + _MARGIN_S, groups=groups)


def _route(job: AgentJob, config: AgentConfig, runner: CommandRunner) -> JobCollector:
    base = _table(config.traceroute, job.dst) or traceroute.TracerouteConfig(dst=job.dst, host=job.host or "")
    tool = traceroute.TRACEPATH if job.kind == "tracepath" else traceroute.TRACEROUTE
    # tracepath is asked for its path MTU: no fallback to a tool that does not measure it
    test = dataclasses.replace(base, tool=tool, fallback=None if tool == traceroute.TRACEPATH else base.fallback)
    site = config.agent.site

    def errors(now: datetime, message: str) -> list[dict[str, Any]]:
        return [traceroute.error_record(tool=tool, host=test.host, src_site=site, dst_site=job.dst, time=now,
                                        error=message)]  # fmt: skip

    def run(now: datetime) -> list[dict[str, Any]]:
        if not test.host:
            return errors(now, f"no [[traceroute]] table towards {job.dst} and the centre knows no test host there")
        return traceroute.run_test(runner, test, src_site=site, dst_site=job.dst, now=now)

    return JobCollector(job, site=site, run=run, errors=errors, timeout_s=test.timeout_s * 2 + _MARGIN_S, groups=())


def job_collector(job: AgentJob, config: AgentConfig, *, runner: CommandRunner, retrans: Any = None) -> JobCollector:
    """The collector that runs ``job`` with this agent's table of its kind towards its ``dst`` (module docstring)."""
    if job.kind == "throughput":
        return _throughput(job, config, runner, retrans)
    if job.kind == "owamp":
        return _owamp(job, config, runner)
    return _route(job, config, runner)


class DoneJobs:
    """The ids of the jobs whose result is spooled, kept in the spool directory across restarts."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / DONE_FILE
        self.ids: list[int] = []
        with contextlib.suppress(OSError, ValueError, TypeError):
            self.ids = [int(i) for i in json.loads(self.path.read_text())["done"]][-DONE_KEPT:]

    def __contains__(self, job_id: int) -> bool:
        return job_id in self.ids

    def add(self, job_id: int) -> None:
        """Remember ``job_id`` (written atomically: a crash leaves the old list or the new one)."""
        self.ids = [*self.ids, job_id][-DONE_KEPT:]
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"done": self.ids}))
        os.replace(tmp, self.path)


Fetch = Callable[[], Awaitable[tuple[int | None, Any, str | None]]]
RunJob = Callable[[JobCollector], Awaitable[Any]]


async def jobs_forever(
    config: AgentConfig,
    fetch: Fetch,
    run: RunJob,
    stop: asyncio.Event,
    *,
    done: DoneJobs,
    build: Callable[[AgentJob], JobCollector],
    clock: Clock = SYSTEM_CLOCK,
) -> None:
    """Ask for jobs until ``stop``; run each new one (``run``: through the scheduler, results to the spool).

    Asks again ``poll_s`` after an answer with jobs (or while one runs), and doubles the wait up to
    ``idle_poll_max_s`` after each answer without any, or after a failed request.
    """
    settings = config.jobs
    delay_s = settings.poll_s
    running: dict[int, asyncio.Task[None]] = {}

    async def one(collector: JobCollector) -> None:
        try:
            result = await run(collector)
            if not getattr(result, "skipped", False):
                done.add(collector.job.id)
        except Exception:  # a bug must cost this job, not the agent
            logger.exception("test on demand failed", extra={"job": collector.job.id})
        finally:
            running.pop(collector.job.id, None)

    while not stop.is_set():
        status, content, error = await fetch()
        jobs: list[AgentJob] = []
        poll_s = None
        if error is None:
            try:
                jobs, poll_s = parse_jobs(content)
            except ValueError as exc:
                error = str(exc)
        if error is not None:
            logger.warning("asking the centre for jobs failed", extra={"status": status, "error": error})
        for job in jobs:
            if job.id in done or job.id in running:
                continue
            collector = build(job)
            logger.info("test on demand", extra={"job": job.id, "kind": job.kind, "dst": job.dst,
                                                  "collector": collector.name})  # fmt: skip
            running[job.id] = asyncio.create_task(one(collector), name=collector.name)
        if running or (jobs and error is None):
            delay_s = max(settings.poll_s, min(poll_s or settings.poll_s, settings.idle_poll_max_s))
        else:
            delay_s = min(max(delay_s, settings.poll_s) * 2, settings.idle_poll_max_s)
        await clock.wait(stop, delay_s)
    if running:
        await asyncio.wait(list(running.values()), timeout=config.agent.shutdown_grace_s)
