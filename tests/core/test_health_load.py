"""A burst of health checks does not stall ingest: gunicorn (1 worker, 4 threads) serves 16 clients polling /healthz
without pause while an agent uploads. Before, each /healthz held a thread for the Celery ping's second."""

import json
import os
import statistics
import threading
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.e2e.chain_harness import database_url_for_subprocesses
from tests.faults.harness import PlainCentre
from tests.measurements.conftest import make_agent
from tests.measurements.test_ingest_api import batch, throughput
from wanmon.inventory.models import Site

ROOT = Path(__file__).resolve().parents[2]
HEALTH_CLIENTS = 16
UPLOADS = 20

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]


@pytest.fixture
def gunicorn_url(tmp_path):
    env = {**os.environ, "DATABASE_URL": database_url_for_subprocesses()}
    centre = PlainCentre(env=env, log_dir=tmp_path, workers=1, threads=4)
    try:
        centre.wait_ready(60)
        yield centre.url
    finally:
        centre.stop()


def _get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_16_clients_polling_health_do_not_stall_ingest(gunicorn_url):
    cern = Site.objects.create(code="CERN", name="CERN")
    Site.objects.create(code="FZK", name="KIT")
    _, token = make_agent(cern, "cern-agent-1")
    # No Celery worker runs here: every ping waits its whole timeout, the worst case for /healthz.
    _get(f"{gunicorn_url}/healthz")  # the process's first check (one thread, once)

    stop = threading.Event()
    health_answers: list[int] = []

    def poll_health():
        while not stop.is_set():
            health_answers.append(_get(f"{gunicorn_url}/healthz"))

    pollers = [threading.Thread(target=poll_health, daemon=True) for _ in range(HEALTH_CLIENTS)]
    for t in pollers:
        t.start()
    time.sleep(1.0)  # the burst is under way
    latencies, statuses = [], []
    try:
        for n in range(UPLOADS):
            at = (datetime.now(UTC) - timedelta(minutes=5, seconds=n)).isoformat().replace("+00:00", "Z")
            body = batch([throughput(time=at)])
            request = urllib.request.Request(
                f"{gunicorn_url}/api/v1/ingest", data=json.dumps(body).encode(), method="POST",
                headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
            started = time.perf_counter()
            try:
                with urllib.request.urlopen(request, timeout=60) as response:
                    statuses.append(response.status)
            except urllib.error.HTTPError as exc:
                statuses.append(exc.code)
            latencies.append(time.perf_counter() - started)
    finally:
        stop.set()
        for t in pollers:
            t.join(timeout=60)
    print(f"ingest latency p50={statistics.median(latencies):.3f}s max={max(latencies):.3f}s; "
          f"{len(health_answers)} health answers")
    assert statuses == [200] * UPLOADS
    assert len(health_answers) >= HEALTH_CLIENTS * 5  # the pollers were answered, not starved either
    assert statistics.median(latencies) < 0.5
    assert max(latencies) < 2.0
