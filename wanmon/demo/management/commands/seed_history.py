"""manage.py seed_history: months of realistic history on one site pair, for load tests and benchmarks.

Creates (idempotently) two sites joined by a path in each direction across five routers holding
``--interfaces`` ports between them (two LAGs among them), then fills ``--days`` of data ending at
``--end`` (default: now, to the minute):

- 1-minute rates of every interface (90 days x 100 interfaces = 12.96 M rows), generated in SQL with
  ``generate_series``: a daily cycle, deterministic noise, rare errors, discards when busy;
- the 5 min / 1 h / 1 d rollups, computed from those rates by the production code
  (``interface_rollups_refresh``), one connection per CPU core;
- the tests an agent with default intervals would have run: TCP every 30 min, UDP every 6 h, one-way
  probes every 5 min, traceroute every hour (with one route change), both directions;
- a few counter resets, weekly maintenance windows on a core router and resolved findings about the path.

Values are functions of time and interface only, so a second run writes the same rows: rates and
rollups already complete for an interface are skipped, tests in the window are replaced.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

from django.core.management.base import BaseCommand, CommandError
from django.db import connection, connections, transaction
from django.utils import timezone

from wanmon.diagnosis.models import Finding
from wanmon.diagnosis.services import subject_key
from wanmon.inventory.models import Interface
from wanmon.inventory.services import (
    carrier_upsert,
    equipment_upsert,
    interface_upsert,
    path_set,
    site_upsert,
    trunk_upsert,
)
from wanmon.maintenance.choices import Impact, Status
from wanmon.maintenance.models import MaintenanceWindow
from wanmon.maintenance.services import maintenance_window_create
from wanmon.measurements.rollups import interface_rollups_refresh

CARRIER = "SEEDNET"
ROUTERS = ("seed-a-border", "seed-core1", "seed-core2", "seed-core3", "seed-b-border")
SPEED_MBPS = 100_000
CAPACITY_MBPS = 100_000
RTT_MS = 24.0
LAG_MEMBERS = 4

# Rates of one interface at time t (the end of a 1-minute interval): a daily cycle whose phase depends on
# the interface, plus deterministic noise (hashint8 of the minute and the interface), so that re-running
# the seed writes the same values.
RATES_SQL = """
INSERT INTO measurements_interfacerate (time, interface_id, interval_s, in_bps, out_bps, in_pps, out_pps,
    in_errors_per_s, out_errors_per_s, in_discards_per_s, out_discards_per_s, in_utilisation, out_utilisation,
    oper_status)
SELECT t, %(iid)s, 60, u_in * %(speed)s, u_out * %(speed)s, u_in * %(speed)s / 8000, u_out * %(speed)s / 8000,
       CASE WHEN h %% 4999 = 0 THEN 1 / 60.0 ELSE 0 END, 0,
       0, CASE WHEN u_out > 0.62 THEN (u_out - 0.62) * 200 ELSE 0 END,
       u_in, u_out, 'up'
FROM (
    SELECT t, h,
           0.20 + 0.12 * sin(2 * pi() * (e / 86400.0 + %(phase)s + 0.1)) + 0.05 * ((h >> 8) & 255) / 255.0 AS u_in,
           0.35 + 0.25 * sin(2 * pi() * (e / 86400.0 + %(phase)s)) + 0.08 * (h & 255) / 255.0 AS u_out
    FROM (
        SELECT t, extract(epoch FROM t) AS e, abs(hashint8(extract(epoch FROM t)::bigint / 60 * 1000 + %(iid)s)) AS h
        FROM generate_series(%(first)s::timestamptz, %(end)s::timestamptz - interval '1 minute',
                             interval '1 minute') t
    ) g
) v
"""
# An interface with some rates in the window already (an interrupted run) keeps them.
RATES_MISSING_SQL = RATES_SQL + "ON CONFLICT (interface_id, time) DO NOTHING"

# Tests of one direction: TCP every 30 min (lower in the evening peak, a few retransmits), UDP every 6 h,
# one-way probes every 5 min (600 packets, a lost packet now and then), traceroute every hour.
TCP_SQL = """
INSERT INTO measurements_throughputtest (time, src_id, dst_id, tool, protocol, duration_s, streams, window_bytes,
    mss_bytes, throughput_bps, retransmits, rtt_ms, src_host, dst_host)
SELECT t, %(src)s, %(dst)s, 'nuttcp', 'tcp', 10, 4, 268435456, 8948,
       %(capacity)s * (0.72 - 0.2 * greatest(0, sin(2 * pi() * extract(epoch FROM t) / 86400.0))
                       + 0.1 * (abs(hashint8(extract(epoch FROM t)::bigint + %(src)s)) %% 100) / 100.0),
       abs(hashint8(extract(epoch FROM t)::bigint)) %% 40, %(rtt)s + (abs(hashint8(extract(epoch FROM t)::bigint))
       %% 10) / 20.0, %(src_host)s, %(dst_host)s
