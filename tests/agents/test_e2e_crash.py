"""kill -9 of the agent during an upload to the real centre, then a restart: 0 records lost, 0 stored twice.

``wanmon-agent run`` (a real process) collects host_tcp every second and uploads through
:class:`~tests.agents.harness.IngestProxy` to pytest-django's live server (real ingest, real
database). The proxy holds the agent's first upload, either before the centre sees it (the kill
lands while the request is in flight) or after the centre stored the batch and answered (the
answer never reaches the agent). The agent is SIGKILLed there and started again on the same
spool; it re-sends the unacknowledged batch with the same ``batch_id`` (the centre answers
``duplicate: true`` if it had it) and goes on. Finally a collector-less ``once`` sends what the
second process collected after its last upload.

Every record is accounted for: what the first process had stored at the centre or left in its
spool when it died, and every run either process logged, must be in measurements_hosttcp, each
exactly once, and nothing else may be there.
"""

from __future__ import annotations

import subprocess
from datetime import datetime

import pytest

from tests.agents.conftest import ROOT, write_config
from tests.agents.harness import (
    HOLD_AFTER_COMMIT,
    HOLD_BEFORE_FORWARD,
    WAIT_S,
    IngestProxy,
    agent_argv,
    agent_run,
    host_tcp_rows,
    parse_time,
    register_agent,
    spooled_batch_ids,
    spooled_records,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]


def ms(moment: datetime) -> datetime:
    """To the millisecond, as the agent's logs show run times."""
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def logged_runs(agent) -> set[datetime]:
    """Start times of the runs a process logged as collected and spooled (logged after the spool's fsync)."""
    return {ms(parse_time(log["started"])) for log in agent.messages("collector run") if log["records"]}


def uploads(agent) -> list[dict]:
    return agent.messages("batch uploaded")


@pytest.mark.parametrize("moment", [HOLD_BEFORE_FORWARD, HOLD_AFTER_COMMIT])
def test_kill_9_during_an_upload_then_restart_loses_nothing_and_stores_nothing_twice(live_server, tmp_path, moment):
    _, token = register_agent()
    spool_dir = tmp_path / "spool"
    with IngestProxy(live_server.url, hold=moment) as proxy:
        config = write_config(
            tmp_path,
            url=proxy.url,
            body='[[host_tcp]]\ninterface = "lo"\ninterval_s = 1\n',
            agent="upload_interval_s = 1\n",
            central="timeout_s = 300\n",  # the agent waits for the held answer until it is killed
            token=token,
        )

        # --- first life: SIGKILL while its first upload is held
        with agent_run(config, tmp_path / "first.log") as first:
            assert proxy.held.wait(WAIT_S), first.log_path.read_text()
            first.kill()
        held = proxy.held_request
        assert held is not None and held.records >= 1
        stored_at_kill = host_tcp_rows()
        left_in_spool = spooled_records(spool_dir)
        assert held.batch_id in spooled_batch_ids(spool_dir)  # never acknowledged: still in the spool
        if moment == HOLD_AFTER_COMMIT:
            # the centre committed the batch before the kill; the agent never learnt it
            assert held.status == 200 and held.answer == {
                "batch_id": held.batch_id,
                "accepted": held.records,
                "duplicate": False,
            }
            assert [batch for _, _, batch in stored_at_kill] == [held.batch_id] * held.records
        else:
            assert held.status is None and stored_at_kill == []
        assert not uploads(first)
        proxy.release.set()  # the held request's thread ends (its client is gone)

        # --- second life, same spool: the held batch goes first, under the same batch_id
        with agent_run(config, tmp_path / "second.log") as second:
            second.wait_for_log(lambda logs: len([log for log in logs if log["message"] == "batch uploaded"]) >= 3)
            assert second.terminate() == 0
        resent = uploads(second)[0]
        assert resent["batch_id"] == held.batch_id
        assert resent["duplicate"] is (moment == HOLD_AFTER_COMMIT)  # stored once, whichever side of the commit

        # --- what the second life collected after its last upload: one pass without collectors
        drain = write_config(tmp_path, url=proxy.url, token=token, name="drain.toml")
        last = subprocess.run(
            agent_argv("once", "--config", str(drain)), cwd=ROOT, capture_output=True, text=True, timeout=WAIT_S
        )
        assert last.returncode == 0, last.stderr
    assert spooled_records(spool_dir) == []

    rows = host_tcp_rows()
    times = [ms(time) for time, _, _ in rows]
    assert len(times) == len(set(times))  # 0 stored twice
    expected = (
        {ms(time) for time, _, _ in stored_at_kill}
        | {ms(parse_time(record["time"])) for record in left_in_spool}
        | logged_runs(first)
        | logged_runs(second)
    )
    assert set(times) == expected  # 0 lost (and nothing the agents did not collect)
    assert len(expected) >= 4
    assert not [r for r in proxy.ingest_requests if r.status not in (200, None)]
