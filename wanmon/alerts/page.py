"""The incident page, where an on-call engineer works from: its reads and the rows it shows.

:func:`incident_view` says what the page and its charts share (the onset, the span shown, the site pairs);
:func:`incident_page` reads the rest: links to every finding, both directions of every path and every element,
the maintenance touching the incident, the ranked suspects with their evidence, and the first actions.

Links go to the dashboard's pages by URL name; the dashboard sits above the alerting and draws the charts itself
(its view ``dashboard-incident-charts`` builds them from :func:`incident_view`). Every time is UTC
(:mod:`wanmon.core.times`): the page is linked from e-mails and read in any zone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from urllib.parse import urlencode

from django.db.models import Q
from django.urls import reverse

from collectors.records.types import iso_z
from wanmon.alerts import constants as k
from wanmon.alerts.choices import MemberRole
from wanmon.alerts.evidence_text import shown_all, suspect_evidence
from wanmon.alerts.grouping import root_order
from wanmon.alerts.models import Incident, IncidentMember
from wanmon.alerts.selectors import (
    TopologyIndex,
    WindowInfo,
    finding_facts,
    incident_onset,
    maintenance_list_touching,
)
from wanmon.core.times import format_since_utc, format_utc
from wanmon.diagnosis import codes
from wanmon.diagnosis.choices import ACTIVE_STATUSES
from wanmon.diagnosis.models import Finding
from wanmon.inventory.labels import label_split
from wanmon.inventory.selectors import (
    link_far_end_map,
    path_hops_labels,
    path_list_valid_at,
    path_membership_inputs,
)

__all__ = ["Advice", "IncidentPage", "IncidentView", "advice_list", "incident_page", "incident_view"]

Port = tuple[str, str]
#: Where an action stood for the subject of its finding (a per-path variant of one advice has it in that place).
_SUBJECT = "\x00"


@dataclass(frozen=True)
class Link:
    text: str
    url: str


@dataclass(frozen=True)
class IncidentView:
    """What the page and its charts share: the onset, the span shown (from hours before the onset to the latest
    evidence), and one direction per site pair of its paths (one its findings are about), in the incident's order."""

    onset: datetime | None
    start: datetime
    end: datetime
    pairs: tuple[tuple[str, str], ...]

    @property
    def charted(self) -> tuple[tuple[str, str], ...]:
        return self.pairs[: k.INCIDENT_CHART_MAX_PAIRS]

    @property
    def query(self) -> str:
        """The query string of a dashboard page or the explorer over this span."""
        return urlencode({"start": iso_z(self.start, utc=True), "end": iso_z(self.end, utc=True)})


@dataclass(frozen=True)
class MemberRow:
    member: IncidentMember
    finding: Finding
    label: str  # the subject as people write it: FZK->CERN, geant-fra:xe-1/0/0, ral-lag, ASGC/asgc-dt01
    subject_url: str | None
    finding_url: str
    onset: datetime


@dataclass(frozen=True)
class Hop:
    equipment: Link
    interface: Link | None = None


@dataclass(frozen=True)
class DirectionRow:
    src: str
    dst: str
    url: str
    affected: bool  # a finding of the incident is about it (the other direction is there to compare with)
    hops: tuple[Hop, ...]
    explore: tuple[Link, ...]

    @property
    def label(self) -> str:
        return f"{self.src}->{self.dst}"


@dataclass(frozen=True)
class PairRow:
    directions: tuple[DirectionRow, DirectionRow]
    both_url: str
    charted: bool


@dataclass(frozen=True)
class ElementRow:
    links: tuple[Link, ...]  # its page, and the equipment's for a port
    explore: Link | None
    why: str


@dataclass(frozen=True)
class WindowRow:
    info: WindowInfo
    url: str
    state: str


@dataclass(frozen=True)
class Tied:
    """A finding about a suspect that is not a suspect of its own: on the element itself, or at the far end of
    its link (receive errors at the far end are the suspect's transmit side failing, or the fibre between)."""

    where: str
    finding: Finding
    label: str
    finding_url: str


@dataclass(frozen=True)
class SuspectRow:
    position: int
    finding: Finding
    label: str
    url: str | None
    finding_url: str
    evidence: tuple[str, ...]
    against: tuple[str, ...]
    tied: tuple[Tied, ...] = ()


