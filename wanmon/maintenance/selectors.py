"""Maintenance reads (HackSoft-style selectors): the calendar, its occurrences, and what each window touches.

Matching goes through the path footprint (``footprint.py``): a window names elements (equipment, ports,
circuits, trunks, sites, path directions); the paths crossing them, with the impact on each, say
which paths a window touches and which sites hear about it. Whether maintenance is in force (at a time,
over a period) is :func:`maintenance_in_force`, and nowhere else: the diagnosis turns its occurrences into
evidence (``wanmon/diagnosis/maintenance_windows.py``), the alerting mutes through
:func:`maintenance_matches_for_element` and lists them in its e-mails, the dashboard shows them and places
them on paths.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path as FilePath

from django.db.models import Prefetch, Q, QuerySet

from wanmon.inventory.labels import label_split
from wanmon.inventory.models import Carrier, Circuit, Equipment, Interface, Path, PathHop, Site, SiteContact, Trunk
from wanmon.inventory.selectors import path_in_force_during_q, site_get
from wanmon.maintenance import footprint as topo
from wanmon.maintenance.choices import Behaviour, Review, Status
from wanmon.maintenance.models import MaintenanceAffect, MaintenanceSource, MaintenanceWindow
from wanmon.maintenance.parsed import impact_worst
from wanmon.maintenance.recurrence import rrule_moments

__all__ = [
    "ElementMatch",
    "Occurrence",
    "PathMatch",
    "WindowFootprint",
    "WindowInForce",
    "maintenance_in_force",
    "maintenance_matches_for_element",
    "maintenance_occurrence_list",
    "maintenance_paths_skipped",
    "maintenance_source_for_mailbox",
    "maintenance_source_for_sender",
    "maintenance_window_footprint",
    "maintenance_window_get",
    "maintenance_window_held_count",
    "maintenance_window_review_queue",
    "maintenance_window_reviewed_recently",
    "maintenance_window_list",
    "maintenance_window_queryset",
    "maintenance_windows_affecting_path",
    "site_recipients",
    "topology_load",
    "window_occurrences",
]

# --------------------------------------------------------------------------- windows and occurrences


def maintenance_window_queryset() -> QuerySet[MaintenanceWindow]:
    """Windows with everything their labels and matching need, in one round of queries."""
    return MaintenanceWindow.objects.select_related("carrier", "author", "carrier_notice").prefetch_related(
        Prefetch(
            "affects",
            queryset=MaintenanceAffect.objects.select_related(
                "equipment",
                "interface__equipment",
                "trunk",
                "circuit__a_interface__equipment",
                "circuit__z_interface__equipment",
                "site",
                "path__src",
                "path__dst",
            ).order_by("id"),
        )
    )


def maintenance_window_get(pk: int) -> MaintenanceWindow | None:
    return maintenance_window_queryset().filter(pk=pk).first()


def maintenance_window_held_count() -> int:
    """How many windows wait for an operator's review."""
    return MaintenanceWindow.objects.filter(review=Review.HELD).count()


def maintenance_window_review_queue() -> QuerySet[MaintenanceWindow]:
    """Windows held for review, soonest first."""
    return maintenance_window_queryset().filter(review=Review.HELD).order_by("start", "reference")


def maintenance_window_reviewed_recently(limit: int = 20) -> QuerySet[MaintenanceWindow]:
    """The latest operator decisions (accepted or rejected after a hold), newest first."""
    return (
        maintenance_window_queryset()
        .filter(reviewed_at__isnull=False)
        .select_related("reviewed_by")
        .order_by("-reviewed_at", "-id")[:limit]
    )


