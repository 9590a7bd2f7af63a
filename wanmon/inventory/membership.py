"""Does an element lie on a path, and in which direction? (pure: plain values in, plain values out).

This is the one answer to that question. The inventory selectors, maintenance matching, the dashboard
and the diagnosis engine all ask it through :class:`Links` (loaded from the database by the selector
``wanmon.inventory.selectors.path_membership_inputs``) or :func:`element_on_path`, so that a maintenance
window, a finding and a page never disagree about what a path crosses.

A path is one direction of a site pair, given as hops in the direction of travel. A hop names an
equipment and, when known, the port the path *leaves* that equipment by (``geant-par:xe-1/0/0``).

Rules (and why):

- **equipment**: on the path when a hop is at it. Direction: ``through``, towards the next hop's equipment.
- **port (equipment + interface)**: on the path when
    - a hop leaves by it (direction ``out``: its output queue and transmit counters carry the path);
    - a hop leaves by a member of a bundle the port belongs to at the same equipment (``out``: the LAG
      hashes flows over all its members, so any of them may carry this path);
    - the previous hop leaves by a circuit or bundle whose far end is this port (``in``: the path arrives
      by it; its receive counters, CRC errors and input discards concern the path);
  and **not** when it is merely another port of a router the path crosses: the congested port of
  another customer on the same box is not this path's problem, and work on it does not explain this
  path's degradation.
- **a hop naming the equipment without a port**: the inventory does not know which port is used. A
  bundle with members at that equipment, and a circuit from it to the next hop's equipment, are taken
  to be on the path (they are the links the hops describe; better to suspect a bundle than to miss it),
  with ``port_known=False``. A plain port of that equipment is *not* taken to be on the path: any of the
  box's ports could be meant, and counting them all would make every port of a core router a suspect
  of every path through it, and work on any of them an explanation. Only a caller that ranks suspects
  and weighs ``port_known`` may ask for them (``unknown_ports=ALL_PORTS``): the diagnosis does, so that
  errors on a router whose port the inventory does not know are still looked at, with less weight.
- **bundle (trunk)**: on the path when a hop names it, a hop leaves by one of its members, or (port
  unknown) a hop is at an equipment holding members.
- **circuit**: on the path when a hop leaves by one of its ends, or two consecutive hops go from one
  end's equipment to the other's and the first names no port; also when an end is a member of a bundle
  on the path (a parallel member circuit).

Which port faces which across a link (:func:`link_far_ends`): a circuit's two ends, else the ports by which
paths leave two adjacent boxes towards each other (links are bidirectional).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from wanmon.inventory.labels import label_join, label_split

OUT = "out"  # the path leaves by the element (its transmit side carries the path)
IN = "in"  # the path arrives by the element (its receive side carries the path)
THROUGH = "through"  # a box, crossed towards the next hop
ANY = "any"  # a bundle or circuit crossed without knowing the port

VIA_HOP = "hop"  # a hop names the element itself
VIA_BUNDLE = "bundle"  # the element is a sibling member of a bundle a hop leaves by
VIA_FAR_END = "far-end"  # the element is the far end of a circuit or bundle the previous hop leaves by
VIA_DEVICE = "device"  # a hop names the element's equipment without a port

#: At a hop that names no port, only bundle members count (the default, for explanations and listings) ...
BUNDLE_PORTS = "bundle-ports"
#: ... or every port of the equipment, as a possibility (``port_known=False``), for ranking suspects.
ALL_PORTS = "all-ports"


@dataclass(frozen=True)
class Hop:
    """A hop in the direction of travel: the equipment, and the port the path leaves it by when known."""

    equipment: str
    interface: str | None = None

    @classmethod
    def from_label(cls, label: str) -> Hop:
        equipment, interface = label_split(label)
        return cls(equipment, interface)

    @property
    def label(self) -> str:
        return label_join(self.equipment, self.interface)


Port = tuple[str, str]  # (equipment, interface)


@dataclass(frozen=True)
class Bundle:
    """A bundle (LAG, trunk) by name and its member ports; members of both ends may be listed."""

    name: str
    members: tuple[Port, ...]


@dataclass(frozen=True)
class CircuitEnds:
    """A circuit by name and its A and Z end ports (None when unknown)."""

    name: str
    a: Port | None = None
    z: Port | None = None

    @property
    def ends(self) -> tuple[Port, ...]:
        return tuple(e for e in (self.a, self.z) if e is not None)


@dataclass(frozen=True)
class Element:
    """What is asked about: an equipment, a port (equipment + interface), a bundle or a circuit."""

    equipment: str | None = None
    interface: str | None = None
    bundle: str | None = None
    circuit: str | None = None

    @classmethod
    def from_label(cls, label: str, bundle_names: Iterable[str] = ()) -> Element:
        """``eq``, ``eq:port`` or a bundle name (when it is one of ``bundle_names``)."""
        if label in set(bundle_names):
            return cls(bundle=label)
        equipment, interface = label_split(label)
        return cls(equipment=equipment, interface=interface)

    @property
    def port(self) -> Port | None:
        return (self.equipment, self.interface) if self.equipment and self.interface else None


@dataclass(frozen=True)
class Membership:
    """How an element lies on a path: where (hop index), which way, and how the answer was reached.

    ``port_known`` is False when the answer rests on a hop that names its equipment without a port
    (the bundle or circuit is assumed, not known, to carry the path). ``towards`` is the next hop's
    equipment (None at the last hop).
    """

    position: int
    direction: str
    via: str
    port_known: bool
    towards: str | None


def _bundles_of(port: Port, bundles: Sequence[Bundle]) -> list[Bundle]:
    return [b for b in bundles if port in b.members]


def _next_equipment(hops: Sequence[Hop], i: int) -> str | None:
    return hops[i + 1].equipment if i + 1 < len(hops) else None


def _far_ends(
    hops: Sequence[Hop], i: int, bundles: Sequence[Bundle], circuits: Sequence[CircuitEnds]
) -> dict[Port, bool]:
    """Ports at hop i+1's equipment by which a path leaving hop i arrives, each with whether the port is known.

    Known when hop i names the port it leaves by and that port is a circuit end or bundle member; assumed
    (False) when hop i names no port and a circuit or bundle joins hop i's equipment to hop i+1's.
    """
    hop = hops[i]
    nxt = _next_equipment(hops, i)
    if nxt is None:
        return {}
    out: dict[Port, bool] = {}
    if hop.interface is not None:
        port = (hop.equipment, hop.interface)
        for c in circuits:
            if port in c.ends:
                out.update({e: True for e in c.ends if e != port and e[0] == nxt})
        for b in _bundles_of(port, bundles):
            out.update({m: True for m in b.members if m[0] == nxt})
        return out
    for c in circuits:
        if len(c.ends) == 2 and {c.ends[0][0], c.ends[1][0]} == {hop.equipment, nxt}:
            out.update({e: False for e in c.ends if e[0] == nxt})
    for b in bundles:
        if any(m[0] == hop.equipment for m in b.members):
            out.update({m: False for m in b.members if m[0] == nxt and m not in out})
    return out


@dataclass(frozen=True)
class Links:
    """The bundles and circuits a path may cross besides its boxes: what membership needs besides the hops.

    Callers build it once per inventory (from names or from ids) and ask it about any number of paths, so
    no caller can pass the bundles without the circuits where both decide the answer.
    """

    bundles: Sequence[Bundle] = ()
    circuits: Sequence[CircuitEnds] = ()

    def memberships(self, element: Element, hops: Sequence[Hop], unknown_ports: str = BUNDLE_PORTS) -> list[Membership]:
        """Every crossing of ``element`` by the path ``hops``, in hop order (see the module rules)."""
        bundles, circuits = self.bundles, self.circuits
        out: list[Membership] = []
        for i, hop in enumerate(hops):
            towards = _next_equipment(hops, i)
            hop_port = (hop.equipment, hop.interface) if hop.interface is not None else None
            if element.bundle is not None:
                b = next((x for x in bundles if x.name == element.bundle), None)
                if hop.equipment == element.bundle and hop.interface is None:
                    out.append(Membership(i, ANY, VIA_HOP, True, towards))
                elif b is not None and hop_port in b.members:
                    out.append(Membership(i, OUT, VIA_BUNDLE, True, towards))
                elif b is not None and hop_port is None and any(m[0] == hop.equipment for m in b.members):
                    out.append(Membership(i, ANY, VIA_DEVICE, False, towards))
                continue
            if element.circuit is not None:
                c = next((x for x in circuits if x.name == element.circuit), None)
                if c is None:
                    continue
                if hop_port in c.ends:
                    out.append(Membership(i, OUT, VIA_HOP, True, towards))
                elif hop_port is None and towards is not None and len(c.ends) == 2:
                    if {hop.equipment, towards} == {c.ends[0][0], c.ends[1][0]}:
                        out.append(Membership(i, ANY, VIA_DEVICE, False, towards))
                elif hop_port is not None and any(set(c.ends) & set(b.members) for b in _bundles_of(hop_port, bundles)):
                    out.append(Membership(i, OUT, VIA_BUNDLE, True, towards))
                continue
            if element.equipment is None or hop.equipment != element.equipment:
                continue
            if element.interface is None:
                out.append(Membership(i, THROUGH, VIA_HOP, True, towards))
                continue
            port = element.port
            if hop.interface is None and any(b.name == hop.equipment and port in b.members for b in bundles):
                out.append(Membership(i, OUT, VIA_BUNDLE, True, towards))  # the hop names the bundle itself
                continue
            far = _far_ends(hops, i - 1, bundles, circuits) if i > 0 else {}
            if port in far:
                out.append(Membership(i, IN, VIA_FAR_END, far[port], towards))
            if hop_port == port:
                out.append(Membership(i, OUT, VIA_HOP, True, towards))
            elif hop_port is not None and any(port in b.members for b in _bundles_of(hop_port, bundles)):
                out.append(Membership(i, OUT, VIA_BUNDLE, True, towards))
            elif hop_port is None and (unknown_ports == ALL_PORTS or _bundles_of(port, bundles)):
                out.append(Membership(i, ANY, VIA_DEVICE, False, towards))
        return out

    def on_path(self, element: Element, hops: Sequence[Hop], unknown_ports: str = BUNDLE_PORTS) -> Membership | None:
        """The first crossing of ``element`` by the path, preferring one whose port is known; None when off it."""
        found = self.memberships(element, hops, unknown_ports)
        if not found:
            return None
        known = [m for m in found if m.port_known]
        return (known or found)[0]

    def bundles_on(self, hops: Sequence[Hop]) -> list[Bundle]:
        """The bundles a path crosses, in the order it meets them."""
        return _in_path_order(self, hops, [(Element(bundle=b.name), b) for b in self.bundles])

    def circuits_on(self, hops: Sequence[Hop]) -> list[CircuitEnds]:
        """The circuits a path crosses, in the order it meets them."""
        return _in_path_order(self, hops, [(Element(circuit=c.name), c) for c in self.circuits])


def _in_path_order(links: Links, hops: Sequence[Hop], candidates: Iterable[tuple[Element, object]]) -> list:
    found = []
    for element, value in candidates:
        m = links.on_path(element, hops)
        if m is not None:
            found.append((m.position, value))
    return [value for _, value in sorted(found, key=lambda x: x[0])]


def element_on_path(
    element: Element,
    hops: Sequence[Hop],
    bundles: Sequence[Bundle] = (),
    circuits: Sequence[CircuitEnds] = (),
    unknown_ports: str = BUNDLE_PORTS,
) -> Membership | None:
    """:meth:`Links.on_path` for a caller holding the bundles and circuits apart."""
    return Links(bundles, circuits).on_path(element, hops, unknown_ports)


def hops_from_labels(labels: Iterable[str]) -> tuple[Hop, ...]:
    """Hops from topology-document labels (``eq`` or ``eq:port``)."""
    return tuple(Hop.from_label(label) for label in labels)


def bundles_on_path(hops: Sequence[Hop], bundles: Sequence[Bundle]) -> list[Bundle]:
    """:meth:`Links.bundles_on` for a caller holding the bundles alone."""
    return Links(bundles).bundles_on(hops)


def circuits_on_path(
    hops: Sequence[Hop], circuits: Sequence[CircuitEnds], bundles: Sequence[Bundle] = ()
) -> list[CircuitEnds]:
    """:meth:`Links.circuits_on` for a caller holding the bundles and circuits apart."""
    return Links(bundles, circuits).circuits_on(hops)


def link_far_ends(paths: Iterable[Sequence[Hop]], links: Links = Links()) -> dict[Port, Port]:
    """The other end of each link a known port belongs to: a two-ended circuit's ends, then the ports by which
    paths leave two adjacent boxes towards each other (first seen wins: a box pair joined by parallel links
    whose paths do not say which pairs with which keeps the first pairing)."""
    far: dict[Port, Port] = {}
    for c in links.circuits:
        if len(c.ends) == 2:
            a, z = c.ends
            far.setdefault(a, z)
            far.setdefault(z, a)
    leaving: dict[tuple[str, str], Port] = {}  # (box, next box) -> port it leaves by
    for hops in paths:
        for i, hop in enumerate(hops[:-1]):
            if hop.interface is not None:
                leaving.setdefault((hop.equipment, hops[i + 1].equipment), (hop.equipment, hop.interface))
    for (a, b), port in leaving.items():
        back = leaving.get((b, a))
        if back is not None and port not in far and back not in far:
            far[port] = back
            far[back] = port
    return far
