"""Pieces of the fault-injection tests (and of ``scripts/bench load``): the real services, broken on purpose.

* :class:`RedisInstance`: a Redis of the test's own on a free port (stop, restart on the same port and directory),
  so stopping it disturbs no other test.
* :class:`Blackhole`: a TCP listener on 127.0.0.1 that accepts connections and never answers (a Redis behind a
  firewall that drops packets: no RST, no reply).
* :func:`postgres_restart`: stops and restarts the private PostgreSQL of ``scripts/test`` (the SAME instance:
  data directory and port, from ``WANMON_TEST_RUN_DIR``), so every other test finds it again afterwards.
* :class:`PlainCentre`: gunicorn serving the centre over plain HTTP on loopback (chain_harness.Centre is HTTPS).
* :class:`SimAgent`: a site agent's spool and uploader, the real ``agents.spool`` / ``agents.uploader`` code, fed
  with SNMP polls of its interfaces at sample times the caller chooses (hours of polls in seconds).

Every process started here runs in its own session and is stopped by ``stop()``.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

from agents.spool import Spool
from agents.uploader import Backoff, DrainReport, Uploader, UploadResult, drain
from tests.e2e.chain_harness import ROOT, WAIT_S
from tests.processes import free_port, gunicorn_control_socket_off, read_log, stop_process, wait_for_login_page

PER_POLL_OCTETS = 75_000_000  # 10 Mb/s over a 60 s poll
POLL_S = 60


# --- Redis -------------------------------------------------------------------------------------------------


class RedisInstance:
    """``redis-server`` on a free 127.0.0.1 port with nothing on disk (as scripts/test's own): a restart empties it,
    as a production Redis without persistence does."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        directory.mkdir(parents=True, exist_ok=True)
        self.process: subprocess.Popen | None = None
        self.start()

    def start(self) -> None:
        self.process = subprocess.Popen(  # noqa: S603 - fixed argv
            ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port), "--save", "", "--appendonly", "no",
             "--dir", str(self.directory), "--logfile", str(self.directory / "redis.log")],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + 10
        while not _port_open(self.port):
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise AssertionError(f"redis-server did not start on {self.port}")
            time.sleep(0.05)

    def stop(self) -> None:
        stop_process(self.process)
        self.process = None


def _port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


