"""Data-mining reads over the measurement hypertables (all time_bucket SQL lives here).

``measurement_query`` answers "metric X, filtered so, bucketed by B, aggregated by A, grouped by G"
and picks the cheapest table that answers it exactly: raw interface rates, or the 5 min / 1 h /
1 d rollups when the bucket is a multiple of their width.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from wanmon.core.dbrouter import read_connection

RAW_RATES = "measurements_interfacerate"
# Interface metric -> its column of the raw rates table; each is measured in both directions.
INTERFACE_METRICS = {
    f"{direction}_{name}": f"{direction}_{name}"
    for name in ("bps", "errors_per_s", "discards_per_s", "utilisation")
    for direction in ("in", "out")
}
# Rollup columns per interface metric and aggregate; a missing entry means "not answerable from rollups". The
# rollups keep traffic as avg/max/p95 columns, utilisation as its maximum, and errors and discards as event counts.
ROLLUP_COLUMNS = {
    **{(f"{d}_bps", agg): f"{d}_bps_{agg}" for d in ("in", "out") for agg in ("avg", "max", "p95")},
    **{(f"{d}_utilisation", "max"): f"{d}_utilisation_max" for d in ("in", "out")},
    **{(f"{d}_{events}_per_s", "avg"): f"{d}_{events}" for d in ("in", "out") for events in ("errors", "discards")},
}
TEST_METRICS = {
    "throughput_bps": ("measurements_throughputtest", "throughput_bps"),
    "retransmits": ("measurements_throughputtest", "retransmits"),
    "rtt_ms": ("measurements_throughputtest", "rtt_ms"),
    "udp_loss_fraction": ("measurements_throughputtest", "packets_lost::float8 / nullif(packets_sent, 0)"),
    "loss_fraction": ("measurements_owamptest", "packets_lost::float8 / nullif(packets_sent, 0)"),
    "delay_min_ms": ("measurements_owamptest", "delay_min_ms"),
    "delay_median_ms": ("measurements_owamptest", "delay_median_ms"),
    "delay_max_ms": ("measurements_owamptest", "delay_max_ms"),
    "jitter_ms": ("measurements_owamptest", "jitter_ms"),
}
#: Aggregates per bucket; ``median`` and ``pNN`` are percentiles of the rows in the bucket.
PERCENTILES = {"median": 0.5, "p5": 0.05, "p25": 0.25, "p75": 0.75, "p95": 0.95, "p99": 0.99}
AGGREGATES = {"avg", "max", "min", "sum", "count", *PERCENTILES}
LEVELS = [
    (60, RAW_RATES),
    (300, "measurements_interfacerate_5m"),
    (3600, "measurements_interfacerate_1h"),
    (86400, "measurements_interfacerate_1d"),
]
MAX_POINTS_PER_SERIES = 5000
# Per response: every series together (group_by=interface over a thousand interfaces would otherwise pull
# millions of rows into memory). The view passes the settings WANMON_QUERY_MAX_SERIES / _MAX_POINTS.
MAX_SERIES = 1000
MAX_POINTS = 200_000
# The widest bucket: ten years (a wider one is a typo, and overflows timedelta and PostgreSQL intervals).
MAX_BUCKET_S = 3660 * 86400


class QueryError(ValueError):
    """A query that cannot be answered: ``field`` names the parameter at fault."""

    def __init__(self, field_name: str, message: str):
        super().__init__(f"{field_name}: {message}")
        self.field = field_name
        self.message = message


@dataclass
class QueryResult:
    metric: str
    aggregate: str
    bucket_s: int
    source: str
    group_by: list[str]
    series: list[dict] = field(default_factory=list)


def default_bucket_s(start: datetime, end: datetime, target_points: int = 500) -> int:
    """The smallest rollup width giving at most ``target_points`` buckets over the range."""
    span = (end - start).total_seconds()
    for width, _ in LEVELS:
        if span / width <= target_points:
            return width
    return LEVELS[-1][0]


def _agg_sql(aggregate: str, expr: str) -> str:
    if aggregate in PERCENTILES:
        return f"percentile_cont({PERCENTILES[aggregate]}) WITHIN GROUP (ORDER BY {expr})"
    if aggregate == "count":
        return f"count({expr})"
    return f"{aggregate}({expr})"


def weighted_mean_sql(column: str, weight: str) -> str:
    """The mean of ``column`` over a group, each row weighted by the seconds ``weight`` it covers (NULLs left out)."""
    return f"sum({column} * {weight}) / nullif(sum(CASE WHEN {column} IS NOT NULL THEN {weight} END), 0)"


def interface_metric_sql(metric: str, aggregate: str, table: str) -> str:
    """``aggregate`` of the interface ``metric`` over a group of rows ``r`` of ``table``: the raw rates, or a rollup
    holding the metric's ROLLUP_COLUMNS entry. Means are weighted by the seconds each row covers."""
    if table == RAW_RATES:
        column, weight = f"r.{INTERFACE_METRICS[metric]}", "r.interval_s"
    else:
        column, weight = f"r.{ROLLUP_COLUMNS[(metric, aggregate)]}", "r.covered_s"
        if metric.endswith(("_errors_per_s", "_discards_per_s")):
            return f"sum({column}) / nullif(sum(r.covered_s), 0)"  # rollups keep event counts: back to a rate
    return weighted_mean_sql(column, weight) if aggregate == "avg" else _agg_sql(aggregate, column)


