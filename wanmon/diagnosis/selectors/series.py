"""Set-based reads of many path directions at once (the periodic cycle's shards and the baselines).

The periodic cycle evaluates thousands of path directions in shards (wanmon/diagnosis/shards.py). A shard's
evidence comes from a handful of set-based statements over all its paths at once (never one query per path),
and dense series are aggregated in SQL with time_bucket: a latencybg result every minute is 360 sessions in a
6-hour window, 10 080 in a week of baseline; buckets keep the loss (packets are summed), the minimum delay and
the worst maximum exactly. A bucket holding one row keeps that row's values and id, so sparse series (owamp
every 5 or 20 minutes, SNMP every 5 minutes) reach the rules unchanged.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta

from wanmon.core.units import bps_from_mbps
from wanmon.diagnosis import constants as k
from wanmon.diagnosis.evidence import (
    InterfaceEvidence,
    InterfaceRate,
    InterfaceStatus,
    OwampTest,
)
from wanmon.diagnosis.selectors.common import DIRECTIONS_CTE, counter_discontinuities, pairs_params, sql_rows
from wanmon.diagnosis.selectors.records import interface_rate_of, owamp_test_of
from wanmon.measurements.selectors import weighted_mean_sql

WINDOW_BUCKET_S = 300  # window: 72 buckets in 6 hours
# SNMP rates of the window's last half hour are never bucketed: the interface rules judge consecutive polls
# (INTERFACE_ERRORS needs 3 in a row, LINK_CONGESTION a run of them), and a fault must be seen at the agents'
# poll interval, not 5 minutes later. 30 one-minute polls per interface stay affordable at 20 000 interfaces.
WINDOW_RAW_RECENT_S = 1800


def owamp_bucketed(keys: list[tuple[int, int]], start: datetime, end: datetime, bucket_s: int):
    """Sessions of these path directions in [start, end], aggregated per time bucket. A session that lost packets
    stays its own row (an outage is not a loss rate, and the times of lossy sessions are what a period of losses
    is read from); a bucket of clean sessions keeps each session's time (the sampling grid)."""
    out: dict[tuple[int, int], list[OwampTest]] = defaultdict(list)
    if not keys:
        return out
    for r in sql_rows(
        f"""{DIRECTIONS_CTE}
            SELECT o.src_id, o.dst_id, max(o.time) AS time, count(*) AS n, min(o.id) AS id,
                   sum(o.packets_sent) AS packets_sent, sum(coalesce(o.packets_lost, 0)) AS packets_lost,
                   sum(coalesce(o.duplicates, 0)) AS duplicates, sum(coalesce(o.reordered, 0)) AS reordered,
                   min(o.delay_min_ms) AS delay_min_ms,
                   percentile_cont(0.5) WITHIN GROUP (ORDER BY o.delay_median_ms) AS delay_median_ms,
                   max(o.delay_max_ms) AS delay_max_ms, avg(o.jitter_ms) AS jitter_ms,
                   max(o.clock_error_ms) AS clock_error_ms,
                   CASE WHEN count(*) > 1 THEN array_agg(o.time ORDER BY o.time) END AS session_times
            FROM measurements_owamptest o JOIN k ON k.src_id = o.src_id AND k.dst_id = o.dst_id
            WHERE o.time >= %s AND o.time <= %s AND o.packets_sent IS NOT NULL
            GROUP BY o.src_id, o.dst_id, time_bucket(%s * interval '1 second', o.time),
                     CASE WHEN coalesce(o.packets_lost, 0) > 0 THEN o.id END
            ORDER BY 3""",
        [*pairs_params(keys), start, end, bucket_s],
        binary=True,  # 72 buckets of 5 session times a path: formatted as text and parsed back, most of a shard's CPU
    ):
        out[(r["src_id"], r["dst_id"])].append(owamp_test_of(r))
    return out


