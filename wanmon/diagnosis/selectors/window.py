"""The whole-bundle reads of ``diagnosis_evaluate`` and ``manage.py replay``: every current path direction over a
look-back window ending at ``now``, with the interfaces and trunks they cross, host TCP settings, maintenance
windows and agent schedules (the periodic cycle reads its shards set-based instead: bulk.py)."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime

from django.db import connection

from wanmon.diagnosis.evidence import (
    AgentSchedule,
    CounterDiscontinuity,
    EquipmentInfo,
    EvidenceBundle,
    InterfaceEvidence,
    InterfaceRate,
    InterfaceStatus,
    KnownHost,
    OwampTest,
    PathEvidence,
    ThroughputTest,
    TracerouteObservation,
    TrunkEvidence,
    summarise_path,
)
from wanmon.diagnosis.selectors.common import (
    host_tcp_list,
    maintenance_periods,
    maintenance_windows_overlapping,
    paths_valid_at,
    sql_rows,
)
from wanmon.inventory.models import Equipment, Host, Interface, Trunk


def _throughput_tests(start: datetime, end: datetime) -> dict[tuple[int, int], list[ThroughputTest]]:
    out: dict[tuple[int, int], list[ThroughputTest]] = defaultdict(list)
    for r in sql_rows(
        """SELECT id, time, src_id, dst_id, protocol, throughput_bps, duration_s, streams, window_bytes, mss_bytes,
                  rtt_ms, retransmits, offered_bps, packets_sent, packets_lost, src_host, dst_host, error, tool
           FROM measurements_throughputtest WHERE time >= %s AND time <= %s ORDER BY time""",
        [start, end],
    ):
        out[(r["src_id"], r["dst_id"])].append(
            ThroughputTest(
                time=r["time"],
                protocol=r["protocol"],
                throughput_bps=r["throughput_bps"],
                duration_s=r["duration_s"],
                streams=r["streams"] or 1,
                window_bytes=r["window_bytes"],
                mss_bytes=r["mss_bytes"],
                rtt_ms=r["rtt_ms"],
                retransmits=r["retransmits"],
                offered_bps=r["offered_bps"],
                packets_sent=r["packets_sent"],
                packets_lost=r["packets_lost"],
                src_host=r["src_host"],
                dst_host=r["dst_host"],
                error=r["error"],
                tool=r["tool"],
                measurement_id=f"throughput:{r['id']}",
            )
        )
    return out


def _owamp_tests(start: datetime, end: datetime) -> dict[tuple[int, int], list[OwampTest]]:
    out: dict[tuple[int, int], list[OwampTest]] = defaultdict(list)
    for r in sql_rows(
        """SELECT id, time, src_id, dst_id, packets_sent, packets_lost, duplicates, reordered, delay_min_ms,
                  delay_median_ms, delay_max_ms, jitter_ms, clock_error_ms, error
           FROM measurements_owamptest WHERE time >= %s AND time <= %s AND packets_sent IS NOT NULL ORDER BY time""",
        [start, end],
    ):
        out[(r["src_id"], r["dst_id"])].append(
            OwampTest(
                time=r["time"],
                packets_sent=r["packets_sent"],
                packets_lost=r["packets_lost"] or 0,
                duplicates=r["duplicates"] or 0,
                reordered=r["reordered"] or 0,
                delay_min_ms=r["delay_min_ms"],
                delay_median_ms=r["delay_median_ms"],
                delay_max_ms=r["delay_max_ms"],
                jitter_ms=r["jitter_ms"],
                clock_error_ms=r["clock_error_ms"],
                measurement_id=f"owamp:{r['id']}",
            )
        )
    return out


def _traceroutes(start: datetime, end: datetime) -> dict[tuple[int, int], list[TracerouteObservation]]:
    out: dict[tuple[int, int], list[TracerouteObservation]] = defaultdict(list)
    for r in sql_rows(
        """SELECT id, time, src_id, dst_id, hops, pmtu_bytes FROM measurements_traceroute
           WHERE time >= %s AND time <= %s AND error IS NULL ORDER BY time""",
        [start, end],
    ):
        out[(r["src_id"], r["dst_id"])].append(
            TracerouteObservation(r["time"], tuple(r["hops"]), r["pmtu_bytes"], f"traceroute:{r['id']}")
        )
    return out


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
        rates[r["interface_id"]].append(
            InterfaceRate(
                time=r["time"],
                in_bps=r["in_bps"],
                out_bps=r["out_bps"],
                in_errors_per_s=r["in_errors_per_s"],
                out_errors_per_s=r["out_errors_per_s"],
                in_discards_per_s=r["in_discards_per_s"],
                out_discards_per_s=r["out_discards_per_s"],
                in_pkts_per_s=r["in_pps"],
                out_pkts_per_s=r["out_pps"],
                oper_status=r["oper_status"],
                interval_s=r["interval_s"],
            )
        )
    gaps: dict[int, list[CounterDiscontinuity]] = defaultdict(list)
    for r in sql_rows(
        """SELECT time, previous_time, interface_id, code, reason FROM measurements_counterdiscontinuity
           WHERE interface_id = ANY(%s) AND time >= %s AND time <= %s ORDER BY time""",
        [list(interface_ids), start, end],
    ):
        gaps[r["interface_id"]].append(
            CounterDiscontinuity(r["time"], f"{r['code']}: {r['reason']}", r["previous_time"])
        )
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
    first = min(window_start, baseline_start)
    works = maintenance_periods(baseline_start, baseline_end)
    tests = _throughput_tests(first, now)
    owamp = _owamp_tests(first, now)
    traces = _traceroutes(first, now)

    paths: list[PathEvidence] = []
    interface_ids: set[int] = set()
    for path in paths_valid_at(now):
        key = (path.src_id, path.dst_id)
        hops = list(path.hops.all())
        interface_ids.update(h.interface_id for h in hops if h.interface_id)
        t_all, o_all, r_all = tests.get(key, []), owamp.get(key, []), traces.get(key, [])
        in_window = [t for t in t_all if t.time >= window_start]
        o_window = [o for o in o_all if o.time >= window_start]
        r_window = [r for r in r_all if r.time >= window_start]
        baseline_tests = [t for t in t_all if baseline_start <= t.time <= baseline_end]
        baseline = (
            summarise_path(
                baseline_tests,
                [o for o in o_all if baseline_start <= o.time <= baseline_end],
                [r for r in r_all if baseline_start <= r.time <= baseline_end],
                baseline_start,
                baseline_end,
                excluded=works,
            )
            if baseline_tests
            else None
        )
        paths.append(
            PathEvidence(
                src=path.src.code,
                dst=path.dst.code,
                capacity_bps=path.capacity_bps or 0.0,
                hops=tuple(h.label for h in hops),
                throughput_tests=tuple(in_window),
                owamp_tests=tuple(o_window),
                traceroutes=tuple(r_window),
                baseline=baseline,
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
    member_ids = {m.id for t in trunks for m in t.members.all()}
    trunk_evidence = tuple(
        TrunkEvidence(t.name, tuple(ifaces[m.id] for m in t.members.all() if m.id in ifaces)) for t in trunks
    )

    known = {h.name: h.address for h in Host.objects.all()}
    return EvidenceBundle(
        paths=tuple(paths),
        window_start=window_start,
        hosts=tuple(host_tcp_list(window_start, now, known)),
        known_hosts=tuple(KnownHost(h.site.code, h.name, h.address) for h in Host.objects.select_related("site")),
        interfaces=tuple(v for k, v in ifaces.items() if k not in member_ids),
        trunks=trunk_evidence,
        maintenance=tuple(maintenance_windows_overlapping(window_start, now)),
        equipment=tuple(
            EquipmentInfo(e.name, e.site.code if e.site_id else None, e.carrier.code if e.carrier_id else None, e.role)
            for e in Equipment.objects.select_related("site", "carrier")
        ),
        agent_schedules=tuple(_agent_schedules(window_start, now)) + tuple(extra_schedules),
    )
