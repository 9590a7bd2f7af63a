"""What the tests that start real processes share: a free loopback port, waiting for a condition or for a server to
answer, reading a log that may not exist yet, and stopping a process started in its own session."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import ssl
import subprocess
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def stop_process(process: subprocess.Popen | None, timeout_s: float = 20.0) -> None:
    """SIGTERM, then SIGKILL, to the session of ``process`` (started with start_new_session: its children go too)."""
    if process is None or process.poll() is not None:
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout=timeout_s)
            return
        except subprocess.TimeoutExpired:
            continue


def read_log(path: Path) -> str:
    """The text of a process's log; empty while the process has not written it."""
    with contextlib.suppress(OSError):
        return path.read_text(errors="replace")
    return ""


def wait_until(what: str, check: Callable[[], Any], timeout_s: float, every_s: float = 0.5,
               diagnose: Callable[[], str] | None = None) -> Any:  # fmt: skip
    """Poll ``check`` until it returns something truthy; fail naming ``what`` (and ``diagnose()``) on timeout."""
    deadline = time.monotonic() + timeout_s
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            detail = diagnose() if diagnose else ""
            raise AssertionError(f"{what}: not within {timeout_s:.0f} s (last: {result!r})\n{detail}")
        time.sleep(every_s)


def gunicorn_control_socket_off() -> list[str]:
    """Recent gunicorn opens ~/.gunicorn/gunicorn.ctl, one path shared by every gunicorn of this user: not here."""
    from gunicorn.config import KNOWN_SETTINGS

    return ["--no-control-socket"] if any(s.name == "control_socket_disable" for s in KNOWN_SETTINGS) else []


def wait_for_login_page(url: str, process: subprocess.Popen, log: Callable[[], str], timeout_s: float,
                        context: ssl.SSLContext | None = None) -> None:  # fmt: skip
    """Until the centre at ``url`` serves its login page; fail with the end of its log if it exits or never does."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with urllib.request.urlopen(f"{url}/accounts/login/", timeout=5, context=context) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"gunicorn did not answer on {url}:\n{log()[-3000:]}")
        time.sleep(0.2)
