"""The path page: the tests of one direction over a range (per test or per bucket), route changes, the
inputs of the derived figures, and the interfaces the path crosses."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from wanmon.core.sql import sql_rows
from wanmon.dashboard.path_ports import PathPort, path_ports
from wanmon.dashboard.selectors.probe_loss import OUTSIDE_WINDOWS, probe_loss_sums
from wanmon.inventory.models import Interface, Path, Site
from wanmon.inventory.selectors import (
    link_far_end_map,
    path_list_versions,
    path_membership_hops,
    path_membership_inputs,
)


@dataclass
class TestRows:
    """Tests of one direction: one row per test (short ranges) or per bucket (avg, min, max)."""

    bucketed: bool
    times: list[datetime] = field(default_factory=list)
    values: list[float | None] = field(default_factory=list)
    lows: list[float | None] = field(default_factory=list)
    highs: list[float | None] = field(default_factory=list)
    details: list[dict] = field(default_factory=list)


@dataclass
class DirectionData:
    src: str
    dst: str
    path: Path | None
    versions: list[Path]
    tcp: TestRows
    failed: list[dict]
    udp_loss: TestRows
    owamp_loss: TestRows
    delay_min: TestRows
    delay_median: TestRows
    traceroutes: list[dict]
    derived_samples: dict


def _tcp_tests(src_id: int, dst_id: int, start, end, bucket_s: int, raw: bool) -> tuple[TestRows, list[dict]]:
    params = {"src": src_id, "dst": dst_id, "start": start, "end": end, "bucket": timedelta(seconds=bucket_s)}
    failed = sql_rows(
        """SELECT time, error FROM measurements_throughputtest
           WHERE src_id = %(src)s AND dst_id = %(dst)s AND time >= %(start)s AND time < %(end)s
             AND error IS NOT NULL ORDER BY time, id""",
        params,
    )
    if raw:
        rows = sql_rows(
            """SELECT time, throughput_bps, window_bytes, rtt_ms, retransmits, streams, mss_bytes, src_host, dst_host
               FROM measurements_throughputtest
               WHERE src_id = %(src)s AND dst_id = %(dst)s AND protocol = 'tcp' AND error IS NULL
                 AND time >= %(start)s AND time < %(end)s ORDER BY time, id""",
            params,
        )
        return TestRows(bucketed=False, times=[r["time"] for r in rows], values=[r["throughput_bps"] for r in rows],
                        details=rows), failed
    rows = sql_rows(
        """SELECT time_bucket(%(bucket)s, time) AS time, avg(throughput_bps) AS value, min(throughput_bps) AS low,
                  max(throughput_bps) AS high, count(*) AS tests
           FROM measurements_throughputtest
           WHERE src_id = %(src)s AND dst_id = %(dst)s AND protocol = 'tcp' AND error IS NULL
             AND time >= %(start)s AND time < %(end)s
           GROUP BY 1 ORDER BY 1""",
        params,
    )
    return _bucketed(rows), failed


def _bucketed(rows: list[dict]) -> TestRows:
    return TestRows(bucketed=True, times=[r["time"] for r in rows], values=[r["value"] for r in rows],
                    lows=[r.get("low") for r in rows], highs=[r.get("high") for r in rows], details=rows)


def _udp_loss(src_id, dst_id, start, end, bucket_s, raw) -> TestRows:
    params = {"src": src_id, "dst": dst_id, "start": start, "end": end, "bucket": timedelta(seconds=bucket_s)}
    if raw:
        rows = sql_rows(
            """SELECT time, packets_lost::float8 / packets_sent AS value, packets_lost, packets_sent, offered_bps,
                      throughput_bps
               FROM measurements_throughputtest
               WHERE src_id = %(src)s AND dst_id = %(dst)s AND protocol = 'udp' AND error IS NULL
                 AND packets_sent > 0 AND time >= %(start)s AND time < %(end)s ORDER BY time, id""",
            params,
        )
        return TestRows(bucketed=False, times=[r["time"] for r in rows], values=[r["value"] for r in rows],
                        details=rows)
    rows = sql_rows(
        """SELECT time_bucket(%(bucket)s, time) AS time, sum(packets_lost)::float8 / sum(packets_sent) AS value,
                  sum(packets_lost) AS packets_lost, sum(packets_sent) AS packets_sent
           FROM measurements_throughputtest
           WHERE src_id = %(src)s AND dst_id = %(dst)s AND protocol = 'udp' AND error IS NULL
             AND packets_sent > 0 AND time >= %(start)s AND time < %(end)s
           GROUP BY 1 ORDER BY 1""",
        params,
    )
    return _bucketed(rows)


def _owamp(src_id, dst_id, start, end, bucket_s, raw) -> tuple[TestRows, TestRows, TestRows]:
    """Loss, minimum delay and median delay of the one-way probes (per session, or per bucket)."""
    params = {"src": src_id, "dst": dst_id, "start": start, "end": end, "bucket": timedelta(seconds=bucket_s)}
    if raw:
        rows = sql_rows(
            """SELECT time, packets_lost, packets_sent, packets_lost::float8 / packets_sent AS loss,
                      delay_min_ms, delay_median_ms, delay_max_ms, jitter_ms, reordered, duplicates
               FROM measurements_owamptest
               WHERE src_id = %(src)s AND dst_id = %(dst)s AND error IS NULL AND packets_sent > 0
                 AND time >= %(start)s AND time < %(end)s ORDER BY time, id""",
            params,
        )
    else:
        rows = sql_rows(
            """SELECT time_bucket(%(bucket)s, time) AS time, sum(packets_lost) AS packets_lost,
                      sum(packets_sent) AS packets_sent, sum(packets_lost)::float8 / sum(packets_sent) AS loss,
                      min(delay_min_ms) AS delay_min_ms, avg(delay_median_ms) AS delay_median_ms,
                      max(delay_max_ms) AS delay_max_ms
               FROM measurements_owamptest
               WHERE src_id = %(src)s AND dst_id = %(dst)s AND error IS NULL AND packets_sent > 0
                 AND time >= %(start)s AND time < %(end)s
               GROUP BY 1 ORDER BY 1""",
            params,
        )
    times = [r["time"] for r in rows]
    return (
        TestRows(bucketed=not raw, times=times, values=[r["loss"] for r in rows], details=rows),
        TestRows(bucketed=not raw, times=times, values=[r["delay_min_ms"] for r in rows], details=rows),
        TestRows(bucketed=not raw, times=times, values=[r["delay_median_ms"] for r in rows], details=rows),
    )


def _traceroutes(src_id, dst_id, start, end) -> list[dict]:
    """Route changes seen by traceroute: the last traceroute before the range (so a change at the range
    start shows) or the first in it, then each one whose hop list differs from the one before it.

    Hourly traceroutes over a year are thousands of identical hop lists: the database keeps the first
    of each run of equal lists, so consecutive rows returned always differ."""
    return sql_rows(
        """SELECT time, hops, pmtu_bytes FROM (
               SELECT time, hops, pmtu_bytes, lag(hops) OVER (ORDER BY time, id) AS previous,
                      row_number() OVER (ORDER BY time, id) AS n
               FROM measurements_traceroute
               WHERE src_id = %(src)s AND dst_id = %(dst)s AND error IS NULL AND time < %(end)s
                 AND time >= coalesce((SELECT max(time) FROM measurements_traceroute
                                       WHERE src_id = %(src)s AND dst_id = %(dst)s AND error IS NULL
                                         AND time < %(start)s), %(start)s)) t
           WHERE n = 1 OR hops IS DISTINCT FROM previous
           ORDER BY time""",
        {"src": src_id, "dst": dst_id, "start": start, "end": end},
    )


def _positive_median(column: str) -> str:
    # The median _median of derived.py takes (positive, finite values; the mean of the two middle ones).
    return (f"percentile_cont(0.5) WITHIN GROUP (ORDER BY {column}) "
            f"FILTER (WHERE {column} > 0 AND {column}::float8 < 'Infinity'::float8)")


def _derived_samples(src_id, dst_id, start, end, exclude: Sequence[tuple[datetime, datetime]] = ()) -> dict:
    """Inputs of the derived figures over the range: medians of TCP RTT, MSS and window and of the probes'
    minimum delay (computed by the database: a year holds ~100 000 probe sessions), probe loss; the rows inside
    the ``exclude`` windows (maintenance) left out: the loss of planned work says nothing of the path's physics
    (a Mathis ceiling of 158 Mb/s drawn under tests at 93 Gb/s).

    Each median is handed on as a one-value list: the median of it is itself."""
    params = {"src": src_id, "dst": dst_id, "start": start, "end": end,
              "ms": [w[0] for w in exclude], "me": [w[1] for w in exclude]}
    tcp = sql_rows(
        f"""SELECT {_positive_median("rtt_ms")} AS rtt, {_positive_median("mss_bytes")} AS mss,
                   {_positive_median("window_bytes")} AS window
            FROM measurements_throughputtest
            WHERE src_id = %(src)s AND dst_id = %(dst)s AND protocol = 'tcp' AND error IS NULL
              AND time >= %(start)s AND time < %(end)s AND {OUTSIDE_WINDOWS}""",
        params,
    )[0]
    delay = sql_rows(
        f"""SELECT {_positive_median("delay_min_ms")} AS delay FROM measurements_owamptest
            WHERE src_id = %(src)s AND dst_id = %(dst)s AND error IS NULL AND packets_sent > 0
              AND packets_lost < packets_sent AND time >= %(start)s AND time < %(end)s AND {OUTSIDE_WINDOWS}""",
        params,
    )[0]["delay"]
    # The sums the diagnosis's loss estimator takes (owamp sessions and UDP tests, each with the loss its runs can
    # see): the page's Mathis ceiling is the one the findings quote.
    sums = probe_loss_sums(start=start, end=end, src_id=src_id, dst_id=dst_id, exclude=exclude).get(
        (src_id, dst_id), {}
    )
    owamp = sums.get("owamp") or dict.fromkeys(("lost", "sent", "runs", "visible", "visible_runs"), 0)
    udp = sums.get("udp") or dict.fromkeys(("lost", "sent", "runs", "visible", "visible_runs"), 0)

    def one(value) -> list:
        return [] if value is None else [value]

    return {
        "rtts": one(tcp["rtt"]),
        "mss": one(tcp["mss"]),
        "windows": one(tcp["window"]),
        "lost": owamp["lost"],
        "sent": owamp["sent"],
        "sessions": owamp["runs"],
        "visible": owamp["visible"],
        "visible_sessions": owamp["visible_runs"],
        "udp_lost": udp["lost"],
        "udp_sent": udp["sent"],
        "udp_tests": udp["runs"],
        "udp_visible": udp["visible"],
        "udp_visible_tests": udp["visible_runs"],
        "delays": one(delay),
    }

def direction_data(*, src: str, dst: str, start: datetime, end: datetime, bucket_s: int, raw: bool,
                   exclude: Sequence[tuple[datetime, datetime]] = ()) -> DirectionData:
    """Everything the path page draws for one direction; the derived figures leave out the ``exclude`` windows."""
    sites = dict(Site.objects.filter(code__in=[src, dst]).values_list("code", "id"))
    versions = list(path_list_versions(src=src, dst=dst, start=start, end=end))
    current = versions[-1] if versions else None
    if src not in sites or dst not in sites:
        empty = TestRows(bucketed=not raw)
        return DirectionData(src, dst, current, versions, empty, [], empty, empty, empty, empty, [], {})
    s, d = sites[src], sites[dst]
    tcp, failed = _tcp_tests(s, d, start, end, bucket_s, raw)
    owamp_loss, delay_min, delay_median = _owamp(s, d, start, end, bucket_s, raw)
    return DirectionData(
        src=src, dst=dst, path=current, versions=versions, tcp=tcp, failed=failed,
        udp_loss=_udp_loss(s, d, start, end, bucket_s, raw), owamp_loss=owamp_loss, delay_min=delay_min,
        delay_median=delay_median, traceroutes=_traceroutes(s, d, start, end),
        derived_samples=_derived_samples(s, d, start, end, exclude),
    )


def path_interfaces(paths: Sequence[Path | None], *, at: datetime) -> list[tuple[PathPort, Interface]]:
    """The ports whose counters carry each path in its direction (:mod:`wanmon.dashboard.path_ports`): the port
    each hop leaves by and its trunk siblings (out), and the far end by which the next hop is reached (in), with
    which path (index in ``paths``) and which side. Links the inventory has no circuit for are paired from the
    paths in force at ``at`` (a fixed number of queries whatever the hops)."""
    hops = [path_membership_hops(p) if p is not None else () for p in paths]
    equipment = {hop.equipment for h in hops for hop in h}
    if not equipment:
        return []
    inputs = path_membership_inputs()
    far = link_far_end_map(at=at, inputs=inputs)
    interfaces = {(i.equipment.name, i.name): i
                  for i in Interface.objects.select_related("equipment").filter(equipment__name__in=equipment)}
    return [(port, interfaces[port.port]) for port in path_ports(hops, interfaces, inputs, far)]
