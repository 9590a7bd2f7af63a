"""`scripts/demo` brings up the whole stack from nothing, answers, and `scripts/demo stop` stops it all."""

import json
import os
import re
import socket
import subprocess
import tempfile
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.e2e


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture
def demo_env():
    base = os.environ.get("WANMON_TEST_RUN_DIR") or tempfile.gettempdir()
    var_dir = tempfile.mkdtemp(prefix="demo-var-", dir=base)
    os.chmod(var_dir, 0o755)  # the private PostgreSQL runs as the postgres user when we are root
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    env.update(WANMON_VAR_DIR=var_dir, WANMON_PG_PORT=str(_free_port()), WANMON_REDIS_PORT=str(_free_port()),
               WANMON_DEMO_PORT=str(_free_port()))
    yield env
    subprocess.run([str(ROOT / "scripts" / "demo"), "stop"], env=env, capture_output=True, timeout=120)


def test_demo_starts_everything_and_stops_it(demo_env):
    port = int(demo_env["WANMON_DEMO_PORT"])
    started = subprocess.run([str(ROOT / "scripts" / "demo")], env=demo_env, capture_output=True, text=True,
                             timeout=400)
    assert started.returncode == 0, started.stderr[-3000:]
    assert f"http://127.0.0.1:{port}/" in started.stdout
    login = re.search(r"login:\s+(\S+) / (\S+)", started.stdout)
    assert login and login.group(1) == "admin"

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/", timeout=10) as response:
        assert response.status == 200 and b"Log in to wanmon" in response.read()
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10) as response:
        health = json.load(response)
    assert health["status"] == "ok"
    assert health["database"]["detail"]["timescaledb"].startswith("2.")
    assert health["celery"]["detail"]["workers"]

    # running it again while up is harmless and keeps the same login
    again = subprocess.run([str(ROOT / "scripts" / "demo")], env=demo_env, capture_output=True, text=True, timeout=200)
    assert again.returncode == 0 and login.group(0) in again.stdout

    stopped = subprocess.run([str(ROOT / "scripts" / "demo"), "stop"], env=demo_env, capture_output=True, text=True,
                             timeout=120)
    assert stopped.returncode == 0
    for p in (port, int(demo_env["WANMON_PG_PORT"]), int(demo_env["WANMON_REDIS_PORT"])):
        assert not _listening(p), f"port {p} still answers after scripts/demo stop"
