"""`scripts/demo` brings up the whole stack from nothing, answers, and `scripts/demo stop` stops it all.

Its simulated site agents push the LHC demo scenario through the ingest API: within a minute the
database holds their 48 h backfill, the worker has turned the SNMP counters into rates and rollups,
and the diagnosis (Celery beat, every minute) shows the injected cases.
"""

import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import urllib.request
from pathlib import Path

import pytest

from tests.processes import free_port, wait_until

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.e2e
DEMO_RECORDS = len(json.loads((ROOT / "wanmon" / "demo" / "data" / "lhc-demo.yaml").read_text())["measurements"])
INJECTED = [  # (code, a subject fragment) the demo's diagnosis must show
    ("ASYMMETRIC_PATH", '"src": "FZK"'),
    ("SHARED_EQUIPMENT_SUSPECT", '"equipment": "geant-fra"'),
    ("WINDOW_LIMITED", '"dst": "ASGC"'),
    ("TRUNK_IMBALANCE", '"trunk": "ral-lag"'),
    ("MAINTENANCE_EXPLAINED", '"equipment": "surf-ams"'),
]


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture
def demo_env():
    base = os.environ.get("WANMON_TEST_RUN_DIR") or tempfile.gettempdir()
    var_dir = tempfile.mkdtemp(prefix="demo-var-", dir=base)
    os.chmod(var_dir, 0o755)  # the private PostgreSQL runs as the postgres user when we are root
    # The demo as a newcomer starts it (no test settings), its collected static files in its own directory: a
    # manifest left in the checkout's var/ would make the next test run's pages ask for hashed names.
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL", "WANMON_STATIC_MANIFEST"}}
    env.update(WANMON_VAR_DIR=var_dir, WANMON_PG_PORT=str(free_port()), WANMON_REDIS_PORT=str(free_port()),
               WANMON_DEMO_PORT=str(free_port()), WANMON_STATIC_ROOT=os.path.join(var_dir, "staticfiles"))
    yield env
    subprocess.run([str(ROOT / "scripts" / "demo"), "stop"], env=env, capture_output=True, timeout=120)


def _psql(env: dict, sql: str) -> list[list[str]]:
    """Rows of ``sql`` on the demo's database (its private PostgreSQL on WANMON_PG_PORT)."""
    major = env.get("WANMON_PG_MAJOR", "15")
    psql = Path(env.get("WANMON_PG_BIN", f"/usr/lib/postgresql/{major}/bin")) / "psql"
    psql = str(psql) if psql.exists() else shutil.which("psql")
    done = subprocess.run([psql, "-h", "127.0.0.1", "-p", env["WANMON_PG_PORT"], "-U", "postgres", "-AtF", "|",
                           "-c", sql, "wanmon"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return [line.split("|") for line in done.stdout.splitlines()]


def _agent_pids(var_dir: str) -> dict[str, int]:
    return {p.stem: int(p.read_text()) for p in (Path(var_dir) / "run").glob("agent-*.pid")}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


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
    # Without a login /healthz says what is up, not versions or worker names.
    assert health == {"status": "ok", "database": {"ok": True}, "redis": {"ok": True}, "celery": {"ok": True}}
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/livez", timeout=10) as response:
        assert json.load(response) == {"status": "ok"}

    # One simulated agent per site uploads its share of the scenario through POST /api/v1/ingest: the first
    # upload is the whole 48 h backfill, stored under that agent.
    pids = _agent_pids(demo_env["WANMON_VAR_DIR"])
    assert len(pids) == 12 and all(_alive(p) for p in pids.values())

    def uploaded():
        ((agents, records),) = _psql(demo_env, """
            SELECT count(DISTINCT a.name), coalesce(sum(b.record_count), 0) FROM measurements_ingestbatch b
            JOIN inventory_agent a ON a.id = b.agent_id WHERE a.name LIKE '%-demo'""")
        return (int(agents), int(records)) if int(agents) == 12 and int(records) >= DEMO_RECORDS else None

    wait_until("the agents' backfill", uploaded, 60, every_s=3.0)
    ((tests, sessions, last),) = _psql(demo_env, """SELECT (SELECT count(*) FROM measurements_throughputtest),
        (SELECT count(*) FROM measurements_owamptest), (SELECT max(time) > now() - interval '10 minutes'
        FROM measurements_owamptest)""")
    assert int(tests) >= 2640 and int(sessions) >= 12672 and last == "t"  # 22 paths x 48 h, up to now

    # The worker turns the SNMP counters into rates and rollups (it is told to after each batch).
    def rates():
        ((n_rates, n_rollups),) = _psql(demo_env, """SELECT (SELECT count(*) FROM measurements_interfacerate),
            (SELECT count(*) FROM measurements_interfacerate_1h)""")
        return int(n_rates) >= 22 * 500 and int(n_rollups) > 0

    wait_until("interface rates from the agents' SNMP counters", rates, 60, every_s=3.0)

    # The diagnosis runs every minute (beat) on the backfilled data and finds the injected case studies.
    def findings():
        rows = _psql(demo_env, "SELECT code, subject::text FROM diagnosis_finding WHERE status <> 'resolved'")
        return all(any(code == c and fragment in s for c, s in rows) for code, fragment in INJECTED)

    wait_until("the injected findings", findings, 150, every_s=5)

    # running it again while up is harmless and keeps the same login
    again = subprocess.run([str(ROOT / "scripts" / "demo")], env=demo_env, capture_output=True, text=True, timeout=200)
    assert again.returncode == 0 and login.group(0) in again.stdout
    assert _agent_pids(demo_env["WANMON_VAR_DIR"]) == pids  # the same agents go on

    stopped = subprocess.run([str(ROOT / "scripts" / "demo"), "stop"], env=demo_env, capture_output=True, text=True,
                             timeout=120)
    assert stopped.returncode == 0
    assert not [site for site, pid in pids.items() if _alive(pid)], "simulated agents still running"
    for p in (port, int(demo_env["WANMON_PG_PORT"]), int(demo_env["WANMON_REDIS_PORT"])):
        assert not _listening(p), f"port {p} still answers after scripts/demo stop"