@dataclass(frozen=True)
class Advice:
    """One action, given by one or more findings. ``subjects`` links the findings that give it for subjects its
    text does not name, ``subjects_lead`` says how (``for``, or ``also for`` when the text names the first one's);
    ``stale`` says why it is no longer current."""

    text: str
    subjects: tuple[Link, ...] = ()
    subjects_lead: str = ""
    stale: str = ""


@dataclass(frozen=True)
class IncidentPage:
    view: IncidentView
    onset_text: str
    members: list[MemberRow]
    pairs: list[PairRow]
    elements: list[ElementRow]
    windows: list[WindowRow]
    suspects: list[SuspectRow]
    actions: list[Advice]
    more_actions: list[Advice] = field(default_factory=list)
    stale_actions: list[Advice] = field(default_factory=list)


# --- links -----------------------------------------------------------------------------------------------------


def _url(url_name: str, query: str = "", /, **kwargs) -> str:
    url = reverse(url_name, kwargs=kwargs)
    return f"{url}?{query}" if query else url


def _explore(query: str, **params: str) -> str:
    return f"{reverse('dashboard-explore')}?{urlencode(params)}&{query}"


def _element_links(equipment: str, interface: str | None, query: str) -> tuple[Link, ...]:
    links = [Link(equipment, _url("dashboard-equipment", query, name=equipment))]
    if interface:
        links.append(Link(f"{equipment}:{interface}",
                          _url("dashboard-interface", query, name=equipment, interface=interface)))
    return tuple(links)


def subject_url(subject: Mapping, query: str = "") -> str | None:
    """The dashboard page of a finding's subject: its path direction, port, equipment, trunk or site."""
    if subject.get("src") and subject.get("dst"):
        return _url("dashboard-path", query, src=subject["src"], dst=subject["dst"])
    if subject.get("equipment") and subject.get("interface"):
        return _url("dashboard-interface", query, name=subject["equipment"], interface=subject["interface"])
    if subject.get("equipment"):
        return _url("dashboard-equipment", query, name=subject["equipment"])
    if subject.get("trunk"):
        return _url("dashboard-trunk", query, name=subject["trunk"])
    if subject.get("site"):
        return f"{reverse('home')}?{urlencode({'site': subject['site']})}"
    return None


def _finding_url(finding: Finding) -> str:
    return reverse("dashboard-finding", kwargs={"pk": finding.pk})


# --- the view the page and the charts share -----------------------------------------------------------------------


def members_ordered(incident: Incident) -> list[IncidentMember]:
    """The root first, then the members in the order they joined (the grouping's order of importance)."""
    return sorted(incident.members.all(), key=lambda m: (m.role != MemberRole.ROOT, m.id))


def _floor_minute(moment: datetime) -> datetime:
    return moment.replace(second=0, microsecond=0)


def incident_view(incident: Incident, *, now: datetime) -> IncidentView:
    """The onset (``incident_onset``), the span the page's charts and links show, and the site pairs of its paths:
    those of its path findings in member order, then the others it names (the suspects' degraded paths)."""
    members = members_ordered(incident)
    onset = incident_onset(incident)
    findings = [m.finding for m in members]
    latest = incident.resolved_at or max((f.end for f in findings), default=incident.changed_at)
    first = onset or incident.opened_at
    start = _floor_minute(first - timedelta(seconds=k.INCIDENT_VIEW_BEFORE_ONSET_S))
    end = _floor_minute(min(now, max(latest, first) + timedelta(seconds=k.INCIDENT_VIEW_AFTER_END_S)))
    directions = [finding_facts(f).path for f in findings] + list(incident.paths or ())
    pairs: dict[frozenset, tuple[str, str]] = {}
    for label in directions:
        if label and "->" in label:
            src, dst = label.split("->", 1)
            pairs.setdefault(frozenset((src, dst)), (src, dst))
    return IncidentView(onset=onset, start=start, end=max(end, start + timedelta(minutes=5)),
                        pairs=tuple(pairs.values()))


# --- the page ----------------------------------------------------------------------------------------------------


