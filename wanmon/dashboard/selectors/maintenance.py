"""Maintenance windows as the dashboard shows them: occurrences in a time range, with the labels they affect,
and those touching given paths or elements.

A window from an untrusted source is held for an operator's review and mutes nothing until accepted: the lists
show it marked "held for review", the path statuses and charts leave it out. A rejected window is never shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from wanmon.inventory.models import Path
from wanmon.inventory.selectors import MembershipInputs, path_membership_inputs, path_touched_by_labels
from wanmon.maintenance.choices import Review
from wanmon.maintenance.selectors import maintenance_occurrence_list


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

    @property
    def held(self) -> bool:
        """Held for an operator's review: listed, but it is no maintenance of anything until accepted."""
        return self.review == Review.HELD

    def running_at(self, at: datetime) -> bool:
        return self.start <= at < self.end


def maintenance_list(*, start: datetime, end: datetime, include_held: bool = True) -> list[MaintenanceItem]:
    """Occurrences of the windows (not cancelled, not rejected) overlapping [start, end), oldest first (a recurring
    window appears once per occurrence, as the maintenance app expands it); ``include_held=False`` keeps only the
    accepted windows, those that are maintenance in force (what statuses and charts place on paths)."""
    shown = {Review.ACCEPTED, Review.HELD} if include_held else {Review.ACCEPTED}
    return [
        MaintenanceItem(
            pk=o.window.pk, reference=o.window.reference,
            carrier=o.window.carrier.code if o.window.carrier_id else None, summary=o.window.summary,
            start=o.start, end=o.end, impact=o.window.impact, status=o.window.status,
            affects=tuple(a.label for a in o.window.affects.all()), review=o.window.review,
        )
        for o in maintenance_occurrence_list(start=start, end=end, include_cancelled=False)
        if o.window.review in shown
    ]


def maintenance_touches_path(item: MaintenanceItem, path: Path, inputs: MembershipInputs) -> bool:
    """Whether a window affects a path, by the inventory's membership rules (``wanmon.inventory.membership``)."""
    return bool(path_touched_by_labels(path, item.affects, inputs))


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

