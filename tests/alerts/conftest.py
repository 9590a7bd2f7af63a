"""Alerting test fixtures: a real SMTP server on loopback (aiosmtpd), real Celery workers, scenario helpers."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.conftest import subprocess_database_url
from tests.mail import send_through, smtp_server_fixture  # noqa: F401 - the fixture smtp_server

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "tests" / "scenarios"
HERE = Path(__file__).resolve().parent
FZK = SCENARIOS / "reverse-path-loss-fzk.yaml"
ASGC = SCENARIOS / "window-limited-asgc.yaml"
MAINTENANCE = HERE / "scenarios" / "maintenance-geant-fra.yaml"
SCENARIO_NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
NOC = "noc@wanmon.test"


@pytest.fixture
def smtp(smtp_server, settings):
    """Django sends through the real SMTP backend to the test server; default timers unless a test shortens them."""
    sink, port = smtp_server
    sink.clear()
    send_through(settings, port)
    settings.ALERTS_DEFAULT_RECIPIENTS = [NOC]
    settings.ALERTS_GROUP_WAIT_S = 30
    settings.ALERTS_GROUP_INTERVAL_S = 300
    settings.ALERTS_REPEAT_INTERVAL_S = 4 * 3600
    settings.ALERTS_RESOLVE_HOLD_S = 180
    settings.ALERTS_CELERY_QUEUE = None
    yield sink
    sink.release.set()


class Worker:
    """A real `celery worker` subprocess (prefork, one child) on a private queue, using the test database."""

    def __init__(self, env: dict[str, str], queue: str):
        self.env = env
        self.queue = queue
        self.hostname = f"alerts-{os.getpid()}-{time.monotonic_ns()}@%h"
        self.proc: subprocess.Popen | None = None

    def start(self, timeout_s: float = 40) -> Worker:
        from wanmon.celery import app

        self.hostname = f"alerts-{os.getpid()}-{time.monotonic_ns()}@{socket.gethostname()}"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "wanmon", "worker", "--pool", "prefork", "--concurrency", "1",
             "-Q", self.queue, "--hostname", self.hostname, "--loglevel", "WARNING", "--without-mingle",
             "--without-gossip"],
            cwd=ROOT, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
        )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if app.control.ping(destination=[self.hostname], timeout=0.5):
                return self
            if self.proc.poll() is not None:
                break
        self.kill()
        out = self.proc.communicate(timeout=10)[0].decode(errors="replace")
        pytest.fail(f"celery worker did not come up:\n{out[-3000:]}")

    def kill(self) -> None:
        """SIGKILL the worker and its pool child: a crash, nothing is acknowledged or cleaned up."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=20)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()


class WorkerPool:
    """Starts real workers on one private queue of the test database, each with the pool's environment plus its
    own; :meth:`stop` ends every worker it started (a fixture's teardown)."""

    def __init__(self, prefix: str, env: dict[str, str]):
        self.queue = f"{prefix}-test-{os.getpid()}-{time.monotonic_ns()}"
        self.env = {
            **os.environ,
            "DATABASE_URL": subprocess_database_url(),
            "ALERTS_CELERY_QUEUE": self.queue,
            "WANMON_LOG_LEVEL": "WARNING",
            **env,
        }
        self.started: list[Worker] = []

    def __call__(self, **env: str) -> Worker:
        worker = Worker({**self.env, **env}, self.queue).start()
        self.started.append(worker)
        return worker

    def stop(self) -> None:
        for worker in self.started:
            worker.stop()


@pytest.fixture
def worker_factory(django_db_setup, smtp_server, smtp, settings):
    """Start real workers with alerting settings from the environment (shortened timers where a test asks)."""
    _, port = smtp_server
    pool = WorkerPool(
        "alerts",
        {
            "WANMON_EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
            "EMAIL_HOST": "127.0.0.1",
            "EMAIL_PORT": str(port),
            "DEFAULT_FROM_EMAIL": "wanmon@wanmon.test",
            "WANMON_BASE_URL": "https://wanmon.example.org",
            "ALERTS_DEFAULT_RECIPIENTS": NOC,
        },
    )
    settings.ALERTS_CELERY_QUEUE = pool.queue
    yield pool
    pool.stop()
