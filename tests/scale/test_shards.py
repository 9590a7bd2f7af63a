"""The periodic diagnosis in shards: every planned path direction evaluated exactly once per cycle whatever the
number of real worker processes, and a worker killed mid-cycle leaves no path unevaluated for more than one cycle.
"""

from __future__ import annotations

import time
import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from scripts.scale_inventory import inventory_create, owamp_records, world_generate
from tests.alerts.conftest import WorkerPool
from wanmon.diagnosis.models import DiagnosisCycle, Finding, PathEvaluation
from wanmon.diagnosis.shards import diagnosis_shard_evaluate, shards_partition
from wanmon.inventory.models import Path
from wanmon.measurements.ingest import batch_ingest

pytestmark = pytest.mark.django_db(transaction=True)

SHARD_PATHS = 8  # small shards: 60 directions make 8 shards + the elements shard, enough to spread


def test_partition_keeps_both_directions_of_a_pair_and_covers_every_path_once():
    paths = [(i, src, dst) for i, (src, dst) in enumerate(world_generate(n_paths=300, n_sites=30).paths)]
    shards = shards_partition(paths, 20)
    flat = [pid for s in shards for pid in s]
    assert sorted(flat) == [p[0] for p in paths]  # each path exactly once
    where = {pid: n for n, s in enumerate(shards) for pid in s}
    by_pair: dict = {}
    for pid, src, dst in paths:
        by_pair.setdefault(frozenset((src, dst)), set()).add(where[pid])
    assert all(len(v) == 1 for v in by_pair.values())
    assert max(len(s) for s in shards) <= 20 and len(shards) == 15
    assert shards_partition(reversed(paths), 20) == shards  # stable: the same shards whatever the order


@pytest.fixture
def world(django_db_setup):
    """12 sites, 60 directed latencybg paths (a few lossy), the last 40 minutes of results ingested."""
    w = world_generate(n_paths=60, n_sites=12, n_equipment=40)
    now = timezone.now().replace(second=0, microsecond=0)
    inventory_create(w, valid_from=now - timedelta(days=2))
    t = now - timedelta(minutes=40)
    while t <= now:
        batch_ingest(batch_id=str(uuid.uuid4()), records=owamp_records(w, t, end=now + timedelta(hours=1)))
        t += timedelta(minutes=1)
    return w


@pytest.fixture
def workers(django_db_setup):
    pool = WorkerPool("diagnosis", {"WANMON_DIAGNOSIS_SHARD_PATHS": str(SHARD_PATHS)})
    yield pool
    pool.stop()


def _new_results(w) -> None:
    """A minute of fresh results on every path, as the agents send between cycles: a cycle plans the paths with
    results newer than their last evaluation saw (and the flagged ones), so without them it would plan almost none."""
    t = timezone.now() - timedelta(seconds=1)
    batch_ingest(batch_id=str(uuid.uuid4()), records=owamp_records(w, t, end=t + timedelta(hours=1)))


def _cycle(queue: str) -> DiagnosisCycle:
    from wanmon.diagnosis.tasks import diagnosis_run_task

    before = set(DiagnosisCycle.objects.values_list("id", flat=True))
    diagnosis_run_task.apply_async(queue=queue)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        cycle = DiagnosisCycle.objects.exclude(id__in=before).first()
        if cycle is not None:
            return cycle
        time.sleep(0.2)
    pytest.fail("no cycle was planned within 60 s")


def _wait_closed(cycle: DiagnosisCycle, timeout_s: float = 120) -> DiagnosisCycle:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        cycle.refresh_from_db()
        if cycle.closed_at is not None:
            return cycle
        time.sleep(0.2)
    pytest.fail(f"cycle not closed within {timeout_s} s: {cycle}")


