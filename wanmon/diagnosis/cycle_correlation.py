"""SHARED_EQUIPMENT_SUSPECT over a whole cycle: the elements that degraded paths of every shard have in common.

A shard holds about 200 path directions; at WLCG size the paths through one GEANT router sit in many shards, and a
ranking within each shard sees few of them, or one, and no two shards agree. So the ranking is a second stage of
the cycle, run when its last shard is done (``correlation_stage``):

* each shard still runs the correlation rule (``rules/correlation.py``), whose conclusions the rules after it in the
  shard read (maintenance, UNEXPLAINED_DEGRADATION), but stores none of its SHARED_EQUIPMENT_SUSPECT findings: it
  records what the rule worked from, compact (``shard_verdicts``): per path direction its hops, its degradation
  episodes (start, end, measurement kinds, the hops during it, whether maintenance explains it) and the spans in
  which each measurement kind saw it; the element findings that corroborate a suspect; the load-rise suspects of
  its single degraded paths;
* the stage ranks over every shard's verdicts exactly as the rule ranks over one shard (``cycle_suspects``): the
  same clusters of overlapping episodes, the same exoneration by healthy paths, the same
  ``shared_elements.rank_shared_elements``; the verdicts of one shard give the rule's own findings (tested), so a
  mesh that fits one shard is diagnosed as before. A load-rise suspect of a shard stands only for an episode that
  no cluster of the whole cycle takes in, as within one shard.

Pure: verdicts in, findings out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from wanmon.core.jsonable import jsonable
from wanmon.diagnosis import codes
from wanmon.diagnosis import constants as k
from wanmon.diagnosis.context import RuleContext
from wanmon.diagnosis.engine import deduplicate, sort_findings
from wanmon.diagnosis.evidence import (
    EvidenceBundle,
    InterfaceEvidence,
    MaintenanceEvidence,
    RuleFinding,
    TrunkEvidence,
    path_key,
    split_element,
)
from wanmon.diagnosis.registry import RULES, Rule
from wanmon.diagnosis.rules.correlation import (
    _carrier_elements,
    _clusters,
    _corroboration,
    _effective_hops,
    _shared_finding,
)
from wanmon.diagnosis.rules.maintenance import EXPLAINABLE, _explains_finding, apply_explanations
from wanmon.diagnosis.shared_elements import DegradedPath, PathRoute, hop_elements, rank_shared_elements

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)
#: Observations of a kind closer than this are one span: every period the rule asks "measured then?" about is at
#: least as long (the episodes' period widened by CORRELATION_SLACK_S on each side), so a span it overlaps holds
#: an observation inside it, and the answer read from spans is the rule's own.
_SPAN_GAP = timedelta(seconds=2 * k.CORRELATION_SLACK_S)


def _us(t: datetime) -> int:
    return (t - _EPOCH) // _US


def _time(us: int) -> datetime:
    return _EPOCH + us * _US


@dataclass(frozen=True)
class VerdictEpisode:
    """A degradation episode of a path direction as its shard saw it."""

    start: datetime
    end: datetime
    kinds: tuple[str, ...]
    hops: tuple[str, ...]  # the hops during it (a changed route counts); empty when maintenance explains it
    maintenance: bool

    def overlaps(self, start: datetime, end: datetime, slack_s: float = 0.0) -> bool:
        slack = timedelta(seconds=slack_s)
        return self.start <= end + slack and start <= self.end + slack


@dataclass(frozen=True)
class VerdictPath:
    """A path direction's verdict: its hops, its episodes, and when each measurement kind saw it."""

    src: str
    dst: str
    hops: tuple[str, ...]
    seen: Mapping[str, Sequence[Sequence[int]]]  # kind -> spans [first, last] in epoch microseconds
    episodes: tuple[VerdictEpisode, ...] = ()

    @property
    def key(self) -> str:
        return path_key(self.src, self.dst)

    @classmethod
    def of(cls, v: Mapping[str, Any]) -> VerdictPath:
        episodes = tuple(
            VerdictEpisode(
                _time(e["start"]),
                _time(e["end"]),
                tuple(e["kinds"]),
                tuple(e.get("hops", ())),
                bool(e.get("maintenance")),
            )
            for e in v.get("episodes", ())
        )
        return cls(v["src"], v["dst"], tuple(v["hops"]), v["seen"], episodes)

    def measured(self, start: datetime, end: datetime, kinds: set[str]) -> bool:
        lo, hi = _us(start), _us(end)
        return any(first <= hi and last >= lo for kind in kinds for first, last in self.seen.get(kind, ()))


# --------------------------------------------------------------------------- a shard's verdicts
def _spans(observations) -> dict[str, list[list[int]]]:
    """When each measurement kind saw the path: its observations joined into spans (gaps up to _SPAN_GAP)."""
    times: dict[str, list[datetime]] = {}
    for o in observations:
        times.setdefault(o.kind, []).append(o.time)
    out: dict[str, list[list[int]]] = {}
    for kind, ts in sorted(times.items()):
        ts.sort()
        spans = [[ts[0], ts[0]]]
        for t in ts[1:]:
            if t - spans[-1][1] <= _SPAN_GAP:
                spans[-1][1] = t
            else:
                spans.append([t, t])
        out[kind] = [[_us(first), _us(last)] for first, last in spans]
    return out


