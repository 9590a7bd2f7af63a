"""Benchmarks behind scripts/bench (run with the services scripts/bench started).

ingest: realistic batches of SNMP samples (100 interfaces x 50 polls = 5 000 rows per batch) POSTed,
gzip-compressed like the agent sends them, to gunicorn on loopback, against a raw psycopg COPY of the
same rows into the same hypertable, in the same run. The last line is machine-readable:
    ingest_ratio_vs_copy=<float> api_rows_per_s=<int> copy_rows_per_s=<int>

query: 90 days of 1-minute rates for 100 interfaces, rolled up, then the latency of the query API
for one interface's 90-day 1-hour series (median of several runs).

diagnosis: see scripts/bench_diagnosis.py.

dashboard: ``manage.py seed_history`` (90 days of 1-minute rates for 100 interfaces on the routers of a
site pair, rollups, months of tests), then the server time of every data request the path page makes:
its ``?format=json`` refresh (fragments and figures; the figures are also what the page embeds on
first load) and the page itself, one direction and both, for every range of the picker. Timed
in-process with Django's test client (no network), after one warm-up request each. The last line is
machine-readable:
    dashboard_path_max_ms=<float> dashboard_path_median_ms=<float> slowest=<request> ...
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
import uuid
from datetime import UTC, datetime, timedelta

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wanmon.settings")
import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402

from collectors.records import decode_records  # noqa: E402
from collectors.records.types import iso_z  # noqa: E402
from wanmon.inventory.models import Agent, Carrier, Equipment, Interface, Site  # noqa: E402
from wanmon.measurements.api.auth import token_hash  # noqa: E402
from wanmon.measurements.copy_rows import SNMP_COLUMNS, snmp_rows  # noqa: E402

INTERFACES = 100


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _topology() -> tuple[str, list[int]]:
    carrier, _ = Carrier.objects.get_or_create(code="BENCH", defaults={"name": "Bench"})
    site, _ = Site.objects.get_or_create(code="BENCH", defaults={"name": "Bench site"})
    eq, _ = Equipment.objects.get_or_create(name="bench-router", defaults={"carrier": carrier})
    ifaces = [
        Interface.objects.get_or_create(equipment=eq, name=f"xe-0/0/{i}", defaults={"speed_mbps": 100_000})[0]
        for i in range(INTERFACES)
    ]
    token = secrets.token_urlsafe(32)
    agent = Agent.objects.create(
        site=site, name=f"bench-{uuid.uuid4().hex[:6]}", token_hash=token_hash(token), token_prefix=token[:8]
    )
    agent.equipment.add(eq)
    return token, [i.id for i in ifaces]


def _batches(n_batches: int, polls: int, start: datetime) -> list[dict]:
    batches = []
    for b in range(n_batches):
        records = []
        for p in range(polls):
            t = iso_z(start + timedelta(seconds=60 * (b * polls + p)))
            ticks = 100 + 6000 * (b * polls + p)
            for i in range(INTERFACES):
                octets = (b * polls + p) * 7_500_000_000 + i
                records.append(
                    {
                        "type": "snmp",
                        "time": t,
                        "equipment": "bench-router",
                        "interface": f"xe-0/0/{i}",
                        "if_index": 500 + i,
                        "sys_uptime_ticks": ticks,
                        "oper_status": "up",
                        "counters": {
                            "hc_in_octets": octets,
                            "hc_out_octets": octets // 3,
                            "hc_in_ucast_pkts": octets // 1000,
                            "hc_out_ucast_pkts": octets // 3000,
                            "in_errors": 0,
                            "out_errors": 0,
                            "in_discards": 0,
                            "out_discards": 0,
                        },
                    }
                )
        batches.append(
            {
                "batch_id": str(uuid.uuid4()),
                "agent_version": "bench",
                "records": records,
                "sent_at": iso_z(datetime.now(UTC)),
            }
        )
    return batches


def _copy_rows(batch: dict, ids: dict[tuple[str, str], tuple[int, int]]) -> list[tuple]:
    """The COPY rows of one batch exactly as the ingest builds them (``snmp_rows``: the layout of the one column
    specification, wanmon/measurements/columns.py), built before the timing starts: the baseline is the COPY alone."""
    records = decode_records(batch["records"], path="records")
    return list(snmp_rows(records, ids, batch["batch_id"], {}))


def _post(url: str, headers: dict, body: bytes, rows: int) -> tuple[float, str]:
    """One upload; (wall seconds, the server's Server-Timing header)."""
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=120) as response:
        reply = json.load(response)
        timing = response.headers.get("Server-Timing", "")
    elapsed = time.perf_counter() - started
    assert reply["accepted"] == rows, reply
    return elapsed, timing


