"""The network elements a path direction crosses: its hops, the equipment of interface hops, the trunks it crosses
and their members (the membership rules of ``wanmon.inventory.membership`` applied to the evidence)."""

from __future__ import annotations

from collections.abc import Iterable

from wanmon.diagnosis.evidence import EvidenceBundle, PathEvidence, split_element
from wanmon.inventory.membership import ALL_PORTS, Bundle, Element, Links, element_on_path, hops_from_labels


def bundles_of(bundle: EvidenceBundle) -> tuple[Bundle, ...]:
    """The evidence's trunks as membership bundles (member ports by equipment and interface name)."""
    return tuple(Bundle(t.name, tuple((m.equipment, m.interface) for m in t.members)) for t in bundle.trunks)


def trunks_on_path(bundle: EvidenceBundle, path: PathEvidence):
    """Trunks the path crosses (rules of ``wanmon.inventory.membership``).

    A trunk is on the path when a hop names it or leaves by one of its members. When a hop names a
    member's equipment without a port, the trunk is counted only if the path's capacity is the trunk's
    aggregate speed (the path is provisioned over the bundle): here the trunk sets the per-stream
    ceiling, and a wrong guess would halve the throughput expected of the path.
    """
    hops = hops_from_labels(path.hops)
    bundles = bundles_of(bundle)
    out = []
    for t in bundle.trunks:
        m = element_on_path(Element(bundle=t.name), hops, bundles)
        if m is None:
            continue
        aggregate = t.aggregate_bps
        if m.port_known or (aggregate and abs(aggregate - path.capacity_bps) <= 0.05 * path.capacity_bps):
            out.append(t)
    return out


def base_equipment(name: str) -> str:
    return split_element(name)[0]


def path_elements(path: PathEvidence, bundle: EvidenceBundle) -> set[str]:
    """Every element name the path crosses: hops, the equipment of interface hops, trunk members."""
    names: set[str] = set()
    for hop in path.hops:
        names.add(hop)
        names.add(base_equipment(hop))
    for t in trunks_on_path(bundle, path):
        names.add(t.name)
        for m in t.members:
            names.add(m.name)
            names.add(m.equipment)
    return names


def interfaces_on_path(
    names: Iterable[str], path: PathEvidence, bundle: EvidenceBundle
) -> dict[str, tuple[str | None, str | None]]:
    """``(interface_on_path, interface_direction)`` of each interface ``names`` gives, for one path: the path's hops,
    bundles and trunks are worked out once for all of them (a path crosses routers of tens of polled ports each,
    and worked out again for every port they were most of a cycle's rules)."""
    hops = hops_from_labels(path.hops)
    links = Links(bundles_of(bundle))
    members = {m.name for t in trunks_on_path(bundle, path) for m in t.members}
    out: dict[str, tuple[str | None, str | None]] = {}
    for name in names:
        m = links.on_path(Element.from_label(name), hops, ALL_PORTS)
        how = "exact" if name in members else None if m is None else "exact" if m.port_known else "equipment"
        out[name] = (how, m.direction if m is not None and m.direction in ("in", "out") else None)
    return out


def interface_on_path(iface_name: str, path: PathEvidence, bundle: EvidenceBundle) -> str | None:
    """'exact' when the path leaves or arrives by the interface (or a trunk it belongs to is on the path),
    'equipment' when a hop names the interface's equipment without a port (the port is unknown, so it may
    be this one), else None: another port of a router the path crosses by a known port is not on the path.
    """
    return interfaces_on_path((iface_name,), path, bundle)[iface_name][0]


def interface_direction(iface_name: str, path: PathEvidence, bundle: EvidenceBundle) -> str | None:
    """'out' when the path leaves by the interface (its out counters carry the path), 'in' when it arrives by
    it, None when that is not known (a bundle or a hop without a port)."""
    return interfaces_on_path((iface_name,), path, bundle)[iface_name][1]
