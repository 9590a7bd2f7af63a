"""One road: a scenario replayed with ``manage.py replay`` gives the findings that real Celery workers give when the
beat's task runs the cycle over the same stored data at the same times."""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path

import pytest

from tests.alerts.conftest import WorkerPool
from wanmon.diagnosis.models import DiagnosisCycle, Finding
from wanmon.diagnosis.replay import replay_steps, scenario_load, scenario_replay, scenario_store

pytestmark = pytest.mark.django_db(transaction=True)

FZK = Path(__file__).resolve().parents[1] / "scenarios" / "reverse-path-loss-fzk.yaml"
STEP = timedelta(minutes=30)  # 12 cycles over the file's 6 hours


def _lifecycle(code, subject, rank, first_seen_at, status, resolved_at) -> tuple:
    return code, tuple(sorted(dict(subject).items())), rank, first_seen_at, status, resolved_at


@pytest.fixture
def workers(django_db_setup):
    pool = WorkerPool("road", {"WANMON_DIAGNOSIS_SHARD_PATHS": "4"})  # several shards for 8 directions
    yield pool
    pool.stop()


def _beat(at, queue: str) -> DiagnosisCycle:
    """The beat's task as of ``at``, on the workers' queue; waits until every shard of its cycle is done."""
    from wanmon.diagnosis.tasks import diagnosis_run_task

    diagnosis_run_task.apply_async(args=(at.isoformat(),), queue=queue)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        cycle = DiagnosisCycle.objects.filter(at=at, closed_at__isnull=False).first()
        if cycle is not None:
            return cycle
        time.sleep(0.2)
    pytest.fail(f"the cycle at {at} did not close within 120 s")


def test_replay_finds_what_real_workers_running_the_beats_cycle_find(workers):
    # given the scenario replayed (rolled back) every 30 minutes of its timeline
    scenario = scenario_load(str(FZK))
    replayed = scenario_replay(scenario, step=STEP)
    expected = {
        _lifecycle(f.code, f.subject, f.rank, f.first_seen_at, f.status, f.resolved_at) for f in replayed.findings
    }
    assert {c for c, *_ in expected} >= {"ASYMMETRIC_PATH", "SHARED_EQUIPMENT_SUSPECT"}

    # when the same data is stored and two real workers run the beat's task at the same times
    scenario_store(scenario)
    workers()
    workers()
    times = replay_steps(scenario.first, scenario.now, STEP)
    for at in times:
        _beat(at, workers.queue)

    # then the stored findings are the replay's, lifecycle included
    stored = {
        _lifecycle(f.code, f.subject, f.rank, f.first_seen_at, f.status, f.resolved_at) for f in Finding.objects.all()
    }
    assert stored == expected
    assert DiagnosisCycle.objects.filter(closed_at__isnull=False).count() == len(times) == replayed.steps
