"""Root-cause grouping of active findings into incidents (pure: plain values in, plain values out).

The rules, in order (a finding joins the first group that claims it):

1. Maintenance: a finding explained by a maintenance window (``explained_by``) and the window's
   MAINTENANCE_EXPLAINED finding form the group ``maintenance:<reference>``; it is inhibited.
2. Root causes over symptoms: an element finding that can cause path degradation
   (SHARED_EQUIPMENT_SUSPECT rank 1 first, then INTERFACE_ERRORS, LINK_CONGESTION, TRUNK_IMBALANCE,
   lower-ranked suspects last) founds ``element:<equipment>`` (``trunk:<name>``) and gathers the
   symptom findings (loss, asymmetry, outage, ...) of the paths it explains: the suspect's own
   ``degraded_paths`` and, from the inventory, the paths that cross the element. Another root-cause
   finding joins it as corroborating evidence only when the rules tie it to the same cause: on the same
   equipment, a lower-ranked suspect of the same analysis, or an element whose degraded paths all cross the
   root element (the far end of its link); it never widens the group's paths. Anything else opens its own
   incident, so two faults at once are two incidents, each e-mailed to its own people.
3. Host causes: a host finding (HOST_TCP_TUNING, PERIODIC_LOSS of a site/host) gathers the path
   findings it explains (WINDOW_LIMITED, PERIODIC_LOSS) on its site's pairs, grouped per pair.
4. Site: when at least ``site_min_paths`` distinct degraded path directions of the remaining
   findings start or end at one site, they become the group ``site:<code>`` (the busiest site first).
5. Pair: the remaining path findings are grouped per site pair, both directions together
   (``pair:A<->B``): a bad return path also hurts the other direction.
6. Other site and host findings form (or join) the site's incident; anything else stands alone.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from wanmon.alerts.choices import IncidentKind, MemberRole
from wanmon.alerts.constants import (
    HOST_CAUSES,
    NOT_DEGRADING,
    ROOT_CAUSE_CODES,
    SUBJECT_MAX_CHARS,
    SYMPTOM_CODES,
    TITLE_MAX_CHARS,
    TITLE_MAX_PATHS,
)
from wanmon.diagnosis import codes, text


@dataclass(frozen=True)
class FindingFacts:
    """What grouping and silencing need to know about one active finding."""

    id: int
    code: str
    severity: str
    subject: Mapping[str, str]
    subject_key: str
    rank: int | None = None
    summary: str = ""
    explained_by: tuple[str, ...] = ()
    # SHARED_EQUIPMENT_SUSPECT: the degraded path directions it explains (its evidence).
    degraded_paths: tuple[str, ...] = ()
    # Element and trunk findings: the path directions that cross the element (inventory).
    element_paths: tuple[str, ...] = ()
    # MAINTENANCE_EXPLAINED: the window's reference.
    maintenance_ref: str | None = None
    # When the finding's episode began (kept across evaluations; its window's start when unknown).
    onset: datetime | None = None
    # Last seen before the inventory in force changed (a route, a capacity): its figures may be the old route's.
    # It is grouped, but e-mailed only once a cycle has judged it on the inventory as it is.
    unconfirmed: bool = False

    @property
    def key(self) -> str:
        """Identity across evaluations (a finding that clears and recurs keeps it)."""
        return f"{self.code}|{self.subject_key}"

    @property
    def path(self) -> str | None:
        if "src" in self.subject and "dst" in self.subject:
            return f"{self.subject['src']}->{self.subject['dst']}"
        return None

    @property
    def sites(self) -> tuple[str, ...]:
        if self.path:
            return (self.subject["src"], self.subject["dst"])
        if "site" in self.subject:
            return (self.subject["site"],)
        return ()

    @property
    def equipment(self) -> str | None:
        return self.subject.get("equipment")

    @property
    def element(self) -> str | None:
        """The element a non-path finding is about, as a group key part: equipment or ``trunk:name``."""
        if self.equipment:
            return self.equipment
        if "trunk" in self.subject:
            return f"trunk:{self.subject['trunk']}"
        return None

    @property
    def label(self) -> str:
        """The subject as people write it: FZK->CERN, geant-fra:xe-1/0/0, ral-lag, ASGC/asgc-dt01."""
        return text.subject_label(self.subject) if self.subject else self.subject_key

    @property
    def severity_rank(self) -> int:
        return codes.SEVERITY_ORDER.get(self.severity, 0)


@dataclass
class Group:
    """A set of findings that form one incident; ``roles`` keeps the order they joined in."""

    key: str
    kind: str
    element: str | None = None
    site: str | None = None
    root_id: int | None = None
    roles: dict[int, str] = field(default_factory=dict)
    paths: set[str] = field(default_factory=set)  # path directions whose symptoms it gathers
    suspected: set[str] = field(default_factory=set)  # degraded paths its suspects explain


def _importance(f: FindingFacts) -> tuple:
    """Most severe first; an outage heads its incident, then the catalogue order."""
    return (-f.severity_rank, f.code != codes.PATH_DOWN, codes.CODE_ORDER.get(f.code, 99), f.rank or 0, f.subject_key)


def root_order(f: FindingFacts) -> tuple:
    """The order in which root-cause findings claim their paths: rank-1 suspects, then the catalogue's root
    causes, lower-ranked suspects last (the incident page lists an incident's elements in this order too)."""
    if f.code == codes.SHARED_EQUIPMENT_SUSPECT and (f.rank or 1) == 1:
        tier = 0
    elif f.code == codes.SHARED_EQUIPMENT_SUSPECT:
        tier = len(ROOT_CAUSE_CODES)
    else:
        tier = ROOT_CAUSE_CODES.index(f.code)
    return (tier, f.rank or 0, *_importance(f))


class _Grouping:
    """One grouping run: the groups made so far and the findings placed, one method per rule of the module
    docstring, applied in order by ``group_findings``."""

    def __init__(self, findings: Sequence[FindingFacts], site_min_paths: int) -> None:
        self.ordered = sorted(findings, key=_importance)
        self.site_min_paths = site_min_paths
        self.groups: dict[str, Group] = {}
        self.placed: set[int] = set()
        self.root_groups: list[Group] = []

    def join(self, group: Group, f: FindingFacts, role: str) -> None:
        if role == MemberRole.ROOT and group.root_id is None:
            group.root_id = f.id
        elif role == MemberRole.ROOT:
            role = MemberRole.RELATED
        group.roles.setdefault(f.id, role)
        self.placed.add(f.id)

    def group_for(self, key: str, kind: str, **attrs) -> Group:
        if key not in self.groups:
            self.groups[key] = Group(key=key, kind=kind, **attrs)
        return self.groups[key]

    def unplaced(self) -> list[FindingFacts]:
        return [f for f in self.ordered if f.id not in self.placed]

    def maintenance(self) -> None:
        """1. Maintenance windows gather what they explain."""
        for f in self.ordered:
            ref = f.maintenance_ref if f.code == codes.MAINTENANCE_EXPLAINED else None
            ref = ref or (f.explained_by[0] if f.explained_by else None)
            if not ref:
                continue
            g = self.group_for(f"maintenance:{ref}", IncidentKind.MAINTENANCE)
            is_root = f.code == codes.MAINTENANCE_EXPLAINED
            if is_root and g.element is None:
                g.element = f.element
            self.join(g, f, MemberRole.ROOT if is_root else MemberRole.SYMPTOM)

    def root_causes(self) -> None:
        """2. Root-cause elements gather their symptom paths; other element findings go with their element."""
        live_paths = {f.path for f in self.unplaced() if f.path and f.code in SYMPTOM_CODES}
        roots = [f for f in self.unplaced() if f.code in ROOT_CAUSE_CODES and f.element]
        for f in sorted(roots, key=root_order):
            self.claim_paths(f, live_paths)
        for f in self.unplaced():
            if f.code not in SYMPTOM_CODES or not f.path:
                continue
            target = next((g for g in self.root_groups if f.path in g.paths), None)
            if target is not None:
                self.join(target, f, MemberRole.SYMPTOM)
        # Other findings about an element (a counter reset, ...): with its root-cause group, or on their own.
        for f in self.unplaced():
            if f.path or not f.element:
                continue
            target = next((g for g in self.root_groups if g.element == f.element), None)
            target = target or self.group_for(_element_key(f.element), IncidentKind.ELEMENT, element=f.element)
            self.join(target, f, MemberRole.ROOT if target.root_id is None else MemberRole.RELATED)

    def claim_paths(self, f: FindingFacts, live_paths: set[str]) -> None:
        """A root-cause finding founds its element's group, or joins the group the rules tie it to."""
        candidates = set(f.degraded_paths) | set(f.element_paths)
        live = candidates & live_paths
        # A group's paths are its root element's: those crossing it and those its analysis explains. Another
        # element joins only when the rules tie it to the same cause; it never widens the group, or a suspect
        # ranked lower (cern-border, crossed by every CERN path) would pull unrelated paths into a backbone fault.
        target = next((g for g in self.root_groups if g.element == f.element), None)
        if target is None and f.degraded_paths:  # the ranked suspects of one analysis are one case
            target = next((g for g in self.root_groups if g.suspected & set(f.degraded_paths)), None)
        if target is None and live:  # everything it could explain, the root explains (the far end of its link)
            target = next((g for g in self.root_groups if live <= g.paths), None)
        if target is not None:
            self.join(target, f, MemberRole.RELATED)
            return
        target = self.group_for(_element_key(f.element), IncidentKind.ELEMENT, element=f.element)
        self.root_groups.append(target)
        target.paths |= candidates
        target.suspected |= set(f.degraded_paths)
        self.join(target, f, MemberRole.ROOT)

    def host_causes(self) -> None:
        """3. A host finding explains path findings of its site's pairs (small buffers cap the window, a receiving
        host drops packets periodically); those stay with their pair and the host, not in a site incident."""
        host_explained: set[int] = set()
        for h in self.ordered:
            if h.id in self.placed or "site" not in h.subject or h.code not in HOST_CAUSES:
                continue
            site, caused = h.subject["site"], HOST_CAUSES[h.code]
            explained = [
                f
                for f in self.ordered
                if f.path and f.code == caused and site in f.sites
                and (f.id not in self.placed or f.id in host_explained)
            ]
            target = None
            for f in explained:
                g = self.group_for(_pair_key(f), IncidentKind.PAIR)
                if f.id not in self.placed:
                    self.join(g, f, MemberRole.SYMPTOM)
                    host_explained.add(f.id)
                target = target or g
            if target is not None:
                self.join(target, h, MemberRole.RELATED)

    def sites_and_pairs(self) -> None:
        """4. Many degraded paths of one site; 5. both directions of a site pair."""
        remaining = [f for f in self.unplaced() if f.path]
        while remaining:
            per_site: dict[str, set[str]] = defaultdict(set)
            for f in remaining:
                for site in f.sites:
                    per_site[site].add(f.path)
            site, paths = min(per_site.items(), key=lambda item: (-len(item[1]), item[0]))
            if len(paths) < self.site_min_paths:
                break
            g = self.group_for(f"site:{site}", IncidentKind.SITE, site=site)
            for f in remaining:
                if site in f.sites:
                    self.join(g, f, MemberRole.SYMPTOM)
            remaining = [f for f in remaining if f.id not in self.placed]
        for f in remaining:
            self.join(self.group_for(_pair_key(f), IncidentKind.PAIR), f, MemberRole.SYMPTOM)

    def the_rest(self) -> None:
        """6. Other site and host findings: the site's incident; 7. anything else stands alone."""
        for f in self.unplaced():
            if "site" in f.subject:
                site = f.subject["site"]
                self.join(self.group_for(f"site:{site}", IncidentKind.SITE, site=site), f, MemberRole.SYMPTOM)
        for f in self.unplaced():
            self.join(self.group_for(f"finding:{f.key}", IncidentKind.SINGLE), f, MemberRole.ROOT)


def group_findings(findings: Sequence[FindingFacts], *, site_min_paths: int = 3) -> list[Group]:
    """Group active findings into incidents by root cause (see the module docstring); deterministic."""
    run = _Grouping(findings, site_min_paths)
    run.maintenance()
    run.root_causes()
    run.host_causes()
    run.sites_and_pairs()
    run.the_rest()
    for g in run.groups.values():
        _order_members(g, run.ordered)
    return list(run.groups.values())


def _element_key(element: str) -> str:
    return f"trunk:{element.removeprefix('trunk:')}" if element.startswith("trunk:") else f"element:{element}"


def _pair_key(f: FindingFacts) -> str:
    a, b = sorted(f.sites)
    return f"pair:{a}<->{b}"


def _order_members(group: Group, ordered: Sequence[FindingFacts]) -> None:
    """Root first (for site and pair groups: the most important finding), then by importance."""
    members = [f for f in ordered if f.id in group.roles]
    if group.root_id is None and members:
        group.root_id = members[0].id
        group.roles[members[0].id] = MemberRole.ROOT
    root = [f for f in members if f.id == group.root_id]
    group.roles = {f.id: group.roles[f.id] for f in root + [f for f in members if f.id != group.root_id]}


@dataclass(frozen=True)
class IncidentHeadline:
    """What an incident is called: severity, root code and subject, one-line title, where it is."""

    severity: str
    code: str
    subject_text: str
    title: str
    sites: tuple[str, ...]
    paths: tuple[str, ...]
    elements: tuple[str, ...]  # root element first
    onset: datetime | None = None  # the earliest onset of its members: when the problem began


def clamp_text(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, at a word boundary when one is near, with an ellipsis."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit * 0.8:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


def paths_text(paths: Sequence[str], limit: int = TITLE_MAX_PATHS) -> str:
    shown = ", ".join(paths[:limit])
    return shown + (f" +{len(paths) - limit} more" if len(paths) > limit else "")


def headline(group: Group, members: Sequence[FindingFacts]) -> IncidentHeadline:
    """Name an incident from its members (``members`` in the group's order, root first)."""
    root = members[0]
    severity = max((f.severity for f in members), key=lambda s: codes.SEVERITY_ORDER.get(s, 0))
    suspected = group.suspected if group.kind == IncidentKind.ELEMENT else set()
    paths = sorted({f.path for f in members if f.path} | suspected)
    sites = sorted({s for f in members for s in f.sites} | ({group.site} if group.site else set()))
    # The root element first (silences and maintenance match it), then the other elements named.
    root_element = group.element.removeprefix("trunk:") if group.element else None
    others = set()
    if group.kind == IncidentKind.ELEMENT:
        others = {f.element.removeprefix("trunk:") for f in members if f.element}
    elements = ([root_element] if root_element else []) + sorted(others - {root_element})
    if group.kind == IncidentKind.ELEMENT:
        subject_text = root.label
    elif group.kind == IncidentKind.MAINTENANCE:
        ref = group.key.removeprefix("maintenance:")
        subject_text = f"maintenance {ref}" + (f" on {root.label}" if root.code == codes.MAINTENANCE_EXPLAINED else "")
    elif group.kind == IncidentKind.SITE and group.site:
        subject_text = f"site {group.site}"
    elif group.kind == IncidentKind.PAIR and len(paths) > 1:
        a, b = sorted(root.sites)
        subject_text = f"{a}<->{b}"
    else:
        subject_text = root.label
    if paths and not (group.kind == IncidentKind.PAIR and len(paths) == 1):
        n = len(paths)
        # "degraded" unless every finding only says the data or the route is unusual (clocks, routes, counters)
        state = "affected" if all(f.code in NOT_DEGRADING for f in members) else "degraded"
        tail = f"{n} path{'s' if n > 1 else ''} {state} ({paths_text(paths)})"
    else:
        tail = root.summary.strip()
        for prefix in (f"{root.label}: ", f"{root.label} "):
            if tail.startswith(prefix):
                tail = tail[len(prefix):]
                break
        tail = tail or root.code
    subject_text = clamp_text(subject_text, SUBJECT_MAX_CHARS)
    return IncidentHeadline(
        severity=severity,
        code=root.code,
        subject_text=subject_text,
        title=clamp_text(f"{subject_text}: {tail}", TITLE_MAX_CHARS),
        sites=tuple(sites),
        paths=tuple(paths),
        elements=tuple(elements),
        onset=min((f.onset for f in members if f.onset), default=None),
    )
