"""Interface rates from consecutive SNMP samples, stored in measurements_interfacerate.

The arithmetic (wraps, resets, plausibility) is collectors.counters, shared with the agent; this
module only feeds it samples from the database and writes what it returns. Recomputing from a
time ``since`` is idempotent, so late or replayed samples simply trigger a recompute.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.db import connection

from collectors.counters import Sample, rate_between
from wanmon.measurements.constants import SNMP_COUNTERS

SAMPLE_COLUMNS = (
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


@dataclass
class RatesRefreshResult:
    """Rows written by one recompute; ``since`` is, per interface, the first rate time it rewrote, ``until`` the
    newest sample it read (every sample up to it now has its rate: the interface's new watermark)."""

    rates: int = 0
    discontinuities: int = 0
    since: dict[int, datetime] = field(default_factory=dict)
    until: dict[int, datetime] = field(default_factory=dict)


def _sample(row: dict, speed_mbps_default: int | None) -> Sample:
    speed_mbps = row["speed_mbps"] or speed_mbps_default
    return Sample(
        time=row["time"],
        sys_uptime_ticks=row["sys_uptime_ticks"],
        engine_boots=row["engine_boots"],
        discontinuity_ticks=row["discontinuity_ticks"],
        counters={c: int(row[c]) for c in SNMP_COUNTERS if row[c] is not None},
        speed_bps=speed_mbps * 1e6 if speed_mbps else None,
    )


def interface_rates_refresh(*, interface_ids: list[int], since: datetime) -> RatesRefreshResult:
    """Recompute rates (and discontinuities) of these interfaces for every sample at or after ``since``.

    The sample just before ``since`` is the starting point, so the first interval is computed too. Only
    the rates and discontinuities stamped at the times of the samples read are replaced: rates are kept
    longer than raw samples (see RETENTION_DAYS), and a recompute must never delete history it cannot
    compute again, however early ``since`` is.
    """
    result = RatesRefreshResult()
    if not interface_ids:
        return result
    cols = ", ".join(SAMPLE_COLUMNS)
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, speed_mbps FROM inventory_interface WHERE id = ANY(%s)", [list(interface_ids)])
        inventory_speed = dict(cursor.fetchall())
        rate_rows: list[tuple] = []
        disc_rows: list[tuple] = []
        for iid in interface_ids:
            cursor.execute(
                f"""(SELECT {cols} FROM measurements_snmpsample WHERE interface_id = %(i)s AND time < %(s)s
                     ORDER BY time DESC LIMIT 1)
                    UNION ALL
                    (SELECT {cols} FROM measurements_snmpsample WHERE interface_id = %(i)s AND time >= %(s)s)
                    ORDER BY time""",
                {"i": iid, "s": since},
            )
            names = [d[0] for d in cursor.description]
            rows = [dict(zip(names, r, strict=True)) for r in cursor.fetchall()]
            if rows:
                result.until[iid] = rows[-1]["time"]
            if len(rows) < 2:
                continue  # no interval to compute, so nothing to replace
            rewritten = [r["time"] for r in rows[1:]]
            result.since[iid] = rewritten[0]
            cursor.execute(
                "DELETE FROM measurements_interfacerate WHERE interface_id = %s AND time = ANY(%s)", [iid, rewritten]
            )
            cursor.execute(
                "DELETE FROM measurements_counterdiscontinuity WHERE interface_id = %s AND time = ANY(%s)",
                [iid, rewritten],
            )
            # Inventory speed first (the operator's truth); ifHighSpeed from the device otherwise.
            speed_default = inventory_speed.get(iid)
            samples = [_sample(r, None) for r in rows]
            if speed_default:
                samples = [
                    Sample(
                        s.time,
                        s.sys_uptime_ticks,
                        s.engine_boots,
                        s.discontinuity_ticks,
                        s.counters,
                        speed_default * 1e6,
                    )
                    for s in samples
                ]
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
                        rows[k]["oper_status"],
                    )
                )
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
