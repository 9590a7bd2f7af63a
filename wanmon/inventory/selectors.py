"""Inventory reads (HackSoft-style selectors) that other apps build on.

All path queries are *time-aware* and *direction-aware*:

- ``at`` (default: now) selects the path versions in force at that instant (``valid_from <= at`` and
  ``valid_to`` empty or later), so that a measurement is explained by the route of its own time;
- a path is one direction of a site pair: ``FZK->CERN`` and ``CERN->FZK`` are different paths, and a
  hop is taken in the direction of travel (the path *leaves* the hop's equipment by the hop's
  interface, if given, towards the next hop's equipment).

Element, trunk and circuit membership rules are spelled out on each selector; they only use what
the inventory knows and never guess beyond "the port is unknown, so count it" (better to suspect an
element than to miss it).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Prefetch, Q, QuerySet
from django.utils import timezone

from wanmon.inventory.labels import label_join, label_split
from wanmon.inventory.membership import IN, OUT, Bundle, CircuitEnds, Element, Hop, Links, Port, link_far_ends
from wanmon.inventory.models import Agent, Circuit, Equipment, Interface, Path, PathHop, Site, SiteContact, Trunk

__all__ = [
    "MembershipInputs",
    "SharedElement",
    "agent_equipment_names",
    "circuit_list_on_path",
    "contact_list_for_sites",
    "element_get_by_label",
    "element_list_shared_by_paths",
    "equipment_get",
    "interface_get",
    "link_far_end_map",
    "path_current",
    "path_hops",
    "path_hops_labels",
    "path_hops_prefetch",
    "path_list_through_element",
    "path_list_through_trunk",
    "path_list_valid_at",
    "path_list_versions",
    "path_pair_exists",
    "path_membership_hops",
    "path_membership_inputs",
    "path_touched_by_labels",
    "site_get",
    "site_list_affected_by_element",
    "trunk_get",
    "trunk_list",
    "trunk_list_on_path",
]

EQUIPMENT = "equipment"
INTERFACE = "interface"


def _when(at: datetime | None) -> datetime:
    return at or timezone.now()


# --- lookups by code / name / label ----------------------------------------------------------------------


def site_get(site: Site | str) -> Site | None:
    """A site given as itself or by code."""
    return site if isinstance(site, Site) else Site.objects.filter(code=site).first()


def equipment_get(equipment: Equipment | str) -> Equipment | None:
    """Equipment given as itself or by name (with its site and carrier)."""
    if isinstance(equipment, Equipment):
        return equipment
    return Equipment.objects.select_related("site", "carrier").filter(name=equipment).first()


def interface_get(*, equipment: Equipment | str, name: str) -> Interface | None:
    """The interface ``name`` of ``equipment`` (itself or its name), with the equipment's site and carrier."""
    eq_filter = {"equipment": equipment} if isinstance(equipment, Equipment) else {"equipment__name": equipment}
    return (
        Interface.objects.select_related("equipment__site", "equipment__carrier").filter(name=name, **eq_filter).first()
    )


def trunk_get(name: str) -> Trunk | None:
    """The trunk ``name`` with its members and their equipment."""
    return Trunk.objects.prefetch_related("members__equipment").filter(name=name).first()


def trunk_list(*, equipment: Equipment | None = None) -> list[Trunk]:
    """Trunks by name (only those with a member on ``equipment``, if given), members prefetched."""
    trunks = Trunk.objects.prefetch_related("members__equipment").order_by("name")
    if equipment is not None:
        trunks = trunks.filter(members__equipment=equipment).distinct()
    return list(trunks)


def element_get_by_label(label: str) -> Equipment | Interface | Trunk | None:
    """Resolve a label as maintenance windows and findings write it: ``eq``, ``eq:interface`` or a trunk name.

    Equipment wins over a trunk of the same name (names are unique within each kind only).
    """
    equipment_name, interface_name = label_split(label)
    if interface_name is not None:
        return interface_get(equipment=equipment_name, name=interface_name)
    return equipment_get(equipment_name) or trunk_get(label)


# --- paths -------------------------------------------------------------------------------------------------


def path_hops_prefetch() -> Prefetch:
    """Prefetch of the hops of path versions, in order, with their equipment and interface."""
    return Prefetch(
        "hops", queryset=PathHop.objects.select_related("equipment", "interface").order_by("position")
    )


