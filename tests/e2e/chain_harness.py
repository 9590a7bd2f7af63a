"""The whole chain as one system: real router captures -> snmpsim -> ``wanmon-agent run`` -> HTTPS -> gunicorn
-> PostgreSQL -> Celery worker (rates, rollups, diagnosis, alerting) -> SMTP; the dashboard in Chromium.

* :class:`Capture`: one snmpsim recording of a real router (``../shared/fixtures/snmprec``), re-rendered per
  *version* with its counters advanced by known increments (:class:`Injection`). How snmpsim sees a new version
  (``snmpsim/record/search/database.py``): before each request it compares the data file's integer
  ``st_mtime`` with the one it opened; a different one makes it reopen the file, and rebuild its index only when
  the file is newer than the index. Rebuilding is slow (dbm.dumb: 1.7 s for the ASR 9010 alone, during which the
  single-threaded responder answers nobody), so every value this chain changes is written zero-padded to a fixed
  width (``00000000012345678901``: snmpsim reads it as the same integer): each line keeps its length, the index
  of version 0 stays valid, and each version only gets an mtime of its own, in the past (older than the index).
  A version is written under a temporary name and moved into place atomically: a request never reads a
  half-written file (a walk may span two versions; the tests tell each value's version from the value).
* :class:`Centre`: gunicorn serving the centre over HTTPS (its certificate from a test CA).
* :class:`Worker`: a ``celery worker`` with the SMTP settings; it and gunicorn use a Redis database of their
  own as broker, so a session-wide worker of other test modules (default queue, no SMTP settings) never takes
  their tasks. :meth:`Worker.send` enqueues there.
* the SMTP server keeping every message is tests/mail.py's :class:`SmtpServer`.

Every process started here runs in its own session and is killed (SIGTERM, then SIGKILL) by ``stop()``.
"""

from __future__ import annotations

import os
import shutil
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.collectors.snmpsim.interfaces import CAPTURE_NAMES
from tests.processes import free_port, gunicorn_control_socket_off, read_log, stop_process, wait_for_login_page

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = ROOT.parent / "shared" / "fixtures" / "snmprec"
WAIT_S = 120.0  # upper bound for anything the chain waits for (a loaded 2-core machine)

# --- IF-MIB / SNMPv2-MIB object identifiers (numeric, as the captures write them) --------------------------

SYS_UPTIME = "1.3.6.1.2.1.1.3.0"
IF_ENTRY = "1.3.6.1.2.1.2.2.1"
IFX_ENTRY = "1.3.6.1.2.1.31.1.1.1"
IF_SPEED = f"{IF_ENTRY}.5"
IF_OPER_STATUS = f"{IF_ENTRY}.8"
IF_HIGH_SPEED = f"{IFX_ENTRY}.15"
IF_NAME = f"{IFX_ENTRY}.1"
IF_DESCR = f"{IF_ENTRY}.2"
# counter -> (column, bits); the names are the wire schema's (collectors.records.Counters)
COUNTERS: Mapping[str, tuple[str, int]] = {
    "hc_in_octets": (f"{IFX_ENTRY}.6", 64),
    "hc_out_octets": (f"{IFX_ENTRY}.10", 64),
    "hc_in_ucast_pkts": (f"{IFX_ENTRY}.7", 64),
    "hc_out_ucast_pkts": (f"{IFX_ENTRY}.11", 64),
    "in_octets": (f"{IF_ENTRY}.10", 32),
    "out_octets": (f"{IF_ENTRY}.16", 32),
    "in_errors": (f"{IF_ENTRY}.14", 32),
}
COUNTER_TAGS = {"65": 32, "70": 64}  # snmprec tags of Counter32 / Counter64
INTEGER_TAGS = {"2", "65", "66", "67", "70"}
OPER_DOWN = 2


def captures_or_skip() -> list[Path]:
    """The six capture files, or a pytest skip naming what is missing."""
    import pytest

    missing = [name for name in CAPTURE_NAMES if not (CAPTURES / f"{name}.snmprec").is_file()]
    if missing:
        pytest.skip(f"router captures absent: {', '.join(missing)} (../shared/fixtures/snmprec/ absent)")
    return [CAPTURES / f"{name}.snmprec" for name in CAPTURE_NAMES]


# --- the captures, advanced per version ---------------------------------------------------------------


