"""What a carrier's share link shows: the incident's evidence read once, scoped to that carrier.

The reads are the incident page's (``wanmon.alerts.page``: the members, their suspects with the evidence their
findings store, the span shown) and the topology's (``topology_index_build``: every path's hops and who operates each
box); to them come the counters of the ports on the incident's paths, the paths' latest traceroutes and the carrier's
circuits. :mod:`wanmon.sharing.verdict` judges each domain and says what may be named.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q

from wanmon.alerts.constants import HOST_CAUSES, ROOT_CAUSE_CODES, SYMPTOM_CODES
from wanmon.alerts.emails import figures_text
from wanmon.alerts.models import Incident
from wanmon.alerts.page import MemberRow, SuspectRow, incident_view, member_rows, members_ordered, suspect_rows
from wanmon.alerts.selectors import TopologyIndex, incident_get, topology_index_build
from wanmon.core.times import format_since_utc, format_utc
from wanmon.core.units import bps_from_mbps
from wanmon.diagnosis import codes, text
from wanmon.diagnosis.choices import ACTIVE_STATUSES
from wanmon.diagnosis.models import Finding
from wanmon.inventory.labels import label_split
from wanmon.inventory.models import Circuit, Interface, Site, Trunk
from wanmon.inventory.selectors import link_far_end_map, path_list_through_element, path_list_through_trunk
from wanmon.measurements.models import Traceroute
from wanmon.measurements.selectors import QueryError, measurement_query
from wanmon.sharing.verdict import (
    OTHER_SEGMENT,
    Domain,
    DomainFacts,
    Owners,
    Scope,
    domain_route,
    domain_verdicts,
    scope_build,
)

__all__ = ["CircuitRow", "PathRow", "ShareReport", "TimelineEvent", "incident_carriers", "share_report"]

Port = tuple[str, str]
#: The counters read for each port of the incident's paths: (metric, what a reader calls it).
COUNTERS = (("in_errors_per_s", "errors in"), ("in_discards_per_s", "discards in"), ("out_discards_per_s",
                                                                                       "discards out"))
#: Path findings about the end hosts rather than the boxes between them.
HOST_PATH_CODES = frozenset({codes.WINDOW_LIMITED, *HOST_CAUSES.values()}) - SYMPTOM_CODES


@dataclass(frozen=True)
class TimelineEvent:
    time: datetime
    when: str
    text: str


@dataclass(frozen=True)
class CircuitRow:
    """One of the carrier's circuits on the incident's paths, by the id the carrier knows it by."""

    cid: str
    capacity: str
    ends: tuple[str, ...]
    status: str


@dataclass(frozen=True)
class PathRow:
    """A path direction of the incident: the domains it crosses with their verdicts, its links with the counters at
    both ends, its latest traceroute and the path figures of its findings."""

    label: str
    route: tuple[tuple[str, str], ...]  # (domain name, verdict)
    links: tuple[str, ...]
    traceroute: str
    figures: tuple[str, ...]


@dataclass(frozen=True)
class ShareReport:
    incident: Incident
    carrier: str
    title: str
    status: str
    onset_text: str
    onset: datetime | None
    verdict: str  # one line: who the evidence points at
    domains: list[Domain]
    paths: list[PathRow]
    timeline: list[TimelineEvent]
    circuits: list[CircuitRow]
    now: datetime
    start: datetime
    end: datetime


# --- who may be given a link --------------------------------------------------------------------------------------


def _trunk_boxes(names: Iterable[str]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for trunk, box in Trunk.members.through.objects.filter(trunk__name__in=list(names)).values_list(
            "trunk__name", "interface__equipment__name"):
        out.setdefault(trunk, set()).add(box)
    return out


def incident_carriers(incident: Incident, *, topology: TopologyIndex | None = None, now: datetime) -> set[str]:
    """The carriers operating the incident's root element (a box, a port's box or a trunk's members) or a box on
    its paths: the only ones a share link may be made for."""
    at = incident.resolved_at or now
    topology = topology or topology_index_build(at=at)
    elements = [e for e in incident.elements or () if e]
    boxes = {label_split(e.removeprefix("trunk:"))[0] for e in elements}
    for members in _trunk_boxes(e.removeprefix("trunk:") for e in elements).values():
        boxes |= members
    return topology.carriers_of(paths=incident.paths or (), elements=boxes)


# --- the report ---------------------------------------------------------------------------------------------------


def _path_labels(paths: Iterable) -> set[str]:
    return {f"{p.src.code}->{p.dst.code}" for p in paths}


def _suspect_paths(rows: Sequence[MemberRow], *, owners: Owners, trunks: Mapping[str, set[str]], carrier: str,
                   at: datetime) -> set[str]:
    """The paths crossing the incident's suspects that are not another carrier's (the paths their evidence names
    healthy or degraded)."""
    out: set[str] = set()
    for row in rows:
        subject = row.finding.subject or {}
        kind, code = _owner_of_subject(subject, owners, trunks)
        if row.finding.code not in ROOT_CAUSE_CODES or kind == "unknown" or (kind == "carrier" and code != carrier):
            continue
        if subject.get("trunk"):
            out |= _path_labels(path_list_through_trunk(trunk=subject["trunk"], at=at))
        elif subject.get("equipment"):
            out |= _path_labels(path_list_through_element(equipment=subject["equipment"],
                                                          interface=subject.get("interface") or None,
                                                          arriving=bool(subject.get("interface")), at=at)
                                .select_related("src", "dst"))
    return out


def _owner_of_subject(subject: Mapping, owners: Owners, trunks: Mapping[str, set[str]]) -> tuple[str, str]:
    if subject.get("equipment"):
        return owners.domain_of(subject["equipment"])
    if subject.get("trunk"):
        boxes = sorted(trunks.get(subject["trunk"], ()))
        return owners.domain_of(boxes[0]) if boxes else ("unknown", "")
    if subject.get("site"):
        return "site", subject["site"]
    return "unknown", ""


def _suspect_lines(suspect: SuspectRow) -> list[str]:
    head = f"{suspect.label} ({suspect.finding.code}, suspect #{suspect.position})"
    lines = [f"{head}: {e}" for e in suspect.evidence] or [f"{head}: {suspect.finding.summary}"]
    lines += [f"{head}, speaks against it: {e}" for e in suspect.against]
    lines += [f"{head}, {t.where}: {t.finding.code} {t.label}: {t.finding.summary}" for t in suspect.tied]
    return lines


def _host_findings(rows: Sequence[MemberRow]) -> dict[str, list[str]]:
    """Site code -> the host findings among the members (a host's TCP tuning, a window-limited path's ends)."""
    out: dict[str, list[str]] = {}
    for row in rows:
        subject = row.finding.subject or {}
        line = f"{row.finding.code} {row.label}: {row.finding.summary}"
        if row.finding.code in HOST_CAUSES and subject.get("site"):
            out.setdefault(subject["site"], []).append(line)
        elif row.finding.code in HOST_PATH_CODES and subject.get("src"):
            for site in (subject["src"], subject["dst"]):
                out.setdefault(site, []).append(line)
    return out


def _degraded_paths(incident: Incident) -> set[str]:
    """Path directions with an active finding (any code), and the incident's own: the others count as healthy."""
    rows = Finding.objects.filter(status__in=ACTIVE_STATUSES, subject__has_key="src").values_list("subject", flat=True)
    return set(incident.paths or ()) | {f"{s['src']}->{s['dst']}" for s in rows if s.get("dst")}


