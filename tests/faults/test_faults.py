"""Fault injection against the real services: PostgreSQL restarted, Redis stopped or blackholed, a Celery worker
SIGKILLed, the centre down for an hour, the agent's disk full. What an operator relies on is asserted: records
neither lost nor stored twice, ingest answering (or 503 with Retry-After), rates and rollups complete afterwards.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import threading
import time
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection, connections

from tests.e2e.chain_harness import Worker, database_url_for_subprocesses
from tests.faults.harness import (
    PER_POLL_OCTETS,
    POLL_S,
    Blackhole,
    PlainCentre,
    RedisInstance,
    SimAgent,
    centre_env,
    postgres_data_dir,
    postgres_start,
    postgres_stop,
)
from tests.processes import free_port, wait_until

pytestmark = [pytest.mark.integration]

IN_BPS = PER_POLL_OCTETS * 8 / POLL_S


def _start(request, *things):
    for thing in things:
        request.addfinalizer(thing.stop)
    return things


def _scalar(sql: str, params=()) -> object:
    connections.close_all()  # the server may have restarted since the last query
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()[0]


def _stored() -> tuple[int, int]:
    """(samples stored, (interface, time) pairs stored more than once)."""
    return (
        _scalar("SELECT count(*) FROM measurements_snmpsample"),
        _scalar("SELECT count(*) FROM (SELECT 1 FROM measurements_snmpsample GROUP BY interface_id, time "
                "HAVING count(*) > 1) d"),
    )  # fmt: skip


def _rates_complete(registered, polls: int) -> bool:
    """Every interval of every interface has its rate (10 Mb/s), and the 5-minute rollups hold all of them."""
    n = len(registered.interfaces)
    rates = _scalar("SELECT count(*) FROM measurements_interfacerate WHERE abs(in_bps - %s) < 1", [IN_BPS])
    rolled = _scalar("SELECT coalesce(sum(samples), 0) FROM measurements_interfacerate_5m")
    return rates == n * (polls - 1) and rolled == n * (polls - 1)


def _sample_times(start: datetime, polls: int) -> list[datetime]:
    return [start + timedelta(seconds=POLL_S * k) for k in range(polls)]


def _start_of_polls() -> datetime:
    # Sample times an hour or two back: ingest checks times against now, the polls themselves take seconds.
    return (datetime.now(UTC) - timedelta(hours=3)).replace(second=0, microsecond=0)


# --- the agent's disk full ----------------------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path):
    """A 256 KiB tmpfs: a file system that really fills up (ENOSPC)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs to fill (needs root): {done.stderr.decode().strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def test_the_agents_disk_full_drops_the_oldest_with_a_count_and_never_fails(small_disk, caplog):
    agent = SimAgent(small_disk / "spool", url="http://127.0.0.1:9", token="t", equipment="ral-border",
                     interfaces=[f"xe-0/0/{k}" for k in range(8)])  # fmt: skip
    start = _start_of_polls()
    with caplog.at_level(logging.WARNING, logger="agents.spool"):
        for at in _sample_times(start, 400):  # ~700 KiB of records for a 256 KiB disk, far below max_bytes
            agent.poll(at)  # never raises
    status = agent.spool.status()
    kept = status.records_waiting
    assert 0 < kept < agent.records_spooled
    assert status.dropped_records == agent.records_spooled - kept  # every record is either kept or counted
    logged = [r for r in caplog.records if r.getMessage() == "file system full: dropped the oldest data"]
    assert sum(r.dropped_records for r in logged) == status.dropped_records
    # Forming batches on the full disk (the upload pass does it) makes room the same way; still all counted.
    agent.spool.seal()
    status = agent.spool.status()
    assert status.batches > 0 and status.records_waiting + status.dropped_records == agent.records_spooled
    # The newest polls are the ones kept, whole and contiguous: oldest first out.
    times = sorted({r["time"] for b in agent.spool.batches() for r in _records(b)})
    newest = [t.isoformat().replace("+00:00", "Z") for t in agent.times[-len(times) :]]
    assert times == newest and status.records_waiting == 8 * len(times)
    agent.close()


def _records(batch):
    from agents.spool import records_as_dicts

    return records_as_dicts(batch)


# --- the centre down for an hour --------------------------------------------------------------------------


def test_the_centre_down_for_an_hour_then_the_spool_drains_and_rates_are_complete(registered, tmp_path, request):
    redis = RedisInstance(tmp_path / "redis")
    request.addfinalizer(redis.stop)
    env = centre_env(database_url=database_url_for_subprocesses(), redis_url=redis.url)
    worker = Worker(env=env, log_dir=tmp_path)
    request.addfinalizer(worker.stop)
    down_url = f"http://127.0.0.1:{free_port()}"  # the centre's address, nothing listening: connection refused
    agent = SimAgent(tmp_path / "spool", url=down_url, token=registered.token, equipment=registered.equipment,
                     interfaces=list(registered.interfaces), timeout_s=2)  # fmt: skip
    # An hour of polls (virtual time: one a minute) while every upload fails.
    for at in _sample_times(_start_of_polls(), 61):
        agent.poll(at)
        if agent.polls % 10 == 0:
            report = agent.drain()
            assert report.retry_in_s is not None and report.sent_batches == 0
    assert agent.spool.status().records_waiting == 61 * 4 and _stored() == (0, 0)
    assert set(agent.answers) == {"no answer"}

    centre = PlainCentre(env=env, log_dir=tmp_path)
    request.addfinalizer(centre.stop)
    centre.wait_ready()
    worker.wait_ready()
    agent.url = centre.url
    agent.drain_until_empty()
    assert _stored() == (61 * 4, 0)
    wait_until("rates and rollups of the hour", lambda: _rates_complete(registered, 61), 60,
               diagnose=lambda: worker.log()[-2000:])  # fmt: skip
    agent.close()


# --- Redis stopped during ingest -----------------------------------------------------------------------------


def test_redis_stopped_during_ingest_then_restarted_rates_and_rollups_catch_up(registered, tmp_path, request):
    redis = RedisInstance(tmp_path / "redis")
    request.addfinalizer(redis.stop)
    env = centre_env(database_url=database_url_for_subprocesses(), redis_url=redis.url)
    centre = PlainCentre(env=env, log_dir=tmp_path)
    worker = Worker(env=env, log_dir=tmp_path)
    _start(request, centre, worker)
    centre.wait_ready()
    worker.wait_ready()
    agent = SimAgent(tmp_path / "spool", url=centre.url, token=registered.token, equipment=registered.equipment,
                     interfaces=list(registered.interfaces))  # fmt: skip
    times = iter(_sample_times(_start_of_polls(), 30))

    for _ in range(10):  # Redis up
        agent.poll(next(times))
        agent.drain_until_empty()
    wait_until("rates while Redis is up", lambda: _rates_complete(registered, 10), 60)

    redis.stop()  # the queue and everything in it is gone (no persistence), and ingest finds no broker
    down_at = time.monotonic()
    for _ in range(10):
        agent.poll(next(times))
        agent.drain_until_empty()
    down_s = time.monotonic() - down_at
    assert _stored() == (20 * 4, 0)  # ingest kept answering: the records are in PostgreSQL
    assert set(agent.answers) <= {200, 503} and agent.answers[200] > 0
    assert agent.answers["503 without Retry-After"] == 0

    redis.start()  # same port, empty
    for _ in range(10):
        agent.poll(next(times))
        agent.drain_until_empty()
    assert _stored() == (30 * 4, 0)
    worker.send("wanmon.measurements.tasks.measurements_catch_up_task")  # as beat does every minute
    wait_until("rates and rollups caught up after the Redis outage", lambda: _rates_complete(registered, 30), 90,
               diagnose=lambda: worker.log()[-3000:])  # fmt: skip
    assert down_s < 60  # the outage cost the uploads seconds, not a hang
    agent.close()


def test_a_blackholed_redis_cannot_hang_ingest(registered, tmp_path, request):
    """Redis unreachable without an answer (a firewall dropping packets): every client times out."""
    hole = Blackhole()
    request.addfinalizer(hole.stop)
    env = centre_env(database_url=database_url_for_subprocesses(), redis_url=hole.url)
    centre = PlainCentre(env=env, log_dir=tmp_path, workers=1, threads=2)
    request.addfinalizer(centre.stop)
    centre.wait_ready()
    agent = SimAgent(tmp_path / "spool", url=centre.url, token=registered.token, equipment=registered.equipment,
                     interfaces=list(registered.interfaces), timeout_s=60)  # fmt: skip
    for at in _sample_times(_start_of_polls(), 3):
        agent.poll(at)
        started = time.monotonic()
        agent.drain_until_empty(timeout_s=90)
        assert time.monotonic() - started < 30, "an upload waited on Redis"
    assert _stored() == (3 * 4, 0)
    assert hole.accepted  # the clients did reach the blackhole
    agent.close()


# --- a worker SIGKILLed during a rollup ------------------------------------------------------------------


def test_a_worker_sigkilled_during_a_rollup_has_its_work_redone(registered, tmp_path, request):
    import psycopg

    from collectors.records import decode_records
    from wanmon.measurements.ingest import batch_ingest

    redis = RedisInstance(tmp_path / "redis")
    request.addfinalizer(redis.stop)
    env = centre_env(database_url=database_url_for_subprocesses(), redis_url=redis.url)
    agent = SimAgent(tmp_path / "spool", url="http://127.0.0.1:9", token="t", equipment=registered.equipment,
                     interfaces=list(registered.interfaces))  # fmt: skip
    records = []
    for at in _sample_times(_start_of_polls(), 12):
        records += agent.records_at(at)
        agent.polls += 1
    stored = batch_ingest(batch_id="00000000-0000-4000-8000-000000000001", records=decode_records(records),
                          source="test")  # fmt: skip
    since = {str(k): v.isoformat() for k, v in stored.interface_since.items()}

    # The rollup tables are locked: the worker computes the rates, then waits inside the rollup.
    blocker = psycopg.connect(database_url_for_subprocesses(), autocommit=False)
    request.addfinalizer(blocker.close)
    blocker.execute("LOCK TABLE measurements_interfacerate_5m IN ACCESS EXCLUSIVE MODE")
    worker = Worker(env=env, log_dir=tmp_path)
    request.addfinalizer(worker.stop)
    worker.wait_ready()
    worker.send("wanmon.measurements.tasks.measurements_process_task", since)

    def waiting_in_rollup() -> bool:
        # Asked of pg_locks, not of the statement's text: pg_stat_activity keeps only its first 1 kB
        # (track_activity_query_size), and the rollup statement names its table further on.
        return bool(_scalar("SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
                            "WHERE NOT l.granted AND c.relname = 'measurements_interfacerate_5m'"))  # fmt: skip

    wait_until("the worker blocked in the rollup", waiting_in_rollup, 60, diagnose=lambda: worker.log()[-2000:])
    os.killpg(worker.process.pid, signal.SIGKILL)
    worker.process.wait(timeout=30)
    blocker.rollback()
    wait_until("the killed worker's transaction gone", lambda: not waiting_in_rollup(), 30)
    assert _scalar("SELECT count(*) FROM measurements_interfacerate") == 0  # rolled back with the worker

    (tmp_path / "second").mkdir()
    second = Worker(env=env, log_dir=tmp_path / "second")
    request.addfinalizer(second.stop)
    second.wait_ready()
    second.send("wanmon.measurements.tasks.measurements_catch_up_task")  # as beat does every minute
    wait_until("the killed rollup redone", lambda: _rates_complete(registered, 12), 60,
               diagnose=lambda: second.log()[-2000:])  # fmt: skip


# --- PostgreSQL restarted while an agent streams uploads -------------------------------------------------


@pytest.mark.exclusive
def test_postgresql_restarted_while_an_agent_streams_uploads_loses_and_doubles_nothing(registered, tmp_path, request):
    data_dir = postgres_data_dir()
    if data_dir is None:
        pytest.skip("needs the private PostgreSQL of scripts/test (WANMON_TEST_RUN_DIR) to restart it")
    redis = RedisInstance(tmp_path / "redis")
    request.addfinalizer(redis.stop)
    env = centre_env(database_url=database_url_for_subprocesses(), redis_url=redis.url)
    centre = PlainCentre(env=env, log_dir=tmp_path)
    request.addfinalizer(centre.stop)
    centre.wait_ready()
    agent = SimAgent(tmp_path / "spool", url=centre.url, token=registered.token, equipment=registered.equipment,
                     interfaces=list(registered.interfaces), batch_max_records=8)  # fmt: skip
    times = iter(_sample_times(_start_of_polls(), 1000))
    stop = threading.Event()
    errors: list[BaseException] = []

    def stream() -> None:  # the agent: a poll every 50 ms, uploaded at once
        try:
            while not stop.is_set():
                agent.poll(next(times))
                agent.drain()
                time.sleep(0.05)
        except BaseException as exc:  # reported by the test thread
            errors.append(exc)

    streamer = threading.Thread(target=stream, name="agent")
    streamer.start()
    try:
        time.sleep(3)
        saved = postgres_stop(data_dir)
        try:
            time.sleep(4)
        finally:
            postgres_start(data_dir, saved)
        time.sleep(3)
    finally:
        stop.set()
        streamer.join(timeout=60)
    assert not errors, errors
    agent.drain_until_empty()
    assert _stored() == (agent.records_spooled, 0)  # 0 lost, 0 stored twice
    assert agent.answers[200] > 0 and set(agent.answers) - {200} != set(), agent.answers  # the outage was seen
    assert agent.answers["503 without Retry-After"] == 0 and 500 not in agent.answers, agent.answers
    agent.close()
