"""Interface rates from consecutive SNMP samples, stored in measurements_interfacerate.

The arithmetic (wraps, resets, plausibility) is collectors.counters, shared with the agent; this
module only feeds it samples from the database and writes what it returns. Recomputing from a
time ``since`` is idempotent, so late or replayed samples simply trigger a recompute.

A recompute is a fixed number of statements whatever the number of interfaces (the ingest's follow-up runs
after every batch of 20 000 polls a minute): one read of every interface's samples and of the sample before
each one's ``since``, one delete of the rates and discontinuities it rewrites, one COPY of the new rates.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from django.db import connection

from collectors.counters import Sample, rate_between
from wanmon.core.sql import sql_array
from wanmon.core.units import bps_from_mbps
from wanmon.measurements.constants import SNMP_COUNTERS

SAMPLE_COLUMNS = (
    "interface_id",
    "time",
    "sys_uptime_ticks",
    "engine_boots",
    "discontinuity_ticks",
    "oper_status",
    "speed_mbps",
    *SNMP_COUNTERS,
)
RATE_COLUMNS = (
    "time",
    "interface_id",
    "interval_s",
    "in_bps",
    "out_bps",
    "in_pps",
    "out_pps",
    "in_errors_per_s",
    "out_errors_per_s",
    "in_discards_per_s",
    "out_discards_per_s",
    "in_utilisation",
    "out_utilisation",
    "oper_status",
)
_COUNTERS_AT = len(SAMPLE_COLUMNS) - len(SNMP_COUNTERS)


@dataclass
class RatesRefreshResult:
    """Rows written by one recompute; ``since`` is, per interface, the first rate time it rewrote, ``until`` the
    newest sample it read (every sample up to it now has its rate: the interface's new watermark)."""

    rates: int = 0
    discontinuities: int = 0
    since: dict[int, datetime] = field(default_factory=dict)
    until: dict[int, datetime] = field(default_factory=dict)


# Per interface: its newest sample before ``since`` (the starting point of the first interval; a probe of the
# (interface_id, time) index that stops at the newest chunk holding one), then every sample from ``since`` on.
# The constant lower bound lets the planner skip the chunks older than the earliest ``since``.
_SAMPLES_SQL = f"""
WITH u AS (SELECT * FROM unnest(%(ids)s::bigint[], %(since)s::timestamptz[]) AS u(interface_id, since))
SELECT p.* FROM u CROSS JOIN LATERAL (
    SELECT {", ".join(SAMPLE_COLUMNS)} FROM measurements_snmpsample s
    WHERE s.interface_id = u.interface_id AND s.time < u.since ORDER BY s.time DESC LIMIT 1) p
UNION ALL
SELECT {", ".join(f"s.{c}" for c in SAMPLE_COLUMNS)} FROM measurements_snmpsample s
JOIN u ON s.interface_id = u.interface_id AND s.time >= u.since
WHERE s.interface_id = ANY(%(ids)s::bigint[]) AND s.time >= %(earliest)s
ORDER BY interface_id, time
"""

# The rows stamped at the rewritten sample times, and only those: rates are kept longer than raw samples (see
# RETENTION_DAYS), and a recompute must never delete history it cannot compute again, however early ``since``.
_DELETE_SQL = """
DELETE FROM {table} t USING unnest(%(ids)s::bigint[], %(times)s::timestamptz[]) AS d(interface_id, time)
WHERE t.interface_id = d.interface_id AND t.time = d.time AND t.interface_id = ANY(%(ids)s::bigint[])
  AND t.time >= %(first)s AND t.time <= %(last)s
"""


def _samples(rows: list[tuple], inventory_speed_mbps: Mapping[int, int]) -> list[Sample]:
    """One interface's samples (rows of _SAMPLES_SQL in time order) for collectors.counters.

    The inventory speed first (the operator's truth); ifHighSpeed from the device otherwise.
    """
    default_mbps = inventory_speed_mbps.get(rows[0][0]) if rows else None
    samples = []
    for row in rows:
        speed_mbps = default_mbps or row[6]
        values = zip(SNMP_COUNTERS, row[_COUNTERS_AT:], strict=True)
        counters = {name: int(value) for name, value in values if value is not None}
        samples.append(Sample(row[1], row[2], row[3], row[4], counters, bps_from_mbps(speed_mbps)))
    return samples


def interface_rates_refresh(*, interface_since: Mapping[int, datetime]) -> RatesRefreshResult:
    """Recompute rates (and discontinuities) of these interfaces, each for every sample at or after its ``since``.

    The sample just before ``since`` is the starting point, so the first interval is computed too. Only the rates
    and discontinuities stamped at the times of the samples read are replaced. A fixed number of statements for
    any number of interfaces.
    """
    result = RatesRefreshResult()
    if not interface_since:
        return result
    ids = sorted(interface_since)
    since = [interface_since[i] for i in ids]
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, speed_mbps FROM inventory_interface WHERE id = ANY(%s::bigint[])", [sql_array(ids)])
        inventory_speed_mbps = dict(cursor.fetchall())
        cursor.execute(_SAMPLES_SQL, {"ids": sql_array(ids), "since": sql_array(since), "earliest": min(since)})
        by_interface: dict[int, list[tuple]] = {}
        for row in cursor.fetchall():
            by_interface.setdefault(row[0], []).append(row)
        rate_rows: list[tuple] = []
        disc_rows: list[tuple] = []
        rewritten_ids: list[int] = []
        rewritten_times: list[datetime] = []
        for iid, rows in by_interface.items():
            result.until[iid] = rows[-1][1]
            if len(rows) < 2:
                continue  # no interval to compute, so nothing to replace
            result.since[iid] = rows[1][1]
            for row in rows[1:]:
                rewritten_ids.append(iid)
                rewritten_times.append(row[1])
            samples = _samples(rows, inventory_speed_mbps)
            for k in range(1, len(samples)):
                prev, cur = samples[k - 1], samples[k]
                rate = rate_between(prev, cur)
                if not rate.valid:
                    disc_rows.append(
                        (cur.time, prev.time, iid, rate.discontinuity_code or "", rate.discontinuity or "")
                    )
                    continue
                speed = cur.speed_bps
                rate_rows.append(
                    (
                        cur.time,
                        iid,
                        rate.interval_s,
                        rate.in_bps,
                        rate.out_bps,
                        rate.in_ucast_pps,
                        rate.out_ucast_pps,
                        rate.in_errors_per_s,
                        rate.out_errors_per_s,
                        rate.in_discards_per_s,
                        rate.out_discards_per_s,
                        rate.in_bps / speed if speed and rate.in_bps is not None else None,
                        rate.out_bps / speed if speed and rate.out_bps is not None else None,
                        rows[k][5],
                    )
                )
        if rewritten_times:
            params = {
                "ids": sql_array(rewritten_ids),
                "times": sql_array(rewritten_times),
                "first": min(rewritten_times),
                "last": max(rewritten_times),
            }
            for table in ("measurements_interfacerate", "measurements_counterdiscontinuity"):
                cursor.execute(_DELETE_SQL.format(table=table), params)
        raw = cursor.cursor
        if rate_rows:
            with raw.copy(f"COPY measurements_interfacerate ({', '.join(RATE_COLUMNS)}) FROM STDIN") as copy:
                for row in rate_rows:
                    copy.write_row(row)
        if disc_rows:
            raw.executemany(
                "INSERT INTO measurements_counterdiscontinuity (time, previous_time, interface_id, code, reason) "
                "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (interface_id, time) "
                "DO UPDATE SET code = EXCLUDED.code, reason = EXCLUDED.reason",
                disc_rows,
            )
    result.rates = len(rate_rows)
    result.discontinuities = len(disc_rows)
    return result
