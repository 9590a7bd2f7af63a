"""A real SNMP agent for tests and benchmarks: snmpsim's command responder on 127.0.0.1.

``SnmpSimulator`` copies ``.snmprec`` data files into a private directory, starts the
responder (``responder.py`` beside this file) on a free loopback UDP port, waits until it
listens and stops it for sure on ``stop()`` / leaving the ``with`` block. Each data file is one
simulated device: its file name is the v2c community and the SNMPv3 context name.

Run as root, snmpsim insists on dropping privileges (``--process-user``/``--process-group``)
before it reads the data files, and then imports parts of the standard library lazily (index
format, codecs). An interpreter installed under a private home (pyenv in /root) is unreadable
to ``nobody``, so the responder dies with ImportError; as root we therefore set
``SNMPSIM_ALLOW_ROOT=true`` (snmpsim's own switch) instead. It only listens on 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from tests.processes import stop_process

HERE = Path(__file__).resolve().parent
DATA_DIR = HERE / "data"
RESPONDER = HERE / "responder.py"
LISTENING = "Listening at UDP/IPv4 endpoint"


@dataclass(frozen=True)
class V3User:
    """The one SNMPv3 USM user the simulator accepts (snmpsim names the protocols like this)."""

    user: str = "wanmon"
    auth_key: str = "wanmon-auth-key"
    auth_protocol: str = "SHA"
    priv_key: str = "wanmon-priv-key"
    priv_protocol: str = "AES"


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM it when the process that started it dies (Linux).

    The ``with`` block / fixture finalizer stops the simulator normally; this covers a test run
    that is itself killed (SIGKILL, CI timeout) so no responder is left listening.
    """
    with contextlib.suppress(Exception):
        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM, 0, 0, 0)


def free_udp_port() -> int:
    """A UDP port on 127.0.0.1 nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class SnmpSimulator:
    """snmpsim-command-responder serving ``data_files`` on ``127.0.0.1:port``."""

    def __init__(
        self,
        data_files: Iterable[Path] | None = None,
        *,
        v3: V3User | None = None,
        python: str = sys.executable,
        start_timeout_s: float = 60.0,
    ) -> None:
        self.data_files = [Path(p) for p in (data_files or sorted(DATA_DIR.glob("*.snmprec")))]
        self.v3 = v3 or V3User()
        self.python = python
        self.start_timeout_s = start_timeout_s
        self.host = "127.0.0.1"
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self._workdir: Path | None = None

    @property
    def communities(self) -> list[str]:
        return [p.name.removesuffix(".snmprec") for p in self.data_files]

    @property
    def log_path(self) -> Path:
        assert self._workdir is not None
        return self._workdir / "responder.log"

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except (OSError, AssertionError):
            return ""

    def start(self) -> SnmpSimulator:
        self._workdir = Path(tempfile.mkdtemp(prefix="wanmon-snmpsim-"))
        data = self._workdir / "data"
        cache = self._workdir / "cache"
        data.mkdir()
        cache.mkdir()
        for path in self.data_files:
            shutil.copyfile(path, data / path.name)
        for path in (self._workdir, data, cache, *data.iterdir()):
            path.chmod(0o755 if path.is_dir() else 0o644)

        env = dict(os.environ)
        if os.geteuid() == 0:
            env["SNMPSIM_ALLOW_ROOT"] = "true"
        last_error = ""
        for _attempt in range(3):  # the free port may be taken between probing and binding
            self.port = free_udp_port()
            argv = [
                self.python,
                str(RESPONDER),
                f"--cache-dir={cache}",
                "--log-level=info",  # the "Listening at" line tells us it is ready
                # Options after --v3-engine-id configure that engine (order matters to snmpsim).
                "--v3-engine-id=auto",
                f"--data-dir={data}",
                f"--agent-udpv4-endpoint={self.host}:{self.port}",
                f"--v3-user={self.v3.user}",
                f"--v3-auth-key={self.v3.auth_key}",
                f"--v3-auth-proto={self.v3.auth_protocol}",
                f"--v3-priv-key={self.v3.priv_key}",
                f"--v3-priv-proto={self.v3.priv_protocol}",
            ]
            with self.log_path.open("wb") as log:
                self.process = subprocess.Popen(  # noqa: S603 - fixed argv, no shell
                    argv,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    env=env,
                    start_new_session=True,
                    preexec_fn=_die_with_parent if sys.platform == "linux" else None,  # noqa: PLW1509
                )
            if self._wait_listening():
                return self
            last_error = self.log()[-3000:]
            self._kill()
        self.stop()
        raise RuntimeError(f"snmpsim did not start on 127.0.0.1:{self.port}:\n{last_error}")

    def _wait_listening(self) -> bool:
        assert self.process is not None
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            if LISTENING in self.log():
                return True
            if self.process.poll() is not None:
                return False
            time.sleep(0.05)
        return False

    def _kill(self) -> None:
        process, self.process = self.process, None
        stop_process(process, timeout_s=5.0)  # its own session: nothing it started survives

    def stop(self) -> None:
        """Kill the responder (SIGTERM, then SIGKILL) and remove its files. Safe to call twice."""
        self._kill()
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None

    def __enter__(self) -> SnmpSimulator:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
