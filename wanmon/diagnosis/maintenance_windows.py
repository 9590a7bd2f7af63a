"""The diagnosis' reads of the maintenance calendar, and its answer to the maintenance app's one question.

The diagnosis depends on the maintenance app, never the reverse (layers: maintenance < diagnosis):

- :func:`maintenance_windows_overlapping` turns the maintenance in force (the maintenance app's
  ``maintenance_in_force``) into the evidence dataclasses the rules read;
- :func:`paths_degraded_since` tells the maintenance app's "ended but still degraded" notice which
  paths still have active degradation findings; :class:`wanmon.diagnosis.apps.DiagnosisConfig`
  registers it through ``wanmon.maintenance.hooks`` when the app starts.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from datetime import datetime

from wanmon.diagnosis.choices import ACTIVE_STATUSES
from wanmon.diagnosis.evidence import MaintenanceEvidence
from wanmon.diagnosis.models import Finding
from wanmon.maintenance.models import MaintenanceAffect
from wanmon.maintenance.parsed import impact_worst
from wanmon.maintenance.selectors import maintenance_in_force

__all__ = ["DEGRADATION_CODES", "maintenance_windows_overlapping", "paths_degraded_since"]

#: Path findings that mean "still degraded" once a window has ended.
DEGRADATION_CODES = frozenset(
    {
        "PATH_DOWN",
        "LOSS_LIMITED",
        "ASYMMETRIC_PATH",
        "TCP_ONLY_DEGRADATION",
        "UNEXPLAINED_DEGRADATION",
        "DELAY_LEVEL_SHIFT",
        "REORDERING",
        "ROUTE_CHANGE",
        "MTU_MISMATCH",
        "SHARED_EQUIPMENT_SUSPECT",
    }
)


def _diagnosis_labels(affect: MaintenanceAffect) -> list[str]:
    """Labels the diagnosis understands: circuits become their end ports, paths 'path:SRC->DST'."""
    if affect.circuit_id:
        ends = [i for i in (affect.circuit.a_interface, affect.circuit.z_interface) if i is not None]
        if ends:
            return [f"{i.equipment.name}:{i.name}" for i in ends]
    return [affect.label]


def maintenance_windows_overlapping(start: datetime, end: datetime) -> list[MaintenanceEvidence]:
    """The maintenance in force over [start, end) that may explain a degradation, as the diagnosis'
    MaintenanceWindow dataclasses: one per occurrence of a recurring window, circuits as their end ports.

    Read through the maintenance app's :func:`maintenance_in_force` (cancelled, rejected and held windows are
    not in force); informational windows (behaviour 'run') are left out: they explain nothing.
    """
    out = []
    for occ in maintenance_in_force(start=start, end=end):
        if not occ.acts:
            continue
        w = occ.window
        labels: list[str] = []
        impacts: dict[str, str] = {}
        for affect in w.affects.all():
            for label in _diagnosis_labels(affect):
                labels.append(label)
                if affect.impact:
                    impacts[label] = impact_worst([impacts.get(label, affect.impact), affect.impact])
        out.append(
            MaintenanceEvidence(
                reference=w.reference,
                start=occ.start,
                end=occ.end,
                impact=w.impact,
                affects=tuple(dict.fromkeys(labels)),
                carrier=w.carrier.code if w.carrier_id else None,
                description=w.summary or None,
                element_impacts=impacts,
            )
        )
    return out


def paths_degraded_since(keys: Mapping[tuple[str, str], str], since: datetime) -> dict[str, list[Finding]]:
    """Of the path directions ``keys`` ({(src, dst): key}), those with active degradation findings seen since."""
    findings = Finding.objects.filter(
        status__in=ACTIVE_STATUSES,
        code__in=DEGRADATION_CODES,
        end__gte=since,
        subject__has_keys=["src", "dst"],
    ).order_by("code")
    out: dict[str, list[Finding]] = defaultdict(list)
    for f in findings:
        key = keys.get((f.subject.get("src"), f.subject.get("dst")))
        if key:
            out[key].append(f)
    return dict(out)