def routes_of_period(keys: list[tuple[int, int]], start: datetime, end: datetime):
    """The hop lists the traceroutes of each of these path directions saw in [start, end], each with the last time
    it was seen (all a baseline summary keeps: its last route and the routes it knows, ``evidence.routes_seen``)."""
    out: dict[tuple[int, int], list[tuple[datetime, tuple[str | None, ...]]]] = defaultdict(list)
    if not keys:
        return out
    for r in sql_rows(
        f"""{DIRECTIONS_CTE}
           SELECT t.src_id, t.dst_id, t.hops, max(t.time) AS time
           FROM measurements_traceroute t JOIN k ON k.src_id = t.src_id AND k.dst_id = t.dst_id
           WHERE t.time >= %s AND t.time <= %s AND t.error IS NULL GROUP BY t.src_id, t.dst_id, t.hops""",
        [*pairs_params(keys), start, end],
    ):
        out[(r["src_id"], r["dst_id"])].append((r["time"], tuple(r["hops"])))
    return out


# What outage spans are made of, without reading every poll of the window (a port polled every minute is 360
# samples, nearly all 'up'; read whole, they were most of PostgreSQL's work in a cycle): each interface's first and
# last sample of the window (two index probes), its non-'up' samples (the partial index
# measurements_snmpsample_not_up: few or none), the sample after each of them (the change back), and every sample
# of the trunk members in ``raw``. The same rows as keeping, of every sample, the last, the non-'up', the first
# (nothing before it in the window) and those whose status differs from the one before.
_STATUS_CHANGES = """
    WITH i AS (SELECT unnest(%(ids)s::bigint[]) AS id),
    not_up AS (
        SELECT time, interface_id, oper_status FROM measurements_snmpsample
        WHERE interface_id = ANY(%(ids)s) AND time >= %(start)s AND time <= %(end)s AND lower(oper_status) <> 'up')
    SELECT x.time, i.id AS interface_id, x.oper_status FROM i CROSS JOIN LATERAL (
        (SELECT time, oper_status FROM measurements_snmpsample s
         WHERE s.interface_id = i.id AND s.time >= %(start)s AND s.time <= %(end)s AND s.oper_status IS NOT NULL
         ORDER BY s.time LIMIT 1)
        UNION ALL
        (SELECT time, oper_status FROM measurements_snmpsample s
         WHERE s.interface_id = i.id AND s.time >= %(start)s AND s.time <= %(end)s AND s.oper_status IS NOT NULL
         ORDER BY s.time DESC LIMIT 1)) x
    UNION
    SELECT time, interface_id, oper_status FROM not_up
    UNION
    SELECT n.time, d.interface_id, n.oper_status FROM not_up d CROSS JOIN LATERAL (
        SELECT time, oper_status FROM measurements_snmpsample s
        WHERE s.interface_id = d.interface_id AND s.time > d.time AND s.time <= %(end)s AND s.oper_status IS NOT NULL
        ORDER BY s.time LIMIT 1) n
    UNION
    SELECT time, interface_id, oper_status FROM measurements_snmpsample
    WHERE interface_id = ANY(%(raw)s) AND time >= %(start)s AND time <= %(end)s AND oper_status IS NOT NULL
    ORDER BY 1"""


