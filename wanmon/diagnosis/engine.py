"""The diagnosis engine: ``diagnose(evidence_bundle, now) -> list[Finding]``.

Pure: runs the registry in order over one evidence bundle (each rule sees the
findings of the rules before it), lets maintenance windows mark the symptoms
they explain, and returns deduplicated findings, most severe first.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import datetime

from wanmon.diagnosis import codes
from wanmon.diagnosis.context import RuleContext
from wanmon.diagnosis.evidence import EvidenceBundle, Finding
from wanmon.diagnosis.registry import RULES, Rule
from wanmon.diagnosis.rules.maintenance import apply_explanations


def deduplicate(findings: Iterable[Finding]) -> list[Finding]:
    """One finding per (code, subject): the most severe (best-ranked) one, its window widened to cover all."""
    merged: dict[tuple, Finding] = {}
    order: list[tuple] = []
    for f in findings:
        cur = merged.get(f.key)
        if cur is None:
            merged[f.key] = f
            order.append(f.key)
            continue
        better = _better(f, cur)
        base, other = (f, cur) if better else (cur, f)
        merged[f.key] = replace(
            base,
            start=min(base.start, other.start),
            end=max(base.end, other.end),
            explained_by=tuple(dict.fromkeys(base.explained_by + other.explained_by)),
        )
    return [merged[key] for key in order]


def _better(a: Finding, b: Finding) -> bool:
    if (a.rank is not None) and (b.rank is not None) and a.rank != b.rank:
        return a.rank < b.rank
    return codes.SEVERITY_ORDER[a.severity] > codes.SEVERITY_ORDER[b.severity]


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    """Critical first, then the catalogue order, rank and subject."""
    return sorted(
        findings,
        key=lambda f: (
            -codes.SEVERITY_ORDER[f.severity],
            codes.CODE_ORDER[f.code],
            f.rank if f.rank is not None else 0,
            sorted(f.subject.items()),
        ),
    )


def diagnose(evidence_bundle: EvidenceBundle, now: datetime, rules: Sequence[Rule] = RULES) -> list[Finding]:
    """Run every rule over the bundle as of ``now`` and return the deduplicated findings."""
    ctx = RuleContext(evidence_bundle, now)
    for rule in rules:
        found = rule.func(ctx)
        for f in found:
            if f.code not in rule.codes:
                raise ValueError(f"rule {rule.name} emitted {f.code}, not one of {rule.codes}")
        ctx.findings.extend(deduplicate(found))
    return sort_findings(apply_explanations(deduplicate(ctx.findings)))
