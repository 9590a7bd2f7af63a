"""The evidence of one shard of a diagnosis cycle (wanmon/diagnosis/shards.py): a handful of set-based statements
over all its path directions at once, never one query per path."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace
from datetime import datetime, timedelta

from django.db import connection

from wanmon.core.units import bps_from_mbps
from wanmon.diagnosis import constants as k
from wanmon.diagnosis.evidence import (
    AgentSchedule,
    EvidenceBundle,
    InterfaceEvidence,
    PathEvidence,
)
from wanmon.diagnosis.selectors.baselines import RoomPort, baselines_cached, room_history_cached
from wanmon.diagnosis.selectors.before_window import (
    host_tcp_before,
    owamp_before,
    throughput_before,
    traceroutes_before,
    with_last_before,
)
from wanmon.diagnosis.selectors.common import (
    cycle_read,
    direction_records,
    host_tcp_list,
    inventory_evidence,
    maintenance_evidence,
    pairs_params,
    sql_rows,
)
from wanmon.diagnosis.selectors.records import THROUGHPUT_TESTS, TRACEROUTES
from wanmon.diagnosis.selectors.series import WINDOW_BUCKET_S, interfaces_bulk, owamp_bucketed, status_before
from wanmon.diagnosis.shared_elements import polled_ports_on_path
from wanmon.inventory.models import Equipment, Host, Trunk

# Schedules that a scenario file declares for its agents (docs/scenario-format.md, ``agents``): what the agents of a
# live site state in their records' schedule_interval_s, a replay knows from the file.
_DECLARED_SCHEDULES: ContextVar[tuple[AgentSchedule, ...]] = ContextVar("declared_schedules", default=())


@contextmanager
def agent_schedules_declared(schedules: tuple[AgentSchedule, ...]) -> Iterator[None]:
    """Within the block, every evidence bundle also carries these agent schedules."""
    token = _DECLARED_SCHEDULES.set(tuple(schedules))
    try:
        yield
    finally:
        _DECLARED_SCHEDULES.reset(token)


def evidence_bundle_for_paths(
    *,
    path_ids: list[int],
    now: datetime,
    window_start: datetime,
    baseline_start: datetime,
    baseline_end: datetime,
    unpathed_interfaces: bool = False,
) -> EvidenceBundle:
    """The evidence of some path directions (versions by id) for one shard of a diagnosis cycle: their tests,
    the interfaces and trunks they cross, the hosts and equipment of their sites, the maintenance windows;
    with ``unpathed_interfaces``, also every interface that no current path crosses and that has in the window
    what the element rules judge without paths: errors or discards, or a counter reset (the shard that looks
    after elements alone; a clean interface off every path can give no finding, and reading the polls of the
    thousands of them was most of the cycle's work)."""
    # the elements shard has no paths: nothing to read for them
    path_rows = [] if not path_ids else sql_rows(
        """SELECT p.id, p.src_id, p.dst_id, s.code AS src, d.code AS dst, p.capacity_mbps
           FROM inventory_path p JOIN inventory_site s ON s.id = p.src_id JOIN inventory_site d ON d.id = p.dst_id
           WHERE p.id = ANY(%s) ORDER BY s.code, d.code""",
        [list(path_ids)],
    )
    hops: dict[int, list[tuple[str, int | None]]] = defaultdict(list)
    for r in [] if not path_ids else sql_rows(
        """SELECT h.path_id, e.name AS equipment, h.interface_id, i.name AS interface
           FROM inventory_pathhop h JOIN inventory_equipment e ON e.id = h.equipment_id
           LEFT JOIN inventory_interface i ON i.id = h.interface_id
           WHERE h.path_id = ANY(%s) ORDER BY h.path_id, h.position""",
        [list(path_ids)],
    ):
        label = f"{r['equipment']}:{r['interface']}" if r["interface_id"] else r["equipment"]
        hops[r["path_id"]].append((label, r["interface_id"]))
    keys = [(r["src_id"], r["dst_id"]) for r in path_rows]
    # the window's tests only: the baseline period is summarised in the database when not in the cache
    tests = direction_records(THROUGHPUT_TESTS, window_start, now, keys)
    o_window = owamp_bucketed(keys, window_start, now, WINDOW_BUCKET_S)
    r_window = direction_records(TRACEROUTES, window_start, now, keys)
    r_before = traceroutes_before(keys, window_start, baseline_start)
    t_before = throughput_before(keys, window_start, baseline_start)
    u_before = throughput_before(keys, window_start, baseline_start, protocol="udp")
    o_before = owamp_before(keys, window_start, baseline_start, k.DELAY_LEVEL_MIN_SAMPLES)
    baselines = baselines_cached(keys, baseline_start, baseline_end)
    earlier = _tcp_results_before(keys, now - timedelta(seconds=k.LEVEL_SHIFT_WINDOW_S), window_start)

    paths: list[PathEvidence] = []
    interface_ids: set[int] = set()
    site_ids: set[int] = set()
    for r in path_rows:
        key = (r["src_id"], r["dst_id"])
        site_ids.update(key)
        interface_ids.update(i for _, i in hops[r["id"]] if i)
        t_all = tests.get(key, [])
        baseline = baselines.get(key)
        paths.append(
            PathEvidence(
                src=r["src"],
                dst=r["dst"],
                capacity_bps=bps_from_mbps(r["capacity_mbps"]) or 0.0,
                hops=tuple(label for label, _ in hops[r["id"]]),
                throughput_tests=tuple(([t_before[key]] if key in t_before else []) + t_all),
                owamp_tests=tuple(o_window.get(key, [])),
                # the last traceroute before the window first: slower than the window, it says the route before it
                traceroutes=tuple(([r_before[key]] if key in r_before else []) + r_window.get(key, [])),
                baseline=baseline,
                earlier_tcp_results=earlier.get(key, ()),
                udp_before=u_before.get(key),
                owamp_before=o_before.get(key, ()),
            )
        )

    if unpathed_interfaces:
        with connection.cursor() as cursor:
            cursor.execute(
                """SELECT DISTINCT interface_id FROM measurements_interfacerate WHERE time >= %s AND time <= %s
                     AND (in_errors_per_s > 0 OR out_errors_per_s > 0 OR in_discards_per_s > 0
                          OR out_discards_per_s > 0)
                   UNION SELECT DISTINCT interface_id FROM measurements_counterdiscontinuity
                   WHERE time >= %s AND time <= %s
                   EXCEPT SELECT h.interface_id FROM inventory_pathhop h JOIN inventory_path p ON p.id = h.path_id
                   WHERE h.interface_id IS NOT NULL AND p.valid_from <= %s
                     AND (p.valid_to IS NULL OR p.valid_to > %s)""",
                [window_start, now, window_start, now, now, now],
            )
            interface_ids.update(r[0] for r in cursor.fetchall())
    labels = {label for p in paths for label in p.hops}
    trunks = [
        t
        for t in cycle_read(("trunks",), lambda: list(Trunk.objects.prefetch_related("members__equipment")))
        if unpathed_interfaces
        or t.name in labels
        or any(m.id in interface_ids or m.equipment.name in labels for m in t.members.all())
    ]
    member_ids = {m.id for t in trunks for m in t.members.all()}
    interface_ids |= member_ids
    ifaces = interfaces_bulk(interface_ids, window_start, now, raw_ids=member_ids, bucket_s=WINDOW_BUCKET_S)
    # a trunk member down since before the window is down since the day it went down, not since the window's edge
    for i, before in status_before(member_ids & ifaces.keys(), window_start).items():
        ifaces[i] = replace(ifaces[i], status=(*before, *ifaces[i].status))
    site_codes = {p.src for p in paths} | {p.dst for p in paths}
    hosts = _hosts_of(None if unpathed_interfaces else site_ids)
    known = {h.name: h.address for h in hosts}
    equipment_names = {label.partition(":")[0] for label in labels} | {i.equipment for i in ifaces.values()}
    bundle = EvidenceBundle(
        paths=tuple(paths),
        window_start=window_start,
        hosts=tuple(
            h
            for h in with_last_before(
                host_tcp_list(window_start, now, known),
                host_tcp_before([(x.site_id, x.name) for x in hosts], window_start, baseline_start, known),
            )
            if unpathed_interfaces or h.site in site_codes
        ),
        maintenance=maintenance_evidence(window_start, now),
        agent_schedules=tuple(_agent_schedules_of(keys, window_start, now)) + _DECLARED_SCHEDULES.get(),
        **inventory_evidence(
            trunks=trunks,
            ifaces=ifaces,
            hosts=hosts,
            equipment=_equipment_named(equipment_names),
        ),
    )
    return _with_room_history(bundle, keys, [r["id"] for r in path_rows], ifaces, baseline_start, baseline_end)


def _with_room_history(
    bundle: EvidenceBundle,
    keys: list[tuple[int, int]],
    path_ids: list[int],
    ifaces: dict[int, InterfaceEvidence],
    baseline_start: datetime,
    baseline_end: datetime,
) -> EvidenceBundle:
    """The bundle with the room history (``PathEvidence.room_history``) of the paths that can use it: those with a
    polled port (``polled_ports_on_path``) and a TCP result in the window (only such a result can end a day
    short of what the load allows). Read once an hour a path (``room_history_cached``): at 10 000 paths, a
    5-minute rollup probe per port and test of a week. ``keys`` and ``path_ids``: the (src_id, dst_id) and the
    version id of the bundle's paths, in their order."""
    ids = {i.name: iid for iid, i in ifaces.items()}
    by_key = {
        key: (p, path_id)
        for p, key, path_id in zip(bundle.paths, keys, path_ids, strict=True)
        if any(t.protocol == "tcp" and t.throughput_bps and t.time >= bundle.window_start for t in p.throughput_tests)
    }

    def ports_of(key: tuple[int, int]) -> tuple[RoomPort, ...]:
        return tuple(
            (ids[q.name], q.direction, q.speed_bps)
            for q in polled_ports_on_path(by_key[key][0], bundle)
            if q.name in ids
        )

    history = room_history_cached(
        {key: path_id for key, (_, path_id) in by_key.items()}, ports_of, baseline_start, baseline_end
    )
    if not history:
        return bundle
    return replace(
        bundle,
        paths=tuple(replace(p, room_history=history.get(key, ())) for p, key in zip(bundle.paths, keys, strict=True)),
    )


def _tcp_results_before(
    keys: list[tuple[int, int]], start: datetime, end: datetime
) -> dict[tuple[int, int], tuple[tuple[datetime, float], ...]]:
    """(time, throughput_bps) of the completed TCP tests in [start, end) per direction, in time order: the day
    before the window that a lasting level change is judged on (one statement, two columns a test)."""
    if not keys or start >= end:
        return {}
    src, dst = pairs_params(keys)
    rows = sql_rows(
        """WITH k AS (SELECT unnest(%(src)s::bigint[]) AS src_id, unnest(%(dst)s::bigint[]) AS dst_id)
           SELECT t.src_id, t.dst_id, t.time, t.throughput_bps
           FROM measurements_throughputtest t JOIN k ON k.src_id = t.src_id AND k.dst_id = t.dst_id
           WHERE t.time >= %(start)s AND t.time < %(end)s AND t.protocol = 'tcp' AND t.error IS NULL
             AND t.throughput_bps > 0
           ORDER BY t.time""",
        {"src": src, "dst": dst, "start": start, "end": end},
    )
    out: dict[tuple[int, int], list[tuple[datetime, float]]] = defaultdict(list)
    for r in rows:
        out[(r["src_id"], r["dst_id"])].append((r["time"], float(r["throughput_bps"])))
    return {key: tuple(v) for key, v in out.items()}


def _hosts_of(site_ids: set[int] | None) -> list[Host]:
    """The hosts of these sites (of every site: None), sites joined, in the inventory's order; within a cycle's
    shared reads every host is read once and each shard takes its sites' ones."""
    hosts = Host.objects.select_related("site")
    mine = hosts if site_ids is None else hosts.filter(site_id__in=site_ids)
    every = cycle_read(("hosts",), lambda: list(hosts), alone=lambda: list(mine))
    return every if site_ids is None else [h for h in every if h.site_id in site_ids]


def _equipment_named(names: set[str]) -> list[Equipment]:
    """The equipment of these names, sites and carriers joined, in the inventory's order (by name); within a
    cycle's shared reads all of it is read once and each shard takes what it names."""
    equipment = Equipment.objects.select_related("site", "carrier")
    every = cycle_read(("equipment",), lambda: list(equipment), alone=lambda: list(equipment.filter(name__in=names)))
    return [e for e in every if e.name in names]


def _agent_schedules_of(keys: list[tuple[int, int]], start: datetime, end: datetime) -> list[AgentSchedule]:
    """Test periods the agents declared on these path directions: the first and the last test of each in the
    window (two index probes per direction, not a scan of every result: a declared period rarely changes)."""
    if not keys:
        return []
    parts = []
    for table, kind in (("measurements_throughputtest", "throughput"), ("measurements_owamptest", "owamp")):
        for order in ("ASC", "DESC"):
            parts.append(
                f"""SELECT k.src_id, '{kind}' AS kind, x.extra FROM k CROSS JOIN LATERAL (
                        SELECT extra FROM {table} t WHERE t.src_id = k.src_id AND t.dst_id = k.dst_id
                        AND t.time >= %(start)s AND t.time <= %(end)s ORDER BY t.time {order} LIMIT 1) x"""
            )
    rows = sql_rows(
        f"""WITH k AS (SELECT unnest(%(src)s::bigint[]) AS src_id, unnest(%(dst)s::bigint[]) AS dst_id)
            SELECT DISTINCT s.code AS site, t.kind, (t.extra->>'schedule_interval_s')::float8 AS interval_s
            FROM ({" UNION ALL ".join(parts)}) t JOIN inventory_site s ON s.id = t.src_id
            WHERE t.extra ? 'schedule_interval_s'""",
        {"src": [k[0] for k in keys], "dst": [k[1] for k in keys], "start": start, "end": end},
    )
    return [AgentSchedule(r["site"], r["kind"], r["interval_s"]) for r in rows if r["interval_s"]]
