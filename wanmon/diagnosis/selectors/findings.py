"""Stored findings, and the path directions a cycle must evaluate because of them or of fresh tests."""

from __future__ import annotations

from datetime import datetime, timedelta

from wanmon.diagnosis import constants as k
from wanmon.diagnosis.models import Finding
from wanmon.diagnosis.selectors.common import sql_rows


def finding_list(*, status: str | None = None, code: str | None = None, active_only: bool = False):
    """Stored findings, newest first."""
    qs = Finding.objects.all()
    if active_only:
        qs = qs.exclude(status="resolved")
    if status:
        qs = qs.filter(status=status)
    if code:
        qs = qs.filter(code=code)
    return qs


def paths_to_evaluate(*, now: datetime, late_s: int, window) -> list[tuple[int, str, str]]:
    """(path id, src, dst) of the current path directions a cycle at ``now`` must evaluate: those whose verdict
    something since their last evaluation may have changed (docs/diagnosis.md, "Planning"). Set-based: one statement
    whatever the number of paths and findings. A direction is planned when

    * it was never evaluated, or a test arrived that its last evaluation did not see (tests older than the previous
      cycle minus ``late_s`` count as seen);
    * a result slid out of its window since the previous cycle (the window's verdict changes without anything new);
    * it has been silent for ``GAP_MIN_SILENCE_S`` while its last results are still in the window (only its
      silence says something: MEASUREMENT_GAP);
    * it has an active finding, or an element it crosses or a site it joins has one;

    and with it the other direction of its site pair (asymmetry compares the two: a shard holds both)."""
    rows = sql_rows(
        """WITH cur AS (
               SELECT p.id, p.src_id, p.dst_id, s.code AS src, d.code AS dst
               FROM inventory_path p JOIN inventory_site s ON s.id = p.src_id JOIN inventory_site d ON d.id = p.dst_id
               WHERE p.valid_from <= %(now)s AND (p.valid_to IS NULL OR p.valid_to > %(now)s)),
           previous AS (SELECT max(c.at) AS at FROM diagnosis_diagnosiscycle c WHERE c.at < %(now)s),
           since AS (  -- tests before the previous cycle's horizon were new to that cycle already
               SELECT greatest(%(floor)s::timestamptz, at - %(late)s * interval '1 second') AS t FROM previous),
           fresh AS (
               SELECT src_id, dst_id, max(time) AS t FROM (
                   SELECT src_id, dst_id, time FROM measurements_owamptest
                   WHERE time > (SELECT t FROM since) AND time <= %(now)s
                   UNION ALL SELECT src_id, dst_id, time FROM measurements_throughputtest
                   WHERE time > (SELECT t FROM since) AND time <= %(now)s
                   UNION ALL SELECT src_id, dst_id, time FROM measurements_traceroute
                   WHERE time > (SELECT t FROM since) AND time <= %(now)s) x
               GROUP BY src_id, dst_id),
           leaving AS (  -- results that were in the previous cycle's window and are not in this one's
               SELECT DISTINCT src_id, dst_id FROM (
                   SELECT src_id, dst_id FROM measurements_owamptest
                   WHERE time >= (SELECT at FROM previous) - %(window)s AND time < %(floor)s
                   UNION ALL SELECT src_id, dst_id FROM measurements_throughputtest
                   WHERE time >= (SELECT at FROM previous) - %(window)s AND time < %(floor)s
                   UNION ALL SELECT src_id, dst_id FROM measurements_traceroute
                   WHERE time >= (SELECT at FROM previous) - %(window)s AND time < %(floor)s) x),
           active AS (SELECT f.subject FROM diagnosis_finding f WHERE f.status <> 'resolved'),
           flagged AS (
               SELECT a.subject->>'src' AS src, a.subject->>'dst' AS dst FROM active a
               WHERE a.subject ? 'src' AND a.subject ? 'dst'),
           elsewhere AS (  -- the active findings on an element (equipment or trunk) or a site
               SELECT a.subject->>'equipment' AS element, a.subject->>'trunk' AS trunk, a.subject->>'site' AS site
               FROM active a WHERE NOT (a.subject ? 'src' AND a.subject ? 'dst')),
           sites AS (SELECT site FROM elsewhere WHERE site <> ''),
           crossing AS (
               SELECT DISTINCT h.path_id FROM inventory_pathhop h JOIN inventory_equipment e ON e.id = h.equipment_id
               WHERE e.name IN (SELECT element FROM elsewhere WHERE element <> ''
                                UNION SELECT trunk FROM elsewhere WHERE trunk <> '')),
           wanted AS (  -- as unordered site pairs: a direction brings the other one with it
               SELECT least(cur.src, cur.dst) AS a, greatest(cur.src, cur.dst) AS b FROM cur
               LEFT JOIN diagnosis_pathevaluation e ON e.path_id = cur.id
               LEFT JOIN fresh f ON f.src_id = cur.src_id AND f.dst_id = cur.dst_id
               WHERE e.path_id IS NULL
                  OR f.t > coalesce(e.evidence_until, e.cycle_at - %(late)s * interval '1 second')
                  OR EXISTS (SELECT 1 FROM leaving l WHERE l.src_id = cur.src_id AND l.dst_id = cur.dst_id)
                  OR (e.evidence_until < %(silent)s AND e.evidence_until >= %(floor)s)
                  OR EXISTS (SELECT 1 FROM flagged g WHERE g.src = cur.src AND g.dst = cur.dst)
                  OR cur.id IN (SELECT path_id FROM crossing)
                  OR cur.src IN (SELECT site FROM sites) OR cur.dst IN (SELECT site FROM sites))
           -- a hashed semi-join on the unordered pair: an EXISTS over "same or reversed" was a nested loop of
           -- every current direction by every wanted one (5 s at 10 000 paths when all are wanted)
           SELECT cur.id, cur.src, cur.dst FROM cur
           WHERE (least(cur.src, cur.dst), greatest(cur.src, cur.dst)) IN (SELECT a, b FROM wanted)
           ORDER BY cur.src, cur.dst""",
        {
            "now": now,
            "floor": now - window,
            "window": window,
            "late": late_s,
            "silent": now - timedelta(seconds=k.GAP_MIN_SILENCE_S),
        },
    )
    return [(r["id"], r["src"], r["dst"]) for r in rows]