def incident_page(incident: Incident, *, now: datetime) -> IncidentPage:
    """Everything the incident page shows besides the incident's own fields and its charts (a fixed number of
    queries: the path versions of its pairs, the maintenance in force, and with suspects the links' ends)."""
    view = incident_view(incident, now=now)
    query = view.query
    at = incident.resolved_at or now  # the routes of the pairs: in force now, or when it was resolved
    rows = member_rows(members_ordered(incident), query)
    hops = _pair_hops(view.pairs, at=at)
    affected = set(incident.paths or ()) | {r.label for r in rows if "->" in r.label}
    pairs = [_pair_row(src, dst, view, hops=hops, affected=affected) for src, dst in view.pairs]
    topology = TopologyIndex(path_hops=hops)
    windows = maintenance_list_touching(
        equipment=topology.equipment_of(paths=incident.paths or (), elements=incident.elements or ()),
        sites=incident.sites or (),
        start=view.start,
        end=max(view.end, now + timedelta(seconds=k.INCIDENT_MAINTENANCE_AHEAD_S)) if incident.is_active
        else view.end,
    )
    suspects = suspect_rows(rows, far=_far_ends(rows, at=at))
    advice, stale = advice_list(rows, windows=windows, now=now)
    return IncidentPage(
        view=view,
        onset_text=format_since_utc(view.onset, now, end=None if incident.is_active else incident.resolved_at),
        members=rows,
        pairs=pairs,
        elements=_element_rows(rows, suspects, query),
        windows=[WindowRow(info=w, url=reverse("maintenance-window", kwargs={"pk": w.id}), state=w.state_at(now))
                 for w in windows],
        suspects=suspects,
        actions=advice[: k.INCIDENT_FIRST_ACTIONS],
        more_actions=advice[k.INCIDENT_FIRST_ACTIONS:],
        stale_actions=stale,
    )


def member_rows(members: Sequence[IncidentMember], query: str = "") -> list[MemberRow]:
    """The members as the page and the e-mails list them: subject label, links, onset."""
    return [
        MemberRow(member=m, finding=m.finding, label=finding_facts(m.finding).label,
                  subject_url=subject_url(m.finding.subject or {}, query), finding_url=_finding_url(m.finding),
                  onset=m.finding.onset or m.finding.start)
        for m in members
    ]


def advice_texts(advice: Sequence[Advice]) -> list[str]:
    """Advice as one line of text each (e-mails): the action, then the subjects it is also for."""
    return [a.text + (f" ({a.subjects_lead} {', '.join(link.text for link in a.subjects)})" if a.subjects else "")
            for a in advice]


def _pair_hops(pairs: Sequence[tuple[str, str]], *, at: datetime) -> dict[str, tuple[str, ...]]:
    """``SRC->DST`` -> the hops of the version in force at ``at``, for both directions of every pair (one query
    with the hops prefetched)."""
    if not pairs:
        return {}
    wanted = Q()
    for src, dst in pairs:
        wanted |= Q(src__code=src, dst__code=dst) | Q(src__code=dst, dst__code=src)
    return {f"{p.src.code}->{p.dst.code}": tuple(path_hops_labels(p)) for p in path_list_valid_at(at=at).filter(wanted)}


def _pair_row(src: str, dst: str, view: IncidentView, *, hops: Mapping[str, Sequence[str]], affected: set[str]
              ) -> PairRow:
    query = view.query

    def direction(a: str, b: str) -> DirectionRow:
        return DirectionRow(
            src=a, dst=b, url=_url("dashboard-path", query, src=a, dst=b), affected=f"{a}->{b}" in affected,
            hops=tuple(_hop(label, query) for label in hops.get(f"{a}->{b}", ())),
            explore=(Link("throughput", _explore(query, metric="throughput_bps", protocol="tcp", src=a, dst=b)),
                     Link("loss", _explore(query, metric="loss_fraction", src=a, dst=b))),
        )

    return PairRow(directions=(direction(src, dst), direction(dst, src)),
                   both_url=_url("dashboard-pair", query, src=src, dst=dst), charted=(src, dst) in view.charted)


def _hop(label: str, query: str) -> Hop:
    equipment, interface = label_split(label)
    links = _element_links(equipment, interface, query)
    return Hop(equipment=links[0], interface=Link(interface, links[1].url) if interface else None)


