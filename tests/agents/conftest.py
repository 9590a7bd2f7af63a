"""Test doubles for the site agent: an in-process fake centre on 127.0.0.1 and config files.

The fake centre is a real HTTP server (``http.server`` in a thread): the agent's real httpx
client, gzip bodies, headers and timeouts are exercised, and every request is recorded.
"""

from __future__ import annotations

import gzip
import ipaddress
import json
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import shared_fixture

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "agent-token-Zx9fK2pQ-never-logged"
AGENT_MAIN = "import sys; from agents.cli import main; sys.exit(main())"
"""What the ``wanmon-agent`` entry point runs (agents.cli:main), as ``python -c`` code."""


def run_python(code: str, *args: str, timeout_s: float = 60, check: bool = False) -> subprocess.CompletedProcess[str]:
    """Run ``code`` with ``args`` in a fresh interpreter at the repository root; its output as text."""
    return subprocess.run(
        [sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout_s, check=check
    )


def run_agent(*args: str, timeout_s: float = 60, check: bool = False) -> subprocess.CompletedProcess[str]:
    """Run the installed entry point (``wanmon-agent`` = agents.cli:main) with ``args`` in a fresh interpreter."""
    return run_python(AGENT_MAIN, *args, timeout_s=timeout_s, check=check)


@dataclass
class Received:
    """One request as the fake centre saw it (body already gunzipped and decoded)."""

    path: str
    headers: dict[str, str]
    raw: bytes  # the body as sent (gzip)
    body: bytes  # decompressed
    at_monotonic: float

    @property
    def json(self) -> dict[str, Any]:
        return json.loads(self.body)

    @property
    def batch_id(self) -> str:
        return self.json["batch_id"]

    @property
    def records(self) -> list[dict[str, Any]]:
        return self.json["records"]


@dataclass
class Reply:
    """A scripted answer. ``delay_s`` holds the answer back (client timeouts)."""

    status: int = 200
    body: Any = None  # None: the ingest's normal 200 answer for the request
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


Script = Reply | Callable[[Received], Reply]


class FakeCentral:
    """Answers ``POST /api/v1/ingest`` like the centre: 200 + dedup by batch_id unless scripted otherwise."""

    def __init__(self, *, tls: tuple[Path, Path] | None = None) -> None:
        self.requests: list[Received] = []
        self.script: deque[Script] = deque()
        self.default: Script | None = None  # used when the script is empty; None: normal ingest
        self.stored: dict[str, list[dict[str, Any]]] = {}  # batch_id -> records, as the real centre stores
        self.request_started = threading.Event()
        self._lock = threading.Lock()
        central = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                body = gzip.decompress(raw) if self.headers.get("Content-Encoding") == "gzip" else raw
                received = Received(self.path, dict(self.headers), raw, body, time.monotonic())
                reply = central._next(received)
                # Stored on receipt, as the real centre commits before answering: a late answer
                # (delay_s) is an acknowledgement the agent never sees.
                payload = reply.body if reply.body is not None else central._ingest(received)
                central.request_started.set()
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                try:
                    self.send_response(reply.status)
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test): what the centre did still counts

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.scheme = "http"
        if tls is not None:  # (certificate chain, key): serve HTTPS
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*tls)
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
            self.scheme = "https"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.server.server_address[1]}"

    def reply(self, *scripts: Script) -> None:
        self.script.extend(scripts)

    def _next(self, received: Received) -> Reply:
        with self._lock:
            self.requests.append(received)
            script = self.script.popleft() if self.script else self.default
        if script is None:
            return Reply()
        return script(received) if callable(script) else script

    def _ingest(self, received: Received) -> dict[str, Any]:
        """The real centre's 200 answer: stored once per batch_id, ``duplicate`` on repeats."""
        batch = received.json
        with self._lock:
            duplicate = batch["batch_id"] in self.stored
            if not duplicate:
                self.stored[batch["batch_id"]] = batch["records"]
        return {
            "batch_id": batch["batch_id"],
            "accepted": 0 if duplicate else len(batch["records"]),
            "duplicate": duplicate,
        }

    def stored_records(self) -> list[dict[str, Any]]:
        return [record for records in self.stored.values() for record in records]


