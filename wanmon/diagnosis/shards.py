"""The periodic diagnosis at scale: a cycle plans the path directions to evaluate, splits them into shards that
Celery workers take, and each shard is evaluated and stored in one transaction.

* **What is evaluated.** A path direction is planned when a test has arrived that its last evaluation did not see
  (newer than the newest test that evaluation saw: results arrive after the session they describe, and the newest
  one it saw is kept with the claim), an active finding, an element or site named by an active finding, or no
  evaluation yet. Elements no current path crosses (and every trunk and host) are judged by
  one extra shard, the *elements shard*, every cycle.
* **Shards.** Both directions of a site pair stay in one shard (asymmetry compares them) and pairs are taken in
  site order, so that a site's paths sit together (its border router's faults show on several of them). A shard
  holds about ``settings.DIAGNOSIS_SHARD_PATHS`` directions (~1 s of work, so that two workers stay balanced);
  Celery on Redis distributes the shards over however many workers run (two processes on one machine, N on N
  machines): there is no scheduler of our own.
* **Exactly once.** A shard claims its paths for the cycle (``PathEvaluation``: the claim only moves forward in
  time) in the transaction that stores its findings: a shard redelivered after its worker died, or taken twice,
  evaluates nothing already evaluated, and a shard lost with its worker leaves its paths unclaimed, so that they
  still have new evidence at the next cycle and are planned again.
* **Findings.** A shard opens and updates what it finds and resolves the findings of its own path directions that
  it no longer finds. A finding on an element (interface, equipment, trunk, host) may be seen by several shards:
  it is resolved only when a whole cycle closes (every shard done) without anyone seeing it.
* **Correlation.** SHARED_EQUIPMENT_SUSPECT is ranked once per cycle over every shard's paths: a shard stores the
  verdicts its correlation rule worked from instead of its findings, and the shard that closes the cycle ranks them
  all (``correlation_stage``).
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction

from wanmon.diagnosis import engine
from wanmon.diagnosis.choices import ACTIVE_STATUSES
from wanmon.diagnosis.correlation_stage import cycle_correlation_sync, shard_correlation_store
from wanmon.diagnosis.cycle_correlation import VerdictRecorder, shard_findings
from wanmon.diagnosis.hooks import findings_tested
from wanmon.diagnosis.models import DiagnosisCycle, Finding
from wanmon.diagnosis.selectors import cycle_reads_shared, evidence_bundle_for_paths, paths_to_evaluate
from wanmon.diagnosis.services import DEFAULT_BASELINE, DEFAULT_WINDOW, SyncResult, findings_mark_absent, findings_sync

LATE_S = 600  # a test is still 'new' this long after a later evaluation: results arrive after their session


@dataclass(frozen=True)
class CyclePlan:
    """One cycle: its id and time, and the shards (path version ids) to hand to the workers."""

    cycle_id: int
    at: datetime
    shards: list[list[int]]

    @property
    def planned(self) -> int:
        return sum(len(s) for s in self.shards)


def shards_partition(paths: Iterable[tuple[int, str, str]], size: int) -> list[list[int]]:
    """Split (path id, src, dst) into shards of about ``size`` directions; both directions of a site pair always
    in the same shard, pairs in site order (pure: the same paths give the same shards)."""
    pairs: dict[tuple[str, str], list[int]] = {}
    for pid, src, dst in paths:
        pairs.setdefault((min(src, dst), max(src, dst)), []).append(pid)
    shards: list[list[int]] = []
    current: list[int] = []
    for key in sorted(pairs):
        if current and len(current) + len(pairs[key]) > size:
            shards.append(current)
            current = []
        current.extend(sorted(pairs[key]))
    if current:
        shards.append(current)
    return shards


def _without_jit() -> None:
    """PostgreSQL's JIT off for the rest of the transaction. The cycle's set-based statements over arrays of ids
    (``= ANY(%s)``, ``unnest``) are estimated at hundreds of thousands of rows, above ``jit_above_cost``, so each was
    compiled at every cycle: half a second of compilation for 30 ms of execution, most of PostgreSQL's time in a
    10 000-path cycle (docs/scale.md). Only the cycle's transactions: pages that aggregate months may gain from it."""
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL jit = off")


