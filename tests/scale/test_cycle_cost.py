"""What a cycle costs besides its rules: the planning statement, the database sessions' settings, the workers' memory
management.

Measured on the 10 000-path world of ``scripts/bench scale`` (docs/scale.md): the planning statement matched each
current direction against every wanted one through an OR of "same pair or reversed pair", a nested loop of 10 000 by
10 000 (5 s before any shard could start); PostgreSQL's JIT compiled the shards' set-based reads at every cycle
(half a second of compilation for 30 ms of execution); and Python's cyclic garbage collector traversed a shard's
growing evidence every few hundred allocations (a third of the CPU of reading it)."""

from __future__ import annotations

import gc
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from scripts.scale_inventory import inventory_create, world_generate
from wanmon.diagnosis import shards
from wanmon.diagnosis.selectors import findings

pytestmark = pytest.mark.django_db


def _jit() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SHOW jit")
        return cursor.fetchone()[0]


def test_the_cycle_reads_without_jit_and_other_sessions_keep_it(monkeypatch):
    # given a small world
    now = timezone.now().replace(second=0, microsecond=0)
    inventory_create(world_generate(n_paths=20, n_sites=6, n_equipment=10), valid_from=now - timedelta(days=1))
    assert _jit() == "on"  # PostgreSQL's default: pages that aggregate months keep it
    seen = []
    planning, reading = findings.sql_rows, shards.evidence_bundle_for_paths
    monkeypatch.setattr(findings, "sql_rows", lambda *a, **kw: seen.append(("plan", _jit())) or planning(*a, **kw))
    monkeypatch.setattr(
        shards, "evidence_bundle_for_paths", lambda **kw: seen.append(("shard", _jit())) or reading(**kw)
    )
    # when a cycle is planned and a shard evaluated
    plan = shards.diagnosis_cycle_open(now=now)
    shards.diagnosis_shard_evaluate(cycle_id=plan.cycle_id, path_ids=plan.shards[0], worker="w")
    # then both ran their statements without JIT (the shards' reads over arrays of ids are estimated at hundreds
    # of thousands of rows: with JIT on, each was compiled at every cycle)
    assert seen == [("plan", "off"), ("shard", "off")]


def test_the_planning_statement_joins_the_wanted_pairs_on_an_equality_not_on_an_or(monkeypatch):
    # given 200 current directions, none evaluated yet (all wanted, with the other direction of their pair)
    now = timezone.now().replace(second=0, microsecond=0)
    inventory_create(world_generate(n_paths=200, n_sites=25, n_equipment=30), valid_from=now - timedelta(days=1))
    statements = []
    real = findings.sql_rows

    def explained(sql, params, **kw):
        statements.append((sql, params))
        return real(sql, params, **kw)

    monkeypatch.setattr(findings, "sql_rows", explained)
    # when the cycle plans
    planned = findings.paths_to_evaluate(now=now, late_s=120, window=timedelta(hours=6))
    # then every direction is planned, each once
    assert len(planned) == 200 and len({p[0] for p in planned}) == 200
    # and the wanted pairs are matched on an equality PostgreSQL can hash (a filter of two ORed pair equalities
    # can only be evaluated for every current direction against every wanted one)
    sql, params = statements[0]
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN " + sql, params)
        plan = "\n".join(r[0] for r in cursor.fetchall())
    assert not [line for line in plan.splitlines() if "Join Filter" in line and " OR " in line], plan


def test_a_shard_is_evaluated_with_the_cyclic_collector_paused_and_it_runs_again_after(monkeypatch):
    # given a small world and a cycle planned over it
    now = timezone.now().replace(second=0, microsecond=0)
    inventory_create(world_generate(n_paths=20, n_sites=6, n_equipment=10), valid_from=now - timedelta(days=1))
    plan = shards.diagnosis_cycle_open(now=now)
    seen = []
    real = shards.evidence_bundle_for_paths

    def reading(**kw):
        seen.append(gc.isenabled())
        return real(**kw)

    monkeypatch.setattr(shards, "evidence_bundle_for_paths", reading)
    assert gc.isenabled()
    # when a worker evaluates a shard, then the elements shard
    shards.diagnosis_shard_evaluate(cycle_id=plan.cycle_id, path_ids=plan.shards[0], worker="w")
    shards.diagnosis_shard_evaluate(cycle_id=plan.cycle_id, path_ids=[], elements=True, worker="w")
    # then both read their evidence with the collector off, and it is on again after each
    assert seen == [False, False]
    assert gc.isenabled()