@pytest.mark.parametrize("n_workers", [1, 2, 3])
def test_every_path_evaluated_exactly_once_per_cycle(world, workers, n_workers):
    pool = [workers() for _ in range(n_workers)]
    current = set(Path.objects.values_list("id", flat=True))
    cycles = []
    for n in range(2):
        if n:
            _new_results(world)
        cycle = _wait_closed(_cycle(workers.queue))
        cycles.append(cycle)
        assert cycle.planned == len(current) == 60
        assert cycle.evaluated == cycle.planned  # counted once per claimed path: never more
        assert cycle.shards == 60 // SHARD_PATHS + 1 + 1  # 8 shards (pairs kept together) + the elements shard
        time.sleep(1.1)  # the next cycle is a later 'now'
    evaluations = {e.path_id: e for e in PathEvaluation.objects.all()}
    assert set(evaluations) == current
    assert {e.evaluations for e in evaluations.values()} == {2}  # exactly once in each of the two cycles
    assert {e.cycle_id for e in evaluations.values()} == {cycles[-1].id}
    taken_by = {e.worker for e in evaluations.values()}
    if n_workers > 1:
        assert len(taken_by) > 1, f"one worker took every shard: {taken_by}"
    assert taken_by <= {w.hostname for w in pool}
    # the lossy directions of the world were found, each once (no duplicate findings from several shards)
    lossy = {f"dst={d};src={s}" for s, d in world.lossy_paths}
    found = list(Finding.objects.exclude(status="resolved").filter(subject_key__in=lossy))
    assert {f.subject_key for f in found} == lossy
    assert len({(f.code, f.subject_key) for f in found}) == len(found)


def _claims_waiting() -> bool:
    with connection.cursor() as cursor:
        # Called inside the blocker's transaction, where PostgreSQL keeps the first snapshot of pg_stat_activity
        # until the transaction ends: without a fresh one, a claim that starts waiting after the first call is never
        # seen.
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
            "AND query LIKE 'INSERT INTO diagnosis_pathevaluation%%'"
        )
        return cursor.fetchone()[0] > 0


def test_a_worker_killed_mid_cycle_leaves_no_path_unevaluated_for_more_than_one_cycle(world, workers):
    current = set(Path.objects.values_list("id", flat=True))
    first = workers()
    _wait_closed(_cycle(workers.queue))  # every path has its evaluation row
    time.sleep(1.1)
    _new_results(world)  # outside the blocker's transaction, which is rolled back
    # Hold every path's evaluation row: the first shard the worker takes stops in its claim, mid-transaction.
    with connection.cursor() as blocker:
        blocker.execute("BEGIN")
        blocker.execute("SELECT path_id FROM diagnosis_pathevaluation FOR UPDATE")
        cycle = _cycle(workers.queue)
        # The worker starts and loads its shard's evidence before it claims: on a loaded machine that has taken
        # more than a minute, so the cap is generous (it only bounds a failing run).
        deadline = time.monotonic() + 180
        while not _claims_waiting():
            assert time.monotonic() < deadline, "no shard reached its claim"
            time.sleep(0.1)
        first.kill()  # mid-cycle, mid-transaction: nothing of its shard is stored, its task is never acknowledged
        blocker.execute("ROLLBACK")
    workers()  # another worker takes the shards still queued
    deadline = time.monotonic() + 120
    while True:
        cycle.refresh_from_db()
        if cycle.elements_done and cycle.evaluated >= cycle.planned - SHARD_PATHS:
            break
        assert time.monotonic() < deadline, f"the remaining shards were not evaluated: {cycle}"
        time.sleep(0.2)
    time.sleep(1)
    cycle.refresh_from_db()
    assert cycle.closed_at is None  # a shard was lost: this cycle resolves nothing
    lost = current - set(PathEvaluation.objects.filter(cycle=cycle).values_list("path_id", flat=True))
    assert 0 < len(lost) <= SHARD_PATHS

    time.sleep(1.1)
    _new_results(world)
    third = _wait_closed(_cycle(workers.queue))
    assert third.planned == len(current)
    evaluations = {e.path_id: e for e in PathEvaluation.objects.all()}
    assert set(evaluations) == current and {e.cycle_id for e in evaluations.values()} == {third.id}
    assert {evaluations[p].evaluations for p in lost} == {2}  # cycles 1 and 3: only the killed cycle missed them
    assert {evaluations[p].evaluations for p in current - lost} == {3}
    # The killed worker's message, redelivered late, evaluates nothing twice.
    shard = sorted(lost)
    assert diagnosis_shard_evaluate(cycle_id=cycle.id, path_ids=shard, worker="late") is None
    assert {PathEvaluation.objects.get(path_id=p).evaluations for p in shard} == {2}


