"""The equipment, interface and trunk pages: the list of equipment and how current paths cross an element."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count
from django.utils import timezone

from wanmon.diagnosis.choices import ACTIVE_STATUSES
from wanmon.diagnosis.models import Finding
from wanmon.inventory.models import Equipment, Interface, Path, PathHop
from wanmon.inventory.selectors import (
    link_far_end_map,
    path_hops,
    path_list_through_element,
    path_list_valid_at,
)


@dataclass(frozen=True)
class Crossing:
    """How one path direction crosses an element: where it comes from, the port it leaves by, where to."""

    path: Path
    previous: str | None
    interface: str | None
    towards: str | None


def crossings(paths: Iterable[Path], equipment: Equipment) -> list[Crossing]:
    """For each path, its passage through ``equipment`` (the first, if a path visits it twice)."""
    out = []
    for path in paths:
        hops = path_hops(path)
        for i, hop in enumerate(hops):
            if hop.equipment_id == equipment.pk:
                out.append(Crossing(
                    path=path,
                    previous=hops[i - 1].equipment.name if i > 0 else None,
                    interface=hop.interface.name if hop.interface_id else None,
                    towards=hops[i + 1].equipment.name if i + 1 < len(hops) else None,
                ))
                break
    return sorted(out, key=lambda c: (c.towards or "~", c.path.src.code, c.path.dst.code))


def equipment_list() -> list[dict]:
    """Every piece of equipment with its owner, port count and the number of current paths crossing it."""
    now = timezone.now()
    crossing = defaultdict(set)
    for equipment_id, path_id in PathHop.objects.filter(
        path__in=path_list_valid_at(at=now)
    ).values_list("equipment_id", "path_id"):
        crossing[equipment_id].add(path_id)
    active = defaultdict(int)
    for subject in Finding.objects.filter(status__in=ACTIVE_STATUSES).values_list("subject", flat=True):
        if isinstance(subject, dict) and subject.get("equipment"):
            active[subject["equipment"]] += 1
    rows = []
    for eq in Equipment.objects.select_related("site", "carrier").annotate(
        interface_count=Count("interfaces")
    ).order_by("name"):
        rows.append({
            "equipment": eq,
            "owner": eq.owner_code,
            "interfaces": eq.interface_count,
            "paths": len(crossing.get(eq.pk, ())),
            "findings": active.get(eq.name, 0),
        })
    return rows


def equipment_paths(equipment: Equipment, *, at: datetime) -> list[Crossing]:
    return crossings(path_list_through_element(equipment=equipment, at=at), equipment)


def interface_paths(interface: Interface, *, at: datetime) -> tuple[list[Crossing], list[Crossing]]:
    """Paths leaving by this port or a trunk sibling of it, and paths through its box whose port is unknown."""
    by_port = crossings(path_list_through_element(equipment=interface.equipment, interface=interface, at=at),
                        interface.equipment)
    all_paths = crossings(path_list_through_element(equipment=interface.equipment, at=at), interface.equipment)
    known = {c.path.pk for c in by_port}
    unknown = [c for c in all_paths if c.path.pk not in known and c.interface is None]
    return by_port, unknown


def interface_far_end(interface: Interface, *, at: datetime) -> Interface | None:
    """The port at the other end of this port's link: a circuit's other end, else the port by which the paths
    in force at ``at`` leave the next box back towards this one (:func:`wanmon.inventory.selectors.link_far_end_map`).
    """
    end = link_far_end_map(at=at).get((interface.equipment.name, interface.name))
    if end is None:
        return None
    return Interface.objects.select_related("equipment").filter(equipment__name=end[0], name=end[1]).first()