def interfaces_bulk(
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
        return weighted_mean_sql(col, "interval_s")

    rates: dict[int, list[InterfaceRate]] = defaultdict(list)
    for r in sql_rows(
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
        binary=True,  # ~30 polls an interface with their times: parsed from text, a third of a shard's CPU a path
    ):
        rates[r["interface_id"]].append(interface_rate_of(r))
    gaps = counter_discontinuities(ids, start, end)
    status: dict[int, list[InterfaceStatus]] = defaultdict(list)
    reported: dict[int, float] = {}
    for r in sql_rows(_STATUS_CHANGES, {"ids": ids, "start": start, "end": end, "raw": raw}):
        status[r["interface_id"]].append(InterfaceStatus(r["time"], r["oper_status"]))
    # the speed the device reports (ifHighSpeed) wins over the inventory's: after a port upgrade the inventory
    # may still say 10G while the port runs at 100G, and utilisation against the old speed is a false congestion
    # (the last sample with a speed: an index probe per interface, not a sort of the window's every sample)
    for r in sql_rows(
        """SELECT i.id AS interface_id, x.speed_mbps FROM unnest(%s::bigint[]) AS i(id) CROSS JOIN LATERAL (
               SELECT s.speed_mbps FROM measurements_snmpsample s
               WHERE s.interface_id = i.id AND s.time >= %s AND s.time <= %s AND s.speed_mbps > 0
               ORDER BY s.time DESC LIMIT 1) x""",
        [ids, start, end],
    ):
        reported[r["interface_id"]] = r["speed_mbps"] * 1e6
    out = {}
    for r in sql_rows(
        """SELECT i.id, i.name, i.speed_mbps, i.mtu, e.name AS equipment FROM inventory_interface i
           JOIN inventory_equipment e ON e.id = i.equipment_id WHERE i.id = ANY(%s)""",
        [ids],
    ):
        out[r["id"]] = InterfaceEvidence(
            equipment=r["equipment"],
            interface=r["name"],
            speed_bps=reported.get(r["id"]) or bps_from_mbps(r["speed_mbps"]),
            rates=tuple(rates[r["id"]]),
            discontinuities=tuple(gaps[r["id"]]),
            status=tuple(status[r["id"]]),
            mtu_bytes=r["mtu"],
        )
    return out


# How far back the state a trunk member was in when the window opened is looked for: a member down for a week is
# "down since" the day it went down, not since the window's edge.
STATUS_LOOKBACK_S = 7 * 86400


def status_before(interface_ids: set[int], start: datetime) -> dict[int, list[InterfaceStatus]]:
    """The oper status these interfaces were in when the window opened at ``start``: the last sample before it and,
    when that one is down, the first sample of that down run (when the port went down), within STATUS_LOOKBACK_S.
    Two index probes per interface (a port is polled every minute: its week is 10 000 samples)."""
    out: dict[int, list[InterfaceStatus]] = defaultdict(list)
    if not interface_ids:
        return out
    for r in sql_rows(
        """WITH last AS (
               SELECT i.id AS interface_id, x.time, x.oper_status FROM unnest(%(ids)s::bigint[]) AS i(id)
               CROSS JOIN LATERAL (
                   SELECT time, oper_status FROM measurements_snmpsample s
                   WHERE s.interface_id = i.id AND s.time < %(start)s AND s.time >= %(floor)s
                     AND s.oper_status IS NOT NULL ORDER BY s.time DESC LIMIT 1) x),
           went_down AS (
               SELECT l.interface_id, f.time, f.oper_status FROM last l
               CROSS JOIN LATERAL (
                   SELECT max(u.time) AS t FROM measurements_snmpsample u
                   WHERE u.interface_id = l.interface_id AND u.time < l.time AND u.time >= %(floor)s
                     AND NOT lower(u.oper_status) = ANY(%(down)s)) up
               CROSS JOIN LATERAL (
                   SELECT s.time, s.oper_status FROM measurements_snmpsample s
                   WHERE s.interface_id = l.interface_id AND s.time > coalesce(up.t, %(floor)s - interval '1 second')
                     AND s.time < l.time AND s.oper_status IS NOT NULL ORDER BY s.time LIMIT 1) f
               WHERE lower(l.oper_status) = ANY(%(down)s))
           SELECT * FROM went_down UNION ALL SELECT * FROM last ORDER BY 2""",
        {
            "ids": sorted(interface_ids),
            "start": start,
            "floor": start - timedelta(seconds=STATUS_LOOKBACK_S),
            "down": sorted(k.DOWN_STATUSES),
        },
    ):
        out[r["interface_id"]].append(InterfaceStatus(r["time"], r["oper_status"]))
    return out