def _finding_json(f: RuleFinding) -> dict[str, Any]:
    return {
        "code": f.code,
        "severity": f.severity,
        "subject": dict(f.subject),
        "start": _us(f.start),
        "end": _us(f.end),
        "rank": f.rank,
        "summary": f.summary,
        "explanation": f.explanation,
        "evidence": jsonable(dict(f.evidence)),
        "actions": list(f.actions),
        "explained_by": list(f.explained_by),
    }


def _finding_of(d: Mapping[str, Any]) -> RuleFinding:
    return RuleFinding(
        code=d["code"],
        severity=d["severity"],
        subject=d["subject"],
        start=_time(d["start"]),
        end=_time(d["end"]),
        rank=d["rank"],
        summary=d["summary"],
        explanation=d["explanation"],
        evidence=d["evidence"],
        actions=tuple(d["actions"]),
        explained_by=tuple(d["explained_by"]),
    )


def shard_verdicts(ctx: RuleContext, found: Iterable[RuleFinding]) -> dict[str, Any]:
    """What the correlation rule worked from in one shard (``ctx`` as the rule saw it, ``found`` what it returned),
    as JSON: ``degraded`` (paths with an episode, the corroborating element findings, carrier equipment, trunks,
    the load-rise suspects) and ``healthy`` (the other paths: their hops and when they were measured)."""
    matches = ctx.maintenance_matches()
    degraded, healthy = [], []
    for a in ctx.assessments():
        v: dict[str, Any] = {
            "src": a.path.src,
            "dst": a.path.dst,
            "hops": list(a.path.hops),
            "seen": _spans(a.observations),
        }
        if not a.episodes:
            healthy.append(v)
            continue
        v["episodes"] = [
            {"start": _us(ep.start), "end": _us(ep.end), "kinds": list(ep.kinds), "maintenance": True}
            if matches.explained(a.path.src, a.path.dst, ep)
            else {
                "start": _us(ep.start),
                "end": _us(ep.end),
                "kinds": list(ep.kinds),
                "hops": list(_effective_hops(a, ep.start, ep.end)),
            }
            for ep in a.episodes
        ]
        degraded.append(v)
    load = [
        _finding_json(f)
        for f in found
        if f.code == codes.SHARED_EQUIPMENT_SUSPECT and f.evidence.get("degraded_path") is not None
    ]
    first = min(((a.path.src, a.path.dst) for a in ctx.assessments()), default=("", ""))
    return {
        "degraded": {
            "order": list(first),
            "paths": degraded,
            "corroboration": _corroboration(ctx),
            "carriers": sorted(_carrier_elements(ctx)),
            "trunks": {t.name: [m.name for m in t.members] for t in ctx.bundle.trunks},
            "load": load,
        },
        "healthy": healthy,
    }


class VerdictRecorder:
    """The rules of a shard, its correlation rule recording what it worked from (``verdicts``) for the stage."""

    def __init__(self, rules: Sequence[Rule] = RULES) -> None:
        self.verdicts: dict[str, Any] | None = None
        self.rules = tuple(
            Rule(r.name, r.codes, self._recording(r.func)) if codes.SHARED_EQUIPMENT_SUSPECT in r.codes else r
            for r in rules
        )

    def _recording(
        self, func: Callable[[RuleContext], list[RuleFinding]]
    ) -> Callable[[RuleContext], list[RuleFinding]]:
        def rule(ctx: RuleContext) -> list[RuleFinding]:
            found = func(ctx)
            self.verdicts = shard_verdicts(ctx, found)
            return found

        return rule


def shard_findings(found: Iterable[RuleFinding]) -> list[RuleFinding]:
    """The findings a shard stores itself: all but SHARED_EQUIPMENT_SUSPECT, which the cycle's stage ranks."""
    return [f for f in found if f.code != codes.SHARED_EQUIPMENT_SUSPECT]


# --------------------------------------------------------------------------- the cycle's stage
def _crosses(hops: Iterable[str], elements: set[str]) -> bool:
    """Whether a hop, or the equipment of an interface hop, is one of ``elements`` (as ``hop_elements`` names them)."""
    return any(h in elements or h.partition(":")[0] in elements for h in hops)


def _healthy(
    paths: Sequence[VerdictPath], start: datetime, end: datetime, exclude: set[str], kinds: set[str]
) -> list[VerdictPath]:
    """``rules.correlation._healthy`` over verdicts: measured by one of ``kinds`` during [start, end] (with the
    slack), with no episode overlapping it."""
    slack = timedelta(seconds=k.CORRELATION_SLACK_S)
    return [
        p
        for p in paths
        if p.key not in exclude
        and not any(ep.overlaps(start, end, k.CORRELATION_SLACK_S) for ep in p.episodes)
        and p.measured(start - slack, end + slack, kinds)
    ]