def _post_all(url: str, headers: dict, bodies: list[bytes], rows_per_batch: int) -> None:
    for body in bodies:
        _post(url, headers, body, rows_per_batch)


def _copy_batch(conn, rows: list[tuple]) -> float:
    """Raw COPY baseline: one transaction, rows already built, the connection already open."""
    started = time.perf_counter()
    with conn.transaction(), conn.cursor() as cur:
        with cur.copy(f"COPY measurements_snmpsample ({', '.join(SNMP_COLUMNS)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
    return time.perf_counter() - started


def _copy_all(dsn: str, batches_rows: list[list[tuple]]) -> None:
    import psycopg

    with psycopg.connect(dsn) as conn:
        for rows in batches_rows:
            _copy_batch(conn, rows)


def _parallel(fn, shares: list) -> float:
    """Run fn(share) in one thread per share; wall-clock seconds until all finished."""
    import threading

    threads = [threading.Thread(target=fn, args=(share,)) for share in shares]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - started


def _server_timing(headers: list[str]) -> str:
    """Median of each Server-Timing metric over the uploads: 'decode=7.9ms store=38.2ms'."""
    values: dict[str, list[float]] = {}
    for header in headers:
        for part in filter(None, (p.strip() for p in header.split(","))):
            name, _, rest = part.partition(";")
            if rest.startswith("dur="):
                values.setdefault(name, []).append(float(rest[4:]))
    return " ".join(f"{name}={statistics.median(v):.1f}ms" for name, v in values.items())


def bench_ingest(n_batches: int, polls: int, concurrency: int) -> None:
    """Same rows, same hypertable, same concurrency on both sides (agents upload in parallel in real life).

    With one uploader the two sides alternate batch by batch, so that a noisy neighbour on this
    shared machine slows both alike; with several, each side runs its uploaders in parallel.
    """
    import psycopg

    token, _ = _topology()
    start = datetime.now(UTC) - timedelta(days=3)
    api_batches = _batches(n_batches, polls, start)
    # Warm-up batches (not timed): each gunicorn worker loads Django lazily and opens its broker
    # connection on its first request; a production server has long done both.
    warmup = _batches(4 * concurrency, 1, start - timedelta(days=2))
    copy_batches = _batches(n_batches, polls, start - timedelta(days=1))
    bodies = [gzip.compress(json.dumps(b).encode(), compresslevel=6) for b in api_batches]
    rows_per_batch = len(api_batches[0]["records"])
    eq = Equipment.objects.get(name="bench-router")
    interfaces = Interface.objects.filter(equipment=eq).values_list("name", "id")
    ids = {(eq.name, name): (eq.id, iid) for name, iid in interfaces}
    all_rows = [_copy_rows(b, ids) for b in copy_batches]
    dsn = os.environ["DATABASE_URL"]

    port = _free_port()
    env = dict(os.environ)
    env["WANMON_INGEST_RATE_LIMIT"] = "100000/min"
    web = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "wanmon.wsgi:application",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(concurrency),
            "--log-level",
            "warning",
        ],
        env=env,
    )
    timings: list[str] = []
    api_each: list[float] = []
    copy_each: list[float] = []
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/", timeout=1)
                break
            except OSError:
                time.sleep(0.2)
        url = f"http://127.0.0.1:{port}/api/v1/ingest"
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json", "Content-Encoding": "gzip"}
        warm = [gzip.compress(json.dumps(b).encode()) for b in warmup]
        _parallel(
            lambda share: _post_all(url, headers, share, INTERFACES), [warm[i::concurrency] for i in range(concurrency)]
        )
        if concurrency == 1:
            with psycopg.connect(dsn) as conn:
                for body, rows in zip(bodies, all_rows, strict=True):
                    elapsed, timing = _post(url, headers, body, rows_per_batch)
                    api_each.append(elapsed)
                    timings.append(timing)
                    copy_each.append(_copy_batch(conn, rows))
            api_s, copy_s = sum(api_each), sum(copy_each)
        else:
            api_s = _parallel(
                lambda share: _post_all(url, headers, share, rows_per_batch),
                [bodies[i::concurrency] for i in range(concurrency)],
            )
            copy_s = _parallel(
                lambda share: _copy_all(dsn, share), [all_rows[i::concurrency] for i in range(concurrency)]
            )
    finally:
        web.send_signal(signal.SIGTERM)
        web.wait(timeout=30)

    total = n_batches * rows_per_batch
    api_rate, copy_rate = total / api_s, total / copy_s
    print(
        f"batches={n_batches} rows_per_batch={rows_per_batch} concurrency={concurrency} "
        f"api_s={api_s:.3f} copy_s={copy_s:.3f}"
    )
    if api_each:
        if os.environ.get("WANMON_BENCH_VERBOSE"):
            print("api_ms", [round(x * 1000, 1) for x in api_each])
            print("copy_ms", [round(x * 1000, 1) for x in copy_each])
            print("server", timings)
        print(
            f"per batch: api_ms_median={statistics.median(api_each) * 1000:.1f} "
            f"copy_ms_median={statistics.median(copy_each) * 1000:.1f} server_timing: {_server_timing(timings)}"
        )
    print(
        f"ingest_ratio_vs_copy={api_rate / copy_rate:.3f} api_rows_per_s={int(api_rate)} "
        f"copy_rows_per_s={int(copy_rate)}"
    )


