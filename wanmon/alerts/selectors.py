"""Alerting reads: findings as grouping facts, topology around incidents, recipients, maintenance, listings."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db.models import Count, Max, Min, Q, QuerySet
from django.db.models.functions import Coalesce

from wanmon.alerts.choices import (
    ACTIVE_INCIDENT_STATUSES,
    IncidentEventKind,
    IncidentStatus,
    NotificationKind,
    NotificationStatus,
)
from wanmon.alerts.conf import AlertSettings
from wanmon.alerts.constants import CIRCUITS_NAMED_MAX, ROOT_CAUSE_CODES
from wanmon.alerts.grouping import FindingFacts
from wanmon.alerts.models import Incident, Notification, RoutingRule, Silence, Subscription
from wanmon.alerts.policy import Operator, Recipient, Route, incident_recipients
from wanmon.diagnosis import codes
from wanmon.diagnosis.choices import ACTIVE_STATUSES
from wanmon.diagnosis.constants import FINDING_REOPEN_WITHIN_S
from wanmon.diagnosis.models import Finding
from wanmon.inventory.choices import ContactRole
from wanmon.inventory.models import Circuit, Equipment, Interface
from wanmon.inventory.selectors import (
    contact_list_for_sites,
    path_hops_labels,
    path_list_through_element,
    path_list_through_trunk,
    path_list_valid_at,
    path_ports_of_equipment,
)
from wanmon.maintenance.parsed import impact_worst
from wanmon.maintenance.selectors import maintenance_in_force, maintenance_matches_for_element


def _path_label(path) -> str:
    return f"{path.src.code}->{path.dst.code}"


def finding_facts(finding: Finding, *, element_paths: tuple[str, ...] = (),
                  inventory_since: datetime | None = None) -> FindingFacts:
    """A stored finding as the pure grouping code sees it."""
    evidence = finding.evidence or {}
    degraded = None
    if finding.code == codes.SHARED_EQUIPMENT_SUSPECT:  # shared-path analysis, or load correlation (one path)
        degraded = evidence.get("degraded_paths") or ([evidence["degraded_path"]] if evidence.get("degraded_path")
                                                      else None)
    ref = evidence.get("reference") if finding.code == codes.MAINTENANCE_EXPLAINED else None
    return FindingFacts(
        id=finding.id,
        code=finding.code,
        severity=finding.severity,
        subject={str(k): str(v) for k, v in (finding.subject or {}).items()},
        subject_key=finding.subject_key,
        rank=finding.rank,
        summary=finding.summary,
        explained_by=tuple(str(r) for r in (finding.explained_by or evidence.get("explained_by") or ())),
        degraded_paths=tuple(str(p) for p in degraded or ()),
        element_paths=element_paths,
        maintenance_ref=str(ref) if ref else None,
        onset=finding.onset or finding.start,
        unconfirmed=inventory_since is not None and finding.last_seen_at < inventory_since,
    )


def finding_facts_list(*, at: datetime) -> list[FindingFacts]:
    """Every active finding, with the paths crossing the element of each root-cause finding (as of ``at``), each
    marked unconfirmed when it was last seen before the newest path version in force began (``FindingFacts``)."""
    findings = list(Finding.objects.filter(status__in=ACTIVE_STATUSES).order_by("id"))
    inventory_since = path_list_valid_at(at=at).aggregate(Max("valid_from"))["valid_from__max"]
    cache: dict[tuple[str, str], tuple[str, ...]] = {}
    out = []
    for f in findings:
        element_paths: tuple[str, ...] = ()
        subject = f.subject or {}
        if f.code in ROOT_CAUSE_CODES:
            if subject.get("equipment") and subject.get("interface"):
                # a port's fault concerns the paths that leave by it or arrive by it, not every path of its box
                key = ("interface", f"{subject['equipment']}:{subject['interface']}")
                if key not in cache:
                    cache[key] = tuple(_path_label(p) for p in path_list_through_element(
                        equipment=subject["equipment"], interface=subject["interface"], arriving=True, at=at))
            elif subject.get("equipment"):
                key = ("equipment", subject["equipment"])
                if key not in cache:
                    cache[key] = tuple(_path_label(p) for p in path_list_through_element(
                        equipment=subject["equipment"], at=at))
            elif subject.get("trunk"):
                key = ("trunk", subject["trunk"])
                if key not in cache:
                    cache[key] = tuple(_path_label(p) for p in path_list_through_trunk(trunk=subject["trunk"], at=at))
            else:
                key = None
            element_paths = cache.get(key, ()) if key else ()
        out.append(finding_facts(f, element_paths=element_paths, inventory_since=inventory_since))
    return out


def incident_resolved_holding(*, key: str, finding_ids: list[int], at: datetime) -> Incident | None:
    """The incident of group ``key`` resolved within FINDING_REOPEN_WITHIN_S before ``at`` (not merged) that one of
    these findings belonged to: a finding reopened by the diagnosis (it came back soon after its resolution)
    reopens it instead of opening a new incident (row-locked)."""
    return (
        Incident.objects.select_for_update()
        .filter(key=key, status=IncidentStatus.RESOLVED, merged_into__isnull=True, members__finding_id__in=finding_ids,
                resolved_at__gte=at - timedelta(seconds=FINDING_REOPEN_WITHIN_S))
        .order_by("-resolved_at", "-id")
        .first()
    )


def incident_resolution_notified(*, incident: Incident) -> bool:
    """Whether the incident's last e-mail round was its resolved notice (someone now believes it is fixed)."""
    return (
        Notification.objects.filter(incident=incident, kind=NotificationKind.RESOLVED, sequence=incident.notify_seq)
        .exclude(status=NotificationStatus.ABANDONED)
        .exists()
    )


