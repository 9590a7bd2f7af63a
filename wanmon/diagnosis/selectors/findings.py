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
    """(path id, src, dst) of the current path directions a cycle at ``now`` must evaluate: never evaluated, a
    test newer than the newest their last evaluation saw (tests older than the previous cycle minus ``late_s``
    count as seen), not evaluated for GAP_RECHECK_S (a path whose tests stopped brings no new test, and only an
    evaluation tells MEASUREMENT_GAP that it fell silent), an active finding on them, or an active finding on an
    element they cross or a site they join. Set-based: one statement whatever the number of paths."""
    element_names: set[str] = set()
    site_codes: set[str] = set()
    for subject in (
        Finding.objects.exclude(status="resolved")
        .exclude(subject__has_keys=["src", "dst"])
        .values_list("subject", flat=True)
    ):
        for key in ("equipment", "trunk"):
            if subject.get(key):
                element_names.add(str(subject[key]))
        if subject.get("site"):
            site_codes.add(str(subject["site"]))
    rows = sql_rows(
        """WITH cur AS (
               SELECT p.id, p.src_id, p.dst_id, s.code AS src, d.code AS dst
               FROM inventory_path p JOIN inventory_site s ON s.id = p.src_id JOIN inventory_site d ON d.id = p.dst_id
               WHERE p.valid_from <= %(now)s AND (p.valid_to IS NULL OR p.valid_to > %(now)s)),
           since AS (  -- tests before the previous cycle's horizon were new to that cycle already
               SELECT greatest(%(floor)s::timestamptz, max(c.at) - %(late)s * interval '1 second') AS t
               FROM diagnosis_diagnosiscycle c WHERE c.at < %(now)s),
           fresh AS (
               SELECT src_id, dst_id, max(time) AS t FROM (
                   SELECT src_id, dst_id, time FROM measurements_owamptest
                   WHERE time > (SELECT t FROM since) AND time <= %(now)s
                   UNION ALL SELECT src_id, dst_id, time FROM measurements_throughputtest
                   WHERE time > (SELECT t FROM since) AND time <= %(now)s
                   UNION ALL SELECT src_id, dst_id, time FROM measurements_traceroute
                   WHERE time > (SELECT t FROM since) AND time <= %(now)s) x
               GROUP BY src_id, dst_id),
           flagged AS (
               SELECT f.subject->>'src' AS src, f.subject->>'dst' AS dst FROM diagnosis_finding f
               WHERE f.status <> 'resolved' AND f.subject ? 'src' AND f.subject ? 'dst'),
           crossing AS (
               SELECT DISTINCT h.path_id FROM inventory_pathhop h JOIN inventory_equipment e ON e.id = h.equipment_id
               WHERE e.name = ANY(%(elements)s))
           SELECT cur.id, cur.src, cur.dst FROM cur
           LEFT JOIN diagnosis_pathevaluation e ON e.path_id = cur.id
           LEFT JOIN fresh f ON f.src_id = cur.src_id AND f.dst_id = cur.dst_id
           WHERE e.path_id IS NULL
              OR f.t > coalesce(e.evidence_until, e.cycle_at - %(late)s * interval '1 second')
              OR e.cycle_at <= %(recheck)s
              OR EXISTS (SELECT 1 FROM flagged g WHERE g.src = cur.src AND g.dst = cur.dst)
              OR cur.id IN (SELECT path_id FROM crossing)
              OR cur.src = ANY(%(sites)s) OR cur.dst = ANY(%(sites)s)
           ORDER BY cur.src, cur.dst""",
        {
            "now": now,
            "floor": now - window,
            "late": late_s,
            "recheck": now - timedelta(seconds=k.GAP_RECHECK_S),
            "elements": sorted(element_names),
            "sites": sorted(site_codes),
        },
    )
    return [(r["id"], r["src"], r["dst"]) for r in rows]
