"""scripts/bench scale [--paths 10000 --history-hours 24 --snmp-history-hours 6 --workers 2 --sites 200]

A WLCG-like world (scripts/scale_inventory.py: 200 sites in regions and tiers, 1 000 equipment, 20 000
interfaces, ``--paths`` directed latencybg paths with a result a minute, a fifth of them tested with TCP every
6 h, noise and a handful of faults) and its history loaded through the real ingest (``batch_ingest``: COPY; SNMP
rates and rollups by ``measurements_process``), ending now. Then, each printed on its own line:

1. sustained ingest of 10 simulated minutes at the real rate (every path's result and every interface's poll each
   minute, one batch per site a minute as the agents send them, rates and rollups after each): CPU seconds of this
   process and of its PostgreSQL backend, as a share of one core over the 10 minutes;
2. two full diagnosis cycles with ``--workers`` real Celery worker processes (``celery worker --pool solo``): the
   cold one (the first after a start: empty cache, no path evaluated yet), then, after a minute of new results on
   every path, the next minute's (the steady state: every path planned again, the baselines from the cache). Each:
   wall time from the beat task to the cycle's close, the cost per path (wall x workers / paths), and the CPU
   seconds the workers and the bench's PostgreSQL spent on it (a busy machine stretches the wall time, not these);
3. the overview's server time (in-process test client, median of 5 after a warm-up): the page and a region's
   matrix;
4. the query API for one path over the day (raw owamp results) and for one interface over 90 days of hourly
   rollups (90 days inserted for it);
5. the database size per day: bytes per row of each hypertable (as stored here) x the rows a day brings.

The last line is machine-readable:
    scale_paths=<n> diagnosis_cycle_s=<f> diagnosis_next_cycle_s=<f> ingest_cpu_share=<f> overview_ms=<f>
    db_gb_per_day=<f>
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import statistics
import subprocess
import sys
import time
import uuid
from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wanmon.settings")
os.environ.setdefault("WANMON_LOG_LEVEL", "WARNING")  # a log line per login and batch would drown the figures
import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402

from scripts.scale_inventory import (  # noqa: E402
    World,
    inventory_create,
    owamp_records,
    snmp_records,
    throughput_records,
    world_generate,
)
from wanmon.measurements.ingest import batch_ingest  # noqa: E402
from wanmon.measurements.services import measurements_process  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SUSTAINED_MINUTES = 10  # --sustained-minutes


def _say(msg: str) -> None:
    # the 1-minute load average beside each figure: a busy machine shows in every one of them
    print(f"{msg} [load {os.getloadavg()[0]:.1f}]", flush=True)


def _backend_cpu_s() -> float:
    """CPU seconds of this connection's PostgreSQL backend (same machine: /proc)."""
    with connection.cursor() as c:
        c.execute("SELECT pg_backend_pid()")
        pid = c.fetchone()[0]
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _proc_cpu_s(pid: int) -> float:
    """CPU seconds of a process and its waited-for children (/proc), 0 when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def _postgres_cpu_s() -> float | None:
    """CPU seconds of the bench's own PostgreSQL (the postmaster and its backends); None when the database is
    not the private one scripts/bench started."""
    pidfile = Path(os.environ.get("WANMON_BENCH_RUN_DIR", "/nonexistent"), "pg", "postmaster.pid")
    try:
        postmaster = int(pidfile.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    total = _proc_cpu_s(postmaster)
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                parent = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if parent == postmaster:
                total += _proc_cpu_s(int(d.name))
    return total


def _own_cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _site_of_equipment(w: World) -> dict[str, str]:
    return {e["name"]: e["site"] or f"carrier-{e['region']}" for e in w.equipment}


def _ingest_minutes(start: datetime, end: datetime, records_at: Callable[[datetime], list]) -> tuple[int, float]:
    """Ingest ``records_at(t)`` for every minute t from ``start`` up to ``end`` (exclusive), 10 minutes a batch:
    the number of records and the seconds it took."""
    t0 = time.perf_counter()
    t = start
    count = 0
    while t < end:
        records = []
        for _ in range(10):
            if t >= end:
                break
            records += records_at(t)
            t += timedelta(minutes=1)
        batch_ingest(batch_id=str(uuid.uuid4()), records=records)
        count += len(records)
    return count, time.perf_counter() - t0


def load_history(w: World, *, start: datetime, end: datetime, snmp_start: datetime) -> dict[str, float]:
    """Tests from ``start`` and SNMP polls from ``snmp_start`` up to ``end`` (exclusive), 10 minutes a batch."""
    tests, tests_s = _ingest_minutes(
        start, end, lambda t: owamp_records(w, t, end=end) + throughput_records(w, t, end=end)
    )
    polls, snmp_s = _ingest_minutes(snmp_start, end, lambda t: snmp_records(w, t))
    t0 = time.perf_counter()
    with connection.cursor() as c:
        c.execute("SELECT id FROM inventory_interface")
        ids = [r[0] for r in c.fetchall()]
    for start_at in range(0, len(ids) if polls else 0, 1000):  # 1 000 interfaces' history at a time in memory
        measurements_process(interface_since=dict.fromkeys(ids[start_at : start_at + 1000], snmp_start))
    rates_s = time.perf_counter() - t0
    _say(f"history: {tests} test results in {tests_s:.0f} s, {polls} SNMP samples in {snmp_s:.0f} s, "
         f"rates and rollups in {rates_s:.0f} s")
    return {"tests": tests, "polls": polls}


def sustained_ingest(w: World, *, start: datetime, minutes: int = SUSTAINED_MINUTES) -> float:
    """10 minutes of results and polls, one batch per site a minute, rates after each SNMP batch. Returns the
    CPU share of one core (this process + its PostgreSQL backend) over the 10 simulated minutes."""
    owner = _site_of_equipment(w)
    by_site_ifaces: dict[str, list] = defaultdict(list)
    for eq, ifn in w.interfaces:
        by_site_ifaces[owner[eq]].append((eq, ifn))
    by_site_paths: dict[str, list] = defaultdict(list)
    for p in w.paths:
        by_site_paths[p[0]].append(p)
    cpu0, db0, wall0 = _own_cpu_s(), _backend_cpu_s(), time.perf_counter()
    rates_cpu = 0.0
    end = start + timedelta(minutes=minutes)
    for minute in range(minutes):
        t = start + timedelta(minutes=minute)
        tp = throughput_records(w, t, end=end)
        for site in sorted(set(by_site_paths) | set(by_site_ifaces)):
            records = owamp_records(w, t, end=end, paths=by_site_paths.get(site, [])) if site in by_site_paths else []
            records += [r for r in tp if r.src == site]
            if site in by_site_ifaces:
                records += snmp_records(w, t, interfaces=by_site_ifaces[site])
            if not records:
                continue
            result = batch_ingest(batch_id=str(uuid.uuid4()), records=records)
            if result.interface_since:
                c0 = _own_cpu_s() + _backend_cpu_s()
                measurements_process(interface_since=result.interface_since)  # the Celery follow-up of ingest
                rates_cpu += _own_cpu_s() + _backend_cpu_s() - c0
    cpu = (_own_cpu_s() - cpu0) + (_backend_cpu_s() - db0)
    wall = time.perf_counter() - wall0
    share = cpu / (minutes * 60)
    _say(f"sustained ingest: {minutes} min of {len(w.paths)} results + {len(w.interfaces)} polls a "
         f"minute in {wall:.1f} s wall, {cpu:.1f} CPU s (rates and rollups {rates_cpu:.1f}): "
         f"{share * 100:.1f} % of one core; without rates and rollups {(cpu - rates_cpu) / (minutes * 60) * 100:.1f} %")
    return share


def _workers(n: int, queue: str) -> list[subprocess.Popen]:
    from wanmon.celery import app

    procs = []
    for i in range(n):
        name = f"bench{i}-{os.getpid()}@localhost"
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "wanmon", "worker", "--pool", "solo", "-Q", queue,
             "--hostname", name, "--loglevel", "WARNING", "--without-mingle", "--without-gossip"],
            cwd=ROOT, env=dict(os.environ, ALERTS_CELERY_QUEUE=queue), stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True,
        ))
        deadline = time.monotonic() + 60
        while not app.control.ping(destination=[name], timeout=0.5):
            if time.monotonic() > deadline:
                raise RuntimeError(f"worker {name} did not start")
    return procs


def diagnosis_cycle(n_workers: int, at: datetime, label: str = "diagnosis cycle") -> float:
    from wanmon.diagnosis.models import DiagnosisCycle
    from wanmon.diagnosis.tasks import diagnosis_run_task

    # The history was loaded a moment ago: autovacuum would analyse and vacuum it during the cycle, on the same two
    # cores. In steady state the tables are analysed long before a cycle reads them.
    with connection.cursor() as c:
        c.execute("VACUUM ANALYZE")
    queue = f"bench-diagnosis-{os.getpid()}"
    procs = _workers(n_workers, queue)
    try:
        before = set(DiagnosisCycle.objects.values_list("id", flat=True))
        workers_cpu0, pg_cpu0 = sum(_proc_cpu_s(p.pid) for p in procs), _postgres_cpu_s()
        t0 = time.perf_counter()
        diagnosis_run_task.apply_async((at.isoformat(),), queue=queue)  # as of the end of the data loaded
        cycle = None
        while True:
            if cycle is None:
                cycle = DiagnosisCycle.objects.exclude(id__in=before).first()
            else:
                cycle.refresh_from_db()
                if cycle.closed_at is not None:
                    break
            if time.perf_counter() - t0 > 1800:
                raise RuntimeError(f"the cycle did not close in 30 min: {cycle}")
            time.sleep(0.1)
        wall = time.perf_counter() - t0
        workers_cpu = sum(_proc_cpu_s(p.pid) for p in procs) - workers_cpu0
        pg_cpu1 = _postgres_cpu_s()
    finally:
        for p in procs:
            os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            p.wait(timeout=60)
    from wanmon.diagnosis.models import Finding

    active = Finding.objects.exclude(status="resolved")
    codes = defaultdict(int)
    for code in active.values_list("code", flat=True):
        codes[code] += 1
    paths = max(cycle.planned, 1)
    # CPU beside wall time: on a shared machine the wall time says as much about the other processes as about us
    pg = f", PostgreSQL {pg_cpu1 - pg_cpu0:.1f} s ({(pg_cpu1 - pg_cpu0) / paths * 1000:.2f} ms a path)" if (
        pg_cpu0 is not None and pg_cpu1 is not None) else ""
    _say(f"{label}: {cycle.planned} paths in {cycle.shards} shards, {wall:.1f} s with {n_workers} workers "
         f"({wall * n_workers / paths * 1000:.2f} ms per path per worker); CPU: workers {workers_cpu:.1f} s "
         f"({workers_cpu / paths * 1000:.2f} ms a path){pg}; active findings {dict(codes)}")
    return wall


def _client():
    from django.contrib.auth import get_user_model
    from django.test import Client

    user = get_user_model().objects.create_user(f"bench-{uuid.uuid4().hex[:6]}", password="x")
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(user)
    return client


def _timed(client, url: str, params: dict | None = None, runs: int = 5) -> float:
    response = client.get(url, params or {})
    if response.status_code != 200:
        raise RuntimeError(f"{url} answered {response.status_code}: {response.content[:300]!r}")
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        client.get(url, params or {})
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def overview(w: World, at: datetime) -> float:
    """As of the end of the data loaded (the overview's ``at``), like a NOC looking at it then."""
    client = _client()
    page_ms = _timed(client, "/", {"at": at.isoformat()})
    region = w.sites[1]["region"]
    group_ms = _timed(client, "/", {"at": at.isoformat(), "region": region})
    _say(f"overview: page {page_ms:.0f} ms, the {region} matrix {group_ms:.0f} ms")
    return max(page_ms, group_ms)


def query(w: World, end: datetime) -> None:
    client = _client()
    src, dst = w.paths[0]
    day_ms = _timed(client, "/api/v1/query", {
        "metric": "delay_median_ms", "src": src, "dst": dst, "start": (end - timedelta(days=1)).isoformat(),
        "end": end.isoformat(), "bucket": "5m",
    })
    eq, ifn = w.hops[w.paths[0]][1]
    with connection.cursor() as c:
        c.execute("SELECT i.id FROM inventory_interface i JOIN inventory_equipment e ON e.id = i.equipment_id "
                  "WHERE e.name = %s AND i.name = %s", [eq, ifn])
        iid = c.fetchone()[0]
        c.execute(
            """INSERT INTO measurements_interfacerate_1h (time, interface_id, samples, covered_s, in_bps_avg,
                   in_bps_max, in_bps_p95, out_bps_avg, out_bps_max, out_bps_p95)
               SELECT t, %s, 60, 3600, 4e9, 6e9, 5e9, 3e9, 5e9, 4e9
               FROM generate_series(%s::timestamptz, %s::timestamptz, interval '1 hour') t
               ON CONFLICT DO NOTHING""",
            [iid, end - timedelta(days=90), end - timedelta(days=1)],
        )
    long_ms = _timed(client, "/api/v1/query", {
        "metric": "in_bps", "interface": f"{eq}:{ifn}", "start": (end - timedelta(days=90)).isoformat(),
        "end": end.isoformat(), "bucket": "1h",
    })
    _say(f"query API: one path over the day {day_ms:.0f} ms, "
         f"one interface over 90 days of 1 h rollups {long_ms:.0f} ms")


def db_per_day(w: World, *, history_hours: float, snmp_hours: float) -> float:
    """Bytes a day: each hypertable's bytes per row here x the rows a day brings at this volume."""
    per_day_rows = {
        "measurements_owamptest": len(w.paths) * 1440,
        "measurements_throughputtest": len(w.throughput_paths) * 4,
        "measurements_snmpsample": len(w.interfaces) * 1440,
        "measurements_interfacerate": len(w.interfaces) * 1440,
        "measurements_interfacerate_5m": len(w.interfaces) * 288,
        "measurements_interfacerate_1h": len(w.interfaces) * 24,
        "measurements_interfacerate_1d": len(w.interfaces),
    }
    total = 0.0
    parts = []
    with connection.cursor() as c:
        c.execute("VACUUM ANALYZE")
        for table, rows_a_day in per_day_rows.items():
            c.execute(f"SELECT count(*), hypertable_size('{table}') FROM {table}")
            rows, size = c.fetchone()
            if not rows:
                continue
            day = size / rows * rows_a_day
            total += day
            parts.append(f"{table.removeprefix('measurements_')} {day / 1e9:.2f}")
        c.execute("SELECT pg_database_size(current_database())")
        db_size = c.fetchone()[0]
    _say(f"database: {db_size / 1e9:.2f} GB now ({history_hours:.0f} h of tests, {snmp_hours:.0f} h of SNMP); "
         f"a day at this volume: {total / 1e9:.2f} GB ({', '.join(parts)} GB)")
    return total / 1e9


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="scripts/bench scale")
    parser.add_argument("--paths", type=int, default=10_000)
    parser.add_argument("--sites", type=int, default=200, help="a smaller world for a quick check (the paths fit in)")
    parser.add_argument("--equipment", type=int, default=1_000)
    parser.add_argument("--history-hours", type=float, default=24)
    parser.add_argument("--snmp-history-hours", type=float, default=6,
                        help="SNMP polls before the sustained ingest (the diagnosis window); size per day is per row")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--sustained-minutes", type=int, default=SUSTAINED_MINUTES)
    args = parser.parse_args(argv)

    w = world_generate(n_paths=args.paths, n_sites=args.sites, n_equipment=args.equipment)
    now = datetime.now(UTC).replace(second=0, microsecond=0)
    sustained_start = now - timedelta(minutes=args.sustained_minutes)
    t0 = time.perf_counter()
    inventory_create(w, valid_from=now - timedelta(days=30))
    _say(f"inventory: {len(w.sites)} sites, {len(w.equipment)} equipment, {len(w.interfaces)} interfaces, "
         f"{len(w.paths)} latency paths, {len(w.throughput_paths)} throughput paths "
         f"in {time.perf_counter() - t0:.1f} s")
    load_history(w, start=sustained_start - timedelta(hours=args.history_hours), end=sustained_start,
                 snmp_start=sustained_start - timedelta(hours=args.snmp_history_hours))
    share = sustained_ingest(w, start=sustained_start, minutes=args.sustained_minutes)
    # The first cycle of a centre that has just started: nothing in the cache, no path evaluated yet (every baseline
    # is summarised, every direction planned). Then the cycle of the next minute, as the beat runs it in steady
    # state: a minute of new results on every path (all planned again), the baselines from the cache.
    cycle_s = diagnosis_cycle(args.workers, now, "diagnosis cycle, cold (first after a start, empty cache)")
    sustained_ingest(w, start=now, minutes=1)
    next_s = diagnosis_cycle(args.workers, now + timedelta(minutes=1), "diagnosis cycle, the next minute")
    overview_ms = overview(w, now)
    query(w, now)
    gb = db_per_day(w, history_hours=args.history_hours, snmp_hours=args.snmp_history_hours)
    print(f"scale_paths={len(w.paths)} diagnosis_cycle_s={cycle_s:.2f} diagnosis_next_cycle_s={next_s:.2f} "
          f"ingest_cpu_share={share:.4f} "
          f"overview_ms={overview_ms:.1f} db_gb_per_day={gb:.3f}", flush=True)


if __name__ == "__main__":
    main()
