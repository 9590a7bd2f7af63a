"""What every evidence read shares: raw SQL rows, counter discontinuities, host TCP settings, maintenance."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime
from typing import TypeVar

import psycopg
from django.db import connection

from wanmon.diagnosis.evidence import (
    CounterDiscontinuity,
    EquipmentInfo,
    HostTcpEvidence,
    InterfaceEvidence,
    KnownHost,
    MaintenanceEvidence,
    TrunkEvidence,
)
from wanmon.diagnosis.maintenance_windows import maintenance_windows_overlapping
from wanmon.diagnosis.selectors.records import DirectionTable
from wanmon.inventory.models import Equipment, Host, Trunk

T = TypeVar("T")

# The reads every shard of one cycle makes alike (the maintenance in force, the host TCP reports of the window, the
# trunks, hosts and equipment of the inventory), made once a cycle within ``cycle_reads_shared``.
_CYCLE_READS: ContextVar[dict[Hashable, object] | None] = ContextVar("cycle_reads", default=None)


@contextmanager
def cycle_reads_shared() -> Iterator[None]:
    """Within the block (one cycle's shards evaluated one after the other in this process, as
    ``shards.diagnosis_cycle_run`` does), a read made through ``cycle_read`` is made once and its answer reused by
    the next shards: they all look at the same database at the same cycle time, and a minute's cycle of a mesh
    with hourly tests is an elements shard and a path shard or two, each of which read these alike."""
    token = _CYCLE_READS.set({})
    try:
        yield
    finally:
        _CYCLE_READS.reset(token)


def cycle_read(key: Hashable, read: Callable[[], T], alone: Callable[[], T] | None = None) -> T:
    """``read()``, made once per ``key`` within ``cycle_reads_shared``; outside it every time, or ``alone()`` when
    given: the narrower read of a shard on its own (its sites' hosts rather than all of them)."""
    memo = _CYCLE_READS.get()
    if memo is None:
        return (alone or read)()
    if key not in memo:
        memo[key] = read()
    return memo[key]  # type: ignore[return-value]


#: The path directions of a set-based read as a table ``k`` (src_id, dst_id), from the two arrays of pairs_params.
DIRECTIONS_CTE = "WITH k AS (SELECT unnest(%s::bigint[]) AS src_id, unnest(%s::bigint[]) AS dst_id)"


def sql_rows(sql: str, params, *, binary: bool = False) -> list[dict]:
    """The rows of a statement as dicts. ``binary``: parameters and results in PostgreSQL's binary format, for the
    wide reads (the window's owamp buckets with their sessions' times): no time is formatted as text by the
    database and parsed back by Python, a third of the CPU on both sides; the same values come back."""
    if binary:
        connection.ensure_connection()
        with psycopg.Cursor(connection.connection) as cursor:
            cursor.execute(sql, params, binary=True)
            names = [d[0] for d in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def pairs_params(keys: list[tuple[int, int]]) -> list[list[int]]:
    return [[k[0] for k in keys], [k[1] for k in keys]]


def direction_records(
    table: DirectionTable, start: datetime, end: datetime, keys: list[tuple[int, int]] | None = None
) -> dict[tuple[int, int], list]:
    """The evidence records of a measurement table in [start, end] in time order, per path direction
    (src_id, dst_id): of every direction, or of the directions ``keys`` only, in one statement whatever their
    number."""
    out: dict[tuple[int, int], list] = defaultdict(list)
    if keys is not None and not keys:
        return out
    directions, params = ("", [start, end]) if keys is None else (DIRECTIONS_CTE, [*pairs_params(keys), start, end])
    join = "" if keys is None else "JOIN k ON k.src_id = t.src_id AND k.dst_id = t.dst_id"
    for r in sql_rows(
        f"""{directions}
            SELECT t.id, t.time, t.src_id, t.dst_id, {table.columns} FROM {table.name} t {join}
            WHERE t.time >= %s AND t.time <= %s AND {table.condition} ORDER BY t.time""",
        params,
    ):
        out[(r["src_id"], r["dst_id"])].append(table.record_of(r))
    return out


def counter_discontinuities(
    interface_ids: list[int], start: datetime, end: datetime
) -> dict[int, list[CounterDiscontinuity]]:
    """The polling intervals the rate computation dropped for these interfaces in [start, end], per interface in
    time order, each with its reason as ``code: reason``."""
    out: dict[int, list[CounterDiscontinuity]] = defaultdict(list)
    for r in sql_rows(
        """SELECT time, previous_time, interface_id, code, reason FROM measurements_counterdiscontinuity
           WHERE interface_id = ANY(%s) AND time >= %s AND time <= %s ORDER BY time""",
        [interface_ids, start, end],
    ):
        out[r["interface_id"]].append(
            CounterDiscontinuity(r["time"], f"{r['code']}: {r['reason']}", r["previous_time"])
        )
    return out


def host_tcp_of(r: dict, known: dict[str, str | None]) -> HostTcpEvidence:
    """One measurements_hosttcp row (with its site's code as ``site``) as evidence; ``known`` maps the inventory's
    host names to their addresses."""
    return HostTcpEvidence(
        site=r["site"],
        host=r["host"],
        time=r["time"],
        rmem_max=r["rmem_max"],
        wmem_max=r["wmem_max"],
        tcp_rmem=tuple(r["tcp_rmem"]) if r["tcp_rmem"] else None,
        tcp_wmem=tuple(r["tcp_wmem"]) if r["tcp_wmem"] else None,
        congestion_control=r["congestion_control"],
        mtu=r["mtu"],
        address=known.get(r["host"]),
        nic_speed_mbps=r["nic_speed_mbps"],
    )


def host_tcp_list(start: datetime, end: datetime, known: dict[str, str | None]) -> list[HostTcpEvidence]:
    """The host TCP reports of [start, end] in time order, each with its host's address from ``known`` (name ->
    address); the rows are read once a cycle (``cycle_read``), the addresses are the caller's."""
    rows = cycle_read(("host_tcp", start, end), lambda: sql_rows(
        """SELECT h.time, s.code AS site, h.host, h.rmem_max, h.wmem_max, h.tcp_rmem, h.tcp_wmem,
                  h.congestion_control, h.mtu, h.nic_speed_mbps
           FROM measurements_hosttcp h JOIN inventory_site s ON s.id = h.site_id
           WHERE h.time >= %s AND h.time <= %s ORDER BY h.time""",
        [start, end],
    ))
    return [host_tcp_of(r, known) for r in rows]


def inventory_evidence(
    *,
    trunks: Iterable[Trunk],
    ifaces: dict[int, InterfaceEvidence],
    hosts: Iterable[Host],
    equipment: Iterable[Equipment],
) -> dict[str, tuple]:
    """The inventory parts of an evidence bundle, as its keyword arguments: the interfaces read (trunk members
    only within their trunk), the trunks (members prefetched), the hosts (sites joined) and the equipment (sites
    and carriers joined)."""
    member_ids = {m.id for t in trunks for m in t.members.all()}
    return {
        "interfaces": tuple(v for k, v in ifaces.items() if k not in member_ids),
        "trunks": tuple(
            TrunkEvidence(t.name, tuple(ifaces[m.id] for m in t.members.all() if m.id in ifaces)) for t in trunks
        ),
        "known_hosts": tuple(KnownHost(h.site.code, h.name, h.address) for h in hosts),
        "equipment": tuple(
            EquipmentInfo(e.name, e.site.code if e.site_id else None, e.carrier.code if e.carrier_id else None, e.role)
            for e in equipment
        ),
    }


def maintenance_evidence(start: datetime, end: datetime) -> tuple[MaintenanceEvidence, ...]:
    """The maintenance that may explain a degradation over [start, end) (``maintenance_windows_overlapping``),
    read once a cycle (``cycle_read``)."""
    return cycle_read(("maintenance", start, end), lambda: tuple(maintenance_windows_overlapping(start, end)))


def maintenance_periods(start: datetime, end: datetime) -> tuple[tuple[datetime, datetime], ...]:
    """Periods of announced work overlapping [start, end]: not a path's normal state, so left out of every
    baseline (wanmon/diagnosis/baseline.py)."""
    return tuple((w.start, w.end) for w in maintenance_evidence(start, end))