def incident_last_return(*, incident: Incident) -> tuple[datetime, datetime]:
    """When the incident was resolved before it last came back, and when it came back (its last reopened event)."""
    event = incident.events.filter(kind=IncidentEventKind.REOPENED).latest("time", "id")
    return datetime.fromisoformat(event.data["resolved_at"]), event.time


@dataclass
class TopologyIndex:
    """Which equipment each path direction crosses and who operates each piece (for routing and maintenance)."""

    path_hops: dict[str, tuple[str, ...]] = field(default_factory=dict)
    carrier_of: dict[str, str] = field(default_factory=dict)
    site_of: dict[str, str] = field(default_factory=dict)

    def equipment_of(self, *, paths: Iterable[str], elements: Iterable[str]) -> set[str]:
        names = {e.split(":", 1)[0] for e in elements if not e.startswith("trunk:")}
        for p in paths:
            names.update(h.split(":", 1)[0] for h in self.path_hops.get(p, ()))
        return names

    def carriers_of(self, *, paths: Iterable[str], elements: Iterable[str]) -> set[str]:
        return {self.carrier_of[e] for e in self.equipment_of(paths=paths, elements=elements) if e in self.carrier_of}


def topology_index_build(*, at: datetime) -> TopologyIndex:
    """One read of the paths in force at ``at`` and of the equipment owners."""
    index = TopologyIndex()
    for path in path_list_valid_at(at=at):
        index.path_hops[_path_label(path)] = tuple(path_hops_labels(path))
    for name, carrier, site in Equipment.objects.values_list("name", "carrier__code", "site__code"):
        if carrier:
            index.carrier_of[name] = carrier
        if site:
            index.site_of[name] = site
    return index


@dataclass(frozen=True)
class WindowInfo:
    """A maintenance window touching an incident, as e-mails and pages show it."""

    id: int
    reference: str
    carrier: str | None
    impact: str
    status: str
    start: datetime
    end: datetime
    elements: tuple[str, ...]

    def state_at(self, at: datetime) -> str:
        if at < self.start:
            return "scheduled"
        return "in progress" if at < self.end else "ended"


def maintenance_list_touching(
    *, equipment: Collection[str], sites: Collection[str] = (), start: datetime, end: datetime
) -> list[WindowInfo]:
    """Maintenance in force over [start, end) (``maintenance_in_force``: one entry per occurrence, informational
    windows included: an e-mail shows them) that affects one of the equipment (or its interfaces, or a trunk of
    that name) or one of the sites."""
    if not equipment and not sites:
        return []
    out = []
    for occ in maintenance_in_force(start=start, end=end):
        labels = []
        impacts = []
        for target in occ.targets:
            label = target.label
            base = label.split(":", 1)[0]
            if base in equipment or label in equipment or (label.startswith("site:") and label[5:] in sites):
                labels.append(label)
                impacts.append(target.impact)
        if not labels:
            continue
        w = occ.window
        out.append(
            WindowInfo(
                id=w.id,
                reference=w.reference,
                carrier=w.carrier.code if w.carrier_id else None,
                impact=impact_worst(impacts),
                status=w.status,
                start=occ.start,
                end=occ.end,
                elements=tuple(sorted(set(labels))),
            )
        )
    return out


