"""Maintenance windows as the dashboard shows them: occurrences in a time range, with the labels they affect,
and those touching given paths or elements.

A window from an untrusted source is held for an operator's review and mutes nothing until accepted: the lists
show it marked "held for review", the path statuses and charts leave it out. A rejected window is never shown.
An informational window (behaviour 'run'), or reduced-redundancy and no-impact work, is listed but puts no path in
maintenance: it explains nothing, and the path keeps the status its measurements and findings give it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from wanmon.inventory.models import Path
from wanmon.inventory.selectors import MembershipInputs, path_membership_inputs, path_touched_by_labels
from wanmon.maintenance.choices import Review
from wanmon.maintenance.footprint import impact_explains
from wanmon.maintenance.selectors import maintenance_in_force


@dataclass(frozen=True)
class MaintenanceItem:
    """A maintenance window and the inventory labels it affects."""

    pk: int
    reference: str
    carrier: str | None
    summary: str
    start: datetime
    end: datetime
    impact: str
    status: str
    affects: tuple[str, ...]
    review: str = Review.ACCEPTED
    # The affects under which a degradation is expected (outage, degraded or at-risk work of a window that acts:
    # accepted, not informational): the paths they touch turn blue, as the diagnosis explains their degradation.
    explaining: tuple[str, ...] = ()

    @property
    def held(self) -> bool:
        """Held for an operator's review: listed, but it is no maintenance of anything until accepted."""
        return self.review == Review.HELD

    def running_at(self, at: datetime) -> bool:
        return self.start <= at < self.end


def maintenance_list(*, start: datetime, end: datetime, include_held: bool = True) -> list[MaintenanceItem]:
    """The maintenance in force over [start, end) (``maintenance_in_force``: one entry per occurrence, oldest
    first), held windows too unless ``include_held=False``."""
    return [
        MaintenanceItem(
            pk=o.window.pk, reference=o.window.reference,
            carrier=o.window.carrier.code if o.window.carrier_id else None, summary=o.window.summary,
            start=o.start, end=o.end, impact=o.window.impact, status=o.window.status,
            affects=tuple(t.label for t in o.targets), review=o.window.review,
            explaining=tuple(t.label for t in o.targets if o.acts and impact_explains(t.impact)),
        )
        for o in maintenance_in_force(start=start, end=end, include_held=include_held)
    ]


def maintenance_touches_path(item: MaintenanceItem, path: Path, inputs: MembershipInputs) -> bool:
    """Whether a window affects a path, by the inventory's membership rules (``wanmon.inventory.membership``)."""
    return bool(path_touched_by_labels(path, item.affects, inputs))


def maintenance_explains_on_path(item: MaintenanceItem, path: Path, inputs: MembershipInputs) -> bool:
    """Whether a window puts a path in maintenance: one of its explaining affects is on the path."""
    return bool(item.explaining) and bool(path_touched_by_labels(path, item.explaining, inputs))


def maintenance_for_paths(paths: Sequence[Path], *, start: datetime, end: datetime) -> list[MaintenanceItem]:
    """Windows overlapping [start, end) that touch any of the path versions."""
    windows = maintenance_list(start=start, end=end)
    if not windows:
        return []
    inputs = path_membership_inputs()
    return [m for m in windows if any(maintenance_touches_path(m, path, inputs) for path in paths)]


def maintenance_for_element(*, labels: set[str], equipment: str | None, start: datetime, end: datetime):
    """Windows overlapping [start, end) naming one of ``labels`` (or, with ``equipment``, any of its ports)."""
    return [m for m in maintenance_list(start=start, end=end)
            if any(a in labels or (equipment and a.startswith(f"{equipment}:")) for a in m.affects)]

