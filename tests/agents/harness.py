"""Helpers for the agent's end-to-end tests against the real centre (pytest-django's ``live_server``).

* :class:`IngestProxy`: a small HTTP or HTTPS front on 127.0.0.1 that forwards requests to the
  live server. It can be *down* (its port bound but not listening: connection refused, as when
  the centre is off), hold one request before forwarding it (the kill lands while the request is
  in flight) or after the centre answered (the centre committed; the answer never reaches the
  agent), and serve TLS with any certificate.
* :class:`VirtualClock`: an :class:`agents.clock.Clock` whose time only moves when the test says,
  one wake-up at a time and only once every loop of the agent is asleep: hours of schedule in
  seconds, with the network, spool and centre real.
* :class:`LoopThread`: an asyncio loop in a thread, so the test thread stays synchronous (Django's
  ORM refuses to run inside an event loop) while the in-process daemon runs.
* process helpers for ``wanmon-agent run`` subprocesses, and readers of what a spool holds.

Everything started here is stopped by the ``with`` blocks / ``close()`` calls of the tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import heapq
import http.client
import itertools
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import msgspec

from tests.agents.conftest import ROOT

WAIT_S = 120.0  # upper bound for anything the tests wait for (a loaded 2-core CI machine)

HOLD_BEFORE_FORWARD = "before_forward"  # the centre never sees the request
HOLD_AFTER_COMMIT = "after_commit"  # the centre stored the batch; its answer is held back


# --- the proxy -----------------------------------------------------------------------------------


@dataclass
class Forwarded:
    """One request the proxy received (and what became of it)."""

    method: str
    path: str
    batch_id: str | None
    records: int
    status: int | None = None  # the centre's answer, if forwarded
    answer: Any = None
    held: str | None = None


class _ProxyServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = False

    def __init__(self, proxy: IngestProxy) -> None:
        self.proxy = proxy
        super().__init__(("127.0.0.1", 0), _ProxyHandler, bind_and_activate=False)
        self.server_bind()  # the port is ours from now on; connections are refused until listen()

    def finish_request(self, request: socket.socket, client_address: Any) -> None:
        context = self.proxy.tls
        if context is not None:
            # The handshake happens here, in the request's thread: a client that refuses the
            # certificate costs that thread only.
            try:
                request = context.wrap_socket(request, server_side=True)
            except (ssl.SSLError, OSError) as exc:
                self.proxy.tls_failures.append(f"{type(exc).__name__}: {exc}")
                return
        super().finish_request(request, client_address)

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that went away mid-answer (killed agent) is part of the tests


class _ProxyHandler(BaseHTTPRequestHandler):
    server: _ProxyServer
    protocol_version = "HTTP/1.1"  # keep-alive, as the agent's httpx client expects

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        self._forward()

    def do_GET(self) -> None:  # noqa: N802
        self._forward()

    def log_message(self, *args: Any) -> None:
        pass

    def _forward(self) -> None:
        proxy = self.server.proxy
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        batch_id, records = _describe_body(body, self.headers.get("Content-Encoding"))
        seen = Forwarded(self.command, self.path, batch_id, records)
        hold = proxy._take_hold(seen)
        if hold == HOLD_BEFORE_FORWARD:
            proxy._hold(seen)
            self.close_connection = True  # then dropped, as by a network cut: the centre never sees it
            return
        status, headers, answer = proxy._upstream(self.command, self.path, dict(self.headers), body)
        seen.status = status
        with contextlib.suppress(ValueError):
            seen.answer = json.loads(answer)
        if hold == HOLD_AFTER_COMMIT:
            proxy._hold(seen)
        try:
            self.send_response(status)
            for key in ("Content-Type", "Retry-After"):
                if key in headers:
                    self.send_header(key, headers[key])
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)
        except OSError:
            self.close_connection = True  # the agent is gone (killed): what the centre did still counts


def _describe_body(body: bytes, encoding: str | None) -> tuple[str | None, int]:
    try:
        data = json.loads(gzip.decompress(body) if encoding == "gzip" else body)
        return data.get("batch_id"), len(data.get("records") or [])
    except (OSError, ValueError, AttributeError):
        return None, 0


class IngestProxy:
    """An HTTP(S) front for the centre on 127.0.0.1 (see the module docstring).

    ``up=False`` starts it down: the port is reserved (bound) but not listening, so the agent's
    connections are refused until :meth:`come_up`. ``hold`` (:data:`HOLD_BEFORE_FORWARD` or
    :data:`HOLD_AFTER_COMMIT`) holds the first ingest request: :attr:`held` is set when it is
    being held, :attr:`release` lets it go.
    """

    def __init__(
        self, upstream: str, *, tls: ssl.SSLContext | None = None, up: bool = True, hold: str | None = None
    ) -> None:
        parts = urlsplit(upstream)
        self.upstream_host, self.upstream_port = parts.hostname or "127.0.0.1", parts.port or 80
        self.tls = tls
        self.hold = hold
        self.held = threading.Event()
        self.release = threading.Event()
        self.held_request: Forwarded | None = None
        self.requests: list[Forwarded] = []
        self.tls_failures: list[str] = []
        self._lock = threading.Lock()
        self._server = _ProxyServer(self)
        self._thread: threading.Thread | None = None
        if up:
            self.come_up()

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    @property
    def ingest_requests(self) -> list[Forwarded]:
        return [r for r in self.requests if r.path == "/api/v1/ingest"]

    def come_up(self) -> None:
        """Start listening on the reserved port."""
        if self._thread is not None:
            return
        self._server.server_activate()
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="ingest-proxy", daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        self.release.set()
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=WAIT_S)
        self._server.server_close()

    def __enter__(self) -> IngestProxy:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _take_hold(self, seen: Forwarded) -> str | None:
        with self._lock:
            self.requests.append(seen)
            if self.hold is None or seen.path != "/api/v1/ingest" or seen.batch_id is None:
                return None
            hold, self.hold = self.hold, None  # the first ingest request only
            seen.held = hold
            return hold

    def _hold(self, seen: Forwarded) -> None:
        self.held_request = seen
        self.held.set()
        self.release.wait(WAIT_S)

    def _upstream(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, dict, bytes]:
        connection = http.client.HTTPConnection(self.upstream_host, self.upstream_port, timeout=WAIT_S)
        try:
            hop_by_hop = ("host", "connection", "keep-alive", "accept-encoding")  # answers pass through as they are
            forwarded = {k: v for k, v in headers.items() if k.lower() not in hop_by_hop}
            connection.request(method, path, body=body, headers=forwarded)
            response = connection.getresponse()
            return response.status, dict(response.getheaders()), response.read()
        finally:
            connection.close()


def server_tls_context(chain: Path, key: Path) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(chain, key)
    return context


# --- virtual time --------------------------------------------------------------------------------


class VirtualClock:
    """An :class:`agents.clock.Clock` driven by the test (module docstring).

    Time starts at ``start`` (wall) / 0.0 (monotonic). The agent's loops sleep through
    :meth:`wait`; :meth:`advance` moves time forward, waking sleepers in deadline order, but each
    step only once ``sleepers`` loops are asleep, i.e. once the work the previous wake-up caused
    (a collection in its thread, an upload over the network) is finished.
    """

    def __init__(self, start: datetime) -> None:
        self.start = start
        self.t = 0.0
        self.wakeups = 0
        self._heap: list[tuple[float, int, asyncio.Future[None]]] = []
        self._seq = itertools.count()
        self._changed: asyncio.Event | None = None
        self._changed_loop: asyncio.AbstractEventLoop | None = None

    def now(self) -> datetime:
        return self.start + timedelta(seconds=self.t)

    def monotonic(self) -> float:
        return self.t

    def _event(self) -> asyncio.Event:
        loop = asyncio.get_running_loop()
        if self._changed is None or self._changed_loop is not loop:  # a new asyncio.run: a new event
            self._changed, self._changed_loop = asyncio.Event(), loop
        return self._changed

    @property
    def asleep(self) -> int:
        return sum(1 for _, _, future in self._heap if not future.done())

    async def wait(self, stop: asyncio.Event, delay_s: float) -> bool:
        if stop.is_set():
            return True
        wake: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._heap, (self.t + max(0.0, delay_s), next(self._seq), wake))
        self._event().set()
        stopping = asyncio.ensure_future(stop.wait())
        try:
            await asyncio.wait({wake, stopping}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopping.cancel()
            if not wake.done():
                wake.cancel()  # dropped from the heap by the next advance
        return stop.is_set()

    async def _all_asleep(self, sleepers: int, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while self.asleep < sleepers:
            event = self._event()
            event.clear()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"only {self.asleep} of {sleepers} agent loops asleep at t={self.t:g} s")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), timeout=min(remaining, 1.0))

    async def advance(
        self,
        until_s: float,
        *,
        sleepers: int,
        done: Callable[[], bool] | None = None,
        timeout_s: float = WAIT_S,
    ) -> bool:
        """Move time up to ``until_s``, one wake-up at a time; stop early, with every loop asleep,
        as soon as ``done()`` is true. Returns whether ``done()`` held (True without ``done``)."""
        while True:
            await self._all_asleep(sleepers, timeout_s)
            if done is not None and done():
                return True
            while self._heap and self._heap[0][2].done():
                heapq.heappop(self._heap)
            if not self._heap or self._heap[0][0] > until_s:
                self.t = max(self.t, until_s)
                return done is None
            self.t = max(self.t, self._heap[0][0])
            while self._heap and self._heap[0][0] <= self.t:
                _, _, future = heapq.heappop(self._heap)
                if not future.done():
                    future.set_result(None)
                    self.wakeups += 1
            await asyncio.sleep(0)  # let the woken loops leave the heap's count before checking again


class LoopThread:
    """An asyncio event loop running in a daemon thread; :meth:`call` runs a coroutine on it."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="agent-loop", daemon=True)
        self._thread.start()

    def submit(self, coroutine: Coroutine[Any, Any, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop)

    def call(self, coroutine: Coroutine[Any, Any, Any], timeout_s: float = WAIT_S) -> Any:
        return self.submit(coroutine).result(timeout_s)

    def call_soon(self, function: Callable[..., Any], *args: Any) -> None:
        self.loop.call_soon_threadsafe(function, *args)

    def close(self) -> None:
        if self.loop.is_running():
            self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=WAIT_S)
        if not self.loop.is_running():
            self.loop.close()

    def __enter__(self) -> LoopThread:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