def diagnosis_cycle_open(*, now: datetime, size: int | None = None) -> CyclePlan:
    """Plan a cycle as of ``now``: the paths to evaluate, in shards. Recorded as a DiagnosisCycle."""
    with transaction.atomic():
        _without_jit()
        paths = paths_to_evaluate(now=now, late_s=LATE_S, window=DEFAULT_WINDOW)
    shards = shards_partition(paths, size or settings.DIAGNOSIS_SHARD_PATHS)
    with connection.cursor() as cursor:  # one statement (update_or_create is a transaction of four)
        cursor.execute(
            """INSERT INTO diagnosis_diagnosiscycle (at, planned, shards, evaluated, elements_done)
               VALUES (%s, %s, %s, 0, false)
               ON CONFLICT (at) DO UPDATE SET planned = EXCLUDED.planned, shards = EXCLUDED.shards, evaluated = 0
               RETURNING id""",
            [now, sum(len(s) for s in shards), len(shards) + 1],
        )
        cycle_id = cursor.fetchone()[0]
    return CyclePlan(cycle_id, now, shards)


def _claim(cycle: DiagnosisCycle, path_ids: list[int], worker: str) -> list[int]:
    """Take these paths for the cycle; returns those not yet evaluated by it or a later one (row locks held)."""
    with connection.cursor() as cursor:
        # the newest test of each path up to the cycle's time (three index probes a path): the next cycles evaluate
        # the path again only when a newer one has arrived (findings_paths_to_evaluate), not at every minute
        newest = " UNION ALL ".join(
            f"(SELECT time FROM {table} t WHERE t.src_id = p.src_id AND t.dst_id = p.dst_id AND t.time <= %(at)s "
            f"ORDER BY t.time DESC LIMIT 1)"
            for table in ("measurements_throughputtest", "measurements_owamptest", "measurements_traceroute")
        )
        cursor.execute(
            f"""INSERT INTO diagnosis_pathevaluation AS e (path_id, cycle_id, cycle_at, evaluations, worker,
                                                          evidence_until)
               SELECT p.id, %(cycle)s, %(at)s, 1, %(worker)s, (SELECT max(time) FROM ({newest}) n)
               FROM inventory_path p WHERE p.id = ANY(%(ids)s)
               ON CONFLICT (path_id) DO UPDATE SET cycle_id = EXCLUDED.cycle_id, cycle_at = EXCLUDED.cycle_at,
                   evaluations = e.evaluations + 1, worker = EXCLUDED.worker, evidence_until = EXCLUDED.evidence_until
               WHERE e.cycle_at < EXCLUDED.cycle_at
               RETURNING path_id""",
            {"cycle": cycle.id, "at": cycle.at, "worker": worker[:200], "ids": list(path_ids)},
        )
        return sorted(r[0] for r in cursor.fetchall())


def _path_finding_ids(pairs: set[tuple[str, str]]) -> list[int]:
    """Active findings whose subject is one of these path directions (the shard owns them)."""
    if not pairs:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            """WITH k AS (SELECT unnest(%s::text[]) AS src, unnest(%s::text[]) AS dst)
               SELECT f.id FROM diagnosis_finding f JOIN k ON f.subject->>'src' = k.src AND f.subject->>'dst' = k.dst
               WHERE f.status = ANY(%s)""",
            [[p[0] for p in pairs], [p[1] for p in pairs], list(ACTIVE_STATUSES)],
        )
        return [r[0] for r in cursor.fetchall()]


def diagnosis_shard_evaluate(
    *, cycle_id: int, path_ids: list[int], elements: bool = False, worker: str = "", tests: bool = False
) -> SyncResult | None:
    """Evaluate one shard of a cycle and store its findings, in one transaction. None when there was nothing
    left to do (every path already evaluated by this cycle or a later one, or the cycle is gone).

    ``tests``: once the findings are committed, ask for the discriminating tests of those it opened, reopened or
    updated (``hooks.findings_tested``; the beat's shards pass ``settings.WANMON_DIAGNOSIS_TESTS``, replays leave it
    off so that they stay deterministic and load no path)."""
    with _collector_paused():
        result = _shard_evaluate(cycle_id=cycle_id, path_ids=path_ids, elements=elements, worker=worker)
    if tests and result is not None:
        findings_tested(finding_ids=[*result.opened, *result.reopened, *result.updated], now=_cycle_at(cycle_id))
    return result


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while a shard is evaluated. A shard builds its evidence from ~60 000 rows
    (a dataclass each, kept until its findings are stored): every few hundred allocations the collector ran and
    traversed the whole growing heap, which was a third of the CPU of reading a shard's evidence, for no garbage (the
    evidence holds no reference cycles; what a shard drops is freed by reference counting, and any cycle waits for
    the next collection after the shard)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _cycle_at(cycle_id: int) -> datetime:
    """The 'now' of a cycle (its tests are asked for as of that time)."""
    return DiagnosisCycle.objects.values_list("at", flat=True).get(id=cycle_id)


