"""SHARED_EQUIPMENT_SUSPECT: the network element degraded paths have in common, or whose load rose when one path
degraded (ranking and load rises: ``wanmon.diagnosis.shared_elements``)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from wanmon.diagnosis import codes
from wanmon.diagnosis import constants as k
from wanmon.diagnosis.assessment import PathAssessment
from wanmon.diagnosis.context import RuleContext, finding
from wanmon.diagnosis.degradation import BASELINE_REFERENCE, baseline_reference_at, history_of
from wanmon.diagnosis.episodes import Episode
from wanmon.diagnosis.evidence import RuleFinding, element_subject
from wanmon.diagnosis.path_elements import base_equipment, interface_on_path
from wanmon.diagnosis.shared_elements import (
    DegradedPath,
    DropStep,
    PathRoute,
    SuspectElement,
    bundle_load_rise,
    edges_at,
    healthy_weight,
    hop_position,
    interface_load_rise,
    load_verdict,
    path_load_rise,
    path_port_direction,
    port_direction,
    rank_shared_elements,
    spare_at_tests_bps,
    throughput_step,
)


def _degraded_episodes(ctx: RuleContext) -> list[tuple[PathAssessment, Episode]]:
    """Episodes not explained by maintenance (those are known; correlating them adds noise)."""
    matches = ctx.maintenance_matches()
    out = []
    for a in ctx.assessments():
        for ep in a.episodes:
            if matches.explained(a.path.src, a.path.dst, ep):
                continue
            out.append((a, ep))
    return out


def episode_clusters(items: list[tuple[PathAssessment, Episode]]) -> list[list[tuple[PathAssessment, Episode]]]:
    items = sorted(items, key=lambda x: x[1].start)
    clusters: list[list[tuple[PathAssessment, Episode]]] = []
    end: datetime | None = None
    for a, ep in items:
        if clusters and end is not None and ep.start <= end + timedelta(seconds=k.CORRELATION_SLACK_S):
            clusters[-1].append((a, ep))
            end = max(end, ep.end)
        else:
            clusters.append([(a, ep)])
            end = ep.end
    return clusters


def _healthy(
    ctx: RuleContext, start: datetime, end: datetime, exclude: set[str], kinds: Iterable[str] | None = None
) -> list[PathAssessment]:
    """Paths measured during [start, end] with no degradation overlapping it.

    With ``kinds`` (the measurement kinds the degradation was seen by), a path counts as healthy only if one of
    those kinds measured it: a path watched by owamp alone (600 packets a session: blind below ~5e-3) does not
    clear an element whose 1e-5 loss only TCP can see.
    """
    wanted = set(kinds) if kinds is not None else None
    out = []
    slack = timedelta(seconds=k.CORRELATION_SLACK_S)
    for a in ctx.assessments():
        if a.key in exclude:
            continue
        if any(ep.overlaps(start, end, k.CORRELATION_SLACK_S) for ep in a.episodes):
            continue
        if any(start - slack <= o.time <= end + slack and (wanted is None or o.kind in wanted) for o in a.observations):
            out.append(a)
    return out


def effective_hops(a: PathAssessment, start: datetime, end: datetime) -> tuple[str, ...]:
    """Inventory hops, plus equipment a traceroute showed during the period (a changed route counts)."""
    hops = list(a.path.hops)
    known = {base_equipment(h) for h in hops}
    for tr in a.path.traceroutes:
        if start - timedelta(seconds=k.CORRELATION_SLACK_S) <= tr.time <= end:
            for h in tr.hops:
                if h and h not in ("*",) and base_equipment(h) not in known:
                    hops.append(h)
                    known.add(base_equipment(h))
    return tuple(hops)


def corroborating_findings(ctx: RuleContext) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in ctx.findings:
        if f.code in (codes.INTERFACE_ERRORS, codes.LINK_CONGESTION) and "equipment" in f.subject:
            name = f.subject["equipment"]
            full = f"{name}:{f.subject['interface']}" if f.subject.get("interface") else name
            for key in {name, full}:
                out.setdefault(key, []).append(f"{f.code} on {full}")
    return out


def carrier_element_names(ctx: RuleContext) -> set[str]:
    return {e.name for e in ctx.bundle.equipment if e.carrier and not e.site}


def shared_equipment_suspects(ctx: RuleContext) -> list[RuleFinding]:
    """SHARED_EQUIPMENT_SUSPECT: ranked elements common to degraded paths.

    Evidence: degradation episodes of every path direction (not explained by
    maintenance), the hops of degraded and of healthy (measured, fine) paths,
    traceroutes during the episodes, INTERFACE_ERRORS / LINK_CONGESTION findings
    on the elements, interface rates, and other paths' test traffic.

    Criterion: (1) two or more path directions degraded in overlapping windows
    (CORRELATION_SLACK_S): rank the elements they share with
    ``rank_shared_elements`` (direction-aware exoneration by healthy paths);
    (2) a single degraded path: elements on it whose load rose by at least
    max(LOAD_RISE_MIN_BPS, LOAD_RISE_MIN_FRACTION x speed) within
    LOAD_ONSET_TOLERANCE_S of the onset (for a member of a bundle, no more than
    the bundle's aggregate rose: load moved over from a drained sibling is not
    extra traffic), and elements it shares with another path
    (of another site pair) whose traffic started or rose beyond its noise then
    (see ``path_load_rise``).

    Why: a fault inside a carrier (a dirty patch panel) hits every path through
    it, in one direction; a healthy path crossing the element the same way
    clears it.  Equipment at its limits can degrade a path when other traffic
    through it rises, even far below the link capacity (SC1 CERN-FNAL).
    """
    out: list[RuleFinding] = []
    corroboration = corroborating_findings(ctx)
    carriers = carrier_element_names(ctx)
    trunk_names = ctx.trunk_names
    in_cluster: set[tuple[str, datetime]] = set()
    for cluster in episode_clusters(_degraded_episodes(ctx)):
        keys = {a.key for a, _ in cluster}
        if len({frozenset((a.path.src, a.path.dst)) for a, _ in cluster}) < 2:
            continue
        start = min(ep.start for _, ep in cluster)
        end = max(ep.end for _, ep in cluster)
        degraded = [
            DegradedPath(a.path.src, a.path.dst, ep.start, ep.end, effective_hops(a, ep.start, ep.end))
            for a, ep in cluster
        ]
        kinds = {kind for _, ep in cluster for kind in ep.kinds}
        healthy = [PathRoute(h.path.src, h.path.dst, h.path.hops) for h in _healthy(ctx, start, end, keys, kinds)]
        ranked = rank_shared_elements(degraded, healthy, carriers, corroboration)
        for a, ep in cluster:
            in_cluster.add((a.key, ep.start))
        for s in ranked:
            out.append(shared_finding(s, cluster, start, end, ranked, trunk_names))
    for a, ep in _degraded_episodes(ctx):
        if (a.key, ep.start) in in_cluster:
            continue
        out += _load_findings(ctx, a, ep, trunk_names, carriers)
    return out


def shared_finding(s: SuspectElement, cluster, start, end, ranked, trunk_names) -> RuleFinding:
    return finding(
        codes.SHARED_EQUIPMENT_SUSPECT,
        severity=codes.CRITICAL if s.rank == 1 and not s.healthy_same_direction else codes.WARNING,
        subject=element_subject(s.element, trunk_names),
        start=start,
        end=end,
        rank=s.rank,
        facts={
            "suspect": s,
            "lower": [r for r in ranked if r.rank > s.rank][:3],
            "episodes": [(a.key, ep.start, ep.end) for a, ep in cluster],
        },
        evidence={
            "score": s.score,
            "degraded_paths": list(s.degraded),
            "healthy_same_direction": list(s.healthy_same_direction),
            "healthy_other_ports": list(s.healthy_other_ports),
            "healthy_reverse": list(s.healthy_reverse),
            "coverage": s.coverage,
            "endpoint": s.endpoint,
            "corroboration": list(s.corroboration),
            "episodes": [{"path": a.key, "start": ep.start, "end": ep.end} for a, ep in cluster],
        },
    )


def _step(a: PathAssessment, ep: Episode) -> DropStep | None:
    """The step down of ``a``'s TCP results that ``ep`` belongs to, judged against the path's level at the
    episode's start (its hour's baseline level, or its own healthy tests without a baseline)."""
    reference = baseline_reference_at(a, ep.start) if a.reference_source == BASELINE_REFERENCE else a.reference_bps
    return throughput_step(a.path.throughput_tests, ep.start, ep.end, reference)


def _interface_rise_candidates(ctx: RuleContext, a: PathAssessment, step: DropStep) -> dict[str, dict]:
    """Ports of the path whose load rose with the drop by more than the floor (bundle members: the bundle's
    rise), and what the load explains: the lower tests got the capacity it left them ('spare'), or it rose in a
    step with the drop while leaving room for the path's level before ('limits', equipment at its limits)."""
    candidates: dict[str, dict] = {}
    for iface in ctx.all_interfaces():
        how = interface_on_path(iface.name, a.path, ctx.bundle)
        if not how:
            continue
        rise = interface_load_rise(iface, step, path_port_direction(iface.name, a.path, ctx.bundle))
        if not rise:
            continue
        # a member of a bundle: traffic moved over from a sibling is not extra traffic
        for t in ctx.bundle.trunks:
            if any(m.name == iface.name for m in t.members):
                total = bundle_load_rise(t.members, step)
                if total is not None and total < rise["rise_bps"]:
                    rise["bundle"] = t.name
                    rise["bundle_rise_bps"] = total
                    rise["rise_bps"] = total
        if rise["rise_bps"] < max(k.LOAD_RISE_MIN_BPS, k.LOAD_RISE_MIN_FRACTION * (iface.speed_bps or 0.0)):
            continue
        rise["match"] = how
        verdict = load_verdict(step.after_bps, step.before_bps, rise["spare_bps"])
        if verdict is None:
            continue  # the load took some room, but the tests fell further than it explains
        if verdict != "spare" and not rise["stepped"]:
            # the tests did not just get what the load left them, and the load did not rise with the drop (a
            # morning ramp): it explains neither the drop's size nor its start
            continue
        candidates[iface.name] = {
            "score": 2.0 if how == "exact" else 1.5,
            "interface_rise": rise,
            "paths": [],
            "verdict": verdict,
            "spare_bps": rise["spare_bps"],
        }
    return candidates


