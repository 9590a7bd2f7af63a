"""End to end: the real agent, the real Django ingest (live_server), the real database.

A host_tcp collector reads this host's /proc; its records must land in measurements_hosttcp.
Then the centre "goes away" for several collection runs, one upload's answer is lost on the
way back, and when the centre is back every record must be stored exactly once.

The hour-long outage runs the daemon itself (collectors on their schedule, the upload loop and
its backoff) in this process on a virtual clock: sixty one-minute collection intervals while
every connection to the centre is refused take seconds, and the centre is the real one.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from django.db import connection

from agents.adapters import build_collectors, close_collectors
from agents.cli import run_daemon
from agents.config import load_config, read_token
from agents.polls import POLL_LOG_NAME, read_poll_log
from agents.spool import Spool, records_as_dicts
from agents.uploader import build_body
from tests.agents.conftest import HOST_TCP_LO, dead_url, run_agent, write_config
from tests.agents.harness import IngestProxy, LoopThread, VirtualClock, count_rows, host_tcp_rows, register_agent

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]


def agent_once(config: Path) -> subprocess.CompletedProcess[str]:
    return run_agent("once", "--config", str(config), timeout_s=120)


def stored_rows() -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT time, site_id, host, tcp_rmem, tcp_wmem, rmem_max, wmem_max, congestion_control, mtu, "
            "batch_id FROM measurements_hosttcp ORDER BY time"
        )
        return cursor.fetchall()


def parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def test_agent_once_stores_host_tcp_rows_and_an_outage_loses_nothing(live_server, tmp_path):
    site, token = register_agent()
    online = write_config(tmp_path, url=live_server.url, body=HOST_TCP_LO, token=token)

    # --- the agent runs once against the real centre
    first = agent_once(online)

    assert first.returncode == 0, first.stderr
    (row,) = stored_rows()
    _, site_id, host, tcp_rmem, tcp_wmem, rmem_max, _, congestion_control, mtu, batch_id = row
    assert site_id == site.id
    assert tcp_rmem == [int(v) for v in Path("/proc/sys/net/ipv4/tcp_rmem").read_text().split()]
    assert tcp_wmem == [int(v) for v in Path("/proc/sys/net/ipv4/tcp_wmem").read_text().split()]
    assert rmem_max == int(Path("/proc/sys/net/core/rmem_max").read_text())
    assert congestion_control == Path("/proc/sys/net/ipv4/tcp_congestion_control").read_text().strip()
    assert mtu == int(Path("/sys/class/net/lo/mtu").read_text())
    assert batch_id is not None and host
    assert token not in first.stderr

    # --- the centre is unreachable for three collection runs
    offline = tmp_path / "offline.toml"
    offline.write_text(online.read_text().replace(live_server.url, dead_url()))
    for _ in range(3):
        assert agent_once(offline).returncode == 1  # collected and spooled; upload deferred
    spool = Spool(tmp_path / "spool")
    assert (spool.status().records_waiting, spool.status().batches) == (3, 3)
    waiting = list(spool.batches())
    outage_times = {parse_time(r["time"]) for batch in waiting for r in records_as_dicts(batch)}
    assert len(stored_rows()) == 1

    # --- one upload reached the centre but its answer was lost (a timeout on the way back)
    lost_ack = waiting[0]
    body = build_body(lost_ack, agent_version="0.1.0", sent_at=datetime.now(UTC))
    response = httpx.post(
        f"{live_server.url}/api/v1/ingest",
        content=body,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    assert response.json() == {"batch_id": lost_ack.batch_id, "accepted": 1, "duplicate": False}

    # --- the centre is back
    back = agent_once(online)

    assert back.returncode == 0, back.stderr
    assert spool.status().records_waiting == 0
    uploads = [json.loads(line) for line in back.stderr.splitlines()]
    uploads = [log for log in uploads if log["message"] == "batch uploaded"]
    assert [(u["batch_id"], u["duplicate"]) for u in uploads[:3]] == [
        (b.batch_id, b.batch_id == lost_ack.batch_id) for b in waiting
    ]
    assert all(
        re.fullmatch(r"read;dur=[\d.]+, decode;dur=[\d.]+, store;dur=[\d.]+", u["server_timing"]) for u in uploads
    )  # the centre says where each upload's time went, the agent logs it
    rows = stored_rows()
    times = [r[0] for r in rows]
    assert len(rows) == 5  # the first run, three during the outage, the run that found the centre back
    assert len(set(times)) == 5  # nothing stored twice
    assert outage_times <= set(times)  # every record collected during the outage arrived
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM measurements_ingestbatch")
        assert cursor.fetchone()[0] == 5


MINUTE_S = 60.0
OUTAGE_S = 3600.0


def test_an_hour_long_outage_is_survived_with_nothing_lost_and_nothing_stored_twice(live_server, tmp_path, caplog):
    """The daemon, on a virtual clock: 60 one-minute collection intervals with the centre refusing
    every connection, then the centre is back: every record arrives, exactly once."""
    _, token = register_agent()
    down = IngestProxy(live_server.url, up=False)  # the centre's address; nothing accepts connections
    config_path = write_config(
        tmp_path,
        url=down.url,
        body='[[host_tcp]]\ninterface = "lo"\ninterval_s = 60\n',
        agent="upload_interval_s = 60\nshutdown_grace_s = 30\n",
        central="timeout_s = 60\n",
        token=token,
    )
    config = load_config(config_path)
    # Records carry the virtual time: the outage ends an hour before the real now (the centre
    # refuses records from its future).
    start = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=2)
    clock = VirtualClock(start)
    collectors = build_collectors(config)
    # One scheduler loop per collector, the upload loop and, with [jobs] on (the default), the loop that asks the
    # centre for tests on demand: all sleep on the virtual clock, and it may only advance once all are asleep.
    loops = len(collectors) + 1 + int(config.jobs.enabled)
    spool = Spool(config.agent.spool_dir, batch_max_records=config.agent.batch_max_records).open()
    caplog.set_level(logging.INFO)
    with down, LoopThread() as thread:
        stop = asyncio.Event()
        daemon = thread.submit(run_daemon(config, spool, collectors, read_token(config), stop=stop, clock=clock))
        try:
            # --- the outage: runs at t = 0, 60, ..., 3540 s; every upload attempt is refused
            thread.call(clock.advance(OUTAGE_S - 1, sleepers=loops))

            during = spool.status()
            assert during.records_waiting == 60 and during.rejected_records == 0
            assert count_rows("measurements_hosttcp") == 0 and down.requests == []
            refused = [r for r in caplog.records if r.getMessage() == "upload failed; will retry"]
            assert len(refused) >= 10 and all("ConnectError" in r.error for r in refused)
            delays = [r.retry_in_s for r in refused]
            assert max(delays) <= 300 and max(delays) >= 150  # exponential backoff up to its cap, with jitter

            # --- the centre is back (the same address)
            down.come_up()
            assert thread.call(
                clock.advance(OUTAGE_S + 3600, sleepers=loops, done=lambda: spool.status().records_waiting == 0)
            ), "the spool never emptied"
            ended_s = clock.t
        finally:
            thread.call_soon(stop.set)
            assert daemon.result(timeout=120) == 0
            close_collectors(collectors)
            spool.close()

    runs = int(ended_s // MINUTE_S) + 1  # a run at every whole minute up to the end (jitter 0)
    expected = [start + timedelta(seconds=k * MINUTE_S) for k in range(runs)]
    rows = host_tcp_rows()
    assert [time for time, _, _ in rows] == expected  # each collection interval exactly once, none twice
    # every run of the outage, and back within one backoff cap (300 s) plus one upload interval if a run landed just
    # after that pass. The centre returns at 3599 s: a retry due within that last second empties the spool before
    # the run at 3600 s, so 60 runs is a pass as much as 61.
    assert runs >= OUTAGE_S // MINUTE_S and ended_s <= OUTAGE_S + 300 + 60 + 1
    assert len({batch for _, _, batch in rows}) == count_rows("measurements_ingestbatch")
    assert {r.status for r in down.ingest_requests} == {200}
    assert not [r for r in down.ingest_requests if r.answer.get("duplicate")]
    # when it polled: the daemon's poll log in the spool directory (`wanmon-agent spool` shows it)
    polled = read_poll_log(config.agent.spool_dir / POLL_LOG_NAME)["host_tcp[0]"]
    iso = lambda moment: moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")  # noqa: E731
    assert (polled["runs"], polled["failed_runs"], polled["skipped_runs"]) == (runs, 0, 0)
    assert polled["last_started"] == iso(expected[-1])
    assert polled["next_due"] == iso(expected[-1] + timedelta(seconds=MINUTE_S))