FROM generate_series(%(start)s::timestamptz, %(end)s::timestamptz - interval '1 second', interval '30 minutes') t
"""
UDP_SQL = """
INSERT INTO measurements_throughputtest (time, src_id, dst_id, tool, protocol, duration_s, streams, offered_bps,
    throughput_bps, packets_sent, packets_lost, src_host, dst_host)
SELECT t, %(src)s, %(dst)s, 'nuttcp', 'udp', 10, 1, 1e9, 1e9, 1000000,
       CASE WHEN abs(hashint8(extract(epoch FROM t)::bigint + %(dst)s)) %% 7 = 0 THEN 3 ELSE 0 END,
       %(src_host)s, %(dst_host)s
FROM generate_series(%(start)s::timestamptz + interval '15 minutes', %(end)s::timestamptz - interval '1 second',
                     interval '6 hours') t
"""
OWAMP_SQL = """
INSERT INTO measurements_owamptest (time, src_id, dst_id, packets_sent, packets_lost, duplicates, reordered,
    delay_min_ms, delay_median_ms, delay_max_ms, jitter_ms, clock_error_ms)
SELECT t, %(src)s, %(dst)s, 600, CASE WHEN h %% 50 = 0 THEN 1 ELSE 0 END, 0, 0,
       %(rtt)s / 2, %(rtt)s / 2 + 0.2 + (h %% 30) / 100.0, %(rtt)s / 2 + 1.5 + (h %% 200) / 100.0, 0.05, 0.1
FROM (SELECT t, abs(hashint8(extract(epoch FROM t)::bigint + %(src)s)) AS h
      FROM generate_series(%(start)s::timestamptz + interval '2 minutes', %(end)s::timestamptz - interval '1 second',
                           interval '5 minutes') t) g
"""
TRACEROUTE_SQL = """
INSERT INTO measurements_traceroute (time, src_id, dst_id, hops, pmtu_bytes)
SELECT t, %(src)s, %(dst)s, CASE WHEN t < %(change)s THEN %(before)s::text[] ELSE %(after)s::text[] END, 9000
FROM generate_series(%(start)s::timestamptz + interval '7 minutes', %(end)s::timestamptz - interval '1 second',
                     interval '1 hour') t