def _same_way(a: PathAssessment, q: PathAssessment, element: str) -> bool:
    """Whether ``q`` crosses ``element`` the way ``a`` does (leaves it by the same directed hop, or arrives by the
    same port at its end): only there do their packets meet in one queue."""
    hops = a.path.hops
    return healthy_weight(q.path.hops, element, edges_at(hops, element), {port_direction(hops, element)})[1] == "same"


def _measured_spare(ctx: RuleContext, a: PathAssessment, step: DropStep, element: str) -> float | None:
    """The capacity left to ``a``'s lower tests on ``element`` (a port with polls), None when not measured."""
    if ":" not in element:
        return None
    for iface in ctx.all_interfaces():
        if iface.name == element:
            return spare_at_tests_bps(iface, step.after, path_port_direction(element, a.path, ctx.bundle))
    return None


def _add_path_rise_candidates(
    ctx: RuleContext, a: PathAssessment, step: DropStep, end: datetime, candidates: dict[str, dict]
) -> None:
    """Elements ``a`` shares, the same way, with other paths whose own traffic rose with the drop."""
    my_elements = set(a.path.hops) | {base_equipment(h) for h in a.path.hops}
    last = step.last_healthy.time if step.last_healthy is not None else None
    for q in ctx.assessments():
        if frozenset((q.path.src, q.path.dst)) == frozenset((a.path.src, a.path.dst)):
            continue  # itself, or the opposite direction: on full-duplex links that traffic does not compete
        shared = my_elements & (set(q.path.hops) | {base_equipment(h) for h in q.path.hops})
        shared = {e for e in shared if _same_way(a, q, e)}
        if not shared:
            continue
        rise = path_load_rise(q, step.start, end, a.first_time, last)
        if not rise:
            continue
        for e in shared:
            if ":" not in e and any(h.startswith(e + ":") for h in shared):
                continue
            c = candidates.get(e)
            if c is None:
                spare = _measured_spare(ctx, a, step, e)
                verdict = load_verdict(step.after_bps, step.before_bps, spare)
                if verdict is None:
                    continue
                c = candidates[e] = {
                    # a port whose polls show the room the path had: the rise met the path there, measured
                    "score": 1.0 + (0.5 if verdict in ("limits", "spare") else 0.0),
                    "interface_rise": None,
                    "paths": [],
                    "verdict": verdict,
                    "spare_bps": spare,
                }
            elif c["interface_rise"] is not None:
                c["score"] += 0.5
            c["paths"].append(rise)