def maintenance_window_list(
    *,
    start: datetime | None = None,
    end: datetime | None = None,
    carrier: Carrier | str | None = None,
    status: Iterable[str] | None = None,
    include_cancelled: bool = True,
) -> QuerySet[MaintenanceWindow]:
    """Windows with an occurrence that may overlap [start, end) (recurring ones are kept until expanded)."""
    qs = maintenance_window_queryset()
    if end is not None:
        qs = qs.filter(start__lt=end)
    if start is not None:
        qs = qs.filter(
            Q(end__gt=start)
            | (~Q(rrule="") & (Q(recurrence_end__isnull=True) | Q(recurrence_end__gt=start)))
        )
    if carrier is not None:
        qs = qs.filter(carrier=carrier) if isinstance(carrier, Carrier) else qs.filter(carrier__code=carrier)
    if status is not None:
        qs = qs.filter(status__in=list(status))
    if not include_cancelled:
        qs = qs.exclude(status=Status.CANCELLED)
    return qs.order_by("start", "reference")


@dataclass(frozen=True)
class Occurrence:
    """One occurrence of a window (the window itself unless it recurs)."""

    window: MaintenanceWindow
    start: datetime
    end: datetime

    @property
    def key(self) -> tuple[int, datetime]:
        return (self.window.pk, self.start)


def window_occurrences(
    window: MaintenanceWindow, start: datetime | None = None, end: datetime | None = None
) -> list[Occurrence]:
    """Occurrences of ``window`` overlapping [start, end) (at most ``recurrence.MAX_OCCURRENCES``).

    A rule that is unreadable or repeats more often than daily (stored before such rules were refused)
    gives its first occurrence only.
    """
    duration = window.end - window.start
    if not window.rrule:
        if (start is None or window.end > start) and (end is None or window.start < end):
            return [Occurrence(window, window.start, window.end)]
        return []
    lo = (start - duration) if start is not None else window.start
    hi = end if end is not None else lo + timedelta(days=3660)
    moments = rrule_moments(window.rrule, dtstart=window.start, lo=lo, hi=hi)
    if moments is None:
        first = Occurrence(window, window.start, window.end)
        return [first] if (start is None or first.end > start) and (end is None or first.start < end) else []
    return [
        Occurrence(window, moment, moment + duration)
        for moment in moments
        if start is None or moment + duration > start
    ]


def maintenance_occurrence_list(
    *,
    start: datetime,
    end: datetime,
    carrier: Carrier | str | None = None,
    site: Site | str | None = None,
    include_cancelled: bool = True,
    topology: topo.Topology | None = None,
) -> list[Occurrence]:
    """Occurrences overlapping [start, end), optionally only a carrier's or those touching a site, by start."""
    windows = list(maintenance_window_list(start=start, end=end, carrier=carrier, include_cancelled=include_cancelled))
    occurrences = [o for w in windows for o in window_occurrences(w, start, end)]
    if site is not None:
        site_obj = site_get(site)
        if site_obj is None:
            return []
        tp = topology or topology_load()
        occurrences = [
            o for o in occurrences if site_obj.pk in tp.window_sites(window_targets(o.window), o.start, o.end)
        ]
    return sorted(occurrences, key=lambda o: (o.start, o.window.reference))


@dataclass(frozen=True)
class WindowInForce:
    """An occurrence of a window in force (accepted, or held when asked for; not cancelled) and what it names.

    ``targets``: its affects with each one's impact (its own, else the window's). ``informational``: behaviour
    'run', shown (pages, e-mails, notices) but never explaining or muting anything; ``acts``: accepted and not
    informational, the windows that explain degradations, mute alerts and turn paths blue.
    """

    window: MaintenanceWindow
    start: datetime
    end: datetime
    targets: tuple[topo.Target, ...]

    @property
    def informational(self) -> bool:
        return self.window.behaviour == Behaviour.RUN

    @property
    def acts(self) -> bool:
        return self.window.review == Review.ACCEPTED and not self.informational

    @property
    def skip_tests(self) -> bool:
        return self.acts and self.window.behaviour == Behaviour.SKIP

    def running_at(self, at: datetime) -> bool:
        return self.start <= at < self.end