# --- the centre's side ---------------------------------------------------------------------------


def register_agent(site_code: str = "RAL", name: str = "ral-agent-e2e") -> tuple[Any, str]:
    """A site and an agent registered at the centre (as ``manage.py agent_create``): (site, token)."""
    import secrets

    from wanmon.inventory.models import Agent, Site
    from wanmon.measurements.api.auth import token_hash

    site = Site.objects.create(code=site_code, name=site_code, tier=1)
    token = secrets.token_urlsafe(32)
    Agent.objects.create(site=site, name=name, token_hash=token_hash(token), token_prefix=token[:8])
    return site, token


def host_tcp_rows() -> list[tuple[datetime, str, str]]:
    """(time, host, batch_id) of every row of measurements_hosttcp, in time order."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT time, host, batch_id::text FROM measurements_hosttcp ORDER BY time")
        return list(cursor.fetchall())


def count_rows(table: str) -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {table}")  # noqa: S608 - table names from the tests
        return cursor.fetchone()[0]


# --- agent processes -----------------------------------------------------------------------------


def agent_argv(*args: str) -> list[str]:
    """The installed ``wanmon-agent`` console script next to this interpreter, else ``python -m agents.cli``."""
    script = Path(sys.executable).with_name("wanmon-agent")
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script), *args]
    return [sys.executable, "-m", "agents.cli", *args]


@dataclass
class AgentProcess:
    """A ``wanmon-agent`` subprocess whose stderr (JSON log lines) goes to a file."""

    argv: list[str]
    log_path: Path
    process: subprocess.Popen[bytes] = field(init=False)

    def __post_init__(self) -> None:
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(  # noqa: S603 - fixed argv
                self.argv, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log
            )

    @property
    def pid(self) -> int:
        return self.process.pid

    def logs(self) -> list[dict[str, Any]]:
        lines = self.log_path.read_text(errors="replace").splitlines()
        parsed = []
        for line in lines:
            with contextlib.suppress(ValueError):  # the last line may be cut by a SIGKILL
                parsed.append(json.loads(line))
        return parsed

    def messages(self, message: str) -> list[dict[str, Any]]:
        return [log for log in self.logs() if log.get("message") == message]

    def wait_for_log(self, predicate: Callable[[list[dict[str, Any]]], bool], timeout_s: float = WAIT_S) -> None:
        deadline = time.monotonic() + timeout_s
        while not predicate(self.logs()):
            if self.process.poll() is not None:
                raise AssertionError(f"agent exited with {self.process.returncode}:\n{self.log_path.read_text()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"agent log condition not met in {timeout_s:g} s:\n{self.log_path.read_text()}")
            time.sleep(0.1)

    def kill(self) -> None:
        """SIGKILL, and reap."""
        with contextlib.suppress(ProcessLookupError):
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=WAIT_S)

    def terminate(self, timeout_s: float = WAIT_S) -> int:
        """SIGTERM (the daemon finishes the upload in flight), and its exit status."""
        with contextlib.suppress(ProcessLookupError):
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.kill()
            raise

    def close(self) -> None:
        if self.process.poll() is None:
            self.kill()


@contextlib.contextmanager
def agent_run(config: Path, log_path: Path) -> Iterator[AgentProcess]:
    """``wanmon-agent run --config CONFIG``, killed at the end whatever happens."""
    agent = AgentProcess(agent_argv("run", "--config", str(config)), log_path)
    try:
        yield agent
    finally:
        agent.close()


# --- what a spool holds --------------------------------------------------------------------------


def spooled_records(spool_dir: Path) -> list[dict[str, Any]]:
    """Every record waiting in a spool (pending chunks and batches), read straight from the files.

    ``tmp/`` is not read: a file there was never completely written, its ``append`` never returned.
    """
    records: list[dict[str, Any]] = []
    for sub in ("pending", "batches"):
        directory = spool_dir / sub
        if not directory.is_dir():
            continue
        for path in sorted(directory.glob("*.json")):
            records += msgspec.json.decode(path.read_bytes())["records"]
    return records


def spooled_batch_ids(spool_dir: Path) -> set[str]:
    directory = spool_dir / "batches"
    if not directory.is_dir():
        return set()
    return {msgspec.json.decode(path.read_bytes())["batch_id"] for path in directory.glob("*.json")}


def parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))