def measurement_query(
    *,
    metric: str,
    start: datetime,
    end: datetime,
    bucket_s: int | None = None,
    aggregate: str = "avg",
    group_by: str | None = None,
    site: str | None = None,
    src: str | None = None,
    dst: str | None = None,
    carrier: str | None = None,
    equipment: str | None = None,
    interface: str | None = None,
    protocol: str | None = None,
    max_series: int = MAX_SERIES,
    max_points: int = MAX_POINTS,
) -> QueryResult:
    """Bucketed, aggregated series of one metric; see the module docstring.

    At most ``max_series`` series and ``max_points`` points in all are answered; more is a QueryError
    naming what to narrow, found without reading more than ``max_points + 1`` rows.
    """
    if aggregate not in AGGREGATES:
        raise QueryError("aggregate", f"must be one of {sorted(AGGREGATES)}")
    if end <= start:
        raise QueryError("end", "must be after start")
    bucket_s = bucket_s or default_bucket_s(start, end)
    if bucket_s < 1:
        raise QueryError("bucket", "must be at least 1 second")
    if bucket_s > MAX_BUCKET_S:
        raise QueryError("bucket", f"must be at most {MAX_BUCKET_S // 86400} days")
    if (end - start).total_seconds() / bucket_s > MAX_POINTS_PER_SERIES:
        raise QueryError("bucket", f"too fine for this range: more than {MAX_POINTS_PER_SERIES} points per series")
    _check_names(site=site, src=src, dst=dst, carrier=carrier, equipment=equipment, interface=interface)
    limits = (max_series, max_points)
    if metric in INTERFACE_METRICS:
        return _interface_query(
            metric, start, end, bucket_s, aggregate, group_by or "interface", site, carrier, equipment, interface,
            limits,
        )
    if metric in TEST_METRICS:
        return _test_query(
            metric, start, end, bucket_s, aggregate, group_by or "path", site, src, dst, protocol, limits
        )
    raise QueryError("metric", f"unknown metric {metric!r}; one of {sorted(INTERFACE_METRICS) + sorted(TEST_METRICS)}")


def _check_names(**names: str | None) -> None:
    """A filter naming a site, carrier, equipment or interface the inventory does not know is a QueryError naming
    it (a typo such as ``src=CRN`` would otherwise answer an empty result, which reads as "no data")."""
    checks = {
        "site": ("SELECT 1 FROM inventory_site WHERE code = %s", "site"),
        "src": ("SELECT 1 FROM inventory_site WHERE code = %s", "site"),
        "dst": ("SELECT 1 FROM inventory_site WHERE code = %s", "site"),
        "carrier": ("SELECT 1 FROM inventory_carrier WHERE code = %s", "carrier"),
        "equipment": ("SELECT 1 FROM inventory_equipment WHERE name = %s", "equipment"),
    }
    with read_connection().cursor() as cursor:
        for name, value in names.items():
            if not value:
                continue
            if name == "interface":
                eq, sep, iface = value.partition(":")
                if sep:
                    cursor.execute("""SELECT 1 FROM inventory_interface i JOIN inventory_equipment e
                                      ON e.id = i.equipment_id WHERE e.name = %s AND i.name = %s""", [eq, iface])
                else:
                    cursor.execute("SELECT 1 FROM inventory_interface WHERE name = %s LIMIT 1", [value])
                what = "interface"
            else:
                sql, what = checks[name]
                cursor.execute(sql, [value])
            if cursor.fetchone() is None:
                raise QueryError(name, f"unknown {what} {value[:100]!r}")