def maintenance_in_force(*, start: datetime, end: datetime, include_held: bool = False) -> list[WindowInForce]:
    """Window occurrences in force over [start, end), by start: the one answer to "is maintenance in force here
    (at a time, over a period)?" for the diagnosis, the alerting, the dashboard and this app's matching.

    Recurring windows give one entry per occurrence. Cancelled and rejected windows are never in force; held ones
    (waiting for an operator's review) only with ``include_held``, and they act on nothing. A completed window
    stays in force for its announced span: the carrier's "completed" says the work is over, not when it ended.
    Informational windows (behaviour 'run') are included: each consumer decides what to show of them
    (see wanmon/maintenance/README.md).
    """
    reviews = [Review.ACCEPTED, Review.HELD] if include_held else [Review.ACCEPTED]
    windows = maintenance_window_list(start=start, end=end, include_cancelled=False).filter(review__in=reviews)
    out = []
    for w in windows:
        targets = tuple(window_targets(w))
        out.extend(WindowInForce(window=w, start=o.start, end=o.end, targets=targets)
                   for o in window_occurrences(w, start, end))
    return sorted(out, key=lambda o: (o.start, o.window.reference))


# --------------------------------------------------------------------------- topology


def topology_load(*, start: datetime | None = None, end: datetime | None = None) -> topo.Topology:
    """The inventory as a :class:`footprint.Topology`: path versions in force during [start, end) (all by default)."""
    paths = (
        Path.objects.filter(path_in_force_during_q(start, end))
        .select_related("src", "dst")
        .prefetch_related(
            Prefetch(
                "hops", queryset=PathHop.objects.order_by("position").only("path_id", "equipment_id", "interface_id")
            )
        )
    )
    views = [
        topo.PathView(
            id=p.pk,
            src=p.src.code,
            dst=p.dst.code,
            src_site_id=p.src_id,
            dst_site_id=p.dst_id,
            valid_from=p.valid_from,
            valid_to=p.valid_to,
            hops=tuple((h.equipment_id, h.interface_id) for h in p.hops.all()),
        )
        for p in paths.order_by("src__code", "dst__code", "valid_from")
    ]
    members: dict[int, set[int]] = {}
    for trunk_id, interface_id in Trunk.members.through.objects.values_list("trunk_id", "interface_id"):
        members.setdefault(trunk_id, set()).add(interface_id)
    return topo.Topology(
        paths=views,
        interface_equipment=dict(Interface.objects.values_list("id", "equipment_id")),
        equipment_site=dict(Equipment.objects.values_list("id", "site_id")),
        trunk_members={t: frozenset(m) for t, m in members.items()},
        circuit_ends={c: (a, z) for c, a, z in Circuit.objects.values_list("id", "a_interface_id", "z_interface_id")},
        path_pairs={p: (s, d) for p, s, d in Path.objects.values_list("id", "src_id", "dst_id")},
        site_codes=dict(Site.objects.values_list("id", "code")),
    )


def _affect_target(affect: MaintenanceAffect) -> topo.Target:
    impact = affect.effective_impact
    label = affect.label
    for kind in (topo.INTERFACE, topo.EQUIPMENT, topo.TRUNK, topo.CIRCUIT, topo.PATH, topo.SITE):
        pk = getattr(affect, f"{kind}_id")
        if pk:
            return topo.Target(kind=kind, id=pk, impact=impact, label=label)
    raise ValueError(f"affect {affect.pk} names nothing")


def window_targets(window: MaintenanceWindow) -> list[topo.Target]:
    """The window's affects as topology targets (uses the prefetch of :func:`maintenance_window_queryset`)."""
    return [_affect_target(a) for a in window.affects.all()]


@dataclass(frozen=True)
class WindowFootprint:
    """What one occurrence of a window touches: path directions (with impact) and sites."""

    touches: tuple[topo.PathTouch, ...]
    site_codes: tuple[str, ...]

    def explaining_paths(self) -> list[str]:
        return [t.path.key for t in self.touches if t.explains]