def path_in_force_q(at: datetime) -> Q:
    """The path versions in force at ``at``: valid from then or before, and not replaced by then."""
    return Q(valid_from__lte=at) & (Q(valid_to__isnull=True) | Q(valid_to__gt=at))


def path_in_force_during_q(start: datetime | None, end: datetime | None) -> Q:
    """The path versions in force at some time of [start, end); a missing bound leaves that side open."""
    q = Q()
    if end is not None:
        q &= Q(valid_from__lt=end)
    if start is not None:
        q &= Q(valid_to__isnull=True) | Q(valid_to__gt=start)
    return q


def path_list_valid_at(*, at: datetime | None = None) -> QuerySet[Path]:
    """Every path version in force at ``at`` (one per direction of a site pair), hops prefetched in order."""
    return (
        Path.objects.filter(path_in_force_q(_when(at)))
        .select_related("src", "dst")
        .prefetch_related(path_hops_prefetch())
        .order_by("src__code", "dst__code")
    )


def _direction(src: Site | str, dst: Site | str) -> dict:
    """The filter of the paths ``src``->``dst``, each end a site or its code."""
    return {
        **({"src": src} if isinstance(src, Site) else {"src__code": src}),
        **({"dst": dst} if isinstance(dst, Site) else {"dst__code": dst}),
    }


def path_current(src: Site | str, dst: Site | str, *, at: datetime | None = None) -> Path | None:
    """The version of the path ``src``->``dst`` in force at ``at`` (sites or codes), or None."""
    return path_list_valid_at(at=at).filter(**_direction(src, dst)).first()


def path_list_versions(
    *, src: Site | str, dst: Site | str, start: datetime | None = None, end: datetime | None = None
) -> QuerySet[Path]:
    """The history of the path ``src``->``dst``, oldest version first: all of it, or the versions in force at
    some time of [start, end)."""
    versions = Path.objects.filter(path_in_force_during_q(start, end), **_direction(src, dst))
    return versions.select_related("src", "dst").prefetch_related(path_hops_prefetch()).order_by("valid_from")


def path_pair_exists(a: str, b: str) -> bool:
    """Whether a path (any version) joins the sites ``a`` and ``b``, in either direction."""
    return Path.objects.filter(Q(src__code=a, dst__code=b) | Q(src__code=b, dst__code=a)).exists()


def path_hops(path: Path) -> list[PathHop]:
    """The hops of a path version in order (uses the prefetch of the path selectors when present)."""
    cache = getattr(path, "_prefetched_objects_cache", {})
    if "hops" in cache:
        return list(cache["hops"])
    return list(path.hops.select_related("equipment", "interface").order_by("position"))


def path_hops_labels(path: Path) -> list[str]:
    """The hops as topology documents write them: ``["cern-border", "geant-par:xe-1/0/0", ...]``."""
    return [
        label_join(hop.equipment.name, hop.interface.name if hop.interface_id else None) for hop in path_hops(path)
    ]


@dataclass(frozen=True)
class MembershipInputs(Links):
    """The inventory's trunks and circuits as membership :class:`~wanmon.inventory.membership.Links` (by name,
    a circuit by its primary key), and how maintenance windows name the circuits."""

    #: ``circuit:CID`` (as maintenance windows name circuits) -> names of the circuits in ``circuits``
    circuit_labels: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def bundle_names(self) -> set[str]:
        return {b.name for b in self.bundles}

    def elements_of_label(self, label: str) -> list[Element]:
        """The elements a label names: ``eq``, ``eq:port``, a trunk name, or ``circuit:CID`` (unique per carrier
        only, so possibly several); none for ``site:`` and ``path:`` labels."""
        if label.startswith("circuit:"):
            return [Element(circuit=name) for name in self.circuit_labels.get(label, ())]
        if label.startswith(("site:", "path:")):
            return []
        return [Element.from_label(label, self.bundle_names)]


