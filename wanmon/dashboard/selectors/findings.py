"""Findings as the dashboard pages list them: active at an instant, filtered for the findings page, and
those about a path's directions or the elements it crosses."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import datetime

from django.db.models import Case, IntegerField, Q, QuerySet, Value, When

from wanmon.diagnosis.choices import ACTIVE_STATUSES
from wanmon.diagnosis.models import Finding
from wanmon.inventory.membership import Element
from wanmon.inventory.models import Interface, Path
from wanmon.inventory.selectors import path_membership_hops, path_membership_inputs


def _severity_order() -> Case:
    return Case(
        When(severity="critical", then=Value(0)), When(severity="warning", then=Value(1)), default=Value(2),
        output_field=IntegerField(),
    )


def finding_list_active_at(at: datetime) -> QuerySet[Finding]:
    """Findings active at ``at``: seen by then and not resolved before it; worst and newest first."""
    return (
        Finding.objects.filter(first_seen_at__lte=at)
        .filter(Q(resolved_at__isnull=True) | Q(resolved_at__gt=at))
        .annotate(severity_order=_severity_order())
        .order_by("severity_order", "-last_seen_at", "code")
    )


def finding_list_filtered(
    *, status: str = "active", severity: str = "", code: str = "", site: str = "", element: str = ""
) -> QuerySet[Finding]:
    """The findings page: ``status`` active (open + acknowledged), one status, or all; filters by
    severity, code, a site (a path end or the subject's site) and an equipment name."""
    qs = Finding.objects.select_related("acknowledged_by").annotate(severity_order=_severity_order())
    if status == "active":
        qs = qs.filter(status__in=ACTIVE_STATUSES)
    elif status and status != "all":
        qs = qs.filter(status=status)
    if severity:
        qs = qs.filter(severity=severity)
    if code:
        qs = qs.filter(code=code)
    if site:
        qs = qs.filter(Q(subject__src=site) | Q(subject__dst=site) | Q(subject__site=site))
    if element:
        qs = qs.filter(Q(subject__equipment=element) | Q(subject__trunk=element))
    return qs.order_by("severity_order", "-last_seen_at", "code")


def finding_get(pk: int) -> Finding | None:
    return (
        Finding.objects.select_related("acknowledged_by")
        .prefetch_related("events__user")
        .filter(pk=pk)
        .first()
    )



def path_findings_by_direction(findings: Iterable[Finding]) -> dict[tuple[str, str], list[Finding]]:
    out: dict[tuple[str, str], list[Finding]] = defaultdict(list)
    for finding in findings:
        subject = finding.subject or {}
        if "src" in subject and "dst" in subject:
            out[(subject["src"], subject["dst"])].append(finding)
    return out



def findings_for_paths(
    paths: Sequence[Path], *, pairs: Sequence[tuple[str, str]], start: datetime, end: datetime
) -> list[Finding]:
    """Findings overlapping [start, end) about these directions or an element they cross: a box (finding about
    the box itself), a port on the path, or a trunk on it. A finding about another port of a box the path
    crosses belongs to that port's paths, not to these."""
    inputs = path_membership_inputs()
    hops = {path.pk: path_membership_hops(path) for path in paths}
    equipment = {hop.equipment for h in hops.values() for hop in h}
    ports = set()
    for eq_name, iface_name in Interface.objects.filter(equipment__name__in=equipment).values_list(
        "equipment__name", "name"
    ):
        element = Element(eq_name, iface_name)
        if any(inputs.on_path(element, h) for h in hops.values()):
            ports.add((eq_name, iface_name))
    trunk_names = {b.name for h in hops.values() for b in inputs.bundles_on(h)}
    return findings_for_elements(start=start, end=end, paths=pairs, boxes=equipment, ports=ports, trunks=trunk_names)



def findings_for_elements(
    *, start: datetime, end: datetime, paths: Iterable[tuple[str, str]] = (), equipment: Iterable[str] = (),
    trunks: Iterable[str] = (), interface: tuple[str, str] | None = None, boxes: Iterable[str] = (),
    ports: Iterable[tuple[str, str]] = (),
) -> list[Finding]:
    """Findings whose window overlaps [start, end) about the given path directions or elements.

    ``equipment``: about the box or any of its ports; ``boxes``: about the box itself only; ``ports``:
    about those (equipment, interface) ports."""
    condition = Q()
    for src, dst in paths:
        condition |= Q(subject__src=src, subject__dst=dst)
    for name in set(equipment):
        condition |= Q(subject__equipment=name)
    for name in set(boxes):
        condition |= Q(subject__equipment=name, subject__interface__isnull=True)
    for eq_name, iface_name in set(ports):
        condition |= Q(subject__equipment=eq_name, subject__interface=iface_name)
    for name in set(trunks):
        condition |= Q(subject__trunk=name)
    if interface:
        condition = Q(subject__equipment=interface[0], subject__interface=interface[1]) | Q(
            subject__equipment=interface[0], subject__interface__isnull=True
        ) | condition
    if not condition:
        return []
    return list(
        Finding.objects.filter(condition).filter(start__lt=end, end__gte=start)
        .annotate(severity_order=_severity_order()).order_by("start", "severity_order")
    )