def maintenance_inhibiting(*, elements: Collection[str], at: datetime) -> list[WindowInfo]:
    """Maintenance muting the root elements at ``at``: the maintenance app's matching of each element
    (``maintenance_matches_for_element``), windows that act (accepted, not informational) with an impact that
    explains a degradation of the element, as the diagnosis decides with the same windows."""
    out: dict[tuple[int, datetime], WindowInfo] = {}
    for element in elements:
        for m in maintenance_matches_for_element(element, at):
            if not m.mutes:
                continue
            key = (m.window.pk, m.start)
            seen = out[key].elements if key in out else ()
            out[key] = WindowInfo(
                id=m.window.pk,
                reference=m.window.reference,
                carrier=m.window.carrier.code if m.window.carrier_id else None,
                impact=m.impact,
                status=m.window.status,
                start=m.start,
                end=m.end,
                elements=tuple(sorted({*seen, *m.via})),
            )
    return list(out.values())


def silence_list_active(*, at: datetime) -> list[Silence]:
    """Silences muting at ``at`` (started, not ended, not expired early)."""
    return list(
        Silence.objects.filter(starts_at__lte=at, ends_at__gt=at)
        .filter(Q(expired_at__isnull=True) | Q(expired_at__gt=at))
        .select_related("author")
        .order_by("id")
    )


def _routes(rows, label) -> list[Route]:
    return [Route(label=label(r), emails=tuple(str(e) for e in emails), sites=tuple(r.sites or ()),
                  carriers=tuple(r.carriers or ()), finding_codes=tuple(r.codes or ()), min_severity=r.min_severity,
                  replace_defaults=getattr(r, "replace_defaults", False))
            for r, emails in rows]


def recipient_list_for_incident(
    *, sites: Collection[str], carriers: Collection[str], codes_: Collection[str], severity: str, cfg: AlertSettings,
    operator: Operator | None = None,
) -> list[Recipient]:
    """Who gets an incident (``policy.incident_recipients`` decides): the routing rules, subscriptions and site
    NOC contacts in force, and the operator of its root element."""
    rules = _routes(((r, r.recipients or ()) for r in RoutingRule.objects.filter(is_active=True).order_by("name")),
                    lambda r: f"routing rule {r.name}")
    subs = _routes(((s, (s.user.email,)) for s in Subscription.objects.filter(is_active=True, user__is_active=True)
                    .select_related("user").order_by("id") if s.user.email),
                   lambda s: f"subscription of {s.user.get_username()}")
    site_nocs: dict[str, list[str]] = {}
    for contact in contact_list_for_sites(sites=sites, roles=[ContactRole.NOC]):
        site_nocs.setdefault(contact.site.code, []).append(contact.email)
    return incident_recipients(sites=sites, carriers=carriers, codes_=codes_, severity=severity, rules=rules,
                               subscriptions=subs, site_nocs=site_nocs, operator=operator,
                               default_recipients=cfg.default_recipients)


def operator_of_element(*, element: str | None, interface: str | None = None, paths: Collection[str] = (),
                        at: datetime) -> Operator | None:
    """Who operates an incident's root element (equipment, or ``trunk:name``: its members' equipment): its
    carrier's NOC address, or its site's NOC contacts; with the carrier circuits that end on the suspect port
    (``interface``) or, without one, on the ports the incident's paths leave or enter it by."""
    if not element:
        return None
    if element.startswith("trunk:"):
        members = Interface.objects.filter(trunks__name=element.removeprefix("trunk:")).select_related("equipment")
        equipment = next((i.equipment for i in members), None)
        ports = {i.id for i in members}
    else:
        equipment = Equipment.objects.filter(name=element).first()
        ports = set()
        if equipment is not None and interface:
            ports = set(Interface.objects.filter(equipment=equipment, name=interface).values_list("id", flat=True))
        elif equipment is not None:
            ports = path_ports_of_equipment(equipment=equipment, paths=paths, at=at)
    if equipment is None:
        return None
    label = element.removeprefix("trunk:")
    circuits = Circuit.objects.filter(Q(a_interface_id__in=ports) | Q(z_interface_id__in=ports)).select_related(
        "carrier", "a_interface__equipment", "z_interface__equipment").order_by("carrier__code", "cid")
    circuit_text = tuple(
        f"{c.carrier.code} {c.cid} ({' - '.join(str(i) for i in (c.a_interface, c.z_interface) if i)})"
        for c in circuits[:CIRCUITS_NAMED_MAX])
    if equipment.carrier_id:
        carrier = equipment.carrier
        return Operator(element=label, owner=carrier.code, is_carrier=True,
                        emails=(carrier.noc_email,) if carrier.noc_email else (), circuits=circuit_text)
    if equipment.site_id:
        nocs = contact_list_for_sites(sites=[equipment.site.code], roles=[ContactRole.NOC])
        return Operator(element=label, owner=equipment.site.code, is_carrier=False,
                        emails=tuple(c.email for c in nocs), circuits=circuit_text)
    return None