def _element_rows(rows: Sequence[MemberRow], suspects: Sequence[SuspectRow], query: str) -> list[ElementRow]:
    """The elements the findings are about, and the far ends tied to the suspects, each once."""
    out: dict[tuple, ElementRow] = {}
    for row in rows:
        subject = row.finding.subject or {}
        why = f"{row.finding.code} ({row.member.role})"
        if subject.get("trunk"):
            out.setdefault(("trunk", subject["trunk"]), ElementRow(
                links=(Link(subject["trunk"], _url("dashboard-trunk", query, name=subject["trunk"])),),
                explore=None, why=why))
        elif subject.get("equipment"):
            equipment, interface = subject["equipment"], subject.get("interface") or None
            out.setdefault(("port", equipment, interface), _port_row(equipment, interface, query, why))
    for suspect in suspects:
        for tied in suspect.tied:
            subject = tied.finding.subject or {}
            if subject.get("equipment"):
                equipment, interface = subject["equipment"], subject.get("interface") or None
                out.setdefault(("port", equipment, interface),
                               _port_row(equipment, interface, query, f"{tied.where} of {suspect.label}"))
    return list(out.values())


def _port_row(equipment: str, interface: str | None, query: str, why: str) -> ElementRow:
    if interface:
        explore = Link("errors and discards", _explore(query, metric="in_errors_per_s",
                                                       interface=f"{equipment}:{interface}"))
    else:
        explore = Link("traffic per interface", _explore(query, metric="out_bps", equipment=equipment,
                                                         group_by="interface"))
    return ElementRow(links=_element_links(equipment, interface, query), explore=explore, why=why)


# --- suspects ----------------------------------------------------------------------------------------------------


def _far_ends(rows: Sequence[MemberRow], *, at: datetime) -> dict[Port, Port]:
    """The links' ends, read only when the incident has suspects (two queries)."""
    if not any(r.finding.code in k.ROOT_CAUSE_CODES for r in rows):
        return {}
    return link_far_end_map(at=at, inputs=path_membership_inputs())


def _ports_of(subject: Mapping, far: Mapping[Port, Port]) -> set[Port]:
    """The ports a suspect stands for: its own, or every known port of its box."""
    equipment = subject.get("equipment")
    if not equipment:
        return set()
    if subject.get("interface"):
        return {(equipment, subject["interface"])}
    return {port for port in far if port[0] == equipment}


def suspect_rows(rows: Sequence[MemberRow], *, far: Mapping[Port, Port], shown: Callable[[str], bool] = shown_all
                 ) -> list[SuspectRow]:
    """The root-cause members in the grouping's order (a shared element ranked first, then interface errors, link
    congestion and trunk imbalance, lower-ranked shared elements last), with the evidence each finding carries
    and what speaks against it. An interface or congestion finding on a suspect, or at the far end of the
    suspect's link, is shown on that suspect's row rather than as a suspect of its own. ``shown``: as in
    :func:`~wanmon.alerts.evidence_text.suspect_evidence`."""
    candidates = sorted((r for r in rows if r.finding.code in k.ROOT_CAUSE_CODES),
                        key=lambda r: root_order(finding_facts(r.finding)))
    tied: dict[int, list[Tied]] = {}
    attached: set[int] = set()
    for suspect in candidates:
        if suspect.finding.code != codes.SHARED_EQUIPMENT_SUSPECT:
            continue
        subject = suspect.finding.subject or {}
        own = _ports_of(subject, far)
        far_ports = {far[p] for p in own if p in far}
        for other in candidates:
            if other is suspect or other.finding.id in attached or other.finding.code not in (
                    codes.INTERFACE_ERRORS, codes.LINK_CONGESTION):
                continue
            o = other.finding.subject or {}
            port = (o.get("equipment"), o.get("interface"))
            if port in far_ports:
                where = "far end"
            elif port in own or (o.get("equipment") == subject.get("equipment") and not subject.get("interface")):
                where = "on it"
            else:
                continue
            tied.setdefault(suspect.finding.id, []).append(
                Tied(where=where, finding=other.finding, label=other.label, finding_url=other.finding_url))
            attached.add(other.finding.id)
    out = []
    for r in (r for r in candidates if r.finding.id not in attached):
        evidence, against = suspect_evidence(r.finding.code, r.finding.evidence or {}, shown=shown)
        out.append(SuspectRow(position=len(out) + 1, finding=r.finding, label=r.label, url=r.subject_url,
                              finding_url=r.finding_url, evidence=evidence, against=against,
                              tied=tuple(tied.get(r.finding.id, ()))))
    return out


# --- actions -----------------------------------------------------------------------------------------------------