def maintenance_window_footprint(
    window: MaintenanceWindow,
    *,
    start: datetime | None = None,
    end: datetime | None = None,
    topology: topo.Topology | None = None,
) -> WindowFootprint:
    """Paths and sites an occurrence of ``window`` ([start, end), default the window's own) touches."""
    start = start or window.start
    end = end or window.end
    tp = topology or topology_load(start=start, end=end)
    targets = window_targets(window)
    touches = tp.window_touches(targets, start, end)
    sites = sorted(tp.site_codes[s] for s in tp.window_sites(targets, start, end) if s in tp.site_codes)
    return WindowFootprint(touches=tuple(touches), site_codes=tuple(sites))


# --------------------------------------------------------------------------- matching


@dataclass(frozen=True)
class PathMatch:
    """A window occurrence touching a path: the elements on it, the impact on the path, and what follows.

    ``explains``: the impact is one under which a degradation of the path is expected; ``mutes``: it
    explains and the window is live, accepted and not informational (behaviour 'run'); ``skip_tests``: the window
    asks to pause scheduled tests on the path (behaviour 'skip').
    """

    window: MaintenanceWindow
    start: datetime
    end: datetime
    path: str
    elements: tuple[str, ...]
    impact: str
    explains: bool
    mutes: bool
    skip_tests: bool


def _path_view(path: Path | tuple[str, str] | str, at: datetime, tp: topo.Topology) -> topo.PathView | None:
    if isinstance(path, Path):
        return next((p for p in tp.paths if p.id == path.pk), None)
    if isinstance(path, str):
        src, _, dst = path.removeprefix("path:").partition("->")
    else:
        src, dst = path
    candidates = [p for p in tp.paths if p.src == src and p.dst == dst]
    in_force = [p for p in candidates if p.valid_during(at, at + timedelta(microseconds=1))]
    return (in_force or candidates[-1:] or [None])[0]


def maintenance_windows_affecting_path(
    path: Path | tuple[str, str] | str, start: datetime, end: datetime
) -> list[PathMatch]:
    """Window occurrences in force over [start, end) (held ones included) that touch ``path`` (a version,
    (src, dst) or 'SRC->DST').

    Impact-aware: ``impact`` is the worst impact of the window's elements on this path; work on one
    member of a redundant trunk the path uses degrades it rather than cutting it, and reduced-redundancy
    or no-impact work neither explains nor mutes anything.
    """
    occurrences = maintenance_in_force(start=start, end=end, include_held=True)
    if not occurrences:
        return []
    tp = topology_load(start=start, end=end)
    view = _path_view(path, start, tp)
    if view is None:
        return []
    out = []
    for occ in occurrences:
        touch = tp.path_touch(occ.targets, view)
        if touch is None:
            continue
        out.append(
            PathMatch(
                window=occ.window,
                start=occ.start,
                end=occ.end,
                path=view.key,
                elements=touch.labels,
                impact=touch.impact,
                explains=touch.explains,
                mutes=occ.acts and touch.explains,
                skip_tests=occ.skip_tests and touch.explains,
            )
        )
    return out


@dataclass(frozen=True)
class ElementMatch:
    """A window occurrence at ``at`` concerning an element, through which of its affects, with what impact."""

    window: MaintenanceWindow
    start: datetime
    end: datetime
    element: str
    via: tuple[str, ...]
    impact: str
    explains: bool
    mutes: bool


def _element_resolve(label: str) -> tuple[str, int] | None:
    """('equipment'|'interface'|'trunk'|'circuit'|'site', id) for a label as findings and windows write them."""
    label = label.strip()
    if label.startswith("site:"):
        site = Site.objects.filter(code=label[5:]).first()
        return (topo.SITE, site.pk) if site else None
    if label.startswith("circuit:"):
        circuit = Circuit.objects.filter(cid=label[8:]).first()
        return (topo.CIRCUIT, circuit.pk) if circuit else None
    equipment_name, interface_name = label_split(label)
    if interface_name is not None:
        iface = Interface.objects.filter(equipment__name=equipment_name, name=interface_name).first()
        return (topo.INTERFACE, iface.pk) if iface else None
    equipment = Equipment.objects.filter(name=label).first()
    if equipment:
        return (topo.EQUIPMENT, equipment.pk)
    trunk = Trunk.objects.filter(name=label).first()
    return (topo.TRUNK, trunk.pk) if trunk else None


