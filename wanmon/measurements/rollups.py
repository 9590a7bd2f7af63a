"""Rollups of interface rates (5 min, 1 h, 1 d) and retention with drop_chunks.

Every level is computed from the raw per-poll rates, not from the level below: a p95 of p95s is
not a p95, and a mean of means is wrong when buckets hold different numbers of polls. Means are
time-weighted by each rate's interval. A rate row is stamped with the end of its polling interval
and bucketed by that time.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection
from django.utils import timezone

from wanmon.measurements.constants import RETENTION_DAYS, ROLLUP_LEVELS


def _rollup_sql(width: str, table: str) -> str:
    def avg(col: str) -> str:
        return f"sum({col} * interval_s) / nullif(sum(CASE WHEN {col} IS NOT NULL THEN interval_s END), 0)"

    return f"""
    INSERT INTO {table} AS t (time, interface_id, samples, covered_s,
        in_bps_avg, in_bps_max, in_bps_p95, out_bps_avg, out_bps_max, out_bps_p95,
        in_errors, out_errors, in_discards, out_discards, in_utilisation_max, out_utilisation_max)
    SELECT time_bucket(interval '{width}', time) AS bucket, interface_id, count(*), sum(interval_s),
        {avg("in_bps")}, max(in_bps), percentile_cont(0.95) WITHIN GROUP (ORDER BY in_bps),
        {avg("out_bps")}, max(out_bps), percentile_cont(0.95) WITHIN GROUP (ORDER BY out_bps),
        sum(in_errors_per_s * interval_s), sum(out_errors_per_s * interval_s),
        sum(in_discards_per_s * interval_s), sum(out_discards_per_s * interval_s),
        max(in_utilisation), max(out_utilisation)
    FROM measurements_interfacerate
    WHERE interface_id = ANY(%(ids)s) AND time >= time_bucket(interval '{width}', %(since)s::timestamptz)
    GROUP BY bucket, interface_id
    ON CONFLICT (interface_id, time) DO UPDATE SET
        samples = EXCLUDED.samples, covered_s = EXCLUDED.covered_s,
        in_bps_avg = EXCLUDED.in_bps_avg, in_bps_max = EXCLUDED.in_bps_max, in_bps_p95 = EXCLUDED.in_bps_p95,
        out_bps_avg = EXCLUDED.out_bps_avg, out_bps_max = EXCLUDED.out_bps_max, out_bps_p95 = EXCLUDED.out_bps_p95,
        in_errors = EXCLUDED.in_errors, out_errors = EXCLUDED.out_errors,
        in_discards = EXCLUDED.in_discards, out_discards = EXCLUDED.out_discards,
        in_utilisation_max = EXCLUDED.in_utilisation_max, out_utilisation_max = EXCLUDED.out_utilisation_max
    """


def _stale_buckets_sql(width: str, table: str) -> str:
    # Buckets whose raw rates all disappeared (e.g. an interval dropped for a discontinuity on recompute).
    # The live buckets are computed once and anti-joined: a subquery correlated on the rollup row's time
    # cannot exclude hypertable chunks and probed every chunk's index per row (minutes for a week of 5 min
    # buckets on 100 interfaces; now one scan of the rates the rollup reads anyway).
    return f"""
    DELETE FROM {table} t
    WHERE t.interface_id = ANY(%(ids)s) AND t.time >= time_bucket(interval '{width}', %(since)s::timestamptz)
      AND NOT EXISTS (SELECT 1 FROM (SELECT DISTINCT interface_id, time_bucket(interval '{width}', time) AS bucket
                                     FROM measurements_interfacerate
                                     WHERE interface_id = ANY(%(ids)s)
                                       AND time >= time_bucket(interval '{width}', %(since)s::timestamptz)) r
                      WHERE r.interface_id = t.interface_id AND r.bucket = t.time)
    """


def interface_rollups_refresh(*, interface_ids: list[int], since: datetime) -> None:
    """Recompute every rollup bucket from ``since`` on for these interfaces (idempotent upsert)."""
    if not interface_ids:
        return
    params = {"ids": list(interface_ids), "since": since}
    with connection.cursor() as cursor:
        for width, table in ROLLUP_LEVELS.values():
            cursor.execute(_stale_buckets_sql(width, table), params)
            cursor.execute(_rollup_sql(width, table), params)


def retention_policy() -> dict[str, int | None]:
    """Days to keep per hypertable: the defaults, overridden by settings.WANMON_RETENTION_DAYS."""
    policy = dict(RETENTION_DAYS)
    policy.update(getattr(settings, "WANMON_RETENTION_DAYS", {}) or {})
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
