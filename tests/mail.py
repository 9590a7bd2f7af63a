"""A real SMTP server for the tests that send mail (alerts, maintenance notices, the whole chain): aiosmtpd on
127.0.0.1, keeping every message it accepts; it can stall the next RCPT to catch a sender mid-send."""

from __future__ import annotations

import asyncio
import email
import email.policy
import threading
import time
from dataclasses import dataclass
from email.message import EmailMessage

import pytest

from tests.processes import free_port


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
        """The first body part of that type (an attachment is not a body part)."""
        for part in self.message.walk():
            if part.get_content_type() == content_type and not part.get_filename():
                return part.get_content()
        return ""

    @property
    def text(self) -> str:
        return self.part("text/plain")

    @property
    def html(self) -> str:
        return self.part("text/html")

    def attachment(self, content_type: str) -> bytes | None:
        for part in self.message.walk():
            if part.get_content_type() == content_type and part.get_filename():
                return part.get_payload(decode=True)
        return None


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

    def received(self) -> list[Received]:
        with self.lock:
            return list(self.messages)

    def all(self, timeout_s: float = 0.5) -> list[Received]:
        time.sleep(timeout_s)  # the server thread may still be storing the last message
        return self.received()

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
        return self.received()

    def to(self, address: str) -> list[Received]:
        with self.lock:
            return [m for m in self.messages if address in m.rcpt_tos]


class SmtpServer:
    """A :class:`Sink` served on a free 127.0.0.1 port until ``stop()``."""

    def __init__(self) -> None:
        from aiosmtpd.controller import Controller

        self.sink = Sink()
        self.port = free_port()
        self._controller = Controller(self.sink, hostname="127.0.0.1", port=self.port)
        self._controller.start()

    def received(self) -> list[Received]:
        return self.sink.received()

    def stop(self) -> None:
        self._controller.stop()


@pytest.fixture(scope="session", name="smtp_server")
def smtp_server_fixture():
    """A real SMTP server on 127.0.0.1 (a free port) for the whole session: (sink, port)."""
    server = SmtpServer()
    try:
        yield server.sink, server.port
    finally:
        server.stop()


def send_through(settings, port: int) -> None:
    """Django sends through its real SMTP backend to the loopback server on ``port``."""
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST = "127.0.0.1"
    settings.EMAIL_PORT = port
    settings.EMAIL_USE_TLS = False
    settings.EMAIL_HOST_USER = ""
    settings.EMAIL_HOST_PASSWORD = ""
    settings.EMAIL_TIMEOUT = 10
    settings.DEFAULT_FROM_EMAIL = "wanmon@wanmon.test"
    settings.WANMON_BASE_URL = "https://wanmon.example.org"