def maintenance_matches_for_element(label: str, at: datetime) -> list[ElementMatch]:
    """Window occurrences running at ``at`` that concern the element ``label``.

    ``label``: ``equipment``, ``equipment:interface``, a trunk name, ``circuit:CID``, ``site:CODE`` (as
    findings and windows name elements). A window concerns an element through itself, the box or
    site it sits in, the circuits and trunks it belongs to; work on one port of a box or one member
    of a trunk degrades (not cuts) the box or the trunk.
    """
    occurrences = maintenance_in_force(start=at, end=at + timedelta(microseconds=1), include_held=True)
    element = _element_resolve(label) if occurrences else None
    if element is None:
        return []
    kind, element_id = element
    tp = topology_load(start=at, end=at + timedelta(seconds=1))
    out = []
    for occ in occurrences:
        matches = tp.element_matches(occ.targets, kind, element_id)
        if not matches:
            continue
        impact = impact_worst(i for _, i in matches)
        explains = topo.impact_explains(impact)
        out.append(
            ElementMatch(
                window=occ.window,
                start=occ.start,
                end=occ.end,
                element=label,
                via=tuple(dict.fromkeys(t.label for t, _ in matches)),
                impact=impact,
                explains=explains,
                mutes=occ.acts and explains,
            )
        )
    return out


def maintenance_paths_skipped(at: datetime) -> list[str]:
    """Path directions ('SRC->DST') whose scheduled tests pause at ``at`` (windows with behaviour 'skip')."""
    occurrences = [o for o in maintenance_in_force(start=at, end=at + timedelta(microseconds=1)) if o.skip_tests]
    if not occurrences:
        return []
    tp = topology_load(start=at, end=at + timedelta(seconds=1))
    skipped: set[str] = set()
    for occ in occurrences:
        for touch in tp.window_touches(occ.targets, occ.start, occ.end):
            if touch.explains:
                skipped.add(touch.path.key)
    return sorted(skipped)


# --------------------------------------------------------------------------- sources and recipients


def maintenance_source_for_mailbox(directory: str | FilePath) -> MaintenanceSource | None:
    """The enabled source whose own mailbox is ``directory`` (paths compared resolved)."""
    try:
        wanted = FilePath(directory).resolve()
    except OSError:
        return None
    for source in MaintenanceSource.objects.select_related("carrier").filter(enabled=True).exclude(mailbox=""):
        try:
            if FilePath(source.mailbox).resolve() == wanted:
                return source
        except OSError:
            continue
    return None


def maintenance_source_for_sender(sender: str) -> MaintenanceSource | None:
    """The enabled source whose senders list the address or its '@domain'."""
    address = sender.strip().lower()
    if not address:
        return None
    domain = "@" + address.rpartition("@")[2]
    for source in MaintenanceSource.objects.select_related("carrier").filter(enabled=True):
        senders = {s.strip().lower() for s in source.senders}
        if address in senders or domain in senders:
            return source
    return None


def site_recipients(site_ids: Iterable[int], roles: Iterable[str]) -> dict[str, list[str]]:
    """E-mail -> site codes, for the contacts of the given sites in the first of ``roles`` each site has."""
    roles = list(roles)
    by_site: dict[int, dict[str, list[str]]] = {}
    for contact in SiteContact.objects.select_related("site").filter(site_id__in=list(site_ids), role__in=roles):
        by_site.setdefault(contact.site_id, {}).setdefault(contact.role, []).append(contact)
    out: dict[str, list[str]] = {}
    for contacts_by_role in by_site.values():
        for role in roles:
            if role in contacts_by_role:
                for contact in contacts_by_role[role]:
                    out.setdefault(contact.email.lower(), []).append(contact.site.code)
                break
    return {email: sorted(set(codes)) for email, codes in sorted(out.items())}
