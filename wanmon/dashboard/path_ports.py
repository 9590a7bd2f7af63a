"""Which counters carry a path's traffic in its direction (pure: plain values in, plain values out).

A hop names the port a path *leaves* a box by: that port's transmit side (out counters) carries the path. The
path then *arrives* at the next box by the far end of that link, whose receive side (in counters: CRC errors,
input discards) carries it too. A CRC error counted on receive at geant-gva concerns the paths that arrive by
that port (FZK->CERN), not those that leave by it (CERN->FZK): charting a port's in + out on every path that
crosses it puts one direction's errors on the other direction's page.

The far end of a link is known from the inventory (a circuit's other end, a bundle's members at the next box,
:mod:`wanmon.inventory.membership`) or, where the inventory has no circuit, from the paths themselves
(:func:`wanmon.inventory.membership.link_far_ends`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from wanmon.inventory.membership import IN, OUT, VIA_HOP, Element, Hop, Links

Port = tuple[str, str]  # (equipment, interface)

#: The far end was found from the paths in the opposite direction (no circuit in the inventory).
VIA_REVERSE = "reverse"


@dataclass(frozen=True)
class PathPort:
    """A port on path number ``path`` of a page, the side of it that carries the path, and where."""

    path: int  # index of the path direction on the page
    position: int  # hop index
    port: Port
    direction: str  # OUT (transmit counters) or IN (receive counters)
    via: str  # how the port was found (membership's VIA_* or VIA_REVERSE)

    @property
    def label(self) -> str:
        return f"{self.port[0]}:{self.port[1]}"


def path_ports(
    paths: Sequence[Sequence[Hop]], candidates: Iterable[Port], links: Links, far: dict[Port, Port]
) -> list[PathPort]:
    """The ports of each path whose counters carry it, in path order (arrival before departure at each hop):
    the port each hop leaves by and its bundle siblings (out), the far end by which the next hop is reached (in).

    ``candidates`` are the ports of the boxes on the paths that have counters (the inventory's interfaces);
    membership decides which of them a path crosses and which way, ``far`` adds the arrivals the inventory
    has no circuit for. A port crossed both ways by one path keeps both sides.
    """
    found: dict[tuple[int, Port, str], tuple[tuple, PathPort]] = {}

    def add(p: PathPort) -> None:
        key = (p.path, p.position, p.direction != IN, p.via != VIA_HOP, p.port[1])
        slot = (p.path, p.port, p.direction)
        if slot not in found or key < found[slot][0]:
            found[slot] = (key, p)

    candidates = list(candidates)
    for index, hops in enumerate(paths):
        boxes = {hop.equipment for hop in hops}
        for port in candidates:
            if port[0] not in boxes:
                continue
            for m in links.memberships(Element(port[0], port[1]), hops):
                if m.port_known and m.direction in (IN, OUT):
                    add(PathPort(index, m.position, port, m.direction, m.via))
        for i, hop in enumerate(hops[:-1]):
            if hop.interface is None:
                continue
            end = far.get((hop.equipment, hop.interface))
            if end is not None and end[0] == hops[i + 1].equipment and (index, end, IN) not in found:
                add(PathPort(index, i + 1, end, IN, VIA_REVERSE))
    return [p for _, p in sorted(found.values(), key=lambda item: item[0])]