def _exonerate(
    ctx: RuleContext, a: PathAssessment, start: datetime, end: datetime, candidates: dict[str, dict]
) -> None:
    """Healthy paths through a candidate in the same direction lower its score; an endpoint is marked."""
    healthy = _healthy(ctx, start, end, {a.key})
    rise_paths = {r["path"] for c in candidates.values() for r in c["paths"]}
    for e, c in candidates.items():
        my_edges = edges_at(a.path.hops, e)
        for h in healthy:
            if h.key in rise_paths or e not in (set(h.path.hops) | {base_equipment(x) for x in h.path.hops}):
                continue
            w, kind = healthy_weight(h.path.hops, e, my_edges)
            if kind == "same":
                c["score"] -= w
                c.setdefault("exonerated_by", []).append(h.key)
        c["endpoint"] = hop_position(a.path.hops, e) in (0, len(a.path.hops) - 1)


def _load_findings(ctx: RuleContext, a: PathAssessment, ep: Episode, trunk_names, carriers) -> list[RuleFinding]:
    """The load-rise suspects of one degraded path's episode (criterion (2) of ``shared_equipment_suspects``),
    ranked, from its drop's real start; none without a result at the path's level before the drop."""
    step = _step(a, ep)
    if step is None or a.first_time is None or a.first_time >= step.start or step.last_healthy is None:
        return []  # no result at the path's level before the drop to compare with
    onset = step.start
    candidates = _interface_rise_candidates(ctx, a, step)
    _add_path_rise_candidates(ctx, a, step, ep.end, candidates)
    if any(c["verdict"] == "spare" for c in candidates.values()):
        # a port measured full at the time of the tests explains their result: the elements whose load nobody
        # measured are no suspects beside it
        candidates = {e: c for e, c in candidates.items() if c["verdict"] == "spare"}
    if not candidates:
        return []
    _exonerate(ctx, a, onset, ep.end, candidates)
    ranked = sorted(
        ((e, c) for e, c in candidates.items() if c["score"] > 0),
        key=lambda ec: (
            -ec[1]["score"],
            ec[1]["endpoint"],
            base_equipment(ec[0]) not in carriers,
            ":" not in ec[0],
            ec[0],
        ),
    )
    out = []
    for rank, (e, c) in enumerate(ranked, start=1):
        out.append(
            finding(
                codes.SHARED_EQUIPMENT_SUSPECT,
                # the tests got what the other traffic left them: a busy link, what the load predicts, not a fault
                severity=codes.INFO if c["verdict"] == "spare" else codes.WARNING,
                subject=element_subject(e, trunk_names),
                start=onset,
                end=ep.end,
                rank=rank,
                facts={
                    "load_rise": c,
                    "element": e,
                    "rank": rank,
                    "key": a.key,
                    "onset": onset,
                    "throughput_before_bps": step.before_bps,
                    "throughput_after_bps": step.after_bps,
                },
                evidence={
                    "degraded_path": a.key,
                    "onset": onset,
                    "throughput_before_bps": step.before_bps,
                    "throughput_after_bps": step.after_bps,
                    "interface_rise": c["interface_rise"],
                    "other_paths": c["paths"],
                    "verdict": c["verdict"],
                    "spare_bps": c["spare_bps"],
                    "score": c["score"],
                    "exonerated_by": c.get("exonerated_by", []),
                    "history": {a.key: history_of(a.path)},
                },
            )
        )
    return out
