"""Every ``scripts/bench`` command run at a tiny size, so that a benchmark cannot break silently (one did: the ingest
benchmark's COPY baseline kept its own list of columns and failed once the column specification moved).

Each runs the module scripts/bench runs for it, with the command's own arguments, against the test database (the
private PostgreSQL and Redis scripts/test started), and must exit 0 with its machine-readable last line. What is
skipped: scripts/bench's own start of private services and ``migrate``, which the test database already has.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time

import pytest

from tests.conftest import ROOT, subprocess_database_url

# command -> (the module scripts/bench runs, its smallest arguments, the first key of its last line)
BENCHES = {
    "ingest": ("scripts.bench_main", ["ingest", "--batches", "2", "--polls", "2"], "ingest_ratio_vs_copy"),
    "query": ("scripts.bench_main", ["query", "--days", "1", "--runs", "1"], "query_90d_1h_points"),
    # One noise-corpus fault from half a day before its onset, then the 12-site mesh (its topology is fixed): an
    # hour of cycles a minute over one day of history is its least.
    "diagnosis": (
        "scripts.bench_main",
        ["diagnosis", "--case", "fault-path-down-fzk-ndgf", "--corpus-days", "1", "--hours", "1", "--history-days",
         "1", "--cases-problem", "mtu"],
        "replay_1h_132_paths_1min_s",
    ),  # fmt: skip
    "snmp": ("scripts.bench_snmp", ["--devices", "1", "--interfaces", "2", "--repeat", "1"], "snmp_ratio_vs_netsnmp"),
    # seed_history needs 25 interfaces at least (the routers of a site pair); one range of the picker.
    "dashboard": (
        "scripts.bench_main",
        ["dashboard", "--days", "1", "--interfaces", "25", "--runs", "1", "--range", "24h"],
        "dashboard_path_max_ms",
    ),
    "load": (
        "scripts.bench_load",
        ["--agents", "1", "--interfaces", "2", "--duration-s", "2", "--poll-interval-s", "1", "--users", "1",
         "--web-workers", "1", "--web-threads", "1", "--worker-concurrency", "1"],
        "load_ingest_p50_ms",
    ),  # fmt: skip
    "scale": (
        "scripts.bench_scale",
        ["--paths", "4", "--sites", "4", "--equipment", "10", "--history-hours", "0.1", "--snmp-history-hours",
         "0.05", "--workers", "1", "--sustained-minutes", "1"],
        "scale_paths",
    ),  # fmt: skip
    "room": ("scripts.bench_room", ["--sites", "3", "--days", "1", "--sizes", "2,4"], "room_history_s_2"),
}
NEEDS_NO_DATABASE = {"snmp"}  # scripts/bench runs it before starting any service


def bench_commands() -> set[str]:
    """The commands scripts/bench documents in its header (``#   scripts/bench NAME [...]``)."""
    return set(re.findall(r"^#\s+scripts/bench (\w+)", (ROOT / "scripts" / "bench").read_text(), re.M))


def test_every_bench_command_has_a_smoke_run():
    assert bench_commands() == BENCHES.keys()
    script = (ROOT / "scripts" / "bench").read_text()
    assert all(f"-m {module}" in script for module, _, _ in BENCHES.values())


def run_bench(module: str, args: list[str]) -> tuple[subprocess.CompletedProcess, dict[str, str]]:
    """Run a benchmark module as scripts/bench does; (the process, the key=value pairs of its last line)."""
    env = {**os.environ, "DATABASE_URL": subprocess_database_url()}
    done = subprocess.run(  # noqa: S603 - fixed argv
        [sys.executable, "-m", module, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=240
    )
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    last = dict(re.findall(r"(\w+)=(\S+)", lines[-1])) if lines else {}
    return done, last


@pytest.mark.parametrize(
    "command",
    [
        # The bench commits what it writes: a transactional test database, emptied after it.
        pytest.param(c, marks=() if c in NEEDS_NO_DATABASE else pytest.mark.django_db(transaction=True))
        for c in sorted(BENCHES)
    ],
)
def test_bench_command_runs_at_a_tiny_size(command):
    module, args, key = BENCHES[command]
    done, last = run_bench(module, args)
    assert done.returncode == 0, f"scripts/bench {command} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert key in last, f"scripts/bench {command} did not end with its {key}=... line:\n{done.stdout[-2000:]}"
    if command == "ingest":  # the figure the benchmark exists for: the API's rows per second over raw COPY's
        assert float(last["ingest_ratio_vs_copy"]) > 0
        assert int(last["api_rows_per_s"]) > 0 and int(last["copy_rows_per_s"]) > 0


@pytest.mark.django_db(transaction=True)
def test_the_bench_command_stops_the_services_it_started():
    # scripts/bench started its private services, then exec'd the benchmark: the shell whose EXIT trap stops them
    # was gone, and every run left a PostgreSQL and a Redis behind. A Redis of its own (the database is given).
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env["DATABASE_URL"] = subprocess_database_url()
    done = subprocess.run(  # noqa: S603 - fixed argv
        [str(ROOT / "scripts" / "bench"), "query", "--help"], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    started = re.search(r"private Redis on port (\d+)", done.stdout + done.stderr)
    assert started, done.stdout[-2000:] + done.stderr[-2000:]
    deadline = time.monotonic() + 10  # a Redis told to stop takes a moment to go
    while (alive := port_open(int(started.group(1)))) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not alive, f"the bench's Redis on port {started.group(1)} is still running"


def port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0
