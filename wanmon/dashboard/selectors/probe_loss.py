"""The probes' loss sums per path direction, as the diagnosis's one loss estimator takes them
(``wanmon.diagnosis.loss.lead_loss``): the overview's grid and the path page judge loss as the findings do."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from wanmon.core.sql import sql_rows
from wanmon.diagnosis import constants as dk
from wanmon.diagnosis.loss import LossEstimate, LossSource, lead_loss, owamp_source, udp_source

#: Rows outside the maintenance windows given as two arrays of starts and ends (%(ms)s, %(me)s).
OUTSIDE_WINDOWS = """NOT EXISTS (SELECT 1 FROM unnest(%(ms)s::timestamptz[], %(me)s::timestamptz[]) AS w(s, e)
                                 WHERE time >= w.s AND time < w.e)"""


def probe_loss_sums(
    *,
    start: datetime,
    end: datetime,
    src_id: int | None = None,
    dst_id: int | None = None,
    exclude: Sequence[tuple[datetime, datetime]] = (),
) -> dict[tuple[int, int], dict[str, dict[str, int]]]:
    """Per direction (all, or the one given) and probe kind ('owamp', 'udp'), over [start, end) and outside the
    ``exclude`` windows: packets lost and sent, runs (sessions or tests) and the packets lost by the runs that
    lost at least OWAMP_MIN_LOST_PACKETS / UDP_MIN_LOST_PACKETS (what a run can see) with their count. A run
    that lost everything is an outage, not a loss rate: left out. One statement whatever the number of paths."""
    one = "src_id = %(src)s AND dst_id = %(dst)s AND" if src_id is not None else ""

    def kind(name: str, table: str, extra: str, visible: str) -> str:
        return f"""SELECT src_id, dst_id, '{name}' AS kind,
                          coalesce(sum(packets_lost), 0) AS lost, coalesce(sum(packets_sent), 0) AS sent,
                          count(*) AS runs,
                          coalesce(sum(packets_lost) FILTER (WHERE packets_lost >= %({visible})s), 0) AS visible,
                          count(*) FILTER (WHERE packets_lost >= %({visible})s) AS visible_runs
                   FROM {table}
                   WHERE {one} {extra} error IS NULL AND packets_sent > 0 AND packets_lost < packets_sent
                     AND time >= %(start)s AND time < %(end)s AND {OUTSIDE_WINDOWS}
                   GROUP BY src_id, dst_id"""

    rows = sql_rows(
        kind("owamp", "measurements_owamptest", "", "owamp_visible")
        + " UNION ALL "
        + kind("udp", "measurements_throughputtest", "protocol = 'udp' AND", "udp_visible"),
        {
            "src": src_id,
            "dst": dst_id,
            "start": start,
            "end": end,
            "ms": [w[0] for w in exclude],
            "me": [w[1] for w in exclude],
            "owamp_visible": dk.OWAMP_MIN_LOST_PACKETS,
            "udp_visible": dk.UDP_MIN_LOST_PACKETS,
        },
    )
    out: dict[tuple[int, int], dict[str, dict[str, int]]] = {}
    for r in rows:
        out.setdefault((r["src_id"], r["dst_id"]), {})[r["kind"]] = {
            key: int(r[key] or 0) for key in ("lost", "sent", "runs", "visible", "visible_runs")
        }
    return out


def probe_sources(sums: dict[str, dict[str, int]]) -> list[LossSource]:
    """The estimator's sources from one direction's ``probe_loss_sums``."""
    out = []
    for name, make in (("owamp", owamp_source), ("udp", udp_source)):
        s = sums.get(name)
        if s and s["sent"] > 0:
            out.append(make(s["lost"], s["sent"], s["runs"], s["visible"], s["visible_runs"]))
    return out


def probe_loss_estimate(sums: dict[str, dict[str, int]]) -> LossEstimate:
    """One direction's probe loss as the diagnosis estimates it (the most precise probe leads; stray owamp losses
    scattered over sessions only bound it)."""
    return lead_loss(probe_sources(sums))