def path_membership_inputs() -> MembershipInputs:
    """Every trunk with its member ports and every circuit with its end ports, by name (two queries)."""
    members: dict[str, list[tuple[str, str]]] = {}
    for trunk_name, eq_name, iface_name in Trunk.members.through.objects.values_list(
        "trunk__name", "interface__equipment__name", "interface__name"
    ).order_by("trunk__name", "interface__equipment__name", "interface__name"):
        members.setdefault(trunk_name, []).append((eq_name, iface_name))
    bundles = tuple(Bundle(name, tuple(ports)) for name, ports in members.items())
    circuits = []
    labels: dict[str, list[str]] = {}
    # circuit ids are unique per carrier only: the primary key names a circuit here
    for pk, cid, a_eq, a_if, z_eq, z_if in Circuit.objects.values_list(
        "pk", "cid", "a_interface__equipment__name", "a_interface__name",
        "z_interface__equipment__name", "z_interface__name",
    ).order_by("carrier__code", "cid"):
        circuits.append(CircuitEnds(str(pk), (a_eq, a_if) if a_if else None, (z_eq, z_if) if z_if else None))
        labels.setdefault(f"circuit:{cid}", []).append(str(pk))
    return MembershipInputs(bundles, tuple(circuits), {k: tuple(v) for k, v in labels.items()})


def path_touched_by_labels(path: Path, labels: Iterable[str], inputs: MembershipInputs) -> list[str]:
    """The labels (of a maintenance window or a finding) naming an element on ``path`` or one of its ends.

    ``site:X`` touches the paths from and to X, ``path:A->B`` that direction; element labels follow
    :mod:`wanmon.inventory.membership` (a port of a box whose port the path does not name is not on it).
    """
    hops = path_membership_hops(path)
    own = {f"site:{path.src.code}", f"site:{path.dst.code}", f"path:{path.src.code}->{path.dst.code}"}
    out = []
    for label in labels:
        if label in own or any(
            inputs.on_path(e, hops) is not None
            for e in inputs.elements_of_label(label)
        ):
            out.append(label)
    return out


def path_membership_hops(path: Path) -> tuple[Hop, ...]:
    """The hops of a path version as :class:`~wanmon.inventory.membership.Hop` values."""
    return tuple(Hop(h.equipment.name, h.interface.name if h.interface_id else None) for h in path_hops(path))


def path_ports_of_equipment(*, equipment: Equipment, paths: Iterable[str], at: datetime | None = None) -> set[int]:
    """Ids of the interfaces by which the given path directions (``SRC->DST``) in force at ``at`` leave
    ``equipment``: the ports of the links an incident on that equipment is about."""
    wanted = {tuple(p.split("->", 1)) for p in paths if "->" in p}
    ids = set()
    for path in path_list_valid_at(at=at):
        if (path.src.code, path.dst.code) in wanted:
            ids.update(h.interface_id for h in path_hops(path) if h.equipment_id == equipment.id and h.interface_id)
    return ids


def link_far_end_map(*, at: datetime | None = None, inputs: MembershipInputs | None = None) -> dict[Port, Port]:
    """The two ends of every link the inventory or the paths in force at ``at`` make known, each end -> the other
    (:func:`~wanmon.inventory.membership.link_far_ends`: a circuit's ends, else the ports by which paths leave
    two adjacent boxes towards each other). ``inputs``: the membership inputs when the caller has them already."""
    paths = (path_membership_hops(p) for p in path_list_valid_at(at=at))
    return link_far_ends(paths, inputs if inputs is not None else path_membership_inputs())


def path_list_through_element(
    *,
    equipment: Equipment | str,
    interface: Interface | str | None = None,
    towards: Equipment | str | None = None,
    at: datetime | None = None,
    arriving: bool = False,
) -> QuerySet[Path]:
    """Path versions in force at ``at`` that cross an element (rules of :mod:`wanmon.inventory.membership`).

    - ``equipment`` only: every path with a hop at that equipment (any direction);
    - ``towards``: only paths that leave ``equipment`` towards that next hop (the direction of a link:
      ``geant-fra`` towards ``geant-gva`` is crossed by FZK->CERN, not by CERN->FZK);
    - ``interface``: only paths that leave ``equipment`` by that interface, or by another member of a
      trunk the interface belongs to (a LAG spreads flows over all its members). Hops that do not name
      an interface are not counted: the inventory does not know which port they use. An interface
      already fixes the direction, so ``towards`` is then ignored. ``arriving``: also the paths that arrive by
      that interface (it is the far end of the circuit they leave the previous box by): receive errors on a port
      concern those.
    """
    eq = equipment_get(equipment)
    if eq is None:
        return Path.objects.none()
    element = Element(equipment=eq.name)
    nxt = None
    if interface is not None:
        iface = interface if isinstance(interface, Interface) else interface_get(equipment=eq, name=interface)
        if iface is None:
            return Path.objects.none()
        element = Element(equipment=eq.name, interface=iface.name)
    elif towards is not None:
        nxt = equipment_get(towards)
        if nxt is None:
            return Path.objects.none()
    inputs = path_membership_inputs()
    ids = []
    for path in path_list_valid_at(at=at):
        found = inputs.memberships(element, path_membership_hops(path))
        if interface is not None:
            found = [m for m in found if m.port_known and (m.direction == OUT or (arriving and m.direction == IN))]
        elif nxt is not None:
            found = [m for m in found if m.towards == nxt.name]
        if found:
            ids.append(path.pk)
    return path_list_valid_at(at=at).filter(pk__in=ids)


