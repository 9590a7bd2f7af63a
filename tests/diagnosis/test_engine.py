"""The engine, the registry, the closed vocabulary and the purity of the package."""

from __future__ import annotations

import ast
import json
from dataclasses import replace
from pathlib import Path

import pytest

from tests.diagnosis.builders import NOW, T0, bundle, healthy_eu, run
from wanmon.diagnosis import codes
from wanmon.diagnosis.engine import deduplicate, diagnose, sort_findings
from wanmon.diagnosis.evidence import RuleFinding
from wanmon.diagnosis.registry import RULES, Rule

PACKAGE = Path(__file__).resolve().parents[2] / "wanmon" / "diagnosis"


def finding(code=codes.ROUTE_CHANGE, severity=codes.INFO, rank=None, start=T0, end=NOW, **subject):
    return RuleFinding(code, severity, subject or {"src": "A", "dst": "B"}, start, end, rank, "s", "e")


def test_every_code_has_exactly_one_rule():
    emitted = [c for r in RULES for c in r.codes]
    assert sorted(emitted) == sorted(codes.CODES)
    assert len(emitted) == len(set(emitted))


def test_rules_are_documented_with_their_criterion():
    for r in RULES:
        doc = r.func.__doc__ or ""
        assert "Evidence" in doc and "Criterion" in doc and "Why" in doc, r.name


def test_unknown_codes_and_severities_are_refused():
    with pytest.raises(ValueError):
        finding(code="SOMETHING_ELSE")
    with pytest.raises(ValueError):
        finding(severity="fatal")
    with pytest.raises(ValueError):
        finding(start=NOW, end=T0)


def test_a_rule_emitting_a_foreign_code_is_an_error():
    rogue = Rule("rogue", (codes.ROUTE_CHANGE,), lambda ctx: [finding(code=codes.PATH_DOWN, severity=codes.CRITICAL)])
    with pytest.raises(ValueError):
        diagnose(bundle(healthy_eu()), NOW, rules=(rogue,))


def test_deduplicate_keeps_one_per_code_and_subject_with_the_widest_window():
    a = finding(start=T0, end=T0.replace(hour=8))
    b = replace(finding(severity=codes.WARNING), start=T0.replace(hour=7), end=NOW)
    c = finding(src="C", dst="D")
    out = deduplicate([a, b, c])
    assert len(out) == 2
    assert out[0].severity == codes.WARNING and out[0].start == T0 and out[0].end == NOW


def test_deduplicate_keeps_the_best_rank():
    a = finding(code=codes.SHARED_EQUIPMENT_SUSPECT, severity=codes.WARNING, rank=3, equipment="x")
    b = finding(code=codes.SHARED_EQUIPMENT_SUSPECT, severity=codes.WARNING, rank=1, equipment="x")
    assert deduplicate([a, b])[0].rank == 1


def test_sorting_critical_first_then_catalogue_order():
    out = sort_findings(
        [
            finding(code=codes.ROUTE_CHANGE),
            finding(code=codes.PATH_DOWN, severity=codes.CRITICAL),
            finding(code=codes.WINDOW_LIMITED, severity=codes.WARNING),
        ]
    )
    assert [f.code for f in out] == [codes.PATH_DOWN, codes.WINDOW_LIMITED, codes.ROUTE_CHANGE]


def test_diagnose_is_deterministic_and_json_clean():
    from tests.diagnosis.test_case_studies import case1_bundle

    first, second = run(case1_bundle()), run(case1_bundle())
    assert [f.to_dict() for f in first] == [f.to_dict() for f in second]
    json.dumps([f.to_dict() for f in first])


def test_empty_bundle():
    assert diagnose(bundle(), NOW) == []


# The database side of the diagnosis (models, selectors, services, replay, tasks, API) lives beside the
# pure expert system; the rules and everything they use must stay free of Django.
DB_LAYER = {"models.py", "selectors", "maintenance_windows.py", "services.py", "shards.py", "replay.py", "tasks.py",
            "apps.py", "choices.py",
            "admin.py", "api", "management", "migrations"}


def test_no_django_in_the_pure_modules():
    pure = [py for py in PACKAGE.rglob("*.py") if py.relative_to(PACKAGE).parts[0] not in DB_LAYER]
    assert len(pure) > 10
    for py in pure:
        tree = ast.parse(py.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for n in names:
                assert not n.startswith(("django", "rest_framework", "celery")), f"{py}: imports {n}"
                if n.startswith("wanmon."):
                    assert n.startswith(("wanmon.diagnosis", *PURE_ELSEWHERE)), f"{py}: imports {n}"


# Pure modules of other apps the rules may use: path membership is decided in one place, the inventory's; values
# become JSON in one place, the core's.
PURE_ELSEWHERE = (
    "wanmon.inventory.membership", "wanmon.inventory.labels", "wanmon.inventory.constants", "wanmon.core.jsonable",
)


def test_pure_modules_of_other_apps_are_free_of_django():
    root = PACKAGE.parent
    for module in PURE_ELSEWHERE:
        tree = ast.parse((root / (module.removeprefix("wanmon.").replace(".", "/") + ".py")).read_text())
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for n in names:
                assert not n.startswith(("django", "rest_framework", "celery")), f"{module}: imports {n}"
                if n.startswith("wanmon."):
                    assert n in PURE_ELSEWHERE, f"{module}: imports {n}"
