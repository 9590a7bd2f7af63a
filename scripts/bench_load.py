"""scripts/bench load: many agents uploading while operators browse the dashboard (run by scripts/bench).

``--agents`` simulated site agents (the real spool and uploader code, tests/faults/harness.SimAgent) each poll
``--interfaces`` interfaces every ``--poll-interval-s`` and upload at once, as an agent does 5 s after a
collection, to gunicorn on loopback (``--web-workers`` x ``--web-threads``), with a Celery worker computing the
rates and rollups. Every poll advances the samples' time by 60 s, so a 10-minute run is an hour of polls per agent
(``--duration-s``). Meanwhile ``--users`` logged-in users browse the dashboard (overview, map, equipment, an
interface's graphs, findings, explorer), each a page then 1-3 s of reading.

At the end every spool is drained, the catch-up is run once (as beat does every minute) and what the agents
spooled is compared with what PostgreSQL holds. Printed: ingest latency (p50, p99, max), ingest errors (any answer
but 200), dashboard latency and errors, records lost, records stored twice, rates missing. The last line is
machine-readable:
    load_ingest_p50_ms=<float> load_ingest_p99_ms=<float> load_ingest_errors=<int> load_records_lost=<int> ...
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import random
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wanmon.settings")
import django  # noqa: E402

django.setup()

import httpx  # noqa: E402
from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402

from tests.faults.harness import POLL_S, PlainCentre, SimAgent, centre_env  # noqa: E402
from wanmon.inventory.models import Agent, Equipment, Interface, Site  # noqa: E402
from wanmon.measurements.api.auth import token_hash  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _topology(n_agents: int, n_interfaces: int) -> list[tuple[str, str, list[str]]]:
    """(token, router, interfaces) per agent: one site, one router its agent polls."""
    out = []
    for a in range(n_agents):
        code = f"LOAD{a:02d}"
        site, _ = Site.objects.get_or_create(code=code, defaults={"name": f"load site {a}", "tier": 2})
        router, _ = Equipment.objects.get_or_create(name=f"load-{a:02d}-border", defaults={"site": site})
        names = [f"xe-0/0/{k}" for k in range(n_interfaces)]
        for k, name in enumerate(names):
            Interface.objects.get_or_create(
                equipment=router, name=name, defaults={"if_index": k + 1, "speed_mbps": 10_000}
            )
        token = secrets.token_urlsafe(32)
        agent, _ = Agent.objects.update_or_create(
            name=f"load-agent-{a:02d}",
            defaults={"site": site, "token_hash": token_hash(token), "token_prefix": token[:8]},
        )
        agent.equipment.set([router])
        out.append((token, router.name, names))
    return out


def _session_cookie(username: str) -> str:
    """A logged-in session for a dashboard user (as the login page would create)."""
    from importlib import import_module

    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model

    user, created = get_user_model().objects.get_or_create(username=username)
    if created:
        user.set_password(secrets.token_urlsafe(16))
        user.save()
    store = import_module(settings.SESSION_ENGINE).SessionStore()
    store[SESSION_KEY] = str(user.pk)
    store[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    store[HASH_SESSION_KEY] = user.get_session_auth_hash()
    store.save()
    return store.session_key


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class Browser(threading.Thread):
    """One operator reading the dashboard until ``stop``."""

    def __init__(self, url: str, cookie: str, pages: list[str], stop: threading.Event, seed: int) -> None:
        super().__init__(name=f"user-{seed}", daemon=True)
        self.url, self.cookie, self.pages, self.stop = url, cookie, pages, stop
        self.rng = random.Random(seed)
        self.latencies_s: list[float] = []
        self.errors: list[str] = []
        self.reconnects = 0

    def run(self) -> None:
        with httpx.Client(base_url=self.url, cookies={settings.SESSION_COOKIE_NAME: self.cookie}, timeout=60) as client:
            while not self.stop.is_set():
                page = self.rng.choice(self.pages)
                started = time.perf_counter()
                try:
                    try:
                        response = client.get(page)
                    except (httpx.ReadError, httpx.RemoteProtocolError):
                        # The server closed the idle kept-alive connection as the request went out (gunicorn's
                        # keep-alive is 2 s, users read 1-3 s): a browser sends a GET again on a new connection.
                        self.reconnects += 1
                        response = client.get(page)
                    if response.status_code != 200:
                        self.errors.append(f"{page}: HTTP {response.status_code}")
                except httpx.HTTPError as exc:
                    self.errors.append(f"{page}: {type(exc).__name__}")
                self.latencies_s.append(time.perf_counter() - started)
                self.stop.wait(self.rng.uniform(1.0, 3.0))


async def _agents_run(agents: list[SimAgent], *, start: datetime, interval_s: float, duration_s: float) -> None:
    """Every agent polls and uploads every ``interval_s`` (staggered), for ``duration_s``."""
    deadline = time.monotonic() + duration_s

    async def one(index: int, agent: SimAgent) -> None:
        await asyncio.sleep(interval_s * index / len(agents))  # agents are not in lockstep
        async with agent.uploader() as uploader:
            k = 0
            while time.monotonic() < deadline:
                tick = time.monotonic()
                agent.poll(start + timedelta(seconds=POLL_S * k))
                k += 1
                await agent.drain_async(uploader)
                await asyncio.sleep(max(0.0, interval_s - (time.monotonic() - tick)))

    await asyncio.gather(*(one(i, a) for i, a in enumerate(agents)))


def _scalar(sql: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return cursor.fetchone()[0]


def _rates_expected(agents: list[SimAgent]) -> int:
    return sum(len(a.interfaces) * max(0, a.polls - 1) for a in agents)


def main() -> None:
    parser = argparse.ArgumentParser(prog="scripts/bench load")
    parser.add_argument("--agents", type=int, default=50)
    parser.add_argument("--interfaces", type=int, default=20, help="interfaces per agent's router")
    parser.add_argument("--duration-s", type=float, default=600.0)
    parser.add_argument("--poll-interval-s", type=float, default=10.0, help="wall seconds between an agent's polls")
    parser.add_argument("--users", type=int, default=5)
    parser.add_argument("--web-workers", type=int, default=2)
    parser.add_argument("--web-threads", type=int, default=4)
    parser.add_argument("--worker-concurrency", type=int, default=2)
    args = parser.parse_args()
    for noisy in ("httpx", "agents.uploader", "agents.spool"):  # a line per upload; the summary is what counts
        logging.getLogger(noisy).setLevel(logging.WARNING)

    work = Path(tempfile.mkdtemp(prefix="wanmon-load-"))
    topology = _topology(args.agents, args.interfaces)
    cookies = [_session_cookie(f"load-user-{u}") for u in range(args.users)]
    env = centre_env(database_url=os.environ["DATABASE_URL"], redis_url=settings.REDIS_URL, WANMON_LOG_LEVEL="WARNING")
    centre = PlainCentre(env=env, log_dir=work, workers=args.web_workers, threads=args.web_threads)
    with (work / "worker.log").open("wb") as log:
        worker = subprocess.Popen(  # noqa: S603 - fixed argv
            [sys.executable, "-m", "celery", "-A", "wanmon", "worker", "--concurrency", str(args.worker_concurrency),
             "--loglevel", "WARNING", "--without-mingle", "--without-gossip"],
            cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    stop = threading.Event()
    users: list[Browser] = []
    try:
        centre.wait_ready()
        start = (datetime.now(UTC) - timedelta(hours=2)).replace(second=0, microsecond=0)
        agents = [
            SimAgent(work / f"spool-{i}", url=centre.url, token=token, equipment=router, interfaces=names)
            for i, (token, router, names) in enumerate(topology)
        ]
        first_router, first_if = topology[0][1], topology[0][2][0]
        pages = ["/", "/map/", "/equipment/", f"/equipment/{first_router}/",
                 f"/equipment/{first_router}/interfaces/{first_if}/", "/findings/", "/explore/"]  # fmt: skip
        users = [Browser(centre.url, cookie, pages, stop, seed) for seed, cookie in enumerate(cookies)]
        print(
            f"load: {args.agents} agents x {args.interfaces} interfaces, a poll every {args.poll_interval_s:g} s, "
            f"{args.users} users, {args.duration_s:g} s; gunicorn {args.web_workers}x{args.web_threads}, "
            f"celery worker concurrency {args.worker_concurrency}",
            flush=True,
        )
        for user in users:
            user.start()
        began = time.monotonic()
        asyncio.run(_agents_run(agents, start=start, interval_s=args.poll_interval_s, duration_s=args.duration_s))
        ran_s = time.monotonic() - began
        stop.set()
        for user in users:
            user.join(timeout=120)
        for agent in agents:  # what is left in a spool (a retry pending at the end)
            agent.drain_until_empty(timeout_s=300)

        from wanmon.measurements.services import measurements_catch_up

        deadline = time.monotonic() + 300
        expected_rates = _rates_expected(agents)
        while time.monotonic() < deadline:  # the worker's queue drains; then one catch-up pass, as beat does
            if _scalar("SELECT count(*) FROM measurements_interfacerate") >= expected_rates:
                break
            time.sleep(2)
        caught_up = measurements_catch_up()
    finally:
        stop.set()
        centre.stop()
        worker.terminate()
        worker.wait(timeout=60)

    spooled = sum(a.records_spooled for a in agents)
    stored = _scalar("SELECT count(*) FROM measurements_snmpsample s JOIN inventory_interface i "
                     "ON i.id = s.interface_id JOIN inventory_equipment e ON e.id = i.equipment_id "
                     "WHERE e.name LIKE 'load-%%'")  # fmt: skip
    doubled = _scalar("SELECT count(*) FROM (SELECT 1 FROM measurements_snmpsample GROUP BY interface_id, time "
                      "HAVING count(*) > 1) d")  # fmt: skip
    rates = _scalar("SELECT count(*) FROM measurements_interfacerate")
    ingest_s = [s for a in agents for s, _ in a.latencies_s]
    ingest_errors = sum(n for a in agents for status, n in a.answers.items() if status != 200)
    answers: dict = {}
    for a in agents:
        for status, n in a.answers.items():
            answers[status] = answers.get(status, 0) + n
    page_s = [s for u in users for s in u.latencies_s]
    page_errors = [e for u in users for e in u.errors]
    uploads = sum(answers.values())
    print(f"ran {ran_s:.0f} s: {uploads} uploads ({uploads / ran_s:.1f}/s), {spooled} records "
          f"({spooled / ran_s:.0f}/s), answers {answers}")  # fmt: skip
    print(f"ingest latency: p50 {_pct(ingest_s, 0.5) * 1000:.1f} ms, p99 {_pct(ingest_s, 0.99) * 1000:.1f} ms, "
          f"max {max(ingest_s, default=0) * 1000:.1f} ms")  # fmt: skip
    print(f"dashboard: {len(page_s)} pages, p50 {_pct(page_s, 0.5) * 1000:.0f} ms, "
          f"p99 {_pct(page_s, 0.99) * 1000:.0f} ms, errors {len(page_errors)} {page_errors[:5]}, "
          f"GETs sent again after the server closed an idle connection {sum(u.reconnects for u in users)}")  # fmt: skip
    print(
        f"records: spooled {spooled}, stored {stored}, lost {spooled - stored}, stored twice {doubled}; "
        f"rates {rates} of {expected_rates} (catch-up at the end recomputed {caught_up.interfaces} interfaces)"
    )
    print(
        f"load_ingest_p50_ms={_pct(ingest_s, 0.5) * 1000:.1f} load_ingest_p99_ms={_pct(ingest_s, 0.99) * 1000:.1f} "
        f"load_ingest_errors={ingest_errors} load_records_lost={spooled - stored} load_records_doubled={doubled} "
        f"load_rates_missing={expected_rates - rates} load_dashboard_p50_ms={_pct(page_s, 0.5) * 1000:.0f} "
        f"load_dashboard_p99_ms={_pct(page_s, 0.99) * 1000:.0f} load_dashboard_errors={len(page_errors)} "
        f"load_uploads={uploads} load_duration_s={ran_s:.0f}"
    )
    shutil.rmtree(work, ignore_errors=True)
    if ingest_errors or spooled != stored or doubled or page_errors:
        sys.exit(1)


if __name__ == "__main__":
    main()
