"""A real Celery round trip through Redis, and /healthz with every part up or one down."""

import pytest

from wanmon.core.selectors import celery_status_forget
from wanmon.core.tasks import echo_task

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]


@pytest.fixture(autouse=True)
def _fresh_celery_answer():
    celery_status_forget()  # /healthz keeps the worker ping's answer for a few seconds
    yield
    celery_status_forget()


def test_celery_round_trip_through_redis(celery_worker_process):
    result = echo_task.delay({"rtt_ms": 125.0, "path": ["CERN", "ASGC"]})
    assert result.get(timeout=30) == {"rtt_ms": 125.0, "path": ["CERN", "ASGC"]}


def test_healthz_reports_database_timescaledb_redis_and_worker(admin_client, celery_worker_process):
    response = admin_client.get("/healthz")
    body = response.json()
    assert response.status_code == 200, body
    assert body["status"] == "ok"
    assert body["database"]["ok"] and body["database"]["detail"]["timescaledb"].startswith("2.")
    assert body["redis"]["ok"]
    assert any(w.startswith("test-") for w in body["celery"]["detail"]["workers"])


def test_healthz_503_when_redis_is_down(admin_client, settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    response = admin_client.get("/healthz")
    body = response.json()
    assert response.status_code == 503
    assert body["status"] == "error"
    assert body["redis"]["ok"] is False and "Connection" in body["redis"]["error"]
    assert body["database"]["ok"] is True
