"""MAINTENANCE_EXPLAINED: a degradation during scheduled work on an element of the path is known, not alerted."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from wanmon.diagnosis import codes
from wanmon.diagnosis import constants as k
from wanmon.diagnosis.context import RuleContext, finding
from wanmon.diagnosis.episodes import Episode
from wanmon.diagnosis.evidence import (
    EvidenceBundle,
    MaintenanceEvidence,
    PathEvidence,
    RuleFinding,
    element_subject,
    path_key,
    split_element,
)
from wanmon.diagnosis.path_elements import base_equipment, interface_on_path, path_elements


def affected_elements(window: MaintenanceEvidence, bundle: EvidenceBundle) -> tuple[str, ...]:
    """Element names a window affects.  A window naming only a carrier affects nothing known: a carrier runs
    many boxes and lines, and taking all of them as under work would explain any fault on any path through
    the carrier for the length of the window."""
    return tuple(window.affects)


def elements_on_path(window: MaintenanceEvidence, path: PathEvidence, bundle: EvidenceBundle) -> list[str]:
    """Affected elements the path crosses.

    Equipment is on the path when it is a hop, holds an interface hop or a member of a trunk on the path
    (work on a device affects all its ports). An interface ('equipment:port') is on the path by the rules
    of ``wanmon.inventory.membership`` with the port known: a hop leaves by it, it is a member of a trunk on
    the path, or the far end the path arrives by. Work on another port of a device the path crosses -- by a
    known port, or without the inventory knowing which -- is not on the path: explaining the degradation by
    it would hide a real fault (the maintenance app decides the same). 'site:CODE' matches the paths from
    and to that site; 'path:SRC->DST' names one direction itself.
    """
    names = path_elements(path, bundle) | {f"site:{path.src}", f"site:{path.dst}", f"path:{path.src}->{path.dst}"}
    out = []
    for e in affected_elements(window, bundle):
        port = split_element(e)[1]
        if port is None:
            if e in names:
                out.append(e)
        elif e in names or interface_on_path(e, path, bundle) == "exact":
            out.append(e)
    return out


def impact_explains(impact: str | None) -> bool:
    """Outage, degraded and at-risk work explains a degradation; reduced-redundancy and no-impact work does not.

    An unknown impact is treated as an outage (as the maintenance app does): better to show a window that
    might explain the symptom than to alarm on announced work.
    """
    return (impact or "outage").strip().lower() not in k.NON_EXPLAINING_IMPACTS


def covers(window: MaintenanceEvidence, start: datetime, end: datetime) -> bool:
    """The degradation lies within the window (START_SLACK before, END_GRACE after)."""
    return start >= window.start - timedelta(seconds=k.MAINTENANCE_START_SLACK_S) and end <= window.end + timedelta(
        seconds=k.MAINTENANCE_END_GRACE_S
    )


def overlaps(window: MaintenanceEvidence, start: datetime, end: datetime) -> bool:
    return start <= window.end + timedelta(seconds=k.MAINTENANCE_END_GRACE_S) and end >= window.start - timedelta(
        seconds=k.MAINTENANCE_START_SLACK_S
    )


@dataclass(frozen=True)
class EpisodeMatch:
    """A path episode and the maintenance window explaining it (or why none does)."""

    path: str
    episode: Episode
    window: MaintenanceEvidence | None
    element: str | None
    notes: tuple[str, ...] = ()


@dataclass
class MaintenanceMatches:
    """Result of matching every path episode against the calendar."""

    matches: list[EpisodeMatch] = field(default_factory=list)

    def explained(self, src: str, dst: str, episode: Episode) -> EpisodeMatch | None:
        key = path_key(src, dst)
        for m in self.matches:
            if m.path == key and m.episode is episode and m.window is not None:
                return m
        return None

    def notes_for(self, src: str, dst: str) -> list[str]:
        key = path_key(src, dst)
        return [n for m in self.matches if m.path == key for n in m.notes]


def explain_span(
    windows: Sequence[MaintenanceEvidence], path: PathEvidence, bundle: EvidenceBundle, start: datetime, end: datetime
) -> tuple[MaintenanceEvidence | None, str | None, list[str]]:
    """The window explaining a path degradation over [start, end], and notes on overlapping windows that do not."""
    notes = []
    for w in windows:
        on_path = elements_on_path(w, path, bundle)
        if not on_path or not overlaps(w, start, end):
            continue
        explaining = [e for e in on_path if impact_explains(w.impact_for(e))]
        if not explaining:
            impacts = ", ".join(sorted({w.impact_for(e) for e in on_path}))
            notes.append(
                f"{w.reference} on {', '.join(on_path)} overlaps but its impact '{impacts}' should not affect traffic"
            )
            continue
        if not covers(w, start, end):
            notes.append(
                f"{w.reference} on {', '.join(on_path)} ({w.start:%H:%M}-{w.end:%H:%M} UTC) overlaps but the "
                f"degradation ({start:%H:%M}-{end:%H:%M} UTC) extends beyond it"
            )
            continue
        return w, explaining[0], notes
    return None, None, notes


def match_episodes(ctx: RuleContext) -> MaintenanceMatches:
    """Match every degradation episode of every path against the maintenance calendar (pure)."""
    result = MaintenanceMatches()
    windows = ctx.bundle.maintenance
    for a in ctx.assessments():
        for ep in a.episodes:
            w, element, notes = explain_span(windows, a.path, ctx.bundle, ep.start, ep.end)
            result.matches.append(EpisodeMatch(a.key, ep, w, element, tuple(notes)))
    return result


def _finding_elements(f: RuleFinding, bundle: EvidenceBundle) -> tuple[PathEvidence | None, set[str]]:
    if "src" in f.subject and "dst" in f.subject:
        return bundle.path(f.subject["src"], f.subject["dst"]), set()
    if "trunk" in f.subject:  # the bundle and its members: work on a member is work on the bundle
        name = f.subject["trunk"]
        return None, {name} | {m.name for t in bundle.trunks if t.name == name for m in t.members}
    if "equipment" in f.subject:
        eq = f.subject["equipment"]
        return None, {f"{eq}:{f.subject['interface']}"} if f.subject.get("interface") else {eq}
    return None, set()


def explains_finding(w: MaintenanceEvidence, f: RuleFinding, bundle: EvidenceBundle) -> str | None:
    if not covers(w, f.start, f.end):
        return None
    path, elements = _finding_elements(f, bundle)
    if path is not None:
        on = [e for e in elements_on_path(w, path, bundle) if impact_explains(w.impact_for(e))]
        return on[0] if on else None
    # The finding's own element; its equipment (work on a device covers its ports); a port of a device the
    # finding names as a whole. Work on another port of the same device does not explain a finding about
    # this port.
    devices = {base_equipment(x) for x in elements}
    for e in affected_elements(w, bundle):
        if not impact_explains(w.impact_for(e)):
            continue
        equipment, port = split_element(e)
        if e in elements or e in devices or (port is not None and equipment in elements):
            return e
    return None


EXPLAINABLE = frozenset(
    {
        codes.LOSS_LIMITED,
        codes.ASYMMETRIC_PATH,
        codes.TCP_ONLY_DEGRADATION,
        codes.TRUNK_IMBALANCE,
        codes.SHARED_EQUIPMENT_SUSPECT,
        codes.INTERFACE_ERRORS,
        codes.LINK_CONGESTION,
        codes.PERIODIC_LOSS,
        codes.DELAY_LEVEL_SHIFT,
        codes.ROUTE_CHANGE,
        codes.MTU_MISMATCH,
        codes.REORDERING,
        codes.COUNTER_DISCONTINUITY,
        codes.PATH_DOWN,
    }
)


def maintenance_explained(ctx: RuleContext) -> list[RuleFinding]:
    """MAINTENANCE_EXPLAINED on each element under maintenance that explains a degradation.

    Evidence: the maintenance calendar (reference, start, end, impact, affected
    elements), the degradation episodes of every path, and the findings made so
    far (path symptoms and element findings such as a counter reset).

    Criterion: a degradation of a path crossing an affected element (equipment,
    'equipment:interface' or trunk; an interface matches its equipment) lies
    within the window (MAINTENANCE_START_SLACK_S before its start,
    MAINTENANCE_END_GRACE_S after its end) and the impact is one that affects
    traffic (outage, degraded and at-risk work -- at-risk work may interrupt
    service -- and unknown impacts, as the maintenance app decides).
    Reduced-redundancy and no-impact work does not explain anything; a
    degradation that outlasts the window is not explained either.  Symptom findings covered are listed and get
    ``explained_by`` (see ``apply_explanations``).

    Why: scheduled interventions are known; they should be shown but not alarm
    the operators, while anything beyond what the carrier announced still must.
    """
    groups: dict[tuple[str, str], dict] = {}

    def group(w: MaintenanceEvidence, element: str) -> dict:
        return groups.setdefault(
            (w.reference, element), {"window": w, "element": element, "episodes": [], "findings": []}
        )

    for m in ctx.maintenance_matches().matches:
        if m.window is not None and m.element is not None:
            group(m.window, m.element)["episodes"].append(m)
    for f in ctx.findings:
        if f.code not in EXPLAINABLE:
            continue
        for w in ctx.bundle.maintenance:
            element = explains_finding(w, f, ctx.bundle)
            if element:
                group(w, element)["findings"].append(f)
                break
    out = []
    for (ref, element), g in sorted(groups.items()):
        w: MaintenanceEvidence = g["window"]
        eps: list[EpisodeMatch] = g["episodes"]
        fs: list[RuleFinding] = g["findings"]
        times = (
            [m.episode.start for m in eps] + [m.episode.end for m in eps] + [f.start for f in fs] + [f.end for f in fs]
        )
        paths = sorted(
            {m.path for m in eps} | {f"{f.subject['src']}->{f.subject['dst']}" for f in fs if "src" in f.subject}
        )
        evidence = {
            "reference": ref,
            "carrier": w.carrier,
            "impact": w.impact_for(element),
            "window_start": w.start,
            "window_end": w.end,
            "element": element,
            "paths": paths,
            "episodes": [{"path": m.path, "start": m.episode.start, "end": m.episode.end} for m in eps],
            "explains": [{"code": f.code, "subject": dict(f.subject)} for f in fs],
        }
        out.append(
            finding(
                codes.MAINTENANCE_EXPLAINED,
                severity=codes.INFO,
                subject=element_subject(element, ctx.trunk_names),
                start=min(times),
                end=max(times),
                facts=evidence,
                evidence=evidence,
            )
        )
    return out


def apply_explanations(findings: Iterable[RuleFinding]) -> list[RuleFinding]:
    """Mark the symptoms a MAINTENANCE_EXPLAINED finding lists: ``explained_by`` and severity info."""
    findings = list(findings)
    marks: dict[tuple, list[str]] = {}
    for f in findings:
        if f.code != codes.MAINTENANCE_EXPLAINED:
            continue
        for item in f.evidence.get("explains", []):
            key = (item["code"], tuple(sorted(item["subject"].items())))
            marks.setdefault(key, []).append(f.evidence["reference"])
    out = []
    for f in findings:
        refs = marks.get(f.key)
        if refs and f.code != codes.MAINTENANCE_EXPLAINED:
            evidence = dict(f.evidence)
            evidence["severity_before_explanation"] = f.severity
            f = replace(
                f,
                severity=codes.INFO,
                explained_by=tuple(dict.fromkeys(f.explained_by + tuple(refs))),
                evidence=evidence,
            )
        out.append(f)
    return out