"""


def _floor_minute(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(second=0, microsecond=0)


class Command(BaseCommand):
    help = (
        "Seed DAYS of 1-minute interface rates (with rollups) for INTERFACES ports on the routers of a site pair's "
        "path, and the tests, findings and maintenance of that pair. Idempotent."
    )

    def add_arguments(self, parser):
        parser.add_argument("--days", type=int, default=90, help="days of history (default 90)")
        parser.add_argument("--interfaces", type=int, default=100, help="ports on the path's routers (default 100)")
        parser.add_argument("--end", help="end of the history, ISO 8601 (default: now, to the minute)")
        parser.add_argument("--src", default="SEEDA", help="site code of one end (default SEEDA)")
        parser.add_argument("--dst", default="SEEDB", help="site code of the other end (default SEEDB)")
        parser.add_argument("--workers", type=int, default=os.cpu_count() or 2,
                            help="database connections for rates and rollups (default: CPU cores)")

    def handle(self, *args, days, interfaces, end, src, dst, workers, **options):
        least = len(ROUTERS) * (LAG_MEMBERS + 1)  # each router: a LAG's members and one port more
        if days < 1 or interfaces < least:
            raise CommandError(f"--days must be >= 1 and --interfaces >= {least}")
        try:
            given = datetime.fromisoformat(end.replace("Z", "+00:00")) if end else timezone.now()
        except ValueError as exc:
            raise CommandError(f"--end: {exc}") from exc
        if given.tzinfo is None:
            raise CommandError("--end needs a time zone (e.g. 2026-03-01T12:00:00Z)")
        end_at = _floor_minute(given)
        start_at = end_at - timedelta(days=days)
        started = time.perf_counter()

        topology = self._topology(src, dst, interfaces)
        self.stdout.write(f"topology: {len(topology['interfaces'])} interfaces on {len(ROUTERS)} routers, "
                          f"paths {src}<->{dst} ({time.perf_counter() - started:.1f} s)")

        t0 = time.perf_counter()
        filled = self._rates(topology["interfaces"], start_at, end_at, max(1, workers))
        rates_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        self._rollups(filled, start_at, max(1, workers))
        rollups_s = time.perf_counter() - t0
        self.stdout.write(f"rates: {len(filled)} of {len(topology['interfaces'])} interfaces filled "
                          f"({days * 1440} rows each) in {rates_s:.1f} s, rollups in {rollups_s:.1f} s")

        t0 = time.perf_counter()
        counts = self._tests(topology, start_at, end_at)
        self._events(topology, start_at, end_at)
        self.stdout.write(f"tests: {counts} in {time.perf_counter() - t0:.1f} s")
        self.stdout.write(f"seed_history done in {time.perf_counter() - started:.1f} s: {start_at.isoformat()} to "
                          f"{end_at.isoformat()}, path page /paths/{src}/{dst}/")

    # ------------------------------------------------------------------ inventory

    @transaction.atomic
    def _topology(self, src_code: str, dst_code: str, count: int) -> dict:
        """Two sites, five routers with ``count`` ports between them, two LAGs, a path in each direction."""
        carrier, _ = carrier_upsert(code=CARRIER, name="Seeded research network")
        src, _ = site_upsert(code=src_code, name=f"{src_code} (seeded history)", tier=1, lat=46.2, lon=6.1)
        dst, _ = site_upsert(code=dst_code, name=f"{dst_code} (seeded history)", tier=1, lat=51.6, lon=-1.3)
        owners = [{"site": src}, {"carrier": carrier}, {"carrier": carrier}, {"carrier": carrier}, {"site": dst}]
        routers = [equipment_upsert(name=name, vendor="seed", **owner)[0] for name, owner in zip(ROUTERS, owners,
                                                                                                  strict=True)]
        ports: dict[str, list[Interface]] = {}
        for index, router in enumerate(routers):
            n = count // len(routers) + (1 if index < count % len(routers) else 0)
            ports[router.name] = [
                interface_upsert(equipment=router, name=f"et-0/0/{i}", if_index=500 + i, speed_mbps=SPEED_MBPS,
                                 description=f"seeded port {i}")[0]
                for i in range(n)
            ]
        a, c1, c2, c3, b = ROUTERS
        # LAGs towards core2 on core1 (A->B) and on core3 (B->A): flows hash onto any member.
        trunk_upsert(name="seed-core1-ae0", members=ports[c1][:LAG_MEMBERS], description="seeded LAG core1->core2")
        trunk_upsert(name="seed-core3-ae0", members=ports[c3][:LAG_MEMBERS], description="seeded LAG core3->core2")
        forward = [(routers[0], ports[a][0]), (routers[1], ports[c1][0]), (routers[2], ports[c2][0]),
                   (routers[3], ports[c3][LAG_MEMBERS]), (routers[4], None)]
        backward = [(routers[4], ports[b][0]), (routers[3], ports[c3][0]), (routers[2], ports[c2][1]),
                    (routers[1], ports[c1][LAG_MEMBERS]), (routers[0], None)]
        paths = [path_set(src=src, dst=dst, hops=forward, capacity_mbps=CAPACITY_MBPS, rtt_ms=RTT_MS)[0],
                 path_set(src=dst, dst=src, hops=backward, capacity_mbps=CAPACITY_MBPS, rtt_ms=RTT_MS)[0]]
        return {"src": src, "dst": dst, "carrier": carrier, "paths": paths,
                "interfaces": [i for router in ROUTERS for i in ports[router]]}

    # ------------------------------------------------------------------ interface rates and rollups

    def _rates(self, interfaces: list[Interface], start: datetime, end: datetime, workers: int) -> list[int]:
        """Insert the missing 1-minute rates; returns the interfaces that were not complete already."""
        expected = int((end - start).total_seconds() // 60)
        with connection.cursor() as cursor:
            cursor.execute(
                """SELECT interface_id, count(*) FROM measurements_interfacerate
                   WHERE interface_id = ANY(%s) AND time > %s AND time <= %s GROUP BY interface_id""",
                [[i.pk for i in interfaces], start, end])
            have = dict(cursor.fetchall())
        todo = [i for i in interfaces if have.get(i.pk, 0) < expected]

        def fill(share: list[Interface]) -> None:
            with connection.cursor() as cursor:
                for iface in share:
                    cursor.execute(RATES_MISSING_SQL if have.get(iface.pk) else RATES_SQL, {
                        "iid": iface.pk, "speed": iface.speed_bps, "phase": (iface.pk % 24) / 24.0,
                        "first": start + timedelta(minutes=1), "end": end + timedelta(minutes=1)})

        self._parallel(fill, todo, workers)
        return [i.pk for i in todo]

    def _rollups(self, interface_ids: list[int], start: datetime, workers: int) -> None:
        """The production rollups over the seeded range, a few interfaces per statement on each connection."""

        def refresh(share: list[int]) -> None:
            for i in range(0, len(share), 5):
                with transaction.atomic():
                    interface_rollups_refresh(interface_ids=share[i : i + 5], since=start)

        self._parallel(refresh, interface_ids, workers)

    @staticmethod
    def _parallel(fn, items: list, workers: int) -> None:
        """fn(share) on ``workers`` threads, each with its own database connection (Django's are per thread)."""
        if not items:
            return
        if workers == 1 or connection.in_atomic_block:  # a test transaction: other connections would not see it
            fn(items)
            return

        def run(share: list) -> None:
            try:
                fn(share)
            finally:
                connections.close_all()  # this thread's connections only

        with ThreadPoolExecutor(max_workers=workers) as pool:
            for future in [pool.submit(run, items[w::workers]) for w in range(workers)]:
                future.result()

    # ------------------------------------------------------------------ tests, findings, maintenance

    @transaction.atomic
    def _tests(self, topology: dict, start: datetime, end: datetime) -> dict[str, int]:
        """Replace the pair's tests in [start, end) with the seeded ones."""
        src, dst = topology["src"], topology["dst"]
        pairs = [(src, dst), (dst, src)]
        change = start + (end - start) * 2 / 3
        counts: dict[str, int] = {}
        with connection.cursor() as cursor:
            for table in ("measurements_throughputtest", "measurements_owamptest", "measurements_traceroute"):
                cursor.execute(
                    f"""DELETE FROM {table} WHERE ((src_id = %(a)s AND dst_id = %(b)s) OR (src_id = %(b)s
                        AND dst_id = %(a)s)) AND time >= %(start)s AND time < %(end)s""",
                    {"a": src.pk, "b": dst.pk, "start": start, "end": end})
            for (s, d), path in zip(pairs, topology["paths"], strict=True):
                hosts = {"src_host": f"ps.{s.code.lower()}.example", "dst_host": f"ps.{d.code.lower()}.example"}
                hops = [f"10.{s.pk % 250}.{n}.1" for n in range(len(ROUTERS))]
                params = {"src": s.pk, "dst": d.pk, "start": start, "end": end, "capacity": path.capacity_bps,
                          "rtt": RTT_MS, "change": change, "before": hops, "after": [*hops[:2], "10.99.0.1", *hops[2:]],
                          **hosts}
                for name, sql in (("tcp", TCP_SQL), ("udp", UDP_SQL), ("owamp", OWAMP_SQL),
                                  ("traceroute", TRACEROUTE_SQL)):
                    cursor.execute(sql, params)
                    counts[name] = counts.get(name, 0) + cursor.rowcount
        return counts

    @transaction.atomic
    def _events(self, topology: dict, start: datetime, end: datetime) -> None:
        """Once a week from the second day: a counter reset, a maintenance window on core2, a resolved finding."""
        src, dst = topology["src"].code, topology["dst"].code
        first = topology["interfaces"][0].pk
        moments = []
        moment = start + timedelta(days=1, hours=3)
        while moment + timedelta(hours=12) <= end:
            moments.append(moment)
            moment += timedelta(days=7)
        with connection.cursor() as cursor:
            for moment in moments:
                cursor.execute(
                    """INSERT INTO measurements_counterdiscontinuity (time, previous_time, interface_id, code, reason)
                       VALUES (%s, %s, %s, 'sys_uptime_reset', 'sysUpTime went backwards (seeded reboot)')
                       ON CONFLICT (interface_id, time) DO NOTHING""",
                    [moment, moment - timedelta(minutes=1), first])
        known = set(MaintenanceWindow.objects.filter(carrier=topology["carrier"]).values_list("reference", flat=True))
        subject = {"src": src, "dst": dst}
        for moment in moments:
            reference = f"SEED-{moment:%Y%m%d}"
            if reference not in known:
                maintenance_window_create(
                    reference=reference, carrier=topology["carrier"], start=moment + timedelta(hours=1),
                    end=moment + timedelta(hours=3), summary="seeded weekly software upgrade", status=Status.CONFIRMED,
                    impact=Impact.AT_RISK, affects=["seed-core2"])
            seen = moment + timedelta(hours=10)
            Finding.objects.get_or_create(
                code="LOSS_LIMITED", subject_key=subject_key(subject), start=moment + timedelta(hours=4),
                defaults={
                    "severity": "warning", "status": "resolved", "subject": subject, "end": seen,
                    "summary": f"{src}->{dst}: probe loss caps TCP below capacity (seeded)",
                    "explanation": "Seeded history: one-way probes lost packets for a few hours.",
                    "evidence": {"loss_fraction": 2e-4, "throughput_bps": 4.1e10}, "first_seen_at": seen,
                    "last_seen_at": seen, "resolved_at": moment + timedelta(hours=12),
                },
            )