def _merged_corroboration(shards: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for s in shards:
        for element, notes in s.get("corroboration", {}).items():
            mine = out.setdefault(element, [])
            before = set(mine)  # another shard's finding on the same element counts once
            mine.extend(n for n in notes if n not in before)
    return out


def _maintenance_explained(
    found: list[RuleFinding], windows: Sequence[MaintenanceEvidence], trunks: Mapping[str, Sequence[str]]
) -> list[RuleFinding]:
    """The maintenance rule's marks on the stage's findings: the first window that explains one (its element, or
    the element's equipment, under work that affects traffic, during the finding) makes it info, explained by
    the window (``rules.maintenance._explains_finding``, ``apply_explanations``)."""
    if not windows:
        return found
    bundle = EvidenceBundle(
        paths=(),
        trunks=tuple(
            TrunkEvidence(name, tuple(InterfaceEvidence(*split_element(m), None) for m in members))
            for name, members in trunks.items()
        ),
    )
    notes = []
    for f in found:
        if f.code not in EXPLAINABLE:
            continue
        for w in windows:
            if _explains_finding(w, f, bundle):
                notes.append(
                    RuleFinding(
                        code=codes.MAINTENANCE_EXPLAINED,
                        severity=codes.INFO,
                        subject=dict(f.subject),
                        start=f.start,
                        end=f.end,
                        evidence={"reference": w.reference, "explains": [{"code": f.code, "subject": dict(f.subject)}]},
                    )
                )
                break
    return [f for f in apply_explanations([*notes, *found]) if f.code != codes.MAINTENANCE_EXPLAINED]


def cycle_suspects(
    shards: Sequence[Mapping[str, Any]],
    healthy: Callable[[], Iterable[Mapping[str, Any]]],
    maintenance: Sequence[MaintenanceEvidence] = (),
) -> list[RuleFinding]:
    """SHARED_EQUIPMENT_SUSPECT over every shard of a cycle (``shards``: their ``degraded`` verdicts; ``healthy``
    gives the other paths' verdicts, asked for only when degraded paths of two site pairs overlap in time).

    The correlation rule's criterion over all of them (``rules.correlation.shared_equipment_suspects``): episodes
    not explained by maintenance, clustered when they overlap (CORRELATION_SLACK_S); a cluster of two site pairs
    or more ranks the elements its paths share (``rank_shared_elements``) against the paths measured in its
    period with no episode then; a shard's load-rise suspects stand for the episodes no such cluster takes in.
    One finding per element (the best rank), marked by the maintenance windows that explain it.
    """
    shards = sorted(shards, key=lambda s: tuple(s.get("order", ())))  # as the workers finished: any order
    paths = sorted((VerdictPath.of(v) for s in shards for v in s.get("paths", ())), key=lambda p: (p.src, p.dst))
    items = [(p, ep) for p in paths for ep in p.episodes if not ep.maintenance]
    clusters = [c for c in _clusters(items) if len({frozenset((p.src, p.dst)) for p, _ in c}) >= 2]
    trunks: dict[str, list[str]] = {}
    for s in shards:
        trunks.update(s.get("trunks", {}))
    out: list[RuleFinding] = []
    in_cluster: set[tuple[str, datetime]] = set()
    if clusters:
        # only a healthy path crossing an element of a cluster's paths weighs on its ranking: the others (most of a
        # large mesh) are left out before it
        near = set().union(*(hop_elements(ep.hops) for cluster in clusters for _, ep in cluster))
        others = [VerdictPath.of(v) for v in healthy() if _crosses(v["hops"], near)]
        everyone = sorted([*paths, *others], key=lambda p: (p.src, p.dst))
        carriers = {c for s in shards for c in s.get("carriers", ())}
        corroboration = _merged_corroboration(shards)
        for cluster in clusters:
            keys = {p.key for p, _ in cluster}
            start = min(ep.start for _, ep in cluster)
            end = max(ep.end for _, ep in cluster)
            degraded = [DegradedPath(p.src, p.dst, ep.start, ep.end, ep.hops) for p, ep in cluster]
            kinds = {kind for _, ep in cluster for kind in ep.kinds}
            shared = set().union(*(hop_elements(ep.hops) for _, ep in cluster))
            routes = [
                PathRoute(h.src, h.dst, h.hops)
                for h in _healthy(everyone, start, end, keys, kinds)
                if _crosses(h.hops, shared)
            ]
            ranked = rank_shared_elements(degraded, routes, carriers, corroboration)
            in_cluster.update((p.key, ep.start) for p, ep in cluster)
            out += [_shared_finding(s, cluster, start, end, ranked, set(trunks)) for s in ranked]
    order = {p.key: (p.src, p.dst) for p in paths}
    load = [_finding_of(f) for s in shards for f in s.get("load", ())]
    load.sort(key=lambda f: order.get(f.evidence["degraded_path"], ("", "")))
    for f in load:
        if (f.evidence["degraded_path"], f.start) not in in_cluster:
            out.append(f)
    return sort_findings(_maintenance_explained(deduplicate(out), maintenance, trunks))
