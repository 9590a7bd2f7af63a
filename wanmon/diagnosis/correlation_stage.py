"""The cycle's correlation stage (services): each shard stores the verdicts its correlation rule worked from, and the
shard that closes the cycle ranks the shared elements over all of them and stores the SHARED_EQUIPMENT_SUSPECT
findings, with the lifecycle of every finding (``findings_sync``: opened, updated, reopened; those the stage no
longer reports count a miss when the cycle closes, and are resolved after enough of them). The ranking is pure:
``cycle_correlation``.

Why in the closing shard's transaction rather than a Celery chord's callback: a cycle whose shard is lost with its
worker never closes (nothing of it is resolved, its paths are planned again at the next cycle), and the stage of
a closed cycle is never lost on its own; the verdicts are read once and deleted, so the table holds only the cycles
in flight.
"""

from __future__ import annotations

from typing import Any

from wanmon.diagnosis.cycle_correlation import cycle_suspects
from wanmon.diagnosis.models import DiagnosisCycle, ShardCorrelation
from wanmon.diagnosis.selectors.common import maintenance_evidence
from wanmon.diagnosis.services import DEFAULT_WINDOW, SyncResult, findings_sync


def shard_correlation_store(*, cycle_id: int, verdicts: dict[str, Any] | None) -> None:
    """Keep a shard's verdicts (``cycle_correlation.shard_verdicts``) for its cycle's stage; a shard without path
    directions (the elements shard) has none."""
    if verdicts is None or not (verdicts["healthy"] or verdicts["degraded"]["paths"]):
        return
    ShardCorrelation.objects.create(cycle_id=cycle_id, degraded=verdicts["degraded"], healthy=verdicts["healthy"])


def cycle_correlation_sync(*, cycle: DiagnosisCycle) -> SyncResult:
    """Every shard of ``cycle`` is done: rank the shared elements over all their verdicts and store the findings
    (as of the cycle's time). The healthy paths' verdicts are read only when degraded paths of two site pairs
    overlap in time, the maintenance calendar only when there is something to explain; the cycle's verdicts (and
    those of older cycles that will never close) are deleted. A cycle that planned no path has no verdicts: nothing
    is read (a quiet minute's cycle is its elements shard alone)."""
    if not cycle.planned:
        return SyncResult()
    rows = ShardCorrelation.objects.filter(cycle_id=cycle.id)
    shards = list(rows.values_list("degraded", flat=True))

    def healthy() -> list[dict[str, Any]]:
        return [v for part in rows.values_list("healthy", flat=True) for v in part]

    degraded = any(s["paths"] for s in shards)
    # the shards' own read of the window's maintenance (``maintenance_evidence``): once a cycle in one process
    windows = maintenance_evidence(cycle.at - DEFAULT_WINDOW, cycle.at) if degraded else ()
    found = cycle_suspects(shards, healthy, windows)
    result = findings_sync(findings=found, now=cycle.at, resolve_ids=[])
    ShardCorrelation.objects.filter(cycle__at__lte=cycle.at).delete()
    return result