@dataclass(frozen=True)
class Injection:
    """What changes from one version of the data files to the next.

    Octet counters of every interface rise by ``octets_per_poll(speed)`` (5 % of the interface speed over
    ``poll_s``, or 1.25 MB where the speed is unknown), unicast packet counters by a thousandth of that;
    sysUpTime by ``poll_s``. On ``fault_port`` (equipment, ifIndex) ifInErrors rises by ``errors_per_poll``
    from version 1 on, and ifOperStatus is down(2) from ``down_from_version`` on.
    """

    poll_s: float
    fault_port: tuple[str, int]
    errors_per_poll: int
    down_from_version: int
    utilisation: float = 0.05
    unknown_speed_octets: int = 1_250_000

    def octets_per_poll(self, speed_bps: float | None) -> int:
        if not speed_bps:
            return self.unknown_speed_octets
        return max(1000, int(speed_bps * self.utilisation * self.poll_s / 8))

    @staticmethod
    def pkts_per_poll(octets: int) -> int:
        return max(1, octets // 1000)


@dataclass
class Interface:
    """What a capture says about one ifIndex (the values of version 0)."""

    if_index: int
    name: str | None
    speed_bps: float | None
    oper_status: int | None
    counters: dict[str, int] = field(default_factory=dict)  # counter name -> value in the capture


class Capture:
    """One snmpsim recording: its lines, and where the values this chain advances sit in them."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.name = path.name.removesuffix(".snmprec")
        self.lines = path.read_text(encoding="utf-8", errors="surrogateescape").splitlines()
        self.sys_uptime_ticks: int | None = None
        self._uptime_line: int | None = None
        self._counter_lines: dict[tuple[str, int], int] = {}  # (counter, ifIndex) -> line number
        self._oper_lines: dict[int, int] = {}
        self.interfaces: dict[int, Interface] = {}
        names: dict[int, str] = {}
        descrs: dict[int, str] = {}
        high_speed: dict[int, int] = {}
        speed: dict[int, int] = {}
        for number, line in enumerate(self.lines):
            oid, _, rest = line.partition("|")
            tag, _, value = rest.partition("|")
            if oid == SYS_UPTIME and tag == "67":
                self.sys_uptime_ticks, self._uptime_line = int(value), number
                continue
            column, _, index_text = oid.rpartition(".")
            if not index_text.isdigit():
                continue
            index = int(index_text)
            if column in (IF_NAME, IF_DESCR) and tag in ("4", "4x"):
                text = bytes.fromhex(value).decode("utf-8", "replace") if tag == "4x" else value
                (names if column == IF_NAME else descrs)[index] = text
            elif tag not in INTEGER_TAGS:
                continue
            elif column == IF_HIGH_SPEED:
                high_speed[index] = int(value)
            elif column == IF_SPEED:
                speed[index] = int(value)
            elif column == IF_OPER_STATUS:
                self._oper_lines[index] = number
                self._interface(index).oper_status = int(value)
            else:
                for counter, (counter_column, bits) in COUNTERS.items():
                    if column == counter_column and COUNTER_TAGS.get(tag) == bits:
                        self._counter_lines[(counter, index)] = number
                        self._interface(index).counters[counter] = int(value)
        for index, interface in self.interfaces.items():
            interface.name = names.get(index) or descrs.get(index)
            if high_speed.get(index):
                interface.speed_bps = high_speed[index] * 1e6
            elif speed.get(index) and speed[index] != 2**32 - 1:
                interface.speed_bps = float(speed[index])

    def _interface(self, index: int) -> Interface:
        if index not in self.interfaces:
            self.interfaces[index] = Interface(index, None, None, None)
        return self.interfaces[index]

    def if_index(self, name: str) -> int:
        (index,) = [i for i, interface in self.interfaces.items() if interface.name == name]
        return index

    def value(self, counter: str, if_index: int, version: int, injection: Injection) -> int:
        """The counter's value in ``version`` (Counter32/64 arithmetic: it wraps like the real one)."""
        base = self.interfaces[if_index].counters[counter]
        bits = COUNTERS[counter][1]
        return (base + version * self.increment(counter, if_index, injection)) % 2**bits

    def increment(self, counter: str, if_index: int, injection: Injection) -> int:
        """By how much ``counter`` of ``if_index`` rises from one version to the next."""
        octets = injection.octets_per_poll(self.interfaces[if_index].speed_bps)
        if counter.endswith("octets"):
            return octets
        if counter.endswith("pkts"):
            return injection.pkts_per_poll(octets)
        if counter == "in_errors" and injection.fault_port == (self.name, if_index):
            return injection.errors_per_poll
        return 0

    def render(self, version: int, injection: Injection) -> str:
        """The data file of ``version`` (version 0 is the capture as recorded)."""
        lines = list(self.lines)
        if self._uptime_line is not None and self.sys_uptime_ticks is not None:
            ticks = (self.sys_uptime_ticks + round(version * injection.poll_s * 100)) % 2**32
            lines[self._uptime_line] = f"{SYS_UPTIME}|67|{ticks:010d}"
        for (counter, index), number in self._counter_lines.items():
            oid, tag, _ = lines[number].split("|", 2)
            width = 20 if COUNTERS[counter][1] == 64 else 10  # digits of 2^64-1 / 2^32-1: one length per line
            lines[number] = f"{oid}|{tag}|{self.value(counter, index, version, injection):0{width}d}"
        equipment, port = injection.fault_port
        if equipment == self.name and version >= injection.down_from_version and port in self._oper_lines:
            number = self._oper_lines[port]
            oid, tag, _ = lines[number].split("|", 2)
            lines[number] = f"{oid}|{tag}|{OPER_DOWN}"
        return "\n".join(lines) + "\n"


VERSION_0_MTIME = time.time() - 86400  # older than any index snmpsim builds in this run


def write_version(captures: Iterable[Capture], data_dir: Path, version: int, injection: Injection) -> None:
    """Put ``version`` of every capture into snmpsim's data directory (atomically, see the module docstring)."""
    mtime = VERSION_0_MTIME + version
    for capture in captures:
        target = data_dir / f"{capture.name}.snmprec"
        temporary = data_dir / f".{capture.name}.v{version}.tmp"
        temporary.write_text(capture.render(version, injection), encoding="utf-8", errors="surrogateescape")
        temporary.chmod(0o644)
        os.utime(temporary, (mtime, mtime))
        os.replace(temporary, target)


# --- processes -----------------------------------------------------------------------------------------


def database_url_for_subprocesses() -> str:
    """The URL of the database pytest-django created (what the subprocesses must use)."""
    from django.conf import settings

    db = settings.DATABASES["default"]
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


def private_redis_url(offset: int = 1) -> str:
    """The test Redis with another database of this test worker's block: a broker no other Celery worker of the
    session listens to."""
    from tests.conftest import redis_url_of_worker

    return redis_url_of_worker(offset)


class Centre:
    """gunicorn serving wanmon over HTTPS on a free 127.0.0.1 port."""

    def __init__(self, *, certificate: Path, key: Path, ca_file: Path, env: Mapping[str, str], log_dir: Path):
        self.port = free_port()
        self.url = f"https://127.0.0.1:{self.port}"
        self.ca_file = ca_file
        self.log_path = log_dir / "gunicorn.log"
        argv = [
            sys.executable, "-m", "gunicorn", "wanmon.wsgi:application",
            "--bind", f"127.0.0.1:{self.port}", "--certfile", str(certificate), "--keyfile", str(key),
            "--workers", "2", "--threads", "2", "--timeout", "120", "--log-level", "info",
            *gunicorn_control_socket_off(),
            "--error-logfile", str(self.log_path), "--access-logfile", str(log_dir / "access.log"),
        ]  # fmt: skip
        self.process = subprocess.Popen(  # noqa: S603 - fixed argv
            argv, cwd=ROOT, env=dict(env), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        self.access_log_path = log_dir / "access.log"

    def wait_ready(self, timeout_s: float = WAIT_S) -> None:
        context = ssl.create_default_context(cafile=str(self.ca_file))
        wait_for_login_page(self.url, self.process, self.log, timeout_s, context)

    def log(self) -> str:
        return read_log(self.log_path)

    def access_log(self) -> str:
        return read_log(self.access_log_path)

    def stop(self) -> None:
        stop_process(self.process)


class Worker:
    """``celery worker`` (solo pool) on the private broker, with the settings in ``env``."""

    def __init__(self, *, env: Mapping[str, str], log_dir: Path) -> None:
        self.env = dict(env)
        self.broker_url = self.env["REDIS_URL"]
        self.hostname = f"chain-{os.getpid()}-{time.monotonic_ns()}@{socket.gethostname()}"
        self.log_path = log_dir / "worker.log"
        from wanmon.celery import app

        with app.connection_for_write(self.broker_url) as connection:
            app.control.purge(connection=connection)  # what an interrupted earlier run may have left queued
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(  # noqa: S603 - fixed argv
                [sys.executable, "-m", "celery", "-A", "wanmon", "worker", "--pool", "solo", "--hostname",
                 self.hostname, "--loglevel", "INFO", "--without-mingle", "--without-gossip"],
                cwd=ROOT, env=self.env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip

    def wait_ready(self, timeout_s: float = WAIT_S) -> None:
        # Its "ready." log line: a remote-control ping would go through the session's default broker.
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if f"{self.hostname} ready." in self.log():
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.2)
        raise AssertionError(f"celery worker did not come up:\n{self.log()[-3000:]}")

    def send(self, task_name: str, *args: Any) -> None:
        """Enqueue ``task_name`` on the private broker (as the beat would on the real one)."""
        from wanmon.celery import app

        with app.connection_for_write(self.broker_url) as connection:
            app.send_task(task_name, args=args, connection=connection)

    def log(self) -> str:
        return read_log(self.log_path)

    def stop(self) -> None:
        stop_process(self.process)


def remove_tree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
