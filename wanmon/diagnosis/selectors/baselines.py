"""Baseline summaries of path directions, learned from the period before the evaluated window.

A week of history is ~50 000 throughput tests and ~300 000 owamp sessions on a 132-path mesh (TCP every 30
minutes, owamp every 5): decoding them row by row into dataclasses took most of an evaluation. The database
summarises the period instead, in two statements whatever the number of paths: one row per path direction with
the owamp and UDP packet counts, the delay figures, the retransmit estimate, the RTT and MSS medians and the TCP
results as two arrays (times as epoch seconds, rates). Only the TCP level is learned in Python, by the pure
``baseline.learn_level`` that every other caller uses, from exactly the results ``summarise_path`` would give
it: the summary equals ``evidence.summarise_path`` over the same tests (tests/diagnosis/test_baseline_sql.py
checks it), sums aside, which the database may add in another order (a difference in the last bits).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TypeVar

from django.core.cache import cache

from wanmon.diagnosis import constants as k
from wanmon.diagnosis.baseline import learn_level
from wanmon.diagnosis.evidence import PathSummary, routes_seen
from wanmon.diagnosis.selectors.common import maintenance_periods, pairs_params, sql_rows
from wanmon.diagnosis.selectors.series import routes_of_period

logger = logging.getLogger(__name__)

K = TypeVar("K")
V = TypeVar("V")

# What summarise_path counts, as SQL conditions on a measurements_throughputtest row t
_TCP = "t.protocol = 'tcp' AND t.error IS NULL AND t.throughput_bps <> 0"
_UDP = "t.protocol = 'udp' AND t.error IS NULL AND t.packets_sent <> 0"
_RETRANS = f"{_TCP} AND t.retransmits IS NOT NULL AND t.duration_s <> 0 AND t.mss_bytes <> 0"


def baseline_summaries(
    keys: list[tuple[int, int]], start: datetime, end: datetime
) -> dict[tuple[int, int], PathSummary]:
    """The baseline of each of these path directions over [start, end], as ``summarise_path`` makes it (failed
    tests and owamp outages left out, the TCP level learned without the maintenance windows of the period).
    Only directions with a throughput test in the period get one, as in ``evidence_bundle_build`` until now."""
    if not keys:
        return {}
    src, dst = pairs_params(keys)
    params = {"src": src, "dst": dst, "start": start, "end": end}
    pairs = "WITH k AS (SELECT unnest(%(src)s::bigint[]) AS src_id, unnest(%(dst)s::bigint[]) AS dst_id)"
    tests = sql_rows(
        f"""{pairs}
            SELECT t.src_id, t.dst_id,
                   array_agg(extract(epoch FROM t.time)::float8 ORDER BY t.time) FILTER (WHERE {_TCP}) AS tcp_times,
                   array_agg(t.throughput_bps ORDER BY t.time) FILTER (WHERE {_TCP}) AS tcp_rates,
                   sum(t.retransmits) FILTER (WHERE {_RETRANS}) AS retrans_lost,
                   sum(t.throughput_bps * t.duration_s / 8.0 / t.mss_bytes + t.retransmits)
                       FILTER (WHERE {_RETRANS}) AS retrans_sent,
                   percentile_cont(0.5) WITHIN GROUP (ORDER BY t.rtt_ms) FILTER (WHERE {_TCP} AND t.rtt_ms <> 0)
                       AS rtt_ms,
                   percentile_cont(0.5) WITHIN GROUP (ORDER BY t.mss_bytes) FILTER (WHERE {_TCP} AND t.mss_bytes <> 0)
                       AS mss_bytes,
                   coalesce(sum(t.packets_sent) FILTER (WHERE {_UDP}), 0) AS udp_sent,
                   coalesce(sum(coalesce(t.packets_lost, 0)) FILTER (WHERE {_UDP}), 0) AS udp_lost
            FROM measurements_throughputtest t JOIN k ON k.src_id = t.src_id AND k.dst_id = t.dst_id
            WHERE t.time >= %(start)s AND t.time <= %(end)s
            GROUP BY t.src_id, t.dst_id""",
        params,
    )
    if not tests:
        return {}
    # Only the directions with a throughput test get a summary: the owamp of the others (at WLCG scale most paths
    # run latencybg alone, a week of one-minute sessions each) would be summed and sorted for nothing.
    tested = [(r["src_id"], r["dst_id"]) for r in tests]
    src, dst = pairs_params(tested)
    params = {**params, "src": src, "dst": dst}
    # sessions that lost every packet are outages, not a loss rate: left out as summarise_path does
    owamp = {
        (r["src_id"], r["dst_id"]): r
        for r in sql_rows(
            f"""{pairs}
                SELECT o.src_id, o.dst_id, sum(o.packets_sent) AS sent, sum(coalesce(o.packets_lost, 0)) AS lost,
                       min(o.delay_min_ms) AS delay_min_ms,
                       percentile_cont(0.5) WITHIN GROUP (ORDER BY o.delay_median_ms) AS delay_median_ms
                FROM measurements_owamptest o JOIN k ON k.src_id = o.src_id AND k.dst_id = o.dst_id
                WHERE o.time >= %(start)s AND o.time <= %(end)s AND o.packets_sent <> 0
                  AND coalesce(o.packets_lost, 0) < o.packets_sent
                GROUP BY o.src_id, o.dst_id""",
            params,
        )
    }
    routes = routes_of_period(tested, start, end)
    works = maintenance_periods(start, end)
    out = {}
    for r in tests:
        key = (r["src_id"], r["dst_id"])
        o = owamp.get(key) or {"sent": 0, "lost": 0, "delay_min_ms": None, "delay_median_ms": None}
        results = zip((datetime.fromtimestamp(x, UTC) for x in r["tcp_times"] or ()), r["tcp_rates"] or (), strict=True)
        level = learn_level(results, works, end)
        probe_sent = int(o["sent"]) + int(r["udp_sent"])
        probe_lost = int(o["lost"]) + int(r["udp_lost"])
        retrans_sent = r["retrans_sent"] or 0.0
        known = routes_seen(routes.get(key, ()))
        out[key] = PathSummary(
            start=start,
            end=end,
            tcp_tests=len(level.rates_bps),
            tcp_excluded_tests=level.excluded,
            tcp_level=level,
            tcp_throughput_median_bps=level.median_bps,
            tcp_throughput_mad_bps=level.mad_bps,
            tcp_loss_fraction=float(r["retrans_lost"]) / retrans_sent if retrans_sent > 0 else None,
            probe_packets=probe_sent,
            probe_loss_fraction=probe_lost / probe_sent if probe_sent > 0 else None,
            delay_min_ms=o["delay_min_ms"],
            delay_median_ms=o["delay_median_ms"],
            rtt_ms=r["rtt_ms"],
            mss_bytes=int(r["mss_bytes"]) if r["mss_bytes"] is not None else None,
            traceroute_hops=known[0] if known else None,
            traceroute_routes=known,
        )
    return out


def baselines_cached(
    keys: list[tuple[int, int]], baseline_start: datetime, baseline_end: datetime
) -> dict[tuple[int, int], PathSummary]:
    """Baseline summaries of these directions for the periodic cycle: the summary is computed once an hour (its
    period aligned on the hour, in the cache for two) instead of every minute, by ``baseline_summaries`` for the
    directions not in the cache. Only directions with tests in the baseline get one (the others are cached
    as ``False``)."""
    start, end = _hour_aligned(baseline_start, baseline_end)
    wanted = list(keys)
    if not wanted:
        return {}
    names = {key: f"wanmon:diagnosis:baseline:v4:{key[0]}:{key[1]}:{end.isoformat()}" for key in wanted}
    out = _cached(names, lambda missing: baseline_summaries(missing, start, end), False)
    return {key: v for key, v in out.items() if v is not False}


#: A port of a path as the room history reads it: (interface id, the side the path uses: 'in' or 'out', speed)
RoomPort = tuple[int, str, float]


def room_history(
    ports: dict[tuple[int, int], tuple[RoomPort, ...]], start: datetime, end: datetime
) -> dict[tuple[int, int], tuple[tuple[datetime, float, float], ...]]:
    """(time, throughput_bps, room_bps) of each direction's completed TCP tests in [start, end) whose room a
    polled port of the path measured: the port's speed less the load on the side the path uses, from the first
    5-minute rollup from the test's bucket on (the one whose polls cover its seconds: polls every 10 minutes fill
    every other bucket), the tightest port's; in one statement whatever the number of directions."""
    rows = [(key, p) for key, ps in ports.items() for p in ps]
    if not rows:
        return {}
    params = {
        "src": [key[0] for key, _ in rows],
        "dst": [key[1] for key, _ in rows],
        "iface": [p[0] for _, p in rows],
        "out": [p[1] == "out" for _, p in rows],
        "speed": [float(p[2]) for _, p in rows],
        "start": start,
        "end": end,
    }
    out: dict[tuple[int, int], list[tuple[datetime, float, float]]] = defaultdict(list)
    for r in sql_rows(
        f"""WITH p AS (SELECT unnest(%(src)s::bigint[]) AS src_id, unnest(%(dst)s::bigint[]) AS dst_id,
                              unnest(%(iface)s::bigint[]) AS interface_id, unnest(%(out)s::bool[]) AS use_out,
                              unnest(%(speed)s::float8[]) AS speed_bps)
            SELECT t.src_id, t.dst_id, t.time, t.throughput_bps,
                   min(greatest(p.speed_bps - CASE WHEN p.use_out THEN r.out_bps_avg ELSE r.in_bps_avg END, 0))
                       AS room_bps
            FROM p JOIN measurements_throughputtest t ON t.src_id = p.src_id AND t.dst_id = p.dst_id
            CROSS JOIN LATERAL (
                SELECT x.in_bps_avg, x.out_bps_avg FROM measurements_interfacerate_5m x
                WHERE x.interface_id = p.interface_id AND x.time >= time_bucket('5 minutes', t.time)
                  AND x.time < t.time + interval '15 minutes'
                ORDER BY x.time LIMIT 1) r
            WHERE t.time >= %(start)s AND t.time < %(end)s AND {_TCP}
              AND (CASE WHEN p.use_out THEN r.out_bps_avg ELSE r.in_bps_avg END) IS NOT NULL
            GROUP BY t.src_id, t.dst_id, t.time, t.throughput_bps
            ORDER BY t.time""",
        params,
    ):
        out[(r["src_id"], r["dst_id"])].append((r["time"], float(r["throughput_bps"]), float(r["room_bps"])))
    return {key: tuple(v) for key, v in out.items()}


