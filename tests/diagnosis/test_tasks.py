"""The diagnosis' beat tasks: the hourly prune keeps the cycle rows to the last two days."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from wanmon.diagnosis.models import DiagnosisCycle, PathEvaluation
from wanmon.diagnosis.tasks import diagnosis_cycles_prune_task
from wanmon.inventory.models import Path, Site


def test_the_cycle_prune_is_on_the_beat_schedule_every_hour():
    entries = [e for e in settings.CELERY_BEAT_SCHEDULE.values()
               if e["task"] == "wanmon.diagnosis.tasks.diagnosis_cycles_prune_task"]
    assert len(entries) == 1
    assert entries[0]["schedule"] <= 3600  # at most an hour of extra rows (60) beyond the two days kept
    assert diagnosis_cycles_prune_task.name == "wanmon.diagnosis.tasks.diagnosis_cycles_prune_task"


@pytest.mark.django_db
def test_the_prune_task_deletes_cycles_older_than_two_days_and_keeps_their_path_evaluations():
    # given: cycles 3 days, 2 days and 1 minute, 47 hours and 1 minute old; a path last evaluated by the oldest
    now = timezone.now()
    ages = {"old": timedelta(days=3), "just-old": timedelta(days=2, minutes=1),
            "recent": timedelta(hours=47), "current": timedelta(minutes=1)}
    cycles = {name: DiagnosisCycle.objects.create(at=now - age, planned=1, shards=1) for name, age in ages.items()}
    a = Site.objects.create(code="AAA", name="A")
    b = Site.objects.create(code="BBB", name="B")
    old_path = Path.objects.create(src=a, dst=b, valid_from=datetime(2026, 1, 1, tzinfo=UTC))
    new_path = Path.objects.create(src=b, dst=a, valid_from=datetime(2026, 1, 1, tzinfo=UTC))
    PathEvaluation.objects.create(path=old_path, cycle=cycles["old"], cycle_at=cycles["old"].at, evaluations=7)
    PathEvaluation.objects.create(path=new_path, cycle=cycles["current"], cycle_at=cycles["current"].at)

    # when
    result = diagnosis_cycles_prune_task.apply().get()

    # then: the two older than two days are gone, the others stay
    assert result == {"deleted": 2}
    assert set(DiagnosisCycle.objects.values_list("pk", flat=True)) == {cycles["recent"].pk, cycles["current"].pk}
    # the path evaluated by a pruned cycle keeps its claim time and count (planning reads cycle_at), its link is
    # cleared
    old = PathEvaluation.objects.get(path=old_path)
    assert (old.cycle_id, old.cycle_at, old.evaluations) == (None, cycles["old"].at, 7)
    assert PathEvaluation.objects.get(path=new_path).cycle_id == cycles["current"].pk