@contextmanager
def running(fake: FakeCentral) -> Iterator[FakeCentral]:
    fake.thread.start()
    try:
        yield fake
    finally:
        fake.server.shutdown()
        fake.server.server_close()


@pytest.fixture
def central() -> Iterator[FakeCentral]:
    with running(FakeCentral()) as fake:
        yield fake


@dataclass(frozen=True)
class PrivateCA:
    """A private certificate authority for tests: its certificate and key."""

    name: str
    certificate: Any
    key: Any

    def pem(self) -> bytes:
        from cryptography.hazmat.primitives import serialization

        return self.certificate.public_bytes(serialization.Encoding.PEM)

    def write(self, path: Path) -> Path:
        path.write_bytes(self.pem())
        return path


def make_ca(name: str = "wanmon test CA") -> PrivateCA:
    """A self-signed CA certificate (EC P-256, valid for a day)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.now(UTC)
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return PrivateCA(name, certificate, key)


def issue_server_certificate(
    ca: PrivateCA, directory: Path, *, ip: str | None = "127.0.0.1", dns: str | None = None, stem: str = "server"
) -> tuple[Path, Path]:
    """A TLS server certificate signed by ``ca`` for ``ip`` and/or ``dns``: (chain.pem, key.pem) in ``directory``."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.now(UTC)
    key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = []
    if ip is not None:
        names.append(x509.IPAddress(ipaddress.ip_address(ip)))
    if dns is not None:
        names.append(x509.DNSName(dns))
    certificate = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, dns or ip or "server")]))
        .issuer_name(ca.certificate.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca.key.public_key()), critical=False)
        .sign(ca.key, hashes.SHA256())
    )
    chain, key_path = directory / f"{stem}.pem", directory / f"{stem}.key"
    chain.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    key_path.chmod(0o600)
    return chain, key_path


def make_tls_files(directory: Path) -> tuple[Path, Path, Path]:
    """A private CA and a server certificate for 127.0.0.1 signed by it: (ca.pem, server.pem, server.key)."""
    ca = make_ca()
    server, key = issue_server_certificate(ca, directory)
    return ca.write(directory / "ca.pem"), server, key


def dead_url() -> str:
    """A URL on 127.0.0.1 where nothing listens (connection refused at once)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def toolout(name: str) -> Path:
    """A captured real tool output (../shared/fixtures/toolout), or skip the calling test."""
    return shared_fixture("fixtures", "toolout", name)


def fake_nuttcp(directory: Path, *, output_file: str = "nuttcp-tcp-fparse-1.txt", version: str = "8.2.2") -> Path:
    """An executable standing in for nuttcp: prints captured real -fparse output (and -V).

    The capture is third-party data kept beside the repository: without it the calling test is skipped."""
    output = toolout(output_file)
    script = directory / "nuttcp"
    script.write_text(f'#!/bin/sh\nif [ "$1" = "-V" ]; then echo "nuttcp-{version}"; exit 0; fi\ncat \'{output}\'\n')
    script.chmod(0o755)
    return script


CONFIG_HEAD = """
[central]
url = "https://wanmon.example.org"
token_file = "/etc/wanmon-agent/token"

[agent]
site = "RAL"
spool_dir = "/var/lib/wanmon-agent"
"""  # the two tables every agent.toml has, for a configuration that is parsed and never run


def write_config(
    directory: Path,
    *,
    url: str,
    body: str = "",
    agent: str = "",
    token: str = TOKEN,
    central: str = "timeout_s = 5\n",
    name: str = "agent.toml",
) -> Path:
    """An agent.toml with a token file and a spool under ``directory``; ``body`` adds tables,
    ``agent`` and ``central`` add keys to those tables."""
    token_file = directory / "token"
    token_file.write_text(token + "\n")
    token_file.chmod(0o600)
    path = directory / name
    path.write_text(
        f'[central]\nurl = "{url}"\ntoken_file = "{token_file}"\n{central}\n'
        f'[agent]\nsite = "RAL"\nname = "ral-agent-test"\nspool_dir = "{directory / "spool"}"\n'
        f"start_jitter_s = 0\n{agent}\n{body}"
    )
    return path


HOST_TCP_LO = '[[host_tcp]]\ninterface = "lo"\n'
