"""The correlation over a whole cycle (wanmon/diagnosis/cycle_correlation.py, correlation_stage.py): the shards'
verdicts ranked together give the correlation rule's findings over all their paths, whichever shard each path fell
in; pure, and on production's road (a scenario replayed through the cycle in shards of one site pair)."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from tests.diagnosis.builders import NOW, run
from tests.diagnosis.test_case_studies import case1_bundle, case5_bundle
from wanmon.diagnosis import codes, engine
from wanmon.diagnosis.cycle_correlation import VerdictRecorder, cycle_suspects, shard_findings
from wanmon.diagnosis.evidence import EvidenceBundle, RuleFinding
from wanmon.diagnosis.models import DiagnosisCycle, ShardCorrelation
from wanmon.diagnosis.replay import scenario_load, scenario_replay
from wanmon.diagnosis.shards import shards_partition


def _as_read(b: EvidenceBundle) -> EvidenceBundle:
    """The bundle as the cycle reads it from the database: its paths in site order (``evidence_bundle_for_paths``),
    the order in which the rule lists a cluster's episodes."""
    return replace(b, paths=tuple(sorted(b.paths, key=lambda p: (p.src, p.dst))))


def _by_pairs(b: EvidenceBundle, size: int) -> list[EvidenceBundle]:
    """The bundle's paths in the cycle's shards of ``size`` directions (both directions of a pair together)."""
    shards = shards_partition([(i, p.src, p.dst) for i, p in enumerate(b.paths)], size)
    return [replace(b, paths=tuple(b.paths[i] for i in shard)) for shard in shards]


def _cycle(shards: list[EvidenceBundle]) -> tuple[list[RuleFinding], list[RuleFinding]]:
    """Each shard evaluated as a worker does it (its verdicts through JSON, as the database keeps them), then the
    stage: (what the shards store themselves, the stage's SHARED_EQUIPMENT_SUSPECT findings)."""
    stored, verdicts = [], []
    for b in shards:
        recorder = VerdictRecorder()
        stored += shard_findings(engine.diagnose(b, NOW, recorder.rules))
        verdicts.append(json.loads(json.dumps(recorder.verdicts)))
    suspects = cycle_suspects(
        [v["degraded"] for v in verdicts], lambda: [p for v in verdicts for p in v["healthy"]], shards[0].maintenance
    )
    return stored, suspects


def _suspects(findings) -> list[dict]:
    return [f.to_dict() for f in findings if f.code == codes.SHARED_EQUIPMENT_SUSPECT]


def test_one_shards_verdicts_give_the_correlation_rules_own_findings():
    # the shared elements of case 1, and the load rise of case 5 (one degraded path)
    for b in (_as_read(case1_bundle()), _as_read(case5_bundle(True, True))):
        stored, suspects = _cycle([b])
        assert _suspects(suspects) == _suspects(run(b)) != []
        assert codes.SHARED_EQUIPMENT_SUSPECT not in {f.code for f in stored}  # the shard stores none itself


def test_a_routers_degraded_paths_in_different_shards_are_ranked_together():
    # given case 1 (FZK->CERN and CNAF->CERN lose frames on GEANT), one site pair a shard
    whole = _as_read(case1_bundle())
    shards = _by_pairs(whole, 2)
    assert [{p.key for p in s.paths} & {"FZK->CERN", "CNAF->CERN"} for s in shards if len(s.paths)] == [
        {"CNAF->CERN"},
        {"FZK->CERN"},
        set(),
    ]
    # each shard alone sees one degraded site pair: its correlation rule ranks nothing
    assert not [f for s in shards for f in run(s) if f.code == codes.SHARED_EQUIPMENT_SUSPECT and f.rank == 1]
    # when the cycle's stage ranks over every shard's verdicts
    _, suspects = _cycle(shards)
    # then geant-fra is first, with both degraded paths, exactly as if all paths had been in one shard
    top = suspects[0]
    assert (top.subject, top.rank) == ({"equipment": "geant-fra"}, 1)
    assert top.evidence["degraded_paths"] == ["CNAF->CERN", "FZK->CERN"]
    assert _suspects(suspects) == _suspects(run(whole))


CASE1 = Path(__file__).resolve().parents[1] / "scenarios" / "case1-reverse-path-loss-shared-backbone.yaml"


STEP = timedelta(hours=1)  # 6 cycles over the file's 6 hours


@pytest.mark.django_db
def test_on_the_cycle_a_routers_degraded_paths_in_different_shards_rank_it_first_with_all_of_them(settings):
    # given case 1 replayed through the cycle with every site pair a shard of its own: FZK->CERN and CNAF->CERN,
    # both losing frames on the GEANT fibre into geant-gva:xe-1/0/0, are evaluated by different shards
    scenario = scenario_load(str(CASE1))
    settings.DIAGNOSIS_SHARD_PATHS = 2
    shards: list[int] = []

    def count_shards(at) -> None:
        shards.append(DiagnosisCycle.objects.get(at=at).shards)
        assert not ShardCorrelation.objects.exists()  # a closed cycle's verdicts are deleted once ranked

    split = scenario_replay(scenario, step=STEP, after_step=count_shards)
    assert min(shards) >= 3
    # then the port is ranked first with both paths, critical, and the file's expectations hold (no
    # UNEXPLAINED_DEGRADATION, cern-border not first)
    top = [f for f in split.findings if f.code == codes.SHARED_EQUIPMENT_SUSPECT and f.rank == 1]
    assert [(f.subject, f.evidence.get("degraded_paths"), f.severity) for f in top] == [
        ({"equipment": "geant-gva", "interface": "xe-1/0/0"}, ["CNAF->CERN", "FZK->CERN"], codes.CRITICAL)
    ]
    assert split.problems == []


def test_when_a_kind_measured_a_path_is_kept_as_spans_that_answer_as_the_observations_would():
    from types import SimpleNamespace

    from tests.diagnosis.builders import at
    from wanmon.diagnosis.cycle_correlation import VerdictPath, _spans

    # tcp at 0, 50 and 200 min (two spans: 50 -> 200 is more than twice the 30 min slack), owamp every 5 min
    obs = [SimpleNamespace(kind="tcp", time=at(m)) for m in (0, 50, 200)]
    obs += [SimpleNamespace(kind="owamp", time=at(m)) for m in range(0, 360, 5)]
    spans = _spans(obs)
    assert len(spans["tcp"]) == 2 and len(spans["owamp"]) == 1
    p = VerdictPath("A", "B", ("a", "b"), spans)
    # every period the rule asks about is at least an hour (the episodes' span widened by 30 min each side)
    for lo, hi in [(60, 120), (80, 140), (55, 195), (-30, 30), (190, 250), (210, 330)]:
        expected = any(lo <= m <= hi for m in (0, 50, 200))
        assert p.measured(at(lo), at(hi), {"tcp"}) is expected, (lo, hi)
    assert p.measured(at(60), at(120), {"owamp"}) and not p.measured(at(60), at(120), {"udp"})
