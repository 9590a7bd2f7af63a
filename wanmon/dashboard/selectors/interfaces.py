"""Interface rates for the charts and the tables: bucketed series from the raw rates or the rollup the
bucket width allows, the newest rate, and counter discontinuities."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from wanmon.core.sql import sql_rows
from wanmon.dashboard import constants as k
from wanmon.measurements.selectors import INTERFACE_METRICS, LEVELS, RAW_RATES, interface_metric_sql


@dataclass
class InterfaceSeries:
    """Bucketed rates of one interface (bit/s, fractions of the speed, events per second)."""

    times: list[datetime] = field(default_factory=list)
    in_bps: list[float | None] = field(default_factory=list)
    out_bps: list[float | None] = field(default_factory=list)
    in_utilisation: list[float | None] = field(default_factory=list)
    out_utilisation: list[float | None] = field(default_factory=list)
    in_errors_per_s: list[float | None] = field(default_factory=list)
    out_errors_per_s: list[float | None] = field(default_factory=list)
    in_discards_per_s: list[float | None] = field(default_factory=list)
    out_discards_per_s: list[float | None] = field(default_factory=list)

    def mean(self, name: str) -> float | None:
        values = [v for v in getattr(self, name) if v is not None]
        return sum(values) / len(values) if values else None


def interface_table_for_bucket(bucket_s: int) -> str:
    """The coarsest table whose width divides the bucket: raw rates, or the 5 min / 1 h / 1 d rollup."""
    for width, table in reversed(LEVELS):
        if bucket_s % width == 0:
            return table
    return RAW_RATES


def interface_series(
    *, interface_ids: Sequence[int], start: datetime, end: datetime, bucket_s: int
) -> tuple[str, dict[int, InterfaceSeries]]:
    """Rates of the interfaces per bucket, read from the table the bucket allows; returns (table, series).

    Traffic is the time-weighted mean, utilisation the maximum (the congestion that matters), errors
    and discards the mean rate over the bucket.
    """
    table = interface_table_for_bucket(bucket_s)
    out: dict[int, InterfaceSeries] = {i: InterfaceSeries() for i in interface_ids}
    if not interface_ids:
        return table, out
    columns = ", ".join(
        f"{interface_metric_sql(name, 'max' if name.endswith('_utilisation') else 'avg', table)} AS {name}"
        for name in INTERFACE_METRICS
    )
    rows = sql_rows(
        f"""SELECT interface_id, time_bucket(%(bucket)s, time) AS bucket, {columns}
            FROM {table} r
            WHERE interface_id = ANY(%(ids)s) AND time >= %(start)s AND time < %(end)s
            GROUP BY interface_id, bucket ORDER BY interface_id, bucket""",
        {"ids": list(interface_ids), "start": start, "end": end, "bucket": timedelta(seconds=bucket_s)},
    )
    for row in rows:
        series = out[row["interface_id"]]
        series.times.append(row["bucket"])
        for name in INTERFACE_METRICS:
            getattr(series, name).append(row[name])
    return table, out


def interface_latest(*, interface_ids: Sequence[int], at: datetime) -> dict[int, dict]:
    """The newest rate of each interface up to ``at`` (within the grid's look-back)."""
    if not interface_ids:
        return {}
    rows = sql_rows(
        """SELECT DISTINCT ON (interface_id) interface_id, time, in_bps, out_bps, in_utilisation, out_utilisation,
                  in_errors_per_s, out_errors_per_s, in_discards_per_s, out_discards_per_s, oper_status
           FROM measurements_interfacerate
           WHERE interface_id = ANY(%s) AND time > %s AND time <= %s
           ORDER BY interface_id, time DESC, id DESC""",
        [list(interface_ids), at - k.LATEST_LOOKBACK, at],
    )
    return {r["interface_id"]: r for r in rows}


def interface_discontinuities(*, interface_ids: Sequence[int], start: datetime, end: datetime) -> list[dict]:
    if not interface_ids:
        return []
    return sql_rows(
        """SELECT d.time, d.previous_time, d.code, d.reason, e.name AS equipment, i.name AS interface
           FROM measurements_counterdiscontinuity d
           JOIN inventory_interface i ON i.id = d.interface_id
           JOIN inventory_equipment e ON e.id = i.equipment_id
           WHERE d.interface_id = ANY(%s) AND d.time >= %s AND d.time < %s ORDER BY d.time""",
        [list(interface_ids), start, end],
    )

