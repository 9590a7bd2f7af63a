"""Maintenance test fixtures: a small topology with circuits and a LAG, users by role, a real SMTP server."""

from __future__ import annotations

import email
import email.policy
import socket
import threading
import time
from dataclasses import dataclass
from email.message import EmailMessage
from pathlib import Path

import pytest
from aiosmtpd.controller import Controller
from django.contrib.auth.models import Group
from rest_framework.test import APIClient

from wanmon.core.permissions import OPERATOR_GROUP, VIEWER_GROUP
from wanmon.inventory.topology import topology_import_file

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
BCOP = FIXTURES / "bcop"
CARRIERS = FIXTURES / "carriers"
TOPOLOGY = FIXTURES / "topology.yaml"
ROOT = HERE.parents[1]
SCENARIOS = ROOT / "tests" / "scenarios"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def topology(db):
    """The test topology (fixtures/topology.yaml) in the database."""
    return topology_import_file(TOPOLOGY)


def _user(django_user_model, name: str, group: str | None = None):
    user = django_user_model.objects.create_user(name)
    if group:
        user.groups.add(Group.objects.get(name=group))
    return user


@pytest.fixture
def operator(django_user_model):
    return _user(django_user_model, "op", OPERATOR_GROUP)


@pytest.fixture
def viewer(django_user_model):
    return _user(django_user_model, "viewer", VIEWER_GROUP)


@pytest.fixture
def api_operator(operator) -> APIClient:
    client = APIClient()
    client.force_authenticate(operator)
    return client


@pytest.fixture
def api_viewer(viewer) -> APIClient:
    client = APIClient()
    client.force_authenticate(viewer)
    return client


@dataclass
class Received:
    """One message as the SMTP server accepted it."""

    rcpt_tos: list[str]
    message: EmailMessage

    @property
    def subject(self) -> str:
        return str(self.message["Subject"])

    @property
    def text(self) -> str:
        for part in self.message.walk():
            if part.get_content_type() == "text/plain" and not part.get_filename():
                return part.get_content()
        return ""

    def attachment(self, content_type: str) -> bytes | None:
        for part in self.message.walk():
            if part.get_content_type() == content_type and part.get_filename():
                return part.get_payload(decode=True)
        return None


class Sink:
    """aiosmtpd handler that keeps every message it accepts."""

    def __init__(self) -> None:
        self.messages: list[Received] = []
        self.lock = threading.Lock()

    async def handle_DATA(self, server, session, envelope):  # noqa: N802 - aiosmtpd API
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        with self.lock:
            self.messages.append(Received(list(envelope.rcpt_tos), message))
        return "250 Message accepted for delivery"

    def all(self, timeout_s: float = 0.5) -> list[Received]:
        time.sleep(timeout_s)  # the server thread may still be storing the last message
        with self.lock:
            return list(self.messages)

    def clear(self) -> None:
        with self.lock:
            self.messages.clear()


@pytest.fixture(scope="session")
def smtp_server():
    """A real SMTP server on 127.0.0.1 (a free port) for the session."""
    sink = Sink()
    controller = Controller(sink, hostname="127.0.0.1", port=free_port())
    controller.start()
    try:
        yield sink, controller.port
    finally:
        controller.stop()


@pytest.fixture
def smtp(smtp_server, settings) -> Sink:
    """Django sends through its real SMTP backend to the loopback server."""
    sink, port = smtp_server
    sink.clear()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST = "127.0.0.1"
    settings.EMAIL_PORT = port
    settings.EMAIL_USE_TLS = False
    settings.EMAIL_HOST_USER = ""
    settings.EMAIL_HOST_PASSWORD = ""
    settings.EMAIL_TIMEOUT = 10
    settings.DEFAULT_FROM_EMAIL = "wanmon@wanmon.test"
    settings.WANMON_BASE_URL = "https://wanmon.example.org"
    settings.WANMON_MAINTENANCE_NOTICE_LEAD_HOURS = 48
    settings.WANMON_MAINTENANCE_NOTICE_ROLES = ["maintenance", "noc"]
    return sink
