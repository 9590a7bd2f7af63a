"""The whole-bundle reads of ``diagnosis_evaluate`` and ``manage.py replay``: every current path direction over a
look-back window ending at ``now``, with the interfaces and trunks they cross, host TCP settings, maintenance
windows and agent schedules (the periodic cycle reads its shards set-based instead: bulk.py)."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime

from django.db import connection

from wanmon.diagnosis.evidence import (
    AgentSchedule,
    EvidenceBundle,
    InterfaceEvidence,
    InterfaceRate,
    InterfaceStatus,
    PathEvidence,
)
from wanmon.diagnosis.selectors.baselines import baseline_summaries
from wanmon.diagnosis.selectors.common import (
    counter_discontinuities,
    direction_records,
    host_tcp_list,
    inventory_evidence,
    maintenance_windows_overlapping,
    sql_rows,
)
from wanmon.diagnosis.selectors.records import OWAMP_TESTS, THROUGHPUT_TESTS, TRACEROUTES, interface_rate_of
from wanmon.inventory.models import Equipment, Host, Interface, Trunk
from wanmon.inventory.selectors import path_list_valid_at


def _interfaces(interface_ids: set[int], start: datetime, end: datetime) -> dict[int, InterfaceEvidence]:
    if not interface_ids:
        return {}
    rates: dict[int, list[InterfaceRate]] = defaultdict(list)
    for r in sql_rows(
        """SELECT time, interface_id, interval_s, in_bps, out_bps, in_pps, out_pps, in_errors_per_s,
                  out_errors_per_s, in_discards_per_s, out_discards_per_s, oper_status
           FROM measurements_interfacerate WHERE interface_id = ANY(%s) AND time >= %s AND time <= %s ORDER BY time""",
        [list(interface_ids), start, end],
    ):
        rates[r["interface_id"]].append(interface_rate_of(r))
    gaps = counter_discontinuities(list(interface_ids), start, end)
    status: dict[int, list[InterfaceStatus]] = defaultdict(list)
    for r in sql_rows(
        """SELECT time, interface_id, oper_status FROM measurements_snmpsample
           WHERE interface_id = ANY(%s) AND time >= %s AND time <= %s AND oper_status IS NOT NULL ORDER BY time""",
        [list(interface_ids), start, end],
    ):
        status[r["interface_id"]].append(InterfaceStatus(r["time"], r["oper_status"]))
    # the speed the device reports (ifHighSpeed) wins over the inventory's: after a port upgrade the inventory
    # may still say 10G while the port runs at 100G, and utilisation against the old speed is a false congestion
    reported: dict[int, float] = {}
    for r in sql_rows(
        """SELECT DISTINCT ON (interface_id) interface_id, speed_mbps FROM measurements_snmpsample
           WHERE interface_id = ANY(%s) AND time >= %s AND time <= %s AND speed_mbps > 0
           ORDER BY interface_id, time DESC""",
        [list(interface_ids), start, end],
    ):
        reported[r["interface_id"]] = r["speed_mbps"] * 1e6
    out = {}
    for iface in Interface.objects.filter(id__in=interface_ids).select_related("equipment"):
        out[iface.id] = InterfaceEvidence(
            equipment=iface.equipment.name,
            interface=iface.name,
            speed_bps=reported.get(iface.id) or iface.speed_bps,
            rates=tuple(rates[iface.id]),
            discontinuities=tuple(gaps[iface.id]),
            status=tuple(status[iface.id]),
            mtu_bytes=iface.mtu,
        )
    return out


def _agent_schedules(start: datetime, end: datetime) -> list[AgentSchedule]:
    """Test periods the agents declared (records' schedule_interval_s): PERIODIC_LOSS compares with them."""
    rows = sql_rows(
        """SELECT DISTINCT s.code AS site, t.kind, (t.extra->>'schedule_interval_s')::float8 AS interval_s
           FROM (SELECT src_id, 'throughput' AS kind, extra FROM measurements_throughputtest
                 WHERE time >= %s AND time <= %s AND extra ? 'schedule_interval_s'
                 UNION ALL
                 SELECT src_id, 'owamp', extra FROM measurements_owamptest
                 WHERE time >= %s AND time <= %s AND extra ? 'schedule_interval_s') t
           JOIN inventory_site s ON s.id = t.src_id""",
        [start, end, start, end],
    )
    return [AgentSchedule(r["site"], r["kind"], r["interval_s"]) for r in rows if r["interval_s"]]


def evidence_bundle_build(
    *,
    now: datetime,
    window_start: datetime,
    baseline_start: datetime,
    baseline_end: datetime,
    extra_schedules: tuple[AgentSchedule, ...] = (),
) -> EvidenceBundle:
    """Everything the rules need for the window [window_start, now] and the baseline period."""
    tests = direction_records(THROUGHPUT_TESTS, window_start, now)
    owamp = direction_records(OWAMP_TESTS, window_start, now)
    traces = direction_records(TRACEROUTES, window_start, now)
    valid = list(path_list_valid_at(at=now))
    # the baseline period summarised in the database (a week of raw history is most of the rows otherwise)
    baselines = baseline_summaries([(p.src_id, p.dst_id) for p in valid], baseline_start, baseline_end)

    paths: list[PathEvidence] = []
    interface_ids: set[int] = set()
    for path in valid:
        key = (path.src_id, path.dst_id)
        hops = list(path.hops.all())
        interface_ids.update(h.interface_id for h in hops if h.interface_id)
        paths.append(
            PathEvidence(
                src=path.src.code,
                dst=path.dst.code,
                capacity_bps=path.capacity_bps or 0.0,
                hops=tuple(h.label for h in hops),
                throughput_tests=tuple(tests.get(key, ())),
                owamp_tests=tuple(owamp.get(key, ())),
                traceroutes=tuple(traces.get(key, ())),
                baseline=baselines.get(key),
            )
        )

    # Interfaces with data in the window count too: SNMP on elements not (yet) on a modelled hop.
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT DISTINCT interface_id FROM measurements_interfacerate WHERE time >= %s AND time <= %s",
            [window_start, now],
        )
        interface_ids.update(r[0] for r in cursor.fetchall())
        cursor.execute(
            "SELECT DISTINCT interface_id FROM measurements_counterdiscontinuity WHERE time >= %s AND time <= %s",
            [window_start, now],
        )
        interface_ids.update(r[0] for r in cursor.fetchall())
    trunks = list(Trunk.objects.prefetch_related("members__equipment"))
    for trunk in trunks:
        interface_ids.update(m.id for m in trunk.members.all())
    ifaces = _interfaces(interface_ids, window_start, now)

    known = {h.name: h.address for h in Host.objects.all()}
    return EvidenceBundle(
        paths=tuple(paths),
        window_start=window_start,
        hosts=tuple(host_tcp_list(window_start, now, known)),
        maintenance=tuple(maintenance_windows_overlapping(window_start, now)),
        agent_schedules=tuple(_agent_schedules(window_start, now)) + tuple(extra_schedules),
        **inventory_evidence(
            trunks=trunks,
            ifaces=ifaces,
            hosts=Host.objects.select_related("site"),
            equipment=Equipment.objects.select_related("site", "carrier"),
        ),
    )
