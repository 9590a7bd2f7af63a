"""The agent's side of tests on demand (agents/jobs.py), without network: how often it asks, that nothing runs while
no job is pending, that a job handed twice runs once (also after a restart), and what a job runs with."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from agents.config import parse_config
from agents.jobs import AgentJob, DoneJobs, job_collector, jobs_forever, parse_jobs
from agents.scheduler import Scheduler
from agents.validation import check_records
from collectors.runner import completed
from tests.collectors.test_nuttcp import fixture
from tests.collectors.test_nuttcp_run import nuttcp_runner

NOW = datetime(2026, 3, 1, 11, 0, tzinfo=UTC)
CONFIG = """
[central]
url = "https://wanmon.example.org"
token_file = "/nonexistent"
[agent]
site = "CERN"
spool_dir = "/tmp/unused"
[jobs]
poll_s = 2
idle_poll_max_s = 20
[[nuttcp]]
dst = "FZK"
host = "fzk-dt01.example.org"
control_port = 5100
window_bytes = 8388608
interval_s = 0
"""


class Clock:
    """Records each wait; stops the loop after ``waits`` of them."""

    def __init__(self, stop: asyncio.Event, waits: int) -> None:
        self.stop, self.left, self.delays = stop, waits, []

    def now(self) -> datetime:
        return NOW

    def monotonic(self) -> float:
        return 0.0

    async def wait(self, stop: asyncio.Event, delay_s: float) -> bool:
        self.delays.append(delay_s)
        self.left -= 1
        if self.left <= 0:
            stop.set()
        await asyncio.sleep(0)
        return stop.is_set()


def job(job_id: int = 7, **fields) -> dict:
    return {"id": job_id, "kind": "throughput", "src": "CERN", "dst": "FZK", "host": "192.0.2.10", "protocol": "tcp",
            "duration_s": 5.0, "rate_bps": None, "streams": None, "reverse": False, **fields}  # fmt: skip


def run_loop(answers: list, tmp_path, waits: int) -> tuple[list[float], list[int], DoneJobs]:
    config = parse_config(CONFIG)
    stop = asyncio.Event()
    clock = Clock(stop, waits)
    ran: list[int] = []
    done = DoneJobs(tmp_path)

    async def fetch():
        return answers.pop(0) if answers else (200, {"jobs": [], "poll_s": 2}, None)

    async def run(collector):
        ran.append(collector.job.id)

    def build(agent_job):
        return job_collector(agent_job, config, runner=None)

    asyncio.run(jobs_forever(config, fetch, run, stop, done=done, build=build, clock=clock))
    return clock.delays, ran, done


def test_idle_the_agent_backs_off_to_the_maximum_and_runs_nothing(tmp_path):
    delays, ran, _ = run_loop([], tmp_path, waits=6)
    assert delays == [4, 8, 16, 20, 20, 20]
    assert ran == []


def test_with_a_job_it_asks_every_poll_s_and_runs_a_job_handed_twice_once_also_after_a_restart(tmp_path):
    answers = [(200, {"jobs": [], "poll_s": 2}, None)] * 2 + [(200, {"jobs": [job()], "poll_s": 2}, None)] * 2
    delays, ran, done = run_loop(answers, tmp_path, waits=5)
    assert delays == [4, 8, 2, 2, 4]  # backing off, a job: every 2 s, none: backing off again
    assert ran == [7]
    assert 7 in done and 7 in DoneJobs(tmp_path)  # remembered in the spool directory
    # after a restart the centre hands it again (its result not arrived yet): it is not run again
    _, ran_again, _ = run_loop([(200, {"jobs": [job()]}, None)], tmp_path, waits=2)
    assert ran_again == []


def test_a_failed_request_backs_off_and_a_malformed_job_is_skipped(tmp_path):
    answers = [(None, None, "ConnectError: refused"), (200, {"jobs": [{"id": "x"}, job(8)]}, None)]
    delays, ran, _ = run_loop(answers, tmp_path, waits=2)
    assert (delays[0], ran) == (4, [8])
    assert parse_jobs({"jobs": [], "poll_s": 1.5}) == ([], 1.5)


def test_a_job_runs_with_the_tables_host_and_options_and_its_own_settings(tmp_path):
    config = parse_config(CONFIG)
    assert config.nuttcp[0].interval_s == 0  # on demand only

    runner = nuttcp_runner(completed(fixture("nuttcp-tcp-fparse-1.txt"), duration_s=3.1))
    agent_job = AgentJob(**{k: v for k, v in job(9, duration_s=3.0, streams=4, reverse=True).items() if k != "src"})
    collector = job_collector(agent_job, config, runner=runner)
    assert collector.exclusive_groups == ("throughput", "host:fzk-dt01.example.org")
    (record,) = collector.collect(NOW)
    # the table's host, port and window; the job's duration, streams and direction (reverse only: -r, with -F)
    assert runner.calls[-1][0] == ["nuttcp", "-fparse", "-T3", "-r", "-F", "-w8192", "-N4", "-P5100",
                                   "fzk-dt01.example.org"]  # fmt: skip
    assert (record["src"], record["dst"], record["src_host"], record["job_id"]) == (
        "FZK", "CERN", "fzk-dt01.example.org", 9)  # fmt: skip
    assert record["throughput_bps"] > 0
    (checked,) = check_records([record], now=NOW).records  # what the scheduler spools: the job_id is kept
    assert checked.job_id == 9


def test_a_job_that_names_its_host_runs_towards_it_with_the_tables_options(tmp_path):
    # a diagnosis-driven test of a LAG: one test per far address, the centre names it (pin_host)
    config = parse_config(CONFIG)
    runner = nuttcp_runner(completed(fixture("nuttcp-tcp-fparse-1.txt"), duration_s=3.1))
    agent_job = AgentJob(id=12, kind="throughput", dst="FZK", host="192.0.2.11", duration_s=3.0, pin_host=True)
    collector = job_collector(agent_job, config, runner=runner)
    assert collector.exclusive_groups == ("throughput", "host:192.0.2.11")
    (record,) = collector.collect(NOW)
    assert runner.calls[-1][0] == ["nuttcp", "-fparse", "-T3", "-t", "-w8192", "-P5100", "192.0.2.11"]
    assert (record["dst_host"], record["job_id"]) == ("192.0.2.11", 12)
    # without pin_host the table's host wins, as for an operator's test
    unpinned = job_collector(AgentJob(id=13, kind="throughput", dst="FZK", host="192.0.2.11"), config, runner=runner)
    assert unpinned.exclusive_groups == ("throughput", "host:fzk-dt01.example.org")
    assert parse_jobs({"jobs": [job(14, pin_host=True)], "poll_s": 2})[0][0].pin_host is True


def test_a_job_towards_a_site_without_table_nor_host_fails_with_a_record_the_centre_accepts(tmp_path):
    config = parse_config(CONFIG)
    agent_job = AgentJob(id=11, kind="tracepath", dst="RAL", host="")
    collector = job_collector(agent_job, config, runner=None)
    records = []
    scheduler = Scheduler([], sink=lambda c, rs: records.extend(rs))
    asyncio.run(scheduler.run_collector(collector))
    (record,) = records
    assert (record.job_id, record.src, record.dst, record.dst_host, record.schedule_interval_s) == (
        11, "CERN", "RAL", None, None)  # fmt: skip
    assert record.error == "no [[traceroute]] table towards RAL and the centre knows no test host there"


def test_the_jobs_table_is_checked_like_the_others():
    from agents.config import ConfigError

    bad = CONFIG.replace("poll_s = 2\n", "poll_s = 0\nevery = 3\n")
    try:
        parse_config(bad)
    except ConfigError as exc:
        assert any("jobs.poll_s" in e for e in exc.errors) and any("jobs.every: unknown key" in e for e in exc.errors)
    else:
        raise AssertionError("accepted")
    assert parse_config(CONFIG.replace("[jobs]", "[jobs]\nenabled = false")).jobs.enabled is False
    assert parse_config(CONFIG).central.jobs_url == "https://wanmon.example.org/api/v1/agent/jobs"