def _maintenance_refs(finding: Finding) -> set[str]:
    """The maintenance windows a finding's advice can depend on: the one it reports, those that explain it."""
    refs = {str(r) for r in finding.explained_by or ()}
    if finding.code == codes.MAINTENANCE_EXPLAINED and (finding.evidence or {}).get("reference"):
        refs.add(str(finding.evidence["reference"]))
    return refs


def _stale_reason(action: str, refs: Iterable[str], windows: Sequence[WindowInfo], now: datetime) -> str:
    """Why ``action`` is no longer current: it names a maintenance window that is not in progress now."""
    for ref in sorted(refs):
        if ref not in action:
            continue
        occurrences = [w for w in windows if w.reference == ref]
        if any(w.state_at(now) == "in progress" for w in occurrences):
            continue
        ended = [w for w in occurrences if w.state_at(now) == "ended"]
        if ended:
            return f"{ref} ended at {format_utc(max(w.end for w in ended), now)}"
        upcoming = [w for w in occurrences if w.state_at(now) == "scheduled"]
        if upcoming:
            return f"{ref} does not run now (next from {format_utc(min(w.start for w in upcoming), now)})"
        return f"{ref} is not in force"
    return ""


@dataclass
class _Group:
    lead: str
    shapes: set[str]
    givers: list[MemberRow]
    stale: str


def _shape(action: str, label: str) -> str:
    return action.replace(label, _SUBJECT) if label else action


def advice_list(rows: Sequence[MemberRow], *, windows: Sequence[WindowInfo], now: datetime
                ) -> tuple[list[Advice], list[Advice]]:
    """(current advice, advice no longer current), each once, in the order of the members giving it (active
    findings first).

    One advice given for several subjects is one item: the same words, or variants of it per path (or element),
    that is the same action of the same rule, the same words once its subject is taken out (``Find where
    FZK->CERN loses packets (loss 6.8e-02 ...)``, ``Find where CNAF->CERN ...``). Path variants that differ only
    in their path name them all; otherwise the item keeps the first's words and links the others' findings.

    Advice naming a maintenance window the finding depends on (``None while GEANT-CHG-0042 runs``) is current only
    while that window is in progress among ``windows`` (``maintenance_list_touching``); otherwise it is returned
    apart, with why, and never shown as something to do now.
    """
    groups: dict[tuple, _Group] = {}
    by_text: dict[str, tuple] = {}
    ordered = sorted(rows, key=lambda r: r.finding.status not in ACTIVE_STATUSES)  # stable: member order kept
    for row in ordered:
        refs = _maintenance_refs(row.finding)
        for index, action in enumerate(row.finding.actions or ()):
            action = " ".join(str(action).split())
            if not action:
                continue
            shape = _shape(action, row.label)
            key = by_text.get(action) or (row.finding.code, index, " ".join(shape.split()[:4]))
            group = groups.get(key)
            if group is None:
                group = groups[key] = _Group(lead=action, shapes=set(), givers=[],
                                             stale=_stale_reason(action, refs, windows, now))
            by_text.setdefault(action, key)
            group.shapes.add(shape)
            if all(g.finding.id != row.finding.id for g in group.givers):
                group.givers.append(row)
    current, stale = [], []
    for group in groups.values():
        advice = _advice(group)
        (stale if advice.stale else current).append(advice)
    return current, stale


def _advice(group: _Group) -> Advice:
    labels = list(dict.fromkeys(r.label for r in group.givers))
    if len(labels) < 2:
        return Advice(text=group.lead, stale=group.stale)
    (shape,) = group.shapes if len(group.shapes) == 1 else (None,)
    # per-path variants that differ only in their path name them all ("the interfaces carrying A->B and C->D");
    # an element's advice speaks of "it", and keeps the first element's words
    if shape is not None and _SUBJECT in shape and all("->" in label for label in labels):
        return Advice(text=shape.replace(_SUBJECT, _and(labels)), stale=group.stale)
    # the first giver's words (the others' numbers differ, or the text names no subject), the others linked
    named = group.givers[0].label in group.lead
    others = [r for r in (group.givers[1:] if named else group.givers) if r.label not in group.lead]
    return Advice(text=group.lead, subjects=tuple(Link(r.label, r.finding_url) for r in others),
                  subjects_lead="also for" if named else "for", stale=group.stale)


def _and(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
