"""Evidence selectors: the database -> the frozen dataclasses the pure rules read (evidence.py).

One bundle covers every current path direction over a look-back window ending at ``now``, with
the interfaces and trunks they cross, host TCP settings, maintenance windows and agent schedules.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from datetime import datetime, timedelta

from django.core.cache import cache
from django.db import connection
from django.db.models import Prefetch, Q

from wanmon.diagnosis.evidence import (
    AgentSchedule,
    CounterDiscontinuity,
    EquipmentInfo,
    EvidenceBundle,
    HostTcpEvidence,
    InterfaceEvidence,
    InterfaceRate,
    InterfaceStatus,
    KnownHost,
    MaintenanceWindow,
    OwampTest,
    PathEvidence,
    PathSummary,
    ThroughputTest,
    TracerouteObservation,
    TrunkEvidence,
    summarise_path,
)
from wanmon.diagnosis.maintenance_windows import maintenance_window_list_for_diagnosis
from wanmon.diagnosis.models import Finding
from wanmon.inventory.models import Equipment, Host, Interface, Path, PathHop, Trunk

logger = logging.getLogger(__name__)


def _rows(sql: str, params) -> list[dict]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def paths_valid_at(at: datetime):
    """Path versions in force at ``at`` (route history stays explainable)."""
    return (
        Path.objects.filter(valid_from__lte=at)
        .filter(Q(valid_to__isnull=True) | Q(valid_to__gt=at))
        .select_related("src", "dst")
        .prefetch_related(Prefetch("hops", queryset=PathHop.objects.select_related("equipment", "interface")))
    )


def _throughput_tests(start: datetime, end: datetime) -> dict[tuple[int, int], list[ThroughputTest]]:
    out: dict[tuple[int, int], list[ThroughputTest]] = defaultdict(list)
    for r in _rows(
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
    for r in _rows(
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
    for r in _rows(
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
    for r in _rows(
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
    for r in _rows(
        """SELECT time, previous_time, interface_id, code, reason FROM measurements_counterdiscontinuity
           WHERE interface_id = ANY(%s) AND time >= %s AND time <= %s ORDER BY time""",
        [list(interface_ids), start, end],
    ):
        gaps[r["interface_id"]].append(
            CounterDiscontinuity(r["time"], f"{r['code']}: {r['reason']}", r["previous_time"])
        )
    status: dict[int, list[InterfaceStatus]] = defaultdict(list)
    for r in _rows(
        """SELECT time, interface_id, oper_status FROM measurements_snmpsample
           WHERE interface_id = ANY(%s) AND time >= %s AND time <= %s AND oper_status IS NOT NULL ORDER BY time""",
        [list(interface_ids), start, end],
    ):
        status[r["interface_id"]].append(InterfaceStatus(r["time"], r["oper_status"]))
    # the speed the device reports (ifHighSpeed) wins over the inventory's: after a port upgrade the inventory
    # may still say 10G while the port runs at 100G, and utilisation against the old speed is a false congestion
    reported: dict[int, float] = {}
    for r in _rows(
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


def _hosts(start: datetime, end: datetime, known: dict[str, str | None]) -> list[HostTcpEvidence]:
    return [
        HostTcpEvidence(
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
        )
        for r in _rows(
            """SELECT h.time, s.code AS site, h.host, h.rmem_max, h.wmem_max, h.tcp_rmem, h.tcp_wmem,
                      h.congestion_control, h.mtu
               FROM measurements_hosttcp h JOIN inventory_site s ON s.id = h.site_id
               WHERE h.time >= %s AND h.time <= %s ORDER BY h.time""",
            [start, end],
        )
    ]


def _agent_schedules(start: datetime, end: datetime) -> list[AgentSchedule]:
    """Test periods the agents declared (records' schedule_interval_s): PERIODIC_LOSS compares with them."""
    rows = _rows(
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


def maintenance_windows_overlapping(start: datetime, end: datetime) -> list[MaintenanceWindow]:
    """Windows (not cancelled, not informational) that overlap [start, end), with their affected elements as
    topology labels; the maintenance app's matching (circuits as their end ports, one entry per occurrence)."""
    return maintenance_window_list_for_diagnosis(start, end)


def _maintenance_periods(start: datetime, end: datetime) -> tuple[tuple[datetime, datetime], ...]:
    """Periods of announced work overlapping [start, end]: not a path's normal state, so left out of every
    baseline (wanmon/diagnosis/baseline.py)."""
    return tuple((w.start, w.end) for w in maintenance_windows_overlapping(start, end))


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
    works = _maintenance_periods(baseline_start, baseline_end)
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
        hosts=tuple(_hosts(window_start, now, known)),
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


def finding_list(*, status: str | None = None, code: str | None = None, active_only: bool = False):
    """Stored findings, newest first."""
    qs = Finding.objects.all()
    if active_only:
        qs = qs.exclude(status="resolved")
    if status:
        qs = qs.filter(status=status)
    if code:
        qs = qs.filter(code=code)
    return qs


# --------------------------------------------------------------------------- bulk evidence of one shard of paths
# The periodic cycle evaluates thousands of path directions in shards (wanmon/diagnosis/shards.py). A shard's
# evidence comes from a handful of set-based statements over all its paths at once (never one query per path),
# and dense series are aggregated in SQL with time_bucket: a latencybg result every minute is 360 sessions in a
# 6-hour window, 10 080 in a week of baseline; buckets keep the loss (packets are summed), the minimum delay and
# the worst maximum exactly. A bucket holding one row keeps that row's values and id, so sparse series (owamp
# every 5 or 20 minutes, SNMP every 5 minutes) reach the rules unchanged.
WINDOW_BUCKET_S = 300  # window: 72 buckets in 6 hours
# SNMP rates of the window's last half hour are never bucketed: the interface rules judge consecutive polls
# (INTERFACE_ERRORS needs 3 in a row, LINK_CONGESTION a run of them), and a fault must be seen at the agents'
# poll interval, not 5 minutes later. 30 one-minute polls per interface stay affordable at 20 000 interfaces.
WINDOW_RAW_RECENT_S = 1800
BASELINE_BUCKET_S = 3600  # baseline: 168 buckets in 7 days, only summarised


def _pairs_params(keys: list[tuple[int, int]]) -> list[list[int]]:
    return [[k[0] for k in keys], [k[1] for k in keys]]


def _owamp_bucketed(keys: list[tuple[int, int]], start: datetime, end: datetime, bucket_s: int, *, outages: bool):
    """Sessions of these path directions in [start, end], aggregated per time bucket. A session that lost every
    packet (an outage) stays its own row when ``outages`` (the window: an outage is not a loss rate), and is left
    out otherwise (the baseline summary ignores outages anyway)."""
    out: dict[tuple[int, int], list[OwampTest]] = defaultdict(list)
    if not keys:
        return out
    outage_filter = "" if outages else "AND o.packets_lost < o.packets_sent"
    for r in _rows(
        f"""WITH k AS (SELECT unnest(%s::bigint[]) AS src_id, unnest(%s::bigint[]) AS dst_id)
            SELECT o.src_id, o.dst_id, max(o.time) AS time, count(*) AS n, min(o.id) AS id,
                   sum(o.packets_sent) AS packets_sent, sum(coalesce(o.packets_lost, 0)) AS packets_lost,
                   sum(coalesce(o.duplicates, 0)) AS duplicates, sum(coalesce(o.reordered, 0)) AS reordered,
                   min(o.delay_min_ms) AS delay_min_ms,
                   percentile_cont(0.5) WITHIN GROUP (ORDER BY o.delay_median_ms) AS delay_median_ms,
                   max(o.delay_max_ms) AS delay_max_ms, avg(o.jitter_ms) AS jitter_ms,
                   max(o.clock_error_ms) AS clock_error_ms
            FROM measurements_owamptest o JOIN k ON k.src_id = o.src_id AND k.dst_id = o.dst_id
            WHERE o.time >= %s AND o.time <= %s AND o.packets_sent IS NOT NULL {outage_filter}
            GROUP BY o.src_id, o.dst_id, time_bucket(%s * interval '1 second', o.time),
                     (o.packets_lost >= o.packets_sent)
            ORDER BY 3""",
        [*_pairs_params(keys), start, end, bucket_s],
    ):
        out[(r["src_id"], r["dst_id"])].append(
            OwampTest(
                time=r["time"],
                packets_sent=int(r["packets_sent"]),
                packets_lost=int(r["packets_lost"]),
                duplicates=int(r["duplicates"]),
                reordered=int(r["reordered"]),
                delay_min_ms=r["delay_min_ms"],
                delay_median_ms=r["delay_median_ms"],
                delay_max_ms=r["delay_max_ms"],
                jitter_ms=r["jitter_ms"],
                clock_error_ms=r["clock_error_ms"],
                measurement_id=f"owamp:{r['id']}" if r["n"] == 1 else f"owamp:{r['id']}+{r['n'] - 1}",
            )
        )
    return out


def _throughput_for(keys: list[tuple[int, int]], start: datetime, end: datetime):
    """Throughput tests of these path directions (a few a day each: never bucketed)."""
    out: dict[tuple[int, int], list[ThroughputTest]] = defaultdict(list)
    if not keys:
        return out
    for r in _rows(
        """WITH k AS (SELECT unnest(%s::bigint[]) AS src_id, unnest(%s::bigint[]) AS dst_id)
           SELECT t.id, t.time, t.src_id, t.dst_id, protocol, throughput_bps, duration_s, streams, window_bytes,
                  mss_bytes, rtt_ms, retransmits, offered_bps, packets_sent, packets_lost, src_host, dst_host,
                  error, tool
           FROM measurements_throughputtest t JOIN k ON k.src_id = t.src_id AND k.dst_id = t.dst_id
           WHERE t.time >= %s AND t.time <= %s ORDER BY t.time""",
        [*_pairs_params(keys), start, end],
    ):
        out[(r["src_id"], r["dst_id"])].append(
            ThroughputTest(
                time=r["time"], protocol=r["protocol"], throughput_bps=r["throughput_bps"],
                duration_s=r["duration_s"], streams=r["streams"] or 1, window_bytes=r["window_bytes"],
                mss_bytes=r["mss_bytes"], rtt_ms=r["rtt_ms"], retransmits=r["retransmits"],
                offered_bps=r["offered_bps"], packets_sent=r["packets_sent"], packets_lost=r["packets_lost"],
                src_host=r["src_host"], dst_host=r["dst_host"], error=r["error"], tool=r["tool"],
                measurement_id=f"throughput:{r['id']}",
            )
        )
    return out


def _traceroutes_for(keys: list[tuple[int, int]], start: datetime, end: datetime, baseline_start, baseline_end):
    """Traceroutes of the window, and the last one of the baseline (all a summary keeps of it)."""
    window: dict[tuple[int, int], list[TracerouteObservation]] = defaultdict(list)
    last: dict[tuple[int, int], list[TracerouteObservation]] = defaultdict(list)
    if not keys:
        return window, last
    params = _pairs_params(keys)
    for r in _rows(
        """WITH k AS (SELECT unnest(%s::bigint[]) AS src_id, unnest(%s::bigint[]) AS dst_id)
           SELECT t.id, t.time, t.src_id, t.dst_id, t.hops, t.pmtu_bytes FROM measurements_traceroute t
           JOIN k ON k.src_id = t.src_id AND k.dst_id = t.dst_id
           WHERE t.time >= %s AND t.time <= %s AND t.error IS NULL ORDER BY t.time""",
        [*params, start, end],
    ):
        window[(r["src_id"], r["dst_id"])].append(
            TracerouteObservation(r["time"], tuple(r["hops"]), r["pmtu_bytes"], f"traceroute:{r['id']}")
        )
    for r in _rows(
        """WITH k AS (SELECT unnest(%s::bigint[]) AS src_id, unnest(%s::bigint[]) AS dst_id)
           SELECT DISTINCT ON (t.src_id, t.dst_id) t.id, t.time, t.src_id, t.dst_id, t.hops, t.pmtu_bytes
           FROM measurements_traceroute t JOIN k ON k.src_id = t.src_id AND k.dst_id = t.dst_id
           WHERE t.time >= %s AND t.time <= %s AND t.error IS NULL ORDER BY t.src_id, t.dst_id, t.time DESC""",
        [*params, baseline_start, baseline_end],
    ):
        last[(r["src_id"], r["dst_id"])].append(
            TracerouteObservation(r["time"], tuple(r["hops"]), r["pmtu_bytes"], f"traceroute:{r['id']}")
        )
    return window, last


def _interfaces_bulk(
    interface_ids: set[int], start: datetime, end: datetime, *, raw_ids: set[int], bucket_s: int
) -> dict[int, InterfaceEvidence]:
    """Interface evidence of many interfaces in a few statements: rates before the window's last half hour
    bucketed (time-weighted means, summed error and discard rates; the last half hour and trunk members in
    ``raw_ids`` keep every poll: consecutive polls and per-poll load sharing are judged there), every
    non-'up' status sample and every change of status (what outage spans are made of), counter
    discontinuities and the speed the device reports."""
    if not interface_ids:
        return {}
    ids = sorted(interface_ids)
    raw = sorted(raw_ids & interface_ids)
    recent = max(start, end - timedelta(seconds=WINDOW_RAW_RECENT_S))

    def wavg(col: str) -> str:
        return f"sum({col} * interval_s) / nullif(sum(CASE WHEN {col} IS NOT NULL THEN interval_s END), 0)"

    rates: dict[int, list[InterfaceRate]] = defaultdict(list)
    for r in _rows(
        f"""SELECT max(time) AS time, interface_id, sum(interval_s) AS interval_s,
                   {wavg("in_bps")} AS in_bps, {wavg("out_bps")} AS out_bps,
                   {wavg("in_pps")} AS in_pps, {wavg("out_pps")} AS out_pps,
                   {wavg("in_errors_per_s")} AS in_errors_per_s, {wavg("out_errors_per_s")} AS out_errors_per_s,
                   {wavg("in_discards_per_s")} AS in_discards_per_s,
                   {wavg("out_discards_per_s")} AS out_discards_per_s,
                   (array_agg(oper_status ORDER BY time DESC))[1] AS oper_status
            FROM measurements_interfacerate
            WHERE interface_id = ANY(%s) AND NOT interface_id = ANY(%s) AND time >= %s AND time < %s
            GROUP BY interface_id, time_bucket(%s * interval '1 second', time)
            UNION ALL
            SELECT time, interface_id, interval_s, in_bps, out_bps, in_pps, out_pps, in_errors_per_s,
                   out_errors_per_s, in_discards_per_s, out_discards_per_s, oper_status
            FROM measurements_interfacerate
            WHERE interface_id = ANY(%s) AND time >= %s AND time <= %s AND (interface_id = ANY(%s) OR time >= %s)
            ORDER BY 1""",
        [ids, raw, start, recent, bucket_s, ids, start, end, raw, recent],
    ):
        rates[r["interface_id"]].append(
            InterfaceRate(
                time=r["time"], in_bps=r["in_bps"], out_bps=r["out_bps"], in_errors_per_s=r["in_errors_per_s"],
                out_errors_per_s=r["out_errors_per_s"], in_discards_per_s=r["in_discards_per_s"],
                out_discards_per_s=r["out_discards_per_s"], in_pkts_per_s=r["in_pps"], out_pkts_per_s=r["out_pps"],
                oper_status=r["oper_status"], interval_s=r["interval_s"],
            )
        )
    gaps: dict[int, list[CounterDiscontinuity]] = defaultdict(list)
    for r in _rows(
        """SELECT time, previous_time, interface_id, code, reason FROM measurements_counterdiscontinuity
           WHERE interface_id = ANY(%s) AND time >= %s AND time <= %s ORDER BY time""",
        [ids, start, end],
    ):
        gaps[r["interface_id"]].append(
            CounterDiscontinuity(r["time"], f"{r['code']}: {r['reason']}", r["previous_time"])
        )
    status: dict[int, list[InterfaceStatus]] = defaultdict(list)
    reported: dict[int, float] = {}
    for r in _rows(
        """SELECT time, interface_id, oper_status, speed_mbps, is_last FROM (
               SELECT time, interface_id, oper_status, speed_mbps,
                      lag(oper_status) OVER w AS previous, row_number() OVER (PARTITION BY interface_id
                                                                             ORDER BY time DESC) = 1 AS is_last
               FROM measurements_snmpsample
               WHERE interface_id = ANY(%s) AND time >= %s AND time <= %s AND oper_status IS NOT NULL
               WINDOW w AS (PARTITION BY interface_id ORDER BY time)) s
           WHERE is_last OR lower(oper_status) <> 'up' OR previous IS DISTINCT FROM oper_status
              OR interface_id = ANY(%s)
           ORDER BY time""",
        [ids, start, end, raw],
    ):
        status[r["interface_id"]].append(InterfaceStatus(r["time"], r["oper_status"]))
        if r["is_last"] and r["speed_mbps"]:
            reported[r["interface_id"]] = r["speed_mbps"] * 1e6
    out = {}
    for r in _rows(
        """SELECT i.id, i.name, i.speed_mbps, i.mtu, e.name AS equipment FROM inventory_interface i
           JOIN inventory_equipment e ON e.id = i.equipment_id WHERE i.id = ANY(%s)""",
        [ids],
    ):
        out[r["id"]] = InterfaceEvidence(
            equipment=r["equipment"],
            interface=r["name"],
            speed_bps=reported.get(r["id"]) or (r["speed_mbps"] * 1e6 if r["speed_mbps"] else None),
            rates=tuple(rates[r["id"]]),
            discontinuities=tuple(gaps[r["id"]]),
            status=tuple(status[r["id"]]),
            mtu_bytes=r["mtu"],
        )
    return out


def _baselines_cached(
    keys: list[tuple[int, int]], baseline_start: datetime, baseline_end: datetime
) -> dict[tuple[int, int], PathSummary]:
    """Baseline summaries of these directions. A week of one-minute results is 10 080 sessions a path: the
    summary is computed once an hour (its period aligned on the hour, in the cache for two) instead of every
    minute, and the period's tests are read only for the summaries not in the cache. Like
    ``evidence_bundle_build``, only directions with TCP tests in the baseline get one (the others are cached
    as ``False``)."""
    span = baseline_end - baseline_start
    end = baseline_end.replace(minute=0, second=0, microsecond=0)
    start = end - span
    wanted = list(keys)
    if not wanted:
        return {}
    names = {k: f"wanmon:diagnosis:baseline:v2:{k[0]}:{k[1]}:{end.isoformat()}" for k in wanted}
    try:
        hits = cache.get_many(list(names.values()))
    except Exception:  # noqa: BLE001 -- Redis down: compute, the diagnosis must not stop for a cache
        logger.warning("baseline cache unavailable", exc_info=True)
        hits = {}
    out = {k: hits[names[k]] for k in wanted if names[k] in hits}
    missing = [k for k in wanted if k not in out]
    if missing:
        tests = _throughput_for(missing, start, end)
        owamp = _owamp_bucketed(missing, start, end, BASELINE_BUCKET_S, outages=False)
        _, routes = _traceroutes_for(missing, start, start, start, end)
        works = _maintenance_periods(start, end)
        fresh = {
            k: summarise_path(tests[k], owamp.get(k, []), routes.get(k, []), start, end, excluded=works)
            if tests.get(k)
            else False
            for k in missing
        }
        out.update(fresh)
        try:
            cache.set_many({names[k]: v for k, v in fresh.items()}, timeout=2 * 3600)
        except Exception:  # noqa: BLE001 -- as above
            logger.warning("baseline cache unavailable", exc_info=True)
    return {k: v for k, v in out.items() if v is not False}


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
    with ``unpathed_interfaces``, also every interface with data in the window that no current path crosses
    (the shard that looks after elements alone)."""
    path_rows = _rows(
        """SELECT p.id, p.src_id, p.dst_id, s.code AS src, d.code AS dst, p.capacity_mbps
           FROM inventory_path p JOIN inventory_site s ON s.id = p.src_id JOIN inventory_site d ON d.id = p.dst_id
           WHERE p.id = ANY(%s) ORDER BY s.code, d.code""",
        [list(path_ids)],
    )
    hops: dict[int, list[tuple[str, int | None]]] = defaultdict(list)
    for r in _rows(
        """SELECT h.path_id, e.name AS equipment, h.interface_id, i.name AS interface
           FROM inventory_pathhop h JOIN inventory_equipment e ON e.id = h.equipment_id
           LEFT JOIN inventory_interface i ON i.id = h.interface_id
           WHERE h.path_id = ANY(%s) ORDER BY h.path_id, h.position""",
        [list(path_ids)],
    ):
        label = f"{r['equipment']}:{r['interface']}" if r["interface_id"] else r["equipment"]
        hops[r["path_id"]].append((label, r["interface_id"]))
    keys = [(r["src_id"], r["dst_id"]) for r in path_rows]
    # the window's tests only: the baseline period's are read when its summary is not in the cache
    tests = _throughput_for(keys, window_start, now)
    o_window = _owamp_bucketed(keys, window_start, now, WINDOW_BUCKET_S, outages=True)
    r_window, _ = _traceroutes_for(keys, window_start, now, baseline_start, baseline_end)
    baselines = _baselines_cached(keys, baseline_start, baseline_end)

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
                capacity_bps=r["capacity_mbps"] * 1e6 if r["capacity_mbps"] else 0.0,
                hops=tuple(label for label, _ in hops[r["id"]]),
                throughput_tests=tuple(t for t in t_all if t.time >= window_start),
                owamp_tests=tuple(o_window.get(key, [])),
                traceroutes=tuple(r_window.get(key, [])),
                baseline=baseline,
            )
        )

    if unpathed_interfaces:
        with connection.cursor() as cursor:
            cursor.execute(
                """SELECT DISTINCT interface_id FROM measurements_interfacerate WHERE time >= %s AND time <= %s
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
        for t in Trunk.objects.prefetch_related("members__equipment")
        if unpathed_interfaces
        or t.name in labels
        or any(m.id in interface_ids or m.equipment.name in labels for m in t.members.all())
    ]
    member_ids = {m.id for t in trunks for m in t.members.all()}
    interface_ids |= member_ids
    ifaces = _interfaces_bulk(interface_ids, window_start, now, raw_ids=member_ids, bucket_s=WINDOW_BUCKET_S)
    trunk_evidence = tuple(
        TrunkEvidence(t.name, tuple(ifaces[m.id] for m in t.members.all() if m.id in ifaces)) for t in trunks
    )
    site_codes = {p.src for p in paths} | {p.dst for p in paths}
    hosts_qs = Host.objects.select_related("site")
    if not unpathed_interfaces:
        hosts_qs = hosts_qs.filter(site_id__in=site_ids)
    hosts = list(hosts_qs)
    known = {h.name: h.address for h in hosts}
    equipment_names = {label.partition(":")[0] for label in labels} | {i.equipment for i in ifaces.values()}
    return EvidenceBundle(
        paths=tuple(paths),
        window_start=window_start,
        hosts=tuple(
            h for h in _hosts(window_start, now, known) if unpathed_interfaces or h.site in site_codes
        ),
        known_hosts=tuple(KnownHost(h.site.code, h.name, h.address) for h in hosts),
        interfaces=tuple(v for k, v in ifaces.items() if k not in member_ids),
        trunks=trunk_evidence,
        maintenance=tuple(maintenance_windows_overlapping(window_start, now)),
        equipment=tuple(
            EquipmentInfo(e.name, e.site.code if e.site_id else None, e.carrier.code if e.carrier_id else None, e.role)
            for e in Equipment.objects.select_related("site", "carrier").filter(name__in=equipment_names)
        ),
        agent_schedules=tuple(_agent_schedules_of(keys, window_start, now)),
    )


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
    rows = _rows(
        f"""WITH k AS (SELECT unnest(%(src)s::bigint[]) AS src_id, unnest(%(dst)s::bigint[]) AS dst_id)
            SELECT DISTINCT s.code AS site, t.kind, (t.extra->>'schedule_interval_s')::float8 AS interval_s
            FROM ({" UNION ALL ".join(parts)}) t JOIN inventory_site s ON s.id = t.src_id
            WHERE t.extra ? 'schedule_interval_s'""",
        {"src": [k[0] for k in keys], "dst": [k[1] for k in keys], "start": start, "end": end},
    )
    return [AgentSchedule(r["site"], r["kind"], r["interval_s"]) for r in rows if r["interval_s"]]


def paths_to_evaluate(*, now: datetime, late_s: int, window) -> list[tuple[int, str, str]]:
    """(path id, src, dst) of the current path directions a cycle at ``now`` must evaluate: never evaluated, a
    test newer than their last evaluation minus ``late_s``, an active finding on them, or an active finding on
    an element they cross or a site they join. Set-based: one statement whatever the number of paths."""
    element_names: set[str] = set()
    site_codes: set[str] = set()
    for subject in Finding.objects.exclude(status="resolved").exclude(subject__has_keys=["src", "dst"]).values_list(
        "subject", flat=True
    ):
        for key in ("equipment", "trunk"):
            if subject.get(key):
                element_names.add(str(subject[key]))
        if subject.get("site"):
            site_codes.add(str(subject["site"]))
    rows = _rows(
        """WITH cur AS (
               SELECT p.id, p.src_id, p.dst_id, s.code AS src, d.code AS dst
               FROM inventory_path p JOIN inventory_site s ON s.id = p.src_id JOIN inventory_site d ON d.id = p.dst_id
               WHERE p.valid_from <= %(now)s AND (p.valid_to IS NULL OR p.valid_to > %(now)s)),
           since AS (  -- tests before the previous cycle's horizon were new to that cycle already
               SELECT greatest(%(floor)s::timestamptz, max(c.at) - %(late)s * interval '1 second') AS t
               FROM diagnosis_diagnosiscycle c WHERE c.at < %(now)s),
           fresh AS (
               SELECT src_id, dst_id, max(time) AS t FROM (
                   SELECT src_id, dst_id, time FROM measurements_owamptest
                   WHERE time > (SELECT t FROM since) AND time <= %(now)s
                   UNION ALL SELECT src_id, dst_id, time FROM measurements_throughputtest
                   WHERE time > (SELECT t FROM since) AND time <= %(now)s
                   UNION ALL SELECT src_id, dst_id, time FROM measurements_traceroute
                   WHERE time > (SELECT t FROM since) AND time <= %(now)s) x
               GROUP BY src_id, dst_id),
           flagged AS (
               SELECT f.subject->>'src' AS src, f.subject->>'dst' AS dst FROM diagnosis_finding f
               WHERE f.status <> 'resolved' AND f.subject ? 'src' AND f.subject ? 'dst'),
           crossing AS (
               SELECT DISTINCT h.path_id FROM inventory_pathhop h JOIN inventory_equipment e ON e.id = h.equipment_id
               WHERE e.name = ANY(%(elements)s))
           SELECT cur.id, cur.src, cur.dst FROM cur
           LEFT JOIN diagnosis_pathevaluation e ON e.path_id = cur.id
           LEFT JOIN fresh f ON f.src_id = cur.src_id AND f.dst_id = cur.dst_id
           WHERE e.path_id IS NULL
              OR f.t > e.cycle_at - %(late)s * interval '1 second'
              OR EXISTS (SELECT 1 FROM flagged g WHERE g.src = cur.src AND g.dst = cur.dst)
              OR cur.id IN (SELECT path_id FROM crossing)
              OR cur.src = ANY(%(sites)s) OR cur.dst = ANY(%(sites)s)
           ORDER BY cur.src, cur.dst""",
        {
            "now": now,
            "floor": now - window,
            "late": late_s,
            "elements": sorted(element_names),
            "sites": sorted(site_codes),
        },
    )
    return [(r["id"], r["src"], r["dst"]) for r in rows]