def bench_query(days: int, runs: int) -> None:
    from django.contrib.auth import get_user_model
    from django.test import Client

    _, ids = _topology()
    end = datetime(2026, 6, 1, tzinfo=UTC)
    start = end - timedelta(days=days)
    t0 = time.perf_counter()
    with connection.cursor() as c:
        c.execute(
            "TRUNCATE measurements_interfacerate, measurements_interfacerate_5m, measurements_interfacerate_1h, "
            "measurements_interfacerate_1d"
        )
        # One insert per interface keeps memory flat; values vary with time of day and interface.
        for iid in ids:
            c.execute(
                """INSERT INTO measurements_interfacerate (time, interface_id, interval_s, in_bps, out_bps)
                   SELECT t, %s, 60, 4e9 + 3e9 * sin(extract(epoch from t) / 13751.0) + %s * 1e6, 1e9
                   FROM generate_series(%s::timestamptz, %s::timestamptz - interval '1 minute',
                                        interval '1 minute') t""",
                [iid, iid % 97, start, end],
            )
    load_s = time.perf_counter() - t0
    from wanmon.measurements.rollups import interface_rollups_refresh

    t0 = time.perf_counter()
    interface_rollups_refresh(interface_ids=ids, since=start)
    rollup_s = time.perf_counter() - t0
    user = get_user_model().objects.create_user(f"bench-{uuid.uuid4().hex[:6]}", password="x")
    client = Client(HTTP_HOST="127.0.0.1")  # an allowed host: the test client says "testserver" by default
    client.force_login(user)
    params = {
        "metric": "in_bps",
        "interface": "bench-router:xe-0/0/7",
        "start": start.isoformat(),
        "end": end.isoformat(),
        "bucket": "1h",
    }
    latencies = []
    for _ in range(runs):
        t0 = time.perf_counter()
        response = client.get("/api/v1/query", params)
        latencies.append((time.perf_counter() - t0) * 1000)
        assert response.status_code == 200
    points = len(response.json()["series"][0]["points"])
    rows = days * 1440 * len(ids)
    print(f"raw_rows={rows} load_s={load_s:.1f} rollup_s={rollup_s:.1f} source={response.json()['source']}")
    print(
        f"query_90d_1h_points={points} query_ms_median={statistics.median(latencies):.1f} "
        f"query_ms_max={max(latencies):.1f}"
    )


