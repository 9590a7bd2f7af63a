"""Alerting test fixtures: a real SMTP server on loopback (aiosmtpd), real Celery workers, scenario helpers."""

from __future__ import annotations

import asyncio
import email
import email.policy
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from email.message import EmailMessage
from pathlib import Path

import pytest
from aiosmtpd.controller import Controller

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "tests" / "scenarios"
HERE = Path(__file__).resolve().parent
FZK = SCENARIOS / "reverse-path-loss-fzk.yaml"
ASGC = SCENARIOS / "window-limited-asgc.yaml"
MAINTENANCE = HERE / "scenarios" / "maintenance-geant-fra.yaml"
SCENARIO_NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
NOC = "noc@wanmon.test"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Received:
    """One message as the SMTP server accepted it."""

    at: float  # time.monotonic()
    rcpt_tos: list[str]
    message: EmailMessage

    @property
    def subject(self) -> str:
        return str(self.message["Subject"])

    def part(self, content_type: str) -> str:
        for part in self.message.walk():
            if part.get_content_type() == content_type:
                return part.get_content()
        return ""

    @property
    def text(self) -> str:
        return self.part("text/plain")

    @property
    def html(self) -> str:
        return self.part("text/html")


class Sink:
    """aiosmtpd handler keeping every message; can stall the next RCPT to catch a sender mid-send."""

    def __init__(self) -> None:
        self.messages: list[Received] = []
        self.lock = threading.Lock()
        self.stall_next_rcpt = False
        self.rcpt_stalled = threading.Event()
        self.release = threading.Event()

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):  # noqa: N802 - aiosmtpd API
        if self.stall_next_rcpt:
            self.stall_next_rcpt = False
            self.rcpt_stalled.set()
            while not self.release.is_set():
                await asyncio.sleep(0.05)
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):  # noqa: N802 - aiosmtpd API
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        with self.lock:
            self.messages.append(Received(time.monotonic(), list(envelope.rcpt_tos), message))
        return "250 Message accepted for delivery"

    def clear(self) -> None:
        with self.lock:
            self.messages.clear()
        self.stall_next_rcpt = False
        self.rcpt_stalled.clear()
        self.release.clear()

    def wait_for(self, count: int, timeout_s: float) -> list[Received]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.messages) >= count:
                    return list(self.messages)
            time.sleep(0.05)
        with self.lock:
            return list(self.messages)

    def to(self, address: str) -> list[Received]:
        with self.lock:
            return [m for m in self.messages if address in m.rcpt_tos]


@pytest.fixture(scope="session")
def smtp_server():
    """A real SMTP server on 127.0.0.1 (a free port) for the whole session."""
    sink = Sink()
    controller = Controller(sink, hostname="127.0.0.1", port=free_port())
    controller.start()
    try:
        yield sink, controller.port
    finally:
        controller.stop()


@pytest.fixture
def smtp(smtp_server, settings):
    """Django sends through the real SMTP backend to the test server; default timers unless a test shortens them."""
    sink, port = smtp_server
    sink.clear()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST = "127.0.0.1"
    settings.EMAIL_PORT = port
    settings.EMAIL_USE_TLS = False
    settings.EMAIL_TIMEOUT = 10
    settings.DEFAULT_FROM_EMAIL = "wanmon@wanmon.test"
    settings.WANMON_BASE_URL = "https://wanmon.example.org"
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


@pytest.fixture
def worker_factory(django_db_setup, smtp_server, smtp, settings):
    """Start real workers with alerting settings from the environment (shortened timers where a test asks)."""
    from django.conf import settings as django_settings

    _, port = smtp_server
    queue = f"alerts-test-{os.getpid()}-{time.monotonic_ns()}"
    settings.ALERTS_CELERY_QUEUE = queue
    db = django_settings.DATABASES["default"]
    started: list[Worker] = []

    def start(**alert_env: str) -> Worker:
        env = dict(os.environ)
        env.update({
            "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
            "WANMON_EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
            "EMAIL_HOST": "127.0.0.1",
            "EMAIL_PORT": str(port),
            "DEFAULT_FROM_EMAIL": "wanmon@wanmon.test",
            "WANMON_BASE_URL": "https://wanmon.example.org",
            "ALERTS_DEFAULT_RECIPIENTS": NOC,
            "ALERTS_CELERY_QUEUE": queue,
            "WANMON_LOG_LEVEL": "WARNING",
        })
        env.update(alert_env)
        worker = Worker(env, queue).start()
        started.append(worker)
        return worker

    start.queue = queue
    yield start
    for worker in started:
        worker.stop()