def site_list_affected_by_element(
    *,
    equipment: Equipment | str,
    interface: Interface | str | None = None,
    towards: Equipment | str | None = None,
    at: datetime | None = None,
) -> list[Site]:
    """Sites that suffer when an element misbehaves: the ends of every path through it, and its owner site.

    Arguments as :func:`path_list_through_element`. Ordered by site code.
    """
    eq = equipment_get(equipment)
    if eq is None:
        return []
    site_ids: set[int] = set()
    for src_id, dst_id in path_list_through_element(
        equipment=eq, interface=interface, towards=towards, at=at
    ).values_list("src_id", "dst_id"):
        site_ids.update((src_id, dst_id))
    if eq.site_id:
        site_ids.add(eq.site_id)
    return list(Site.objects.filter(pk__in=site_ids).order_by("code"))


@dataclass(frozen=True)
class SharedElement:
    """An element crossed by several of the given paths, and which of them cross it.

    ``kind`` is ``"equipment"`` (the box) or ``"interface"`` (a port the paths leave by). With
    direction awareness, an equipment element is the box *in one direction of travel*: ``towards`` is
    the next hop's equipment (None at the last hop, where the path is delivered). ``position`` is the
    hop index in the first given path that crosses the element.
    """

    kind: str
    equipment: Equipment
    interface: Interface | None
    towards: Equipment | None
    position: int
    paths: tuple[Path, ...]

    @property
    def label(self) -> str:
        """The element as findings and maintenance windows name it: ``eq`` or ``eq:interface``."""
        return label_join(self.equipment.name, self.interface.name if self.interface else None)

    @property
    def direction_label(self) -> str:
        """``label -> next equipment`` when the direction is known, else the label."""
        return f"{self.label} -> {self.towards.name}" if self.towards else self.label


def _resolve_paths(
    paths: Iterable[Path] | None, pairs: Iterable[tuple[Site | str, Site | str]] | None, at: datetime | None
) -> list[Path]:
    resolved: list[Path] = []
    if paths is not None:
        ids = [p.pk for p in paths]
        by_id = {p.pk: p for p in Path.objects.filter(pk__in=ids).select_related("src", "dst")
                 .prefetch_related(path_hops_prefetch())}
        resolved.extend(by_id[i] for i in ids if i in by_id)
    if pairs is not None:
        valid = list(path_list_valid_at(at=at))
        index = {(p.src.code, p.dst.code): p for p in valid}
        for src, dst in pairs:
            key = (src.code if isinstance(src, Site) else src, dst.code if isinstance(dst, Site) else dst)
            if key in index:
                resolved.append(index[key])
    unique: dict[int, Path] = {}
    for p in resolved:
        unique.setdefault(p.pk, p)
    return list(unique.values())