def room_history_cached(
    paths: dict[tuple[int, int], int],
    ports_of: Callable[[tuple[int, int]], tuple[RoomPort, ...]],
    baseline_start: datetime,
    baseline_end: datetime,
) -> dict[tuple[int, int], tuple[tuple[datetime, float, float], ...]]:
    """``room_history`` of these directions (their path version ids by key) over the last ROOM_HISTORY_S of the
    baseline period for the periodic cycle: like ``baselines_cached``, once an hour (the period aligned on the
    hour, two hours in the cache), keyed by the path's version (a route change is a new version, with its own
    ports). ``ports_of`` is asked only for the directions not in the cache: finding a path's polled ports is
    work a minute's cycle need not repeat."""
    if not paths:
        return {}
    start, end = _hour_aligned(baseline_start, baseline_end, timedelta(seconds=k.ROOM_HISTORY_S))
    names = {key: f"wanmon:diagnosis:room:v2:{path_id}:{end.isoformat()}" for key, path_id in paths.items()}
    out = _cached(names, lambda missing: room_history({key: ports_of(key) for key in missing}, start, end), ())
    return {key: v for key, v in out.items() if v}


def _hour_aligned(
    baseline_start: datetime, baseline_end: datetime, longest: timedelta | None = None
) -> tuple[datetime, datetime]:
    """The cached period for a baseline period: its end floored to the hour, as long (at most ``longest``)."""
    span = baseline_end - baseline_start if longest is None else min(baseline_end - baseline_start, longest)
    end = baseline_end.replace(minute=0, second=0, microsecond=0)
    return end - span, end


def _cached(names: dict[K, str], compute: Callable[[list[K]], dict[K, V]], absent: V) -> dict[K, V]:
    """The values of these keys from the cache (``names``: their cache keys), those not in it computed at once by
    ``compute`` and kept two hours (``absent`` stands for a key it gave nothing, so that it is not computed again
    every minute). Redis down: everything is computed, the diagnosis must not stop for a cache."""
    try:
        hits = cache.get_many(list(names.values()))
    except Exception:  # noqa: BLE001 -- see the docstring
        logger.warning("diagnosis cache unavailable", exc_info=True)
        hits = {}
    out = {key: hits[name] for key, name in names.items() if name in hits}
    missing = [key for key in names if key not in out]
    if missing:
        computed = compute(missing)
        fresh = {key: computed.get(key, absent) for key in missing}
        out.update(fresh)
        try:
            cache.set_many({names[key]: v for key, v in fresh.items()}, timeout=2 * 3600)
        except Exception:  # noqa: BLE001 -- as above
            logger.warning("diagnosis cache unavailable", exc_info=True)
    return out
