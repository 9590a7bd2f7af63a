"""Pure: what a carrier may see of an incident, and the responsibility verdict per domain along its paths.

A *domain* is a site or a carrier: the owner of the boxes a path crosses (``Owners``), the path's end sites first
and last. A domain is a **suspect** when a root-cause finding of the incident (the incident page's suspects,
``wanmon.alerts.page.suspect_rows``) or a host finding is about one of its elements or hosts, otherwise
**cleared**, each with the evidence that implicates or clears it.

The page is scoped (``Scope``) to the carrier it is shared with: its own elements and circuits, the sites at the
ends of the incident's paths and their boxes, and the paths that are the incident's or cross one of its suspects.
Every other carrier is "another carrier's segment", named nowhere, and other paths are counted, never named.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

__all__ = [
    "OTHER_SEGMENT",
    "Domain",
    "DomainFacts",
    "Owners",
    "Scope",
    "domain_route",
    "domain_verdicts",
    "scope_build",
]

#: How a carrier's page names every other carrier's part of a path.
OTHER_SEGMENT = "another carrier's segment"
SUSPECT = "suspect"
CLEARED = "cleared"


@dataclass(frozen=True)
class Owners:
    """Who operates each box: ``carrier_of`` and ``site_of`` by equipment name (as ``TopologyIndex`` holds them)."""

    carrier_of: Mapping[str, str]
    site_of: Mapping[str, str]

    def domain_of(self, equipment: str) -> tuple[str, str]:
        """``("carrier", code)``, ``("site", code)`` or ``("unknown", "")`` for a box nobody is known to operate."""
        if equipment in self.carrier_of:
            return "carrier", self.carrier_of[equipment]
        if equipment in self.site_of:
            return "site", self.site_of[equipment]
        return "unknown", ""


def _box(label: str) -> str:
    return label.split(":", 1)[0]


def _name_pattern(names: Iterable[str]) -> re.Pattern | None:
    names = sorted({n for n in names if n}, key=len, reverse=True)
    if not names:
        return None
    # a name stands alone: not part of a longer name (geant-fra2), but "TRIUMF" in "TRIUMF->CERN" is a mention
    return re.compile(r"(?<![\w.-])(?:" + "|".join(map(re.escape, names)) + r")(?![\w.]|-(?!>))")


@dataclass(frozen=True)
class Scope:
    """What the carrier ``carrier`` may see: ``shown(text)`` is false for a text naming anything hidden (another
    carrier, its boxes, trunks or circuits, a path or site unrelated to the incident)."""

    carrier: str
    paths: frozenset[str]  # the path directions that may be named
    sites: frozenset[str]
    hidden: frozenset[str]
    _pattern: re.Pattern | None = field(default=None, compare=False, repr=False)

    def shown(self, text: str) -> bool:
        if "->" in text and text.count("->") == 1 and " " not in text.strip():
            return text.strip() in self.paths
        return self._pattern is None or self._pattern.search(text) is None

    def owner_shown(self, kind: str, code: str) -> bool:
        return (kind == "carrier" and code == self.carrier) or (kind == "site" and code in self.sites)


def scope_build(*, carrier: str, incident_paths: Iterable[str], suspect_paths: Iterable[str],
                all_paths: Iterable[str], owners: Owners, other_names: Iterable[str] = ()) -> Scope:
    """The scope of a carrier's page: the incident's paths and those crossing its suspects are named, with their end
    sites; every other path, site, carrier and other carriers' boxes are hidden. ``other_names``: more names to
    hide (other carriers' trunks and circuit ids)."""
    paths = frozenset(incident_paths) | frozenset(suspect_paths)
    sites = frozenset(end for p in paths for end in p.split("->", 1))
    hidden: set[str] = set(other_names)
    hidden |= {p for p in all_paths if p not in paths}
    hidden |= {end for p in all_paths for end in p.split("->", 1) if end not in sites}
    hidden |= {box for box, code in owners.carrier_of.items() if code != carrier}
    hidden |= {code for code in owners.carrier_of.values() if code != carrier}
    hidden |= {box for box, code in owners.site_of.items() if code not in sites}
    return Scope(carrier=carrier, paths=paths, sites=sites, hidden=frozenset(hidden),
                 _pattern=_name_pattern(hidden))


def domain_route(hops: Sequence[str], *, src: str, dst: str, owners: Owners) -> list[tuple[str, str, tuple[str, ...]]]:
    """The domains a path crosses in order, each ``(kind, code, boxes)``: its source site, the owners of its hops
    (consecutive boxes of one owner are one domain), its destination site (the end sites' own boxes join them)."""
    route: list[tuple[str, str, list[str]]] = [("site", src, [])]
    for hop in hops:
        box = _box(hop)
        kind, code = owners.domain_of(box)
        if route[-1][:2] == (kind, code):
            if box not in route[-1][2]:
                route[-1][2].append(box)
        else:
            route.append((kind, code, [box]))
    if route[-1][:2] != ("site", dst):
        route.append(("site", dst, []))
    return [(kind, code, tuple(boxes)) for kind, code, boxes in route]


@dataclass(frozen=True)
class DomainFacts:
    """What is known about one domain on the incident's paths, as plain values (the report gathers them)."""

    kind: str  # site, carrier, unknown
    code: str
    boxes: tuple[str, ...]
    implicating: tuple[str, ...] = ()  # the suspects' evidence on its elements, host findings at its hosts
    suspects: tuple[str, ...] = ()  # labels of the suspects on its elements
    healthy: Mapping[str, Sequence[str]] = field(default_factory=dict)  # box -> paths through it without degradation
    host_findings: tuple[str, ...] = ()  # host findings at its hosts (site ends)
    is_end: bool = False
    counters: tuple[str, ...] = ()  # its ports' counters, one line each


@dataclass(frozen=True)
class Domain:
    """One site or carrier as the carrier's page shows it: ``name`` is "another carrier's segment" for a carrier it
    is not shared with, whose ``boxes`` and evidence are then empty."""

    kind: str
    name: str
    verdict: str
    boxes: tuple[str, ...]
    implicating: tuple[str, ...]
    clearing: tuple[str, ...]
    counters: tuple[str, ...] = ()


def _healthy_line(box: str, paths: Sequence[str], scope: Scope) -> str:
    named = [p for p in paths if scope.shown(p)]
    others = len(paths) - len(named)
    parts = named + ([f"{others} other path{'s' if others != 1 else ''} (not named here)"] if others else [])
    return f"healthy paths through {box}: {', '.join(parts)}"


def domain_verdicts(domains: Sequence[DomainFacts], scope: Scope) -> list[Domain]:
    """Each domain's verdict with its evidence, scoped: a domain is a suspect when a suspect or a host finding is
    about it; otherwise it is cleared by what the diagnosis saw of it (no finding on its boxes, healthy paths through
    the same boxes, no host finding at a path end). The counters of its ports on the paths go with either."""
    out = []
    for facts in domains:
        verdict = SUSPECT if facts.suspects or facts.host_findings else CLEARED
        if not scope.owner_shown(facts.kind, facts.code):
            out.append(Domain(kind="other", name=OTHER_SEGMENT if facts.kind == "carrier" else "an unknown operator",
                              verdict=verdict, boxes=(), implicating=(), clearing=()))
            continue
        implicating = [line for line in (*facts.implicating, *facts.host_findings) if scope.shown(line)]
        clearing: list[str] = []
        if not facts.suspects and facts.boxes:
            clearing.append(f"no root-cause finding on {', '.join(facts.boxes)} during the incident")
        for box in facts.boxes:
            if facts.healthy.get(box):
                clearing.append(_healthy_line(box, facts.healthy[box], scope))
        if facts.is_end and not facts.host_findings:
            clearing.append(f"host tests: no host or TCP tuning finding for the hosts of {facts.code}")
        out.append(Domain(kind=facts.kind, name=facts.code, verdict=verdict, boxes=facts.boxes,
                          implicating=tuple(implicating), clearing=tuple(clearing),
                          counters=tuple(line for line in facts.counters if scope.shown(line))))
    return out