def recipient_list_notified(*, incident: Incident) -> list[Recipient]:
    """Who was told an incident is open (and so must hear it is resolved)."""
    rows = (
        Notification.objects.filter(incident=incident)
        .exclude(kind__in=[NotificationKind.RESOLVED, NotificationKind.SILENCE_REMINDER])
        .exclude(status=NotificationStatus.ABANDONED)
        .order_by("id")
        .values_list("recipient", "reason")
    )
    seen: dict[str, Recipient] = {}
    for email, reason in rows:
        seen.setdefault(email.lower(), Recipient(email, reason))
    return list(seen.values())


# --- listings for pages and the API ---------------------------------------------------------------------------


def incident_list(*, status: str | None = None, site: str | None = None, severity: str | None = None
                  ) -> QuerySet[Incident]:
    """Incidents, newest first; ``status`` ``active`` means open or acknowledged."""
    qs = Incident.objects.select_related("acknowledged_by", "root_finding").annotate(finding_count=Count("members"))
    if status == "active":
        qs = qs.filter(status__in=ACTIVE_INCIDENT_STATUSES)
    elif status:
        qs = qs.filter(status=status)
    if site:
        qs = qs.filter(sites__contains=[site])
    if severity:
        qs = qs.filter(severity=severity)
    return qs.order_by("-opened_at", "-id")


def incident_get(*, incident_id: int) -> Incident | None:
    return (
        Incident.objects.select_related("acknowledged_by", "root_finding", "merged_into")
        .prefetch_related("members__finding", "events__user", "notifications", "merged")
        .filter(pk=incident_id)
        .first()
    )


def _earliest_onset(findings: Iterable[Finding]) -> datetime | None:
    return min((f.onset or f.start for f in findings), default=None)


def incident_onset(incident: Incident) -> datetime | None:
    """When the incident's problem began: the earliest onset of its member findings, a finding whose onset is not
    known counting from its evidence window's start; None without members. The opening time says when the alerting
    noticed, this when the network changed (what carriers' tickets and the charts are compared with). No query when
    the members are prefetched (``incident_get``), else one. The alerting keeps it on the incident as it groups
    (``Incident.onset``, earlier only: a member that moved out does not make the problem younger); that stored value
    is the answer when there is one, so the page and the e-mails say the same."""
    if incident.onset is not None:
        return incident.onset
    prefetched = getattr(incident, "_prefetched_objects_cache", {})
    if "members" in prefetched:
        return _earliest_onset(m.finding for m in prefetched["members"])
    return Finding.objects.filter(incident_memberships__incident=incident).aggregate(
        onset=Min(Coalesce("onset", "start")))["onset"]


def incident_members(incident: Incident) -> list:
    """Members in incident order (root first, then as grouped), each with its finding."""
    return list(incident.members.select_related("finding").order_by("id"))


def incidents_of_findings(finding_ids: Collection[int]) -> list[dict]:
    """The incidents that hold any of these findings, as ``manage.py replay --json`` lists them: root, members,
    who was e-mailed (and when), and the onset (the earliest onset of its findings)."""
    out = []
    incidents = (
        Incident.objects.filter(members__finding_id__in=list(finding_ids))
        .distinct()
        .select_related("root_finding")
        .prefetch_related("members__finding", "notifications")
        .order_by("opened_at", "id")
    )
    for incident in incidents:
        findings = [m.finding for m in incident.members.all()]
        root = incident.root_finding
        out.append(
            {
                "id": incident.id,
                "title": incident.title,
                "status": incident.status,
                "severity": incident.severity,
                "root": {"code": root.code, "subject": root.subject} if root else None,
                "members": [{"code": f.code, "subject": f.subject, "finding": f.id} for f in findings],
                "recipients": sorted({n.recipient for n in incident.notifications.all()}),
                "emails": [
                    {"kind": n.kind, "recipient": n.recipient, "created_at": n.created_at, "status": n.status}
                    for n in sorted(incident.notifications.all(), key=lambda n: (n.created_at, n.id))
                ],
                "opened_at": incident.opened_at,
                "resolved_at": incident.resolved_at,
                "onset": incident_onset(incident),
            }
        )
    return out
