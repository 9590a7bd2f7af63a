"""Evidence slower than the window: the last value of each slow kind before the window starts.

Host settings arrive every 6 h, traceroutes (with their path MTU) every 30 min to 6 h, TCP tests every 1 to 6 h at
scale: a 6-hour window often holds none of them, or one where a rule needs two, and a rule reading only the window
would find, lose and find again the same host tuning, route, MTU or window limit as the window slides past each
report (docs/diagnosis.md, "One road"). So the shard also reads, per path direction and per host, the last report
before the window, within the baseline period; the rules see its time and give its age in their evidence. One
statement per kind whatever the number of paths or hosts, each an index probe per direction or host
(``measurements_traceroute_path_time``, ``measurements_throughputtest_path_time``,
``measurements_hosttcp_site_time``), never a scan of the period.
"""

from __future__ import annotations

from datetime import datetime

from wanmon.diagnosis.evidence import HostTcpEvidence, OwampTest, ThroughputTest, TracerouteObservation
from wanmon.diagnosis.selectors.common import DIRECTIONS_CTE, host_tcp_of, pairs_params, sql_rows
from wanmon.diagnosis.selectors.records import OWAMP_TESTS, THROUGHPUT_TESTS, TRACEROUTES, DirectionTable


def traceroutes_before(
    keys: list[tuple[int, int]], before: datetime, since: datetime
) -> dict[tuple[int, int], TracerouteObservation]:
    """The last successful traceroute of each of these path directions in [since, before)."""
    found = _last_before(TRACEROUTES, keys, before, since, TRACEROUTES.condition)
    return {key: traces[-1] for key, traces in found.items()}


def _last_before(
    table: DirectionTable, keys: list[tuple[int, int]], before: datetime, since: datetime, condition: str, n: int = 1
) -> dict[tuple[int, int], list]:
    """The last ``n`` records of ``table`` meeting ``condition`` (on its row ``t``) of each of these path
    directions in [since, before), in time order: an index probe per direction."""
    if not keys:
        return {}
    rows = sql_rows(
        f"""{DIRECTIONS_CTE}
            SELECT k.src_id, k.dst_id, x.* FROM k CROSS JOIN LATERAL (
                SELECT t.id, t.time, {table.columns} FROM {table.name} t
                WHERE t.src_id = k.src_id AND t.dst_id = k.dst_id AND t.time >= %s AND t.time < %s
                  AND {condition}
                ORDER BY t.time DESC LIMIT %s) x
            ORDER BY x.time""",
        [*pairs_params(keys), since, before, n],
    )
    out: dict[tuple[int, int], list] = {}
    for r in rows:
        out.setdefault((r["src_id"], r["dst_id"]), []).append(table.record_of(r))
    return out


def owamp_before(
    keys: list[tuple[int, int]], before: datetime, since: datetime, n: int
) -> dict[tuple[int, int], tuple[OwampTest, ...]]:
    """The last ``n`` owamp sessions with a minimum delay (not outages) of each of these path directions in [since,
    before), in time order: the delay level the window's first sessions are compared with (hourly owamp leaves
    a level that ended an hour after the window opened one session in it)."""
    usable = "t.packets_sent > 0 AND coalesce(t.packets_lost, 0) < t.packets_sent AND t.delay_min_ms IS NOT NULL"
    return {key: tuple(v) for key, v in _last_before(OWAMP_TESTS, keys, before, since, usable, n).items()}


# What a completed test of each protocol is (the conditions the window's rules apply to the tests they judge)
_COMPLETED = {
    "tcp": "t.protocol = 'tcp' AND t.error IS NULL AND t.throughput_bps > 0",
    "udp": "t.protocol = 'udp' AND t.error IS NULL AND t.packets_sent > 0 AND t.packets_lost IS NOT NULL",
}


def throughput_before(
    keys: list[tuple[int, int]], before: datetime, since: datetime, protocol: str = "tcp"
) -> dict[tuple[int, int], ThroughputTest]:
    """The last completed test of ``protocol`` ('tcp' or 'udp') of each of these path directions in [since, before)."""
    found = _last_before(THROUGHPUT_TESTS, keys, before, since, _COMPLETED[protocol])
    return {key: tests[-1] for key, tests in found.items()}


def host_tcp_before(
    hosts: list[tuple[int, str]], before: datetime, since: datetime, known: dict[str, str | None]
) -> list[HostTcpEvidence]:
    """The last TCP settings report of each of these hosts (site id, host name) in [since, before)."""
    if not hosts:
        return []
    rows = sql_rows(
        """WITH h AS (SELECT unnest(%s::bigint[]) AS site_id, unnest(%s::text[]) AS host)
           SELECT x.* FROM h CROSS JOIN LATERAL (
               SELECT t.time, s.code AS site, t.host, t.rmem_max, t.wmem_max, t.tcp_rmem, t.tcp_wmem,
                      t.congestion_control, t.mtu, t.nic_speed_mbps
               FROM measurements_hosttcp t JOIN inventory_site s ON s.id = t.site_id
               WHERE t.site_id = h.site_id AND t.host = h.host AND t.time >= %s AND t.time < %s
               ORDER BY t.time DESC LIMIT 1) x
           ORDER BY x.time""",
        [[h[0] for h in hosts], [h[1] for h in hosts], since, before],
    )
    return [host_tcp_of(r, known) for r in rows]


def with_last_before(window: list[HostTcpEvidence], before_window: list[HostTcpEvidence]) -> list[HostTcpEvidence]:
    """The window's host reports, preceded by the last report before the window of each host that has none in it
    (a host that reported in the window is judged on its latest report, as before)."""
    reported = {(h.site, h.host) for h in window}
    return [h for h in before_window if (h.site, h.host) not in reported] + window