class Blackhole:
    """Accepts TCP connections on 127.0.0.1 and never sends a byte (nor closes them until :meth:`stop`)."""

    def __init__(self) -> None:
        self._server = socket.create_server(("127.0.0.1", 0), backlog=128)
        self.port = self._server.getsockname()[1]
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.accepted: list[socket.socket] = []
        self._stopped = False
        self._thread = threading.Thread(target=self._accept, name="blackhole", daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stopped:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            self.accepted.append(conn)

    def stop(self) -> None:
        self._stopped = True
        self._server.close()
        for conn in self.accepted:
            conn.close()


# --- PostgreSQL --------------------------------------------------------------------------------------------


def _as_postgres(argv: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *argv] if os.getuid() == 0 else argv


def postgres_data_dir() -> Path | None:
    """The data directory of scripts/test's private PostgreSQL, or None (not run by scripts/test)."""
    run_dir = os.environ.get("WANMON_TEST_RUN_DIR")
    if not run_dir or not (Path(run_dir) / ".started-pg").exists():
        return None
    return Path(run_dir) / "pg"


def postgres_stop(data_dir: Path) -> list[str]:
    """Stop the instance (fast: sessions are cut, open transactions roll back). Returns its start options."""
    opts = shlex.split((data_dir / "postmaster.opts").read_text())[1:]
    pg_ctl = str(Path(shlex.split((data_dir / "postmaster.opts").read_text())[0]).with_name("pg_ctl"))
    subprocess.run(_as_postgres([pg_ctl, "-D", str(data_dir), "-m", "fast", "-w", "stop"]), check=True,
                   capture_output=True)  # fmt: skip
    return [pg_ctl, *opts]


def postgres_start(data_dir: Path, saved: list[str]) -> None:
    """Start the same instance again, same port and options (as scripts/lib.sh started it)."""
    pg_ctl, opts = saved[0], saved[1:]
    while opts and opts[0] == "-D":  # postmaster.opts holds "-D" DIR first; pg_ctl takes it itself
        opts = opts[2:]
    subprocess.run(
        _as_postgres([pg_ctl, "-D", str(data_dir), "-l", str(data_dir / "postgresql.log"), "-o", shlex.join(opts),
                      "-w", "-t", "60", "start"]),
        check=True, capture_output=True,
    )  # fmt: skip


# --- the centre ---------------------------------------------------------------------------------------------


class PlainCentre:
    """gunicorn serving wanmon over HTTP on a free 127.0.0.1 port (what the agents here talk to)."""

    def __init__(self, *, env: Mapping[str, str], log_dir: Path, workers: int = 2, threads: int = 4) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_dir / f"gunicorn-{self.port}.log"
        argv = [
            sys.executable, "-m", "gunicorn", "wanmon.wsgi:application", "--bind", f"127.0.0.1:{self.port}",
            "--workers", str(workers), "--threads", str(threads), "--timeout", "120", "--log-level", "warning",
            *gunicorn_control_socket_off(),
            "--error-logfile", str(self.log_path),
        ]  # fmt: skip
        self.app_log_path = log_dir / f"app-{self.port}.log"  # the application's JSON log lines (stdout)
        with self.app_log_path.open("wb") as app_log:
            self.process = subprocess.Popen(  # noqa: S603 - fixed argv
                argv, cwd=ROOT, env=dict(env), stdin=subprocess.DEVNULL, stdout=app_log,
                stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip

    def wait_ready(self, timeout_s: float = WAIT_S) -> None:
        wait_for_login_page(self.url, self.process, self.log, timeout_s)

    def log(self) -> str:
        return read_log(self.log_path)

    def stop(self) -> None:
        stop_process(self.process)


def centre_env(*, database_url: str, redis_url: str, **extra: str) -> dict[str, str]:
    """The environment of the centre's processes: the test database, a Redis of the test's choosing."""
    env = dict(os.environ)
    env.update(
        DATABASE_URL=database_url,
        REDIS_URL=redis_url,
        CELERY_BROKER_URL=redis_url,
        CELERY_RESULT_BACKEND=redis_url,
        WANMON_INGEST_RATE_LIMIT="100000/min",
        WANMON_CATCHUP_GRACE_S="0",  # shortened timings: the catch-up looks at every interface behind at once
        **extra,
    )
    return env


# --- the agent ---------------------------------------------------------------------------------------------


class _RecordingUploader(Uploader):
    """The real uploader; it also counts the answers (status, or the exception's name) and their latency."""

    def __init__(self, agent: SimAgent, **kwargs) -> None:
        super().__init__(**kwargs)
        self._agent = agent

    async def send(self, batch) -> UploadResult:
        started = time.perf_counter()
        result = await super().send(batch)
        self._agent.answers[result.status if result.status is not None else "no answer"] += 1
        if result.status == 503 and result.retry_after_s is None:
            self._agent.answers["503 without Retry-After"] += 1
        self._agent.latencies_s.append((time.perf_counter() - started, result.status))
        return result


class SimAgent:
    """A site agent reduced to what faults touch: its spool and its uploads (module docstring).

    :meth:`poll` spools one SNMP sample per interface at ``at`` (counters rising by PER_POLL_OCTETS per poll: 10 Mb/s
    in at 60 s polls); :meth:`drain` / :meth:`drain_async` upload what waits, oldest first, as the daemon does.
    """

    def __init__(
        self,
        root: Path,
        *,
        url: str,
        token: str,
        equipment: str,
        interfaces: list[str],
        max_bytes: int = 1024**3,
        batch_max_records: int = 1000,
        timeout_s: float = 30.0,
    ) -> None:
        self.spool = Spool(root, max_bytes=max_bytes, batch_max_records=batch_max_records).open()
        self.url = url
        self.token = token
        self.equipment = equipment
        self.interfaces = interfaces
        self.timeout_s = timeout_s
        self.polls = 0
        self.records_spooled = 0
        self.times: list[datetime] = []
        self.answers: Counter = Counter()
        self.latencies_s: list[tuple[float, int | None]] = []
        self.backoff = Backoff(base_s=0.2, max_s=2.0)

    def records_at(self, at: datetime) -> list[dict]:
        k = self.polls
        return [
            {"type": "snmp", "time": at, "equipment": self.equipment, "interface": name,
             "sys_uptime_ticks": 1_000_000 + k * POLL_S * 100, "oper_status": "up",
             "counters": {"hc_in_octets": 10**9 + k * PER_POLL_OCTETS, "hc_out_octets": 10**9 + k * 1000,
                          "in_errors": 0, "in_discards": 0}}
            for name in self.interfaces
        ]  # fmt: skip

    def poll(self, at: datetime) -> int:
        """Spool the samples of one poll at ``at``; returns how many records."""
        records = self.records_at(at)
        self.spool.append(records, source="snmp")
        self.polls += 1
        self.records_spooled += len(records)
        self.times.append(at)
        return len(records)

    def uploader(self) -> Uploader:
        return _RecordingUploader(
            self, ingest_url=f"{self.url}/api/v1/ingest", token=self.token, agent_version="0.0.0-sim",
            agent_name=self.equipment, timeout_s=self.timeout_s,
        )  # fmt: skip

    async def drain_async(self, uploader: Uploader) -> DrainReport:
        return await drain(self.spool, uploader, backoff=self.backoff)

    def drain(self) -> DrainReport:
        async def once() -> DrainReport:
            async with self.uploader() as uploader:
                return await self.drain_async(uploader)

        return asyncio.run(once())

    def drain_until_empty(self, timeout_s: float = WAIT_S) -> None:
        """Upload until nothing waits (honouring the centre's Retry-After, shortened to 1 s at most)."""
        deadline = time.monotonic() + timeout_s
        while True:
            report = self.drain()
            if self.spool.status().records_waiting == 0:
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"spool not drained in {timeout_s:g} s: {self.spool.status()} {report}")
            time.sleep(min(report.retry_in_s or 0.2, 1.0))

    def close(self) -> None:
        self.spool.close()


def remove_tree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