def test_the_elements_shard_reads_only_the_interfaces_off_every_path_that_the_element_rules_can_judge(world):
    from wanmon.diagnosis import engine
    from wanmon.diagnosis.selectors import evidence_bundle_for_paths
    from wanmon.measurements.models import InterfaceRate

    # given two interfaces that no path crosses, polled every minute for the last 20 minutes: one counting CRC
    # errors (5 a second on 1 000 packets a second), one clean
    now = timezone.now().replace(second=0, microsecond=0)
    with connection.cursor() as cursor:
        cursor.execute(
            """SELECT i.id, e.name || ':' || i.name FROM inventory_interface i
               JOIN inventory_equipment e ON e.id = i.equipment_id
               WHERE i.id NOT IN (SELECT interface_id FROM inventory_pathhop WHERE interface_id IS NOT NULL)
               ORDER BY i.id LIMIT 2"""
        )
        (bad_id, bad_name), (clean_id, clean_name) = cursor.fetchall()
    InterfaceRate.objects.bulk_create(
        InterfaceRate(
            time=now - timedelta(minutes=m), interface_id=iid, interval_s=60, in_bps=8e6, out_bps=8e6,
            in_pps=1000, out_pps=1000, in_errors_per_s=5.0 if iid == bad_id else 0.0, out_errors_per_s=0.0,
            in_discards_per_s=0.0, out_discards_per_s=0.0, oper_status="up",
        )
        for m in range(20)
        for iid in (bad_id, clean_id)
    )
    start = now - timedelta(hours=6)
    bundle = evidence_bundle_for_paths(
        path_ids=[], now=now, window_start=start, baseline_start=start - timedelta(days=21), baseline_end=start,
        unpathed_interfaces=True,
    )
    # then the shard reads the interface with errors, with its 20 polls, and not the clean one
    names = {i.name: i for i in bundle.interfaces}
    assert bad_name in names and clean_name not in names
    assert len(names[bad_name].rates) == 20
    # and finds the errors
    found = engine.diagnose(bundle, now)
    assert [(f.code, f"{f.subject['equipment']}:{f.subject['interface']}") for f in found] == [
        ("INTERFACE_ERRORS", bad_name)
    ]


def test_the_elements_shard_is_queued_before_the_path_shards(world, monkeypatch):
    from wanmon.diagnosis import tasks

    queued = []
    monkeypatch.setattr(tasks.diagnosis_shard_task, "apply_async", lambda args, **options: queued.append(args))
    result = tasks.diagnosis_run_task.apply().get()
    # then the longest shard goes first (taken last, it would run alone while the other workers idle)
    assert queued[0] == (result["cycle"], [], True)
    assert len(queued) == result["shards"] and all(len(a) == 2 and a[1] for a in queued[1:])


# Statements that read what every shard of a cycle reads alike: the maintenance in force, the trunks, hosts and
# equipment of the inventory, the window's host TCP reports.
SHARED_READS = {
    "maintenance": 'FROM "maintenance_maintenancewindow"',
    "trunks": 'FROM "inventory_trunk"',
    "hosts": 'FROM "inventory_host"',
    "equipment": 'FROM "inventory_equipment"',
    # the window's reports (alias h); the last report before the window is each shard's own read (alias t)
    "host reports": "FROM measurements_hosttcp h",
}


def test_a_cycle_in_one_process_reads_what_its_shards_share_once_and_a_quiet_minute_costs_little(world):
    from django.test.utils import CaptureQueriesContext

    from wanmon.diagnosis.shards import diagnosis_cycle_run

    # given 60 directions with fresh results, evaluated in 8 shards and the elements shard by one cycle
    now = timezone.now().replace(second=0, microsecond=0)
    with CaptureQueriesContext(connection) as busy:
        diagnosis_cycle_run(now=now, size=SHARD_PATHS)
    assert DiagnosisCycle.objects.get(at=now).shards == 9
    # then each read the shards share was made once for the whole cycle, not once a shard
    made = {name: sum(1 for q in busy.captured_queries if table in q["sql"]) for name, table in SHARED_READS.items()}
    assert made == dict.fromkeys(SHARED_READS, 1)

    # and a minute later, with no new result and no finding left open, the cycle plans nothing and its elements
    # shard (run every cycle) stays a handful of statements (24 when every shard made its own reads, the cycle's
    # row took a transaction of four and a shard that found nothing still opened a savepoint; 4 of the 20 turn
    # PostgreSQL's JIT off in the planning's and the shard's transactions, shards._without_jit)
    Finding.objects.all().delete()
    with CaptureQueriesContext(connection) as quiet:
        diagnosis_cycle_run(now=now + timedelta(minutes=1), size=SHARD_PATHS)
    assert DiagnosisCycle.objects.get(at=now + timedelta(minutes=1)).planned == 0
    assert len(quiet.captured_queries) <= 20, [q["sql"][:60] for q in quiet.captured_queries]
