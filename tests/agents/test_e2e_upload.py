"""End to end: the real agent process, the real Django ingest (live_server), the real database.

A host_tcp collector reads this host's /proc; its records must land in measurements_hosttcp.
Then the centre "goes away" for several collection runs, one upload's answer is lost on the
way back, and when the centre is back every record must be stored exactly once.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from django.db import connection

from agents.spool import Spool, records_as_dicts
from agents.uploader import build_body
from tests.agents.conftest import HOST_TCP_LO, ROOT, dead_url, write_config
from wanmon.inventory.models import Agent, Site
from wanmon.measurements.api.auth import token_hash

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]


def register_agent() -> tuple[Site, str]:
    site = Site.objects.create(code="RAL", name="RAL", tier=1)
    token = secrets.token_urlsafe(32)
    Agent.objects.create(site=site, name="ral-agent-e2e", token_hash=token_hash(token), token_prefix=token[:8])
    return site, token


def agent_once(config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from agents.cli import main; sys.exit(main())",
            "once",
            "--config",
            str(config),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


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
    rows = stored_rows()
    times = [r[0] for r in rows]
    assert len(rows) == 5  # the first run, three during the outage, the run that found the centre back
    assert len(set(times)) == 5  # nothing stored twice
    assert outage_times <= set(times)  # every record collected during the outage arrived
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM measurements_ingestbatch")
        assert cursor.fetchone()[0] == 5
