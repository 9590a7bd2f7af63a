"""Rollups of interface rates (5 min, 1 h, 1 d) and retention with drop_chunks.

Every level is computed from the raw per-poll rates, not from the level below: a p95 of p95s is
not a p95, and a mean of means is wrong when buckets hold different numbers of polls. Means are
time-weighted by each rate's interval. A rate row is stamped with the end of its polling interval
and bucketed by that time.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection
from django.utils import timezone

from wanmon.core.sql import sql_array
from wanmon.measurements.constants import RETENTION_DAYS, ROLLUP_LEVELS
from wanmon.measurements.selectors import weighted_mean_sql

# The buckets to recompute, per interface: from the bucket holding its ``since`` on. The constant lower bound (the
# earliest ``since``) lets the planner skip older chunks; the join keeps each interface to its own range.
_RANGE = """unnest(%(ids)s::bigint[], %(since)s::timestamptz[]) AS u(interface_id, since)"""


def _rollup_sql(width: str, table: str) -> str:
    """One statement per level for every interface of a batch: the buckets computed from the raw rates, upserted,
    and the buckets in the range whose raw rates all disappeared (an interval dropped for a discontinuity on
    recompute) deleted. The delete and the upsert touch disjoint rows, so one scan of the rates serves both."""

    def avg(col: str) -> str:
        return weighted_mean_sql(col, "interval_s")

    return f"""
    WITH agg AS (
        SELECT time_bucket(interval '{width}', r.time) AS bucket, r.interface_id, count(*) AS samples,
            sum(interval_s) AS covered_s,
            {avg("in_bps")} AS in_bps_avg, max(in_bps) AS in_bps_max,
            percentile_cont(0.95) WITHIN GROUP (ORDER BY in_bps) AS in_bps_p95,
            {avg("out_bps")} AS out_bps_avg, max(out_bps) AS out_bps_max,
            percentile_cont(0.95) WITHIN GROUP (ORDER BY out_bps) AS out_bps_p95,
            sum(in_errors_per_s * interval_s) AS in_errors, sum(out_errors_per_s * interval_s) AS out_errors,
            sum(in_discards_per_s * interval_s) AS in_discards, sum(out_discards_per_s * interval_s) AS out_discards,
            max(in_utilisation) AS in_utilisation_max, max(out_utilisation) AS out_utilisation_max
        FROM measurements_interfacerate r
        JOIN {_RANGE} ON r.interface_id = u.interface_id AND r.time >= time_bucket(interval '{width}', u.since)
        WHERE r.interface_id = ANY(%(ids)s::bigint[])
          AND r.time >= time_bucket(interval '{width}', %(earliest)s::timestamptz)
        GROUP BY bucket, r.interface_id
    ), gone AS (
        DELETE FROM {table} t USING {_RANGE}
        WHERE t.interface_id = u.interface_id AND t.time >= time_bucket(interval '{width}', u.since)
          AND t.interface_id = ANY(%(ids)s::bigint[])
          AND t.time >= time_bucket(interval '{width}', %(earliest)s::timestamptz)
          AND NOT EXISTS (SELECT 1 FROM agg WHERE agg.interface_id = t.interface_id AND agg.bucket = t.time)
    )
    INSERT INTO {table} AS t (time, interface_id, samples, covered_s,
        in_bps_avg, in_bps_max, in_bps_p95, out_bps_avg, out_bps_max, out_bps_p95,
        in_errors, out_errors, in_discards, out_discards, in_utilisation_max, out_utilisation_max)
    SELECT bucket, interface_id, samples, covered_s, in_bps_avg, in_bps_max, in_bps_p95,
        out_bps_avg, out_bps_max, out_bps_p95, in_errors, out_errors, in_discards, out_discards,
        in_utilisation_max, out_utilisation_max
    FROM agg
    ON CONFLICT (interface_id, time) DO UPDATE SET
        samples = EXCLUDED.samples, covered_s = EXCLUDED.covered_s,
        in_bps_avg = EXCLUDED.in_bps_avg, in_bps_max = EXCLUDED.in_bps_max, in_bps_p95 = EXCLUDED.in_bps_p95,
        out_bps_avg = EXCLUDED.out_bps_avg, out_bps_max = EXCLUDED.out_bps_max, out_bps_p95 = EXCLUDED.out_bps_p95,
        in_errors = EXCLUDED.in_errors, out_errors = EXCLUDED.out_errors,
        in_discards = EXCLUDED.in_discards, out_discards = EXCLUDED.out_discards,
        in_utilisation_max = EXCLUDED.in_utilisation_max, out_utilisation_max = EXCLUDED.out_utilisation_max
    """


def interface_rollups_refresh(
    *,
    interface_ids: list[int] | None = None,
    since: datetime | None = None,
    interface_since: Mapping[int, datetime] | None = None,
    levels: Iterable[str] = tuple(ROLLUP_LEVELS),
) -> None:
    """Recompute every rollup bucket of these interfaces from ``since`` on (idempotent upsert): one statement per
    level (``levels``: names of ROLLUP_LEVELS) for any number of interfaces. Either ``interface_ids`` and one
    ``since``, or ``interface_since`` (a ``since`` per interface)."""
    if interface_since is None:
        interface_since = dict.fromkeys(interface_ids or (), since)
    if not interface_since:
        return
    ids = sorted(interface_since)
    times = [interface_since[i] for i in ids]
    params = {"ids": sql_array(ids), "since": sql_array(times), "earliest": min(times)}
    with connection.cursor() as cursor:
        for level in levels:
            cursor.execute(_rollup_sql(*ROLLUP_LEVELS[level]), params)


def retention_policy() -> dict[str, int | None]:
    """Days to keep per hypertable: the defaults, overridden by settings.WANMON_RETENTION_DAYS."""
    policy = dict(RETENTION_DAYS)
    policy.update(settings.WANMON_RETENTION_DAYS or {})
    return policy


def retention_apply(*, now: datetime | None = None) -> dict[str, int]:
    """Drop whole chunks older than each table's retention (TimescaleDB drop_chunks). Returns chunks dropped."""
    now = now or timezone.now()
    dropped: dict[str, int] = {}
    with connection.cursor() as cursor:
        for table, days in retention_policy().items():
            if days is None:
                continue
            cursor.execute(
                "SELECT count(*) FROM drop_chunks(%s::regclass, older_than => %s::timestamptz)",
                [table, now - timedelta(days=days)],
            )
            dropped[table] = cursor.fetchone()[0]
    return dropped