def bench_dashboard(days: int, interfaces: int, runs: int, skip_seed: bool, ranges: list[str] | None = None) -> None:
    from io import StringIO

    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from wanmon.dashboard.constants import RANGES

    unknown = sorted(set(ranges or ()) - set(RANGES))
    if unknown:
        raise SystemExit(f"scripts/bench dashboard: unknown --range {', '.join(unknown)}; one of {', '.join(RANGES)}")
    src, dst = "SEEDA", "SEEDB"
    if not skip_seed:
        out = StringIO()
        t0 = time.perf_counter()
        call_command("seed_history", days=days, interfaces=interfaces, src=src, dst=dst, stdout=out)
        print(out.getvalue().rstrip())
        print(f"seed_s={time.perf_counter() - t0:.1f}")
    with connection.cursor() as c:
        c.execute(
            "SELECT (SELECT count(*) FROM measurements_interfacerate), "
            "(SELECT count(*) FROM measurements_interfacerate_5m), (SELECT count(*) FROM measurements_owamptest)"
        )
        raw_rows, rows_5m, owamp_rows = c.fetchone()
    print(f"raw_rate_rows={raw_rows} rollup_5m_rows={rows_5m} owamp_rows={owamp_rows}")
    user = get_user_model().objects.create_user(f"bench-{uuid.uuid4().hex[:6]}", password="x")
    client = Client(HTTP_HOST="127.0.0.1")  # an allowed host: the test client says "testserver" by default
    client.force_login(user)
    pages = {"path": f"/paths/{src}/{dst}/", "reverse": f"/paths/{dst}/{src}/", "both": f"/paths/{src}/{dst}/both/"}
    results: list[tuple[str, float, float, int, int]] = []  # (request, median ms, max ms, queries, bytes)
    print(f"{'request':<34} {'median_ms':>9} {'max_ms':>8} {'queries':>7} {'kbytes':>7}")
    for range_key in ranges or RANGES:
        for page, url in pages.items():
            for kind, extra in (("json", {"format": "json"}), ("html", {})):
                params = {"range": range_key, **extra}
                assert client.get(url, params).status_code == 200  # warm-up: templates, connection
                times = []
                for _ in range(runs):
                    with CaptureQueriesContext(connection) as queries:
                        t0 = time.perf_counter()
                        response = client.get(url, params)
                        times.append((time.perf_counter() - t0) * 1000)
                    assert response.status_code == 200, (url, params, response.status_code)
                if kind == "json":
                    figures = response.json()["figures"]
                    points = sum(len(trace.get("x") or ()) for fig in figures.values() for trace in fig["data"])
                    assert points > 0, (url, params)
                name = f"{page} {range_key} {kind}"
                results.append((name, statistics.median(times), max(times), len(queries), len(response.content)))
                print(
                    f"{name:<34} {results[-1][1]:>9.1f} {results[-1][2]:>8.1f} {results[-1][3]:>7} "
                    f"{results[-1][4] / 1024:>7.0f}"
                )
    slowest = max(results, key=lambda r: r[2])
    json_max = max(r[2] for r in results if r[0].endswith("json"))
    print(
        f"dashboard_path_max_ms={slowest[2]:.1f} dashboard_path_median_ms={max(r[1] for r in results):.1f} "
        f"dashboard_path_json_max_ms={json_max:.1f} slowest={slowest[0].replace(' ', ':')} "
        f"max_queries={max(r[3] for r in results)} requests={len(results) * runs}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(prog="scripts/bench")
    sub = parser.add_subparsers(dest="what", required=True)
    ingest = sub.add_parser("ingest")
    ingest.add_argument("--batches", type=int, default=20)
    ingest.add_argument("--polls", type=int, default=50, help="polls per batch (x 100 interfaces = rows)")
    ingest.add_argument("--concurrency", type=int, default=1, help="parallel uploaders / COPY connections")
    query = sub.add_parser("query")
    query.add_argument("--days", type=int, default=90)
    query.add_argument("--runs", type=int, default=10)
    diagnosis = sub.add_parser("diagnosis")
    diagnosis.add_argument("--hours", type=int, default=24)
    diagnosis.add_argument("--history-days", type=int, default=7, help="baseline before the evaluated window")
    diagnosis.add_argument("--case", action="append", default=[], help="only this noise-corpus case (repeatable)")
    diagnosis.add_argument("--skip-corpus", action="store_true", help="only the 132-path mesh timings")
    diagnosis.add_argument(
        "--corpus-days",
        type=float,
        default=None,
        help="cycles over each healthy mesh's last N days and from 12 h before each fault (default: whole files)",
    )
    diagnosis.add_argument(
        "--cases-problem",
        action="append",
        default=[],
        help="only this problem of the case memory's retrieval (repeatable; tests/cases/retrieval.py)",
    )
    diagnosis.add_argument("--skip-cases", action="store_true", help="no case memory retrieval")
    diagnosis.add_argument("--skip-regression", action="store_true", help="no replay of the nine case studies")
    diagnosis.add_argument("--skip-mesh", action="store_true", help="no timings of the 132-path mesh")
    diagnosis.add_argument(
        "--no-notify", action="store_true", help="the noise corpus without the alerting after each cycle (no incidents)"
    )
    dashboard = sub.add_parser("dashboard")
    dashboard.add_argument("--days", type=int, default=90)
    dashboard.add_argument("--interfaces", type=int, default=100)
    dashboard.add_argument("--runs", type=int, default=5, help="timed requests per page, range and format")
    dashboard.add_argument("--skip-seed", action="store_true", help="time the pages over the data already there")
    dashboard.add_argument("--range", action="append", dest="ranges", help="only this range of the picker (repeatable)")
    args = parser.parse_args()
    if args.what == "ingest":
        bench_ingest(args.batches, args.polls, args.concurrency)
    elif args.what == "query":
        bench_query(args.days, args.runs)
    elif args.what == "dashboard":
        bench_dashboard(args.days, args.interfaces, args.runs, args.skip_seed, args.ranges)
    else:
        from scripts.bench_diagnosis import bench_diagnosis

        bench_diagnosis(args.hours, args.history_days, None if args.skip_corpus else args.case, args.corpus_days,
                        None if args.skip_cases else args.cases_problem, regression=not args.skip_regression,
                        notify=not args.no_notify, mesh=not args.skip_mesh)


if __name__ == "__main__":
    main()
