"""Which paths and sites a maintenance window touches, and with what impact (pure: plain data in, plain data out).

The inventory is loaded once per request into a :class:`Topology` (ids only), so that matching a
calendar of windows against every path costs a few queries, not a few per window and path.

Membership rules (``wanmon.inventory.membership``, the one answer the inventory, the dashboard and the
diagnosis also use):

- a path crosses the equipment of its hops, and the interface each hop names (the port it leaves by);
- a trunk is on a path when a hop leaves by one of its members, or when a hop names no port at an
  equipment holding members; every member of a trunk on the path is then touched too (the LAG
  hashes flows over all of them, and the far-end ports belong to it);
- a circuit is on a path when a hop leaves by one of its ends, when two consecutive hops go from one
  end's equipment to the other's and the first names no port, or when an end is a member of a trunk
  on the path (a parallel member circuit);
- a hop that names no port does not cross a given interface: the port is unknown, and explaining a
  degradation by work on a port the path may not use would hide a real fault;
- a site is touched by the paths from and to it and by those crossing its equipment.

Impact on a path: the worst impact of the window's elements on it, except that work taking down only
part of a trunk on the path (some members, not all) degrades the path instead of cutting it: the LAG
carries on with fewer members. Reduced-redundancy and no-impact work never explains a degradation.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple

from wanmon.inventory.membership import Bundle, CircuitEnds, Element, Hop, Links
from wanmon.maintenance.parsed import impact_normalise, impact_worst

EXPLAINING = frozenset({"at-risk", "degraded", "outage"})
EQUIPMENT, INTERFACE, TRUNK, CIRCUIT, SITE, PATH = "equipment", "interface", "trunk", "circuit", "site", "path"


def impact_explains(impact: str | None) -> bool:
    """Outage, degraded and at-risk work explains a degradation; unknown impacts count as outage."""
    return impact_normalise(impact) in EXPLAINING


@dataclass(frozen=True)
class PathView:
    """One path version: direction, validity and hops as (equipment id, interface id or None)."""

    id: int
    src: str
    dst: str
    src_site_id: int
    dst_site_id: int
    valid_from: datetime
    valid_to: datetime | None
    hops: tuple[tuple[int, int | None], ...]

    @property
    def key(self) -> str:
        return f"{self.src}->{self.dst}"

    def valid_during(self, start: datetime, end: datetime) -> bool:
        return self.valid_from < end and (self.valid_to is None or self.valid_to > start)


@dataclass(frozen=True)
class Target:
    """What one affect names: a kind and an id (for a path, the id of one of its versions)."""

    kind: str
    id: int
    impact: str
    label: str


@dataclass(frozen=True)
class Footprint:
    """Element ids one path version crosses."""

    equipment: frozenset[int]
    interfaces: frozenset[int]
    trunks: frozenset[int]
    circuits: frozenset[int]
    sites: frozenset[int]


@dataclass(frozen=True)
class PathTouch:
    """How a window touches one path version: the elements on it and the impact they have on the path."""

    path: PathView
    labels: tuple[str, ...]
    impact: str

    @property
    def explains(self) -> bool:
        return impact_explains(self.impact)


class _Reach(NamedTuple):
    """The ports, equipment and sites an element lies on (a box its own, a site only itself)."""

    ports: set[int]
    equipment: set[int]
    sites: set[int]


@dataclass
class Topology:
    """The inventory as ids: path versions, trunk members, circuit ends, equipment sites."""

    paths: list[PathView] = field(default_factory=list)
    interface_equipment: dict[int, int] = field(default_factory=dict)
    equipment_site: dict[int, int | None] = field(default_factory=dict)
    trunk_members: dict[int, frozenset[int]] = field(default_factory=dict)
    circuit_ends: dict[int, tuple[int | None, int | None]] = field(default_factory=dict)
    path_pairs: dict[int, tuple[int, int]] = field(default_factory=dict)  # any path version id -> (src, dst) site ids
    site_codes: dict[int, str] = field(default_factory=dict)
    _footprints: dict[int, Footprint] = field(default_factory=dict, repr=False)
    _links: Links | None = field(default=None, repr=False)

    # -- derived sets
    def interface_trunks(self, interface_id: int) -> set[int]:
        return {t for t, members in self.trunk_members.items() if interface_id in members}

    def _membership_links(self) -> Links:
        """Trunks and circuits as membership values, by id (interface ids are unique across equipment)."""
        if self._links is None:
            eq = self.interface_equipment
            bundles = tuple(
                Bundle(str(t), tuple((eq.get(m), m) for m in sorted(members)))
                for t, members in sorted(self.trunk_members.items())
            )
            circuits = tuple(
                CircuitEnds(
                    str(c), (eq.get(a), a) if a is not None else None, (eq.get(z), z) if z is not None else None
                )
                for c, (a, z) in sorted(self.circuit_ends.items())
            )
            self._links = Links(bundles, circuits)
        return self._links

    def footprint(self, path: PathView) -> Footprint:
        """Element ids ``path`` crosses (memoised per path version), by the rules of ``wanmon.inventory.membership``."""
        cached = self._footprints.get(path.id)
        if cached is not None:
            return cached
        links = self._membership_links()
        hops = tuple(Hop(eq, iface) for eq, iface in path.hops)
        trunks = {int(b.name) for b in links.bundles_on(hops)}
        on_path_circuits = {int(c.name) for c in links.circuits_on(hops)}
        # every port the path may use: the ports its hops name, the members of its trunks (a LAG hashes
        # flows over all of them, and the far-end ports belong to it), and the ends of its circuits
        candidates = {iface for _, iface in path.hops if iface is not None}
        for t in trunks:
            candidates |= self.trunk_members[t]
        for c in on_path_circuits:
            candidates |= set(self.circuit_ends[c]) - {None}
        interfaces = {
            i
            for i in candidates
            if i in {iface for _, iface in path.hops}
            or links.on_path(Element(self.interface_equipment.get(i), i), hops) is not None
        }
        hop_equipment = {eq for eq, _ in path.hops}
        sites = {path.src_site_id, path.dst_site_id}
        sites |= {self.equipment_site[eq] for eq in hop_equipment if self.equipment_site.get(eq)}
        result = Footprint(
            equipment=frozenset(hop_equipment),
            interfaces=frozenset(interfaces),
            trunks=frozenset(trunks),
            circuits=frozenset(on_path_circuits),
            sites=frozenset(sites),
        )
        self._footprints[path.id] = result
        return result

    def touches(self, target: Target, path: PathView) -> bool:
        """Whether the element ``target`` names lies on ``path`` (by the rules of the module docstring)."""
        fp = self.footprint(path)
        if target.kind == EQUIPMENT:
            return target.id in fp.equipment
        if target.kind == INTERFACE:
            return target.id in fp.interfaces
        if target.kind == TRUNK:
            return target.id in fp.trunks
        if target.kind == CIRCUIT:
            return target.id in fp.circuits
        if target.kind == SITE:
            return target.id in fp.sites
        if target.kind == PATH:
            return self.path_pairs.get(target.id) == (path.src_site_id, path.dst_site_id)
        return False

    def _down_interfaces(self, targets: Iterable[Target]) -> set[int]:
        """Interfaces the window takes down (outage work on them, their circuit, equipment or trunk)."""
        down: set[int] = set()
        for t in targets:
            if impact_normalise(t.impact) != "outage":
                continue
            if t.kind == EQUIPMENT:
                down |= {i for i, eq in self.interface_equipment.items() if eq == t.id}
            else:
                down |= self._ports(t.kind, t.id)
        return down

    def _partial_trunk(self, target: Target, path: PathView, down: set[int]) -> bool:
        """``target`` is one member (port or circuit) of a trunk on the path whose other members stay up."""
        if target.kind not in (INTERFACE, CIRCUIT):
            return False
        ports = self._ports(target.kind, target.id)
        fp = self.footprint(path)
        for t in fp.trunks:
            members = self.trunk_members[t]
            if ports & members and members - down:
                return True
        return False

    def path_touch(self, targets: Iterable[Target], path: PathView) -> PathTouch | None:
        """How the window made of ``targets`` touches ``path``, or None when it does not."""
        targets = list(targets)
        on_path = [t for t in targets if self.touches(t, path)]
        if not on_path:
            return None
        down = self._down_interfaces(targets)
        impacts = []
        for t in on_path:
            impact = impact_normalise(t.impact)
            if impact == "outage" and self._partial_trunk(t, path, down):
                impact = "degraded"
            impacts.append(impact)
        return PathTouch(path=path, labels=tuple(dict.fromkeys(t.label for t in on_path)), impact=impact_worst(impacts))

    def paths_during(self, start: datetime, end: datetime) -> list[PathView]:
        return [p for p in self.paths if p.valid_during(start, end)]

    def window_touches(self, targets: Iterable[Target], start: datetime, end: datetime) -> list[PathTouch]:
        """Every path version in force during [start, end) the window touches, in path order."""
        targets = list(targets)
        out = []
        for path in self.paths_during(start, end):
            touch = self.path_touch(targets, path)
            if touch is not None:
                out.append(touch)
        return out

    def window_sites(self, targets: Iterable[Target], start: datetime, end: datetime) -> set[int]:
        """Site ids a window touches: ends of the paths it touches, sites it names, sites of its equipment."""
        targets = list(targets)
        sites: set[int] = set()
        for touch in self.window_touches(targets, start, end):
            sites |= {touch.path.src_site_id, touch.path.dst_site_id}
        for t in targets:
            if t.kind == SITE:
                sites.add(t.id)
            elif t.kind == EQUIPMENT and self.equipment_site.get(t.id):
                sites.add(self.equipment_site[t.id])
            elif t.kind == INTERFACE:
                site = self.equipment_site.get(self.interface_equipment.get(t.id, -1))
                if site:
                    sites.add(site)
            elif t.kind == PATH and t.id in self.path_pairs:
                sites |= set(self.path_pairs[t.id])
        return sites

    # -- elements
    def _ports(self, kind: str, element_id: int) -> set[int]:
        """The ports an element is made of: a port itself, a circuit's known ends, a trunk's members."""
        if kind == INTERFACE:
            return {element_id}
        if kind == CIRCUIT:
            return set(self.circuit_ends.get(element_id, ())) - {None}
        if kind == TRUNK:
            return set(self.trunk_members.get(element_id, frozenset()))
        return set()

    def _reach(self, kind: str, element_id: int) -> _Reach:
        if kind == SITE:
            return _Reach(set(), set(), {element_id})
        ports = self._ports(kind, element_id)
        equipment = {element_id} if kind == EQUIPMENT else {self.interface_equipment.get(p) for p in ports}
        return _Reach(ports, equipment - {None}, {self.equipment_site.get(e) for e in equipment} - {None})

    def element_impact(self, target: Target, kind: str, element_id: int, down: set[int]) -> str | None:
        """The impact of the work on ``target`` on one element (``kind``, ``element_id``), None if unrelated.

        Work concerns the element it names; else, when either is a site, one in the same site; else, when
        either is a box, one on the same box; else a port, circuit or trunk sharing a port with it.
        """
        impact = impact_normalise(target.impact)
        if PATH in (kind, target.kind):
            return None
        if kind == target.kind:
            return impact if target.id == element_id else None
        mine, theirs = self._reach(kind, element_id), self._reach(target.kind, target.id)
        if SITE in (kind, target.kind):
            related = mine.sites & theirs.sites
        elif EQUIPMENT in (kind, target.kind):
            related = mine.equipment & theirs.equipment
        else:
            related = mine.ports & theirs.ports
        if not related or impact != "outage":
            return impact if related else None
        # Work on one box or line of a site does not cut the site off, work on one port of a box does not
        # take the box down, and a trunk carries on while one of its members stays up.
        if kind == SITE or (kind == EQUIPMENT and target.kind != SITE):
            return "degraded"
        if kind == TRUNK and target.kind in (INTERFACE, CIRCUIT) and mine.ports - down:
            return "degraded"
        return impact

    def element_matches(self, targets: Iterable[Target], kind: str, element_id: int) -> list[tuple[Target, str]]:
        """(affect, impact on the element) for each of a window's affects that concerns the element."""
        targets = list(targets)
        down = self._down_interfaces(targets)
        out = []
        for t in targets:
            impact = self.element_impact(t, kind, element_id, down)
            if impact is not None:
                out.append((t, impact))
        return out
