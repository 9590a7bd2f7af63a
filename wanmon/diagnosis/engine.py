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
from wanmon.diagnosis import constants as k
from wanmon.diagnosis.context import RuleContext
from wanmon.diagnosis.degradation import history_of
from wanmon.diagnosis.episodes import OK
from wanmon.diagnosis.evidence import EvidenceBundle, RuleFinding
from wanmon.diagnosis.registry import RULES, Rule, rule_context
from wanmon.diagnosis.rules.maintenance import apply_explanations


def deduplicate(findings: Iterable[RuleFinding]) -> list[RuleFinding]:
    """One finding per (code, subject): the most severe (best-ranked) one, its window widened to cover all."""
    merged: dict[tuple, RuleFinding] = {}
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


def _better(a: RuleFinding, b: RuleFinding) -> bool:
    if (a.rank is not None) and (b.rank is not None) and a.rank != b.rank:
        return a.rank < b.rank
    return codes.SEVERITY_ORDER[a.severity] > codes.SEVERITY_ORDER[b.severity]


def sort_findings(findings: Iterable[RuleFinding]) -> list[RuleFinding]:
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


def diagnose(evidence_bundle: EvidenceBundle, now: datetime, rules: Sequence[Rule] = RULES) -> list[RuleFinding]:
    """Run every rule over the bundle as of ``now`` and return the deduplicated findings."""
    ctx = rule_context(evidence_bundle, now)
    for rule in rules:
        found = rule.func(ctx)
        for f in found:
            if f.code not in rule.codes:
                raise ValueError(f"rule {rule.name} emitted {f.code}, not one of {rule.codes}")
        ctx.findings.extend(deduplicate(found))
    return sort_findings(with_confidence(ctx, by_impact(ctx, apply_explanations(deduplicate(ctx.findings)))))


def _path_of(ctx: RuleContext, f: RuleFinding):
    if set(f.subject) != {"src", "dst"}:
        return None
    return ctx.path(f.subject["src"], f.subject["dst"])


def by_impact(ctx: RuleContext, findings: Iterable[RuleFinding]) -> list[RuleFinding]:
    """Severity by impact: critical only while traffic is hurt. A critical path finding whose path has given
    RECOVERED_HEALTHY_RESULTS healthy results of every kind that was bad since the finding ended is a warning
    (the operator still sees what happened; nobody is paged for what is over)."""
    out = []
    for f in findings:
        p = _path_of(ctx, f) if f.severity == codes.CRITICAL else None
        if p is not None:
            a = ctx.assessment(p)
            bad_kinds = {o.kind for o in a.observations if f.start <= o.time <= f.end and o.state != OK}
            after = {kind: [o for o in a.observations if o.kind == kind and o.time > f.end] for kind in bad_kinds}
            recovered = bool(bad_kinds) and all(
                len(obs) >= k.RECOVERED_HEALTHY_RESULTS and all(o.state == OK for o in obs) for obs in after.values()
            )
            if recovered:
                f = replace(
                    f,
                    severity=codes.WARNING,
                    evidence={**f.evidence, "recovered": f"healthy results since {f.end:%Y-%m-%d %H:%M} UTC"},
                )
        out.append(f)
    return out


def with_confidence(ctx: RuleContext, findings: Iterable[RuleFinding]) -> list[RuleFinding]:
    """Every path finding carries its confidence: how many results it rests on, of which kinds, which were bad,
    and what was ruled out (``evidence["confidence"]``), and the age and size of the path's history
    (``evidence["history"]``, ``degradation.history_of``)."""
    out = []
    for f in findings:
        p = _path_of(ctx, f)
        if p is None or "confidence" in f.evidence:
            out.append(f)
            continue
        a = ctx.assessment(p)
        seen = [o for o in a.observations if f.start <= o.time <= f.end]
        bad = [o for o in seen if o.state != OK]
        bad_kinds = sorted({o.kind for o in bad})
        if len(bad_kinds) >= 2 or len(bad) >= k.CONFIDENCE_HIGH_OBSERVATIONS:
            level = "high"
        elif len(bad) >= k.MIN_MODERATE_EPISODE_OBSERVATIONS:
            level = "medium"
        else:
            level = "low"
        confidence = {
            "level": level,
            "observations": len(seen),
            "bad_observations": len(bad),
            "kinds": sorted({o.kind for o in seen}),
            "bad_kinds": bad_kinds,
            "ruled_out": sorted((f.evidence.get("ruled_out") or {}).keys()),
            "loss_detection_limit": a.loss.detection_limit,
        }
        # the age and size of the path's history: what its own level and the relative judgements rest on
        history = {"history": history_of(p)} if "history" not in f.evidence else {}
        out.append(replace(f, evidence={**f.evidence, "confidence": confidence, **history}))
    return out
