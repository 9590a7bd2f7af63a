"""/livez (cheap, public), /readyz (what web needs), /healthz (details for staff, Celery ping shared)."""

import time
from unittest import mock

import pytest

from wanmon.core import selectors

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_celery_answer():
    selectors.celery_status_forget()
    yield
    selectors.celery_status_forget()


def test_livez_touches_nothing(client, django_assert_num_queries, settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    client.get("/livez")  # the first request of a client loads the URL configuration and middleware
    with django_assert_num_queries(0), mock.patch("wanmon.celery.app.control.ping") as ping:
        started = time.perf_counter()
        response = client.get("/livez")
        elapsed = time.perf_counter() - started
    assert response.status_code == 200 and response.json() == {"status": "ok"}
    assert ping.call_count == 0
    assert elapsed < 0.05


def test_readyz_needs_only_the_database(client, settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # Redis and workers down: web can still serve
    with mock.patch("wanmon.celery.app.control.ping", return_value=[]) as ping:
        response = client.get("/readyz")
    assert response.status_code == 200 and response.json() == {"status": "ok", "database": {"ok": True}}
    assert ping.call_count == 0


def test_healthz_details_only_for_staff(client, admin_client):
    with mock.patch("wanmon.celery.app.control.ping", return_value=[{"celery@w1": {"ok": "pong"}}]):
        anonymous = client.get("/healthz")
        staff = admin_client.get("/healthz")
    assert anonymous.status_code == 200
    assert anonymous.json() == {"status": "ok", "database": {"ok": True}, "redis": {"ok": True},
                                "celery": {"ok": True}}
    detail = staff.json()
    assert detail["database"]["detail"]["timescaledb"].startswith("2.")
    assert detail["celery"]["detail"]["workers"] == ["celery@w1"]


def test_healthz_anonymous_503_without_error_text(client, settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    with mock.patch("wanmon.celery.app.control.ping", return_value=[{"celery@w1": {"ok": "pong"}}]):
        response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["redis"] == {"ok": False}


def test_a_burst_of_health_checks_costs_one_celery_ping(client):
    def slow_ping(timeout):
        time.sleep(0.3)
        return [{"celery@w1": {"ok": "pong"}}]

    with mock.patch("wanmon.celery.app.control.ping", side_effect=slow_ping) as ping:
        started = time.perf_counter()
        for _ in range(20):
            assert client.get("/healthz").status_code == 200
        elapsed = time.perf_counter() - started
    assert ping.call_count == 1
    assert elapsed < 0.3 + 20 * 0.1


def test_a_worker_that_has_just_come_up_is_seen_at_once(client):
    """A failed ping is not kept: gunicorn's other processes must not answer 503 for 10 s after the worker is up
    (the demo waits for one process to say 200, then the next request may reach another)."""
    replies = [[], [{"celery@w1": {"ok": "pong"}}]]
    with mock.patch("wanmon.celery.app.control.ping", side_effect=lambda timeout: replies.pop(0)):
        assert client.get("/healthz").status_code == 503
        assert client.get("/healthz").status_code == 200