def _shard_evaluate(*, cycle_id: int, path_ids: list[int], elements: bool, worker: str) -> SyncResult | None:
    with transaction.atomic():
        _without_jit()
        cycle = DiagnosisCycle.objects.filter(id=cycle_id).first()
        if cycle is None:
            return None
        claimed = _claim(cycle, path_ids, worker) if path_ids else []
        if elements:
            took = DiagnosisCycle.objects.filter(id=cycle.id, elements_done=False).update(elements_done=True)
            if not took:
                elements = False
        if not claimed and not elements:
            return None
        now = cycle.at
        window_start = now - DEFAULT_WINDOW
        bundle = evidence_bundle_for_paths(
            path_ids=claimed,
            now=now,
            window_start=window_start,
            baseline_start=window_start - DEFAULT_BASELINE,
            baseline_end=window_start,
            unpathed_interfaces=elements,
        )
        recorder = VerdictRecorder()  # the correlation is ranked over the whole cycle (correlation_stage)
        found = engine.diagnose(bundle, now, recorder.rules)
        pairs = {(p.src, p.dst) for p in bundle.paths}
        result = findings_sync(findings=shard_findings(found), now=now, resolve_ids=_path_finding_ids(pairs))
        shard_correlation_store(cycle_id=cycle.id, verdicts=recorder.verdicts)
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE diagnosis_diagnosiscycle SET evaluated = evaluated + %s WHERE id = %s "
                "RETURNING evaluated, planned, elements_done",
                [len(claimed), cycle.id],
            )
            evaluated, planned, elements_done = cursor.fetchone()
        if evaluated >= planned and elements_done:
            result.resolved += diagnosis_cycle_close(cycle=cycle, stage=result)
    return result


def diagnosis_cycle_run(
    *, now: datetime, size: int | None = None, worker: str = "inline", tests: bool = False
) -> SyncResult:
    """One whole cycle as of ``now`` in this process: plan it, then evaluate the elements shard and every path shard
    in the order ``diagnosis_run_task`` queues them. The same functions the Celery workers run, one after the
    other: the replay of a scenario, the lab and the benchmarks drive production's road with it. ``tests``: ask
    for the findings' discriminating tests as the beat does with WANMON_DIAGNOSIS_TESTS on (off by default here:
    a replay has no agents and must stay deterministic)."""
    plan = diagnosis_cycle_open(now=now, size=size)
    total = SyncResult()
    with cycle_reads_shared():  # the shards run one after the other here: what they all read is read once
        for path_ids, elements in [([], True), *((shard, False) for shard in plan.shards)]:
            result = diagnosis_shard_evaluate(
                cycle_id=plan.cycle_id, path_ids=path_ids, elements=elements, worker=worker, tests=tests
            )
            if result is not None:
                for name in ("opened", "updated", "resolved", "reopened", "absent"):
                    getattr(total, name).extend(getattr(result, name))
    return total


def diagnosis_cycle_close(*, cycle: DiagnosisCycle, stage: SyncResult | None = None) -> list[int]:
    """Every shard of the cycle is done: the correlation stage ranks the shared elements over every shard's paths
    (``correlation_stage``, what it opened, updated or reopened added to ``stage``), then the active element findings
    nobody saw in the cycle count a miss, and are resolved after enough of them (``findings_mark_absent``; path
    findings are counted by their shard). A later cycle already closed makes this one's view stale: nothing then."""
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE diagnosis_diagnosiscycle SET closed_at = now() WHERE id = %s AND closed_at IS NULL "
            "AND NOT EXISTS (SELECT 1 FROM diagnosis_diagnosiscycle c WHERE c.at > %s AND c.closed_at IS NOT NULL) "
            "RETURNING id",
            [cycle.id, cycle.at],
        )
        if cursor.fetchone() is None:
            return []
    correlated = cycle_correlation_sync(cycle=cycle)
    if stage is not None:
        for name in ("opened", "updated", "reopened"):
            getattr(stage, name).extend(getattr(correlated, name))
    stale = (
        Finding.objects.select_for_update()
        .filter(status__in=ACTIVE_STATUSES, last_seen_at__lt=cycle.at)
        .exclude(subject__has_keys=["src", "dst"])
    )
    result = SyncResult()
    findings_mark_absent(findings=stale, now=cycle.at, result=result)
    return result.resolved


def diagnosis_cycles_prune(*, now: datetime, keep: timedelta = timedelta(days=2)) -> int:
    """Cycle rows older than ``keep`` (one a minute: 2 880 a day)."""
    return DiagnosisCycle.objects.filter(at__lt=now - keep).delete()[0]