def _interface_query(metric, start, end, bucket_s, aggregate, group_by, site, carrier, equipment, interface, limits):
    groups = {
        "interface": ["e.name AS equipment", "i.name AS interface"],
        "equipment": ["e.name AS equipment"],
        "all": [],
    }
    if group_by not in groups:
        raise QueryError("group_by", f"interface metrics group by one of {sorted(groups)}")
    # The coarsest table whose width divides the bucket and that holds this aggregate exactly.
    table = RAW_RATES
    if (metric, aggregate) in ROLLUP_COLUMNS:
        for width, candidate in reversed(LEVELS[1:]):
            if bucket_s % width == 0 and (aggregate not in PERCENTILES or bucket_s == width):
                table = candidate
                break
    value = interface_metric_sql(metric, aggregate, table)
    where = ["r.time >= %(start)s", "r.time < %(end)s"]
    params: dict = {"start": start, "end": end, "bucket": timedelta(seconds=bucket_s)}
    if site:
        where.append("s.code = %(site)s")
        params["site"] = site
    if carrier:
        where.append("c.code = %(carrier)s")
        params["carrier"] = carrier
    if equipment:
        where.append("e.name = %(equipment)s")
        params["equipment"] = equipment
    if interface:
        eq, sep, name = interface.partition(":")
        if sep:
            where.append("e.name = %(if_eq)s AND i.name = %(if_name)s")
            params.update(if_eq=eq, if_name=name)
        else:
            where.append("i.name = %(if_name)s")
            params["if_name"] = interface
    keys = groups[group_by]
    key_names = [k.split(" AS ")[1] for k in keys]
    select_keys = "".join(f"{k}, " for k in keys)
    group_cols = "".join(f", {n}" for n in key_names)
    sql = f"""
        SELECT {select_keys} time_bucket(%(bucket)s, r.time) AS bucket, {value} AS value
        FROM {table} r
        JOIN inventory_interface i ON i.id = r.interface_id
        JOIN inventory_equipment e ON e.id = i.equipment_id
        LEFT JOIN inventory_site s ON s.id = e.site_id
        LEFT JOIN inventory_carrier c ON c.id = e.carrier_id
        WHERE {" AND ".join(where)}
        GROUP BY bucket{group_cols}
        ORDER BY {", ".join(key_names + ["bucket"])}
    """
    return _run(sql, params, key_names, metric, aggregate, bucket_s, table, group_by, limits)


def _test_query(metric, start, end, bucket_s, aggregate, group_by, site, src, dst, protocol, limits):
    table, expr = TEST_METRICS[metric]
    groups = {
        "path": ["ss.code AS src", "sd.code AS dst"],
        "src": ["ss.code AS src"],
        "dst": ["sd.code AS dst"],
        "all": [],
    }
    if group_by not in groups:
        raise QueryError("group_by", f"test metrics group by one of {sorted(groups)}")
    where = ["r.time >= %(start)s", "r.time < %(end)s"]
    params: dict = {"start": start, "end": end, "bucket": timedelta(seconds=bucket_s)}
    for name, value, clause in (
        ("src", src, "ss.code = %(src)s"),
        ("dst", dst, "sd.code = %(dst)s"),
        ("site", site, "(ss.code = %(site)s OR sd.code = %(site)s)"),
    ):
        if value:
            where.append(clause)
            params[name] = value
    if table == "measurements_throughputtest":
        where.append("r.error IS NULL")
        if protocol:
            where.append("r.protocol = %(protocol)s")
            params["protocol"] = protocol
        elif metric != "udp_loss_fraction":
            where.append("r.protocol = 'tcp'")
        else:
            where.append("r.protocol = 'udp'")
    keys = groups[group_by]
    key_names = [k.split(" AS ")[1] for k in keys]
    sql = f"""
        SELECT {"".join(f"{k}, " for k in keys)} time_bucket(%(bucket)s, r.time) AS bucket,
               {_agg_sql(aggregate, expr)} AS value
        FROM {table} r
        JOIN inventory_site ss ON ss.id = r.src_id
        JOIN inventory_site sd ON sd.id = r.dst_id
        WHERE {" AND ".join(where)}
        GROUP BY bucket{"".join(f", {n}" for n in key_names)}
        ORDER BY {", ".join(key_names + ["bucket"])}
    """
    return _run(sql, params, key_names, metric, aggregate, bucket_s, table, group_by, limits)


def _run(sql, params, key_names, metric, aggregate, bucket_s, table, group_by, limits) -> QueryResult:
    max_series, max_points = limits
    result = QueryResult(metric=metric, aggregate=aggregate, bucket_s=bucket_s, source=table, group_by=key_names)
    with read_connection().cursor() as cursor:  # the read replica inside a page or API read
        cursor.execute(f"{sql} LIMIT %(row_limit)s", {**params, "row_limit": max_points + 1})
        rows = cursor.fetchall()
        if len(rows) > max_points:
            raise QueryError(
                "bucket",
                f"the answer has more than {max_points} points in all series: use a shorter range, a coarser bucket, "
                "filters or a coarser group_by",
            )
        current_key = None
        for row in rows:
            key = dict(zip(key_names, row[: len(key_names)], strict=True))
            if key != current_key:
                if len(result.series) == max_series:
                    raise QueryError(
                        "group_by",
                        f"the answer has more than {max_series} series ({group_by}): filter by site, equipment, "
                        "interface, src or dst, or group coarser",
                    )
                result.series.append({"key": key, "points": []})
                current_key = key
            bucket, value = row[len(key_names)], row[len(key_names) + 1]
            result.series[-1]["points"].append([bucket, float(value) if value is not None else None])
    return result