def _counters(boxes: Iterable[str], *, start: datetime, end: datetime) -> dict[Port, dict[str, float]]:
    """Port -> the peak of each counter rate in COUNTERS over [start, end), for the ports of ``boxes``."""
    out: dict[Port, dict[str, float]] = {}
    span_s = max(int((end - start).total_seconds()), 60)
    bucket_s = -(-span_s // 60) * 60
    for box in sorted(set(boxes)):
        for metric, _ in COUNTERS:
            try:
                result = measurement_query(metric=metric, start=start, end=end, bucket_s=bucket_s, aggregate="max",
                                           group_by="interface", equipment=box)
            except QueryError:
                continue
            for series in result.series:
                key = series["key"]
                values = [v for _, v in series["points"] if v is not None]
                if values:
                    out.setdefault((key["equipment"], key["interface"]), {})[metric] = max(values)
    return out


def _counter_text(port: Port, counters: Mapping[Port, Mapping[str, float]]) -> str:
    read = counters.get(port)
    label = f"{port[0]}:{port[1]}"
    if not read:
        return f"{label}: no counters read"
    busy = [f"{what} peak {read[m]:.3g}/s" for m, what in COUNTERS if read.get(m)]
    return f"{label}: " + ("; ".join(busy) if busy else "no errors or discards counted")


def _traceroute_text(path: str, sites: Mapping[str, int], *, start: datetime, end: datetime, now: datetime) -> str:
    src, dst = path.split("->", 1)
    if src not in sites or dst not in sites:
        return "no traceroute"
    trace = (Traceroute.objects.filter(src_id=sites[src], dst_id=sites[dst], time__gte=start, time__lt=end)
             .order_by("-time").first())
    if trace is None:
        return "no traceroute during the incident"
    hops = list(trace.hops or ())
    answered = sum(1 for h in hops if h)
    pmtu = f", path MTU {trace.pmtu_bytes} bytes" if trace.pmtu_bytes else ""
    return (f"traceroute at {format_utc(trace.time, now)}: {len(hops)} hops, {answered} answered{pmtu} (hop "
            "addresses are not shown: they may belong to another carrier's segment)")


def _link_lines(hops: Sequence[str], far: Mapping[Port, Port], counters, scope: Scope, cids: Mapping[Port, str]
                ) -> list[str]:
    """Each link the path leaves a box by: both ends with their counters and the carrier's circuit id. An end in
    another carrier's segment is named as such, without its name or counters; a link with both ends there is one
    line "another carrier's segment"."""
    lines: list[str] = []
    for hop in hops:
        box, port = label_split(hop)
        if not port:
            continue
        near = (box, port)
        other = far.get(near)
        ends = [near, other] if other else [near]
        shown = [end for end in ends if scope.shown(end[0])]
        if not shown:
            if not lines or lines[-1] != OTHER_SEGMENT:
                lines.append(OTHER_SEGMENT)
            continue
        texts = [_counter_text(end, counters) if end in shown else OTHER_SEGMENT for end in ends]
        if other is None:
            texts.append("far end not known to the inventory")
        circuit = cids.get(near) or (cids.get(other) if other else None)
        lines.append((f"circuit {circuit}: " if circuit else "") + " | ".join(texts))
    return lines


def _ports(paths: Iterable[str], topology: TopologyIndex, far: Mapping[Port, Port]) -> set[Port]:
    ports: set[Port] = set()
    for path in paths:
        for hop in topology.path_hops.get(path, ()):
            box, port = label_split(hop)
            if port:
                ports.add((box, port))
                if (box, port) in far:
                    ports.add(far[(box, port)])
    return ports


def _circuits(carrier: str, ports: set[Port], scope: Scope) -> tuple[list[CircuitRow], dict[Port, str]]:
    """The carrier's circuits ending on one of ``ports``, and port -> circuit id."""
    ids = {(e, n): pk for pk, e, n in Interface.objects.filter(equipment__name__in={p[0] for p in ports})
           .values_list("pk", "equipment__name", "name") if (e, n) in ports}
    rows, by_port = [], {}
    circuits = (Circuit.objects.filter(carrier__code=carrier)
                .filter(Q(a_interface_id__in=ids.values()) | Q(z_interface_id__in=ids.values()))
                .select_related("a_interface__equipment", "z_interface__equipment").order_by("cid"))
    for c in circuits:
        ends = []
        for iface in (c.a_interface, c.z_interface):
            if iface is None:
                continue
            port = (iface.equipment.name, iface.name)
            by_port[port] = c.cid
            ends.append(f"{port[0]}:{port[1]}" if scope.shown(port[0]) else OTHER_SEGMENT)
        capacity = bps_from_mbps(c.capacity_mbps)
        rows.append(CircuitRow(cid=c.cid, capacity=text.rate(capacity) if capacity else "", ends=tuple(ends),
                               status=c.status))
    return rows, by_port


def _timeline(incident: Incident, rows: Sequence[MemberRow], scope: Scope, onset, now) -> list[TimelineEvent]:
    events: list[tuple[datetime, str]] = []
    if onset:
        events.append((onset, "onset: the network changed (the earliest onset of the incident's findings)"))
    for row in rows:
        began = row.finding.onset or row.finding.start
        if scope.shown(row.label):
            events.append((began, f"{row.finding.code} {row.label} began"))
            if row.finding.resolved_at:
                events.append((row.finding.resolved_at, f"{row.finding.code} {row.label} cleared"))
        else:
            events.append((began, f"{row.finding.code} on a part not shared here began"))
    events.append((incident.opened_at, "wanmon opened the incident"))
    for when, what in ((incident.acknowledged_at, "acknowledged by the operators"),
                       (incident.cleared_at, "every finding cleared"), (incident.resolved_at, "resolved")):
        if when:
            events.append((when, what))
    events.sort(key=lambda e: e[0])
    return [TimelineEvent(time=t, when=format_utc(t, now), text=what) for t, what in events]


def share_report(*, incident_id: int, carrier: str, now: datetime) -> ShareReport | None:
    """The evidence of incident ``incident_id`` scoped to ``carrier`` (None for an unknown incident)."""
    incident = incident_get(incident_id=incident_id)
    if incident is None:
        return None
    at = incident.resolved_at or now
    view = incident_view(incident, now=now)
    topology = topology_index_build(at=at)
    owners = Owners(carrier_of=topology.carrier_of, site_of=topology.site_of)
    rows = member_rows(members_ordered(incident))
    paths = list(incident.paths or ()) or [f"{a}->{b}" for a, b in view.pairs]
    paths = [p for p in paths if p in topology.path_hops]
    trunks = _trunk_boxes({(r.finding.subject or {}).get("trunk") for r in rows} - {None})
    other_trunks = {t for t, boxes in _trunk_boxes(Trunk.objects.values_list("name", flat=True)).items()
                    if any(topology.carrier_of.get(b, carrier) != carrier for b in boxes)}
    other_cids = set(Circuit.objects.exclude(carrier__code=carrier).values_list("cid", flat=True))
    suspect_paths = _suspect_paths(rows, owners=owners, trunks=trunks, carrier=carrier, at=at)
    scope = scope_build(carrier=carrier, incident_paths=paths, suspect_paths=suspect_paths,
                        all_paths=topology.path_hops, owners=owners, other_names=other_trunks | other_cids)
    far = link_far_end_map(at=at)
    suspects = suspect_rows(rows, far=far, shown=scope.shown)
    ports = _ports(paths, topology, far)
    counters = _counters((b for b, _ in ports if scope.shown(b)), start=view.start, end=view.end)
    circuits, cids = _circuits(carrier, ports, scope)
    degraded = _degraded_paths(incident)
    hosts = _host_findings(rows)

    facts: dict[tuple[str, str], dict] = {}
    for path in paths:
        src, dst = path.split("->", 1)
        for kind, code, boxes in domain_route(topology.path_hops[path], src=src, dst=dst, owners=owners):
            entry = facts.setdefault((kind, code), {"boxes": [], "end": False})
            entry["boxes"] += [b for b in boxes if b not in entry["boxes"]]
            entry["end"] |= kind == "site" and code in (src, dst)
    implicating: dict[tuple[str, str], list[str]] = {}
    suspected: dict[tuple[str, str], list[str]] = {}
    for suspect in suspects:
        owner = _owner_of_subject(suspect.finding.subject or {}, owners, trunks)
        facts.setdefault(owner, {"boxes": [], "end": False})
        suspected.setdefault(owner, []).append(suspect.label)
        implicating.setdefault(owner, []).extend(_suspect_lines(suspect))
    domain_facts = []
    for (kind, code), entry in facts.items():
        boxes = tuple(entry["boxes"])
        healthy = {b: sorted(p for p, hops in topology.path_hops.items() if p not in degraded and
                             any(label_split(h)[0] == b for h in hops)) for b in boxes}
        box_ports = sorted(p for p in ports if p[0] in boxes)
        domain_facts.append(DomainFacts(
            kind=kind, code=code, boxes=boxes, implicating=tuple(implicating.get((kind, code), ())),
            suspects=tuple(suspected.get((kind, code), ())), healthy=healthy,
            host_findings=tuple(hosts.get(code, ())) if kind == "site" else (), is_end=entry["end"],
            counters=tuple(_counter_text(p, counters) for p in box_ports)))
    domains = domain_verdicts(domain_facts, scope)
    by_key = {(f.kind, f.code): d for f, d in zip(domain_facts, domains, strict=True)}
    site_ids = dict(Site.objects.values_list("code", "id"))
    path_rows = []
    for path in paths:
        src, dst = path.split("->", 1)
        route: list[tuple[str, str]] = []
        for kind, code, _ in domain_route(topology.path_hops[path], src=src, dst=dst, owners=owners):
            domain = by_key[(kind, code)]
            if not route or route[-1][0] != domain.name:
                route.append((domain.name, domain.verdict))
        figures = [item for r in rows if r.label == path for item in figures_text((r.finding.evidence or {})
                                                                                   .get("derived"))]
        path_rows.append(PathRow(
            label=path, route=tuple(route),
            links=tuple(_link_lines(topology.path_hops[path], far, counters, scope, cids)),
            traceroute=_traceroute_text(path, site_ids, start=view.start, end=view.end, now=now),
            figures=tuple(dict.fromkeys(figures))))
    suspect_names = [d.name for d in domains if d.verdict == "suspect"]
    verdict = (f"The evidence points at {', '.join(dict.fromkeys(suspect_names))}." if suspect_names else
               "The evidence points at no domain on these paths.")
    title = incident.title if scope.shown(incident.title) else f"{', '.join(paths) or 'no path'} degraded"
    return ShareReport(
        incident=incident, carrier=carrier, title=title, status=incident.status,
        onset_text=format_since_utc(view.onset, now, end=None if incident.is_active else incident.resolved_at),
        onset=view.onset, verdict=verdict, domains=domains, paths=path_rows,
        timeline=_timeline(incident, rows, scope, view.onset, now), circuits=circuits, now=now,
        start=view.start, end=view.end)