def element_list_shared_by_paths(
    *,
    paths: Iterable[Path] | None = None,
    pairs: Iterable[tuple[Site | str, Site | str]] | None = None,
    at: datetime | None = None,
    min_paths: int | None = None,
    direction_aware: bool = True,
) -> list[SharedElement]:
    """Elements (equipment and interfaces) crossed by at least ``min_paths`` of the given paths.

    Paths are given as versions (``paths``) and/or as directed ``(src, dst)`` pairs resolved at ``at``;
    pairs without a path are ignored. ``min_paths`` defaults to all of them (the intersection); pass 2
    (or 1) with a mix of degraded and healthy paths to see, for each element, which paths cross it.

    With ``direction_aware`` (the default) an equipment is shared only by paths that leave it towards
    the same next hop, because a fault (a dirty fibre, a full output queue) usually affects one
    direction of one link: FZK->CERN and CNAF->CERN share ``geant-fra -> geant-gva``, while CERN->FZK
    crosses ``geant-fra`` the other way. Interfaces are directional by nature (the port a path leaves
    by). Ordered by position along the first path, then along the following ones.
    """
    resolved = _resolve_paths(paths, pairs, at)
    if not resolved:
        return []
    needed = len(resolved) if min_paths is None else min_paths
    found: dict[tuple, dict] = {}
    for path_index, path in enumerate(resolved):
        hops = path_hops(path)
        for position, hop in enumerate(hops):
            nxt = hops[position + 1].equipment if position + 1 < len(hops) else None
            towards = nxt if direction_aware else None
            keys = [((EQUIPMENT, hop.equipment_id, towards.pk if towards else None), EQUIPMENT, None)]
            if hop.interface_id:
                keys.append(((INTERFACE, hop.interface_id), INTERFACE, hop.interface))
            for key, kind, iface in keys:
                entry = found.setdefault(
                    key,
                    {"kind": kind, "equipment": hop.equipment, "interface": iface, "towards": towards,
                     "order": (path_index, position, kind == INTERFACE), "position": position, "paths": {}},
                )
                entry["paths"].setdefault(path.pk, path)
    shared = [
        SharedElement(
            kind=e["kind"], equipment=e["equipment"], interface=e["interface"], towards=e["towards"],
            position=e["position"], paths=tuple(e["paths"].values()),
        )
        for e in sorted(found.values(), key=lambda e: e["order"])
        if len(e["paths"]) >= needed
    ]
    return shared


# --- trunks and circuits on a path ---------------------------------------------------------------------------


def trunk_list_on_path(*, path: Path, inputs: MembershipInputs | None = None) -> list[Trunk]:
    """Trunks (LAGs) a path version crosses, in the order it meets them.

    A trunk is on the path when a hop leaves by one of its members, or when a hop at an equipment that
    holds members names no interface (the port is unknown, so the trunk is counted). A hop that names
    a non-member port does not use the trunk there. To make both directions of a bundle visible, list
    the member ports of both of its ends. (Rules of :mod:`wanmon.inventory.membership`.)
    """
    inputs = inputs or path_membership_inputs()
    names = [b.name for b in inputs.bundles_on(path_membership_hops(path))]
    trunks = {t.name: t for t in Trunk.objects.filter(name__in=names)}
    return [trunks[n] for n in names if n in trunks]


def path_list_through_trunk(*, trunk: Trunk | str, at: datetime | None = None) -> list[Path]:
    """Path versions in force at ``at`` that cross ``trunk`` (itself or its name), by the rule of
    :func:`trunk_list_on_path`."""
    tr = trunk if isinstance(trunk, Trunk) else Trunk.objects.filter(name=trunk).first()
    if tr is None:
        return []
    inputs = path_membership_inputs()
    return [
        p
        for p in path_list_valid_at(at=at)
        if inputs.on_path(Element(bundle=tr.name), path_membership_hops(p)) is not None
    ]


def circuit_list_on_path(*, path: Path, inputs: MembershipInputs | None = None) -> list[Circuit]:
    """Carrier circuits a path version crosses, in the order it meets them.

    A circuit is on the path when a hop leaves by its A- or Z-end interface, or when two consecutive
    hops go from the equipment of one end to the equipment of the other and the first of them names no
    interface (the port is unknown). Circuits without both ends known are only found by the first rule.
    (Rules of :mod:`wanmon.inventory.membership`.)
    """
    inputs = inputs or path_membership_inputs()
    ids = [int(c.name) for c in inputs.circuits_on(path_membership_hops(path))]
    circuits = Circuit.objects.select_related("carrier", "a_interface__equipment", "z_interface__equipment").in_bulk(
        ids
    )
    return [circuits[i] for i in ids if i in circuits]


# --- people and agents ---------------------------------------------------------------------------------------


def contact_list_for_sites(*, sites: Iterable[Site | str], roles: Sequence[str] | None = None) -> QuerySet[SiteContact]:
    """The contacts of the given sites (objects or codes), optionally only those with one of ``roles``."""
    codes = [s.code if isinstance(s, Site) else s for s in sites]
    contacts = SiteContact.objects.select_related("site").filter(site__code__in=codes)
    if roles is not None:
        contacts = contacts.filter(role__in=list(roles))
    return contacts.order_by("site__code", "role", "email")


def agent_equipment_names(*, agent: Agent) -> set[str]:
    """Names of the equipment ``agent`` may poll via SNMP."""
    return set(agent.equipment.values_list("name", flat=True))
