"""The overview grid and the map: the health of every path direction at an instant, active findings,
maintenance, silent agents and incidents."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import NamedTuple

from django.apps import apps
from django.db.models import Q
from django.utils import timezone

from wanmon.core.dbrouter import read_connection
from wanmon.core.sql import sql_rows
from wanmon.core.units import bps_from_mbps
from wanmon.dashboard import constants as k
from wanmon.dashboard.health import Health, PathObservation, path_health
from wanmon.dashboard.selectors.findings import finding_list_active_at, path_findings_by_direction
from wanmon.dashboard.selectors.maintenance import MaintenanceItem, maintenance_explains_on_path, maintenance_list
from wanmon.dashboard.selectors.probe_loss import probe_loss_estimate, probe_loss_sums
from wanmon.diagnosis.loss import LossEstimate
from wanmon.diagnosis.models import Finding
from wanmon.inventory.models import Agent, Equipment, Interface, Path, Site
from wanmon.inventory.selectors import path_list_valid_at, path_membership_inputs


def latest_measurement_time() -> datetime | None:
    """Time of the newest test or interface rate stored (each max() reads one chunk's index)."""
    row = sql_rows(
        """SELECT greatest((SELECT max(time) FROM measurements_throughputtest),
                           (SELECT max(time) FROM measurements_owamptest),
                           (SELECT max(time) FROM measurements_interfacerate)) AS latest""",
        [],
    )
    return row[0]["latest"]


@dataclass(frozen=True)
class GridCell:
    src: str
    dst: str
    observation: PathObservation
    health: Health
    finding_count: int
    #: Since when the cell shows its status, when known: the earliest onset of its open findings (a finding's
    #: window start when it has no onset), or for a stale cell the time of its latest test.
    since: datetime | None = None


@dataclass
class OverviewData:
    at: datetime
    sources: list[str]
    destinations: list[str]
    cells: dict[tuple[str, str], GridCell]
    findings: list[Finding]
    maintenance_running: list[MaintenanceItem]
    maintenance_upcoming: list[MaintenanceItem]
    silent_agents: list[Agent]
    agent_count: int
    incidents: list
    latest_data: datetime | None
    status_counts: dict[str, int] = field(default_factory=dict)
    # Beyond GRID_MAX_SITES sites a grid of every site is unreadable (200 sites: 40 000 cells): the overview then
    # lists the problems first and the sites grouped by region and tier, and draws the matrix of one chosen group.
    scaled: bool = False
    problems: list[GridCell] = field(default_factory=list)
    problem_count: int = 0
    groups: list[SiteGroup] = field(default_factory=list)
    regions: list[str] = field(default_factory=list)
    site_count: int = 0
    matched_sites: list[str] = field(default_factory=list)


@dataclass
class SiteGroup:
    """The sites of one region and tier, with the health of the path directions leaving them."""

    region: str
    tier: int | None
    sites: list[str]
    status_counts: dict[str, int]
    status: str  # the worst status among its paths

    @property
    def paths(self) -> int:
        return sum(self.status_counts.values())


#: The overview draws the full grid up to this many sites; beyond, problems first and groups (region, tier).
GRID_MAX_SITES = 40
#: Problem cells listed on the scaled overview (worst first).
PROBLEMS_SHOWN = 50
#: Worst first: how a group's status is aggregated and problems are ordered.
STATUS_ORDER = (k.CRITICAL, k.WARNING, k.MAINTENANCE, k.STALE, k.NODATA, k.OK)


def _latest_tcp(at: datetime) -> dict[tuple[int, int], dict]:
    rows = sql_rows(
        """SELECT DISTINCT ON (src_id, dst_id) src_id, dst_id, time, throughput_bps, error
           FROM measurements_throughputtest
           WHERE protocol = 'tcp' AND time > %s AND time <= %s
           ORDER BY src_id, dst_id, time DESC, id DESC""",
        [at - k.LATEST_LOOKBACK, at],
    )
    return {(r["src_id"], r["dst_id"]): r for r in rows}


def _recent_loss(at: datetime) -> dict[tuple[int, int], LossEstimate]:
    """Each direction's probe loss (owamp and UDP) over the loss window before ``at``, as the diagnosis estimates
    it: stray owamp losses scattered over sessions do not turn a cell amber that no finding would."""
    sums = probe_loss_sums(start=at - k.LOSS_WINDOW, end=at + timedelta(microseconds=1))
    return {key: probe_loss_estimate(kinds) for key, kinds in sums.items()}


def maintenance_running(at: datetime) -> list[MaintenanceItem]:
    """Maintenance windows running at ``at`` that turn paths blue: those with explaining affects (held for review,
    informational, reduced-redundancy or no-impact work: no status)."""
    return [m for m in maintenance_list(start=at, end=at + timedelta(microseconds=1), include_held=False)
            if m.explaining]


def path_observations(
    *, at: datetime, paths: Sequence[Path] | None = None, running: list[MaintenanceItem] | None = None
) -> dict[tuple[str, str], GridCell]:
    """Health of every path direction in force at ``at`` (or of the given versions); ``running`` the maintenance
    running then, when the caller has it already."""
    paths = list(paths) if paths is not None else list(path_list_valid_at(at=at))
    latest = _latest_tcp(at)
    loss = _recent_loss(at)
    by_direction = path_findings_by_direction(finding_list_active_at(at))
    running = maintenance_running(at) if running is None else running
    inputs = path_membership_inputs() if running else None
    cells: dict[tuple[str, str], GridCell] = {}
    for path in paths:
        key = (path.src_id, path.dst_id)
        test = latest.get(key)
        estimate = loss.get(key)
        probe = estimate.probe if estimate else None
        findings = [f for f in by_direction.get((path.src.code, path.dst.code), []) if f.code != "ROUTE_CHANGE"]
        maintenance: tuple[str, ...] = ()
        if running:
            maintenance = tuple(m.reference for m in running if maintenance_explains_on_path(m, path, inputs))
        observation = PathObservation(
            src=path.src.code,
            dst=path.dst.code,
            at=at,
            capacity_bps=path.capacity_bps,
            latest_time=test["time"] if test else None,
            latest_bps=test["throughput_bps"] if test else None,
            latest_error=test["error"] if test else None,
            loss_fraction=estimate.probe_fraction if probe else None,
            loss_packets=int(probe.sent) if probe else None,
            finding_severities=tuple(f.severity for f in findings),
            maintenance=maintenance,
        )
        health = path_health(observation)
        cells[(path.src.code, path.dst.code)] = GridCell(
            src=path.src.code, dst=path.dst.code, observation=observation, health=health,
            finding_count=len(findings), since=cell_since(health.status, findings, observation.latest_time),
        )
    return cells


def cell_since(status: str, findings: Sequence[Finding], latest_test: datetime | None) -> datetime | None:
    """Since when a grid cell holds ``status``: the earliest onset of the findings behind an amber or red cell,
    the latest test of a stale one; None when the measurements alone make it so (no episode is recorded)."""
    if status in (k.WARNING, k.CRITICAL):
        onsets = [f.onset or f.start for f in findings if f.severity in (k.WARNING, k.CRITICAL)]
        return min(onsets) if onsets else None
    if status == k.STALE:
        return latest_test
    return None


def _site_order(codes: Iterable[str]) -> list[str]:
    tiers = dict(Site.objects.filter(code__in=list(codes)).values_list("code", "tier"))
    return sorted(tiers, key=lambda c: (tiers[c] if tiers[c] is not None else 9, c))


def incident_list_open(*, limit: int = 10) -> list:
    """Active incidents of the alerting app, newest first (empty when that app is not installed)."""
    if not apps.is_installed("wanmon.alerts"):
        return []
    try:
        from wanmon.alerts.selectors import incident_list
    except ImportError:  # the alerting app without its selectors: the overview still works
        return []
    return list(incident_list(status="active")[:limit])


def agent_list_silent(*, now: datetime) -> tuple[list[Agent], int]:
    """Active agents that have not uploaded for AGENT_SILENT_AFTER (or never), and the active total."""
    active = Agent.objects.filter(revoked_at__isnull=True).select_related("site")
    silent = active.filter(Q(last_seen_at__isnull=True) | Q(last_seen_at__lt=now - k.AGENT_SILENT_AFTER))
    return list(silent.order_by("site__code", "name")), active.count()


class _SiteRef(NamedTuple):
    code: str


class _PathRow(NamedTuple):
    """What the grid reads of a path version (ids, site codes, capacity), without model instances (a tuple:
    10 000 of them are built for every overview)."""

    id: int
    src_id: int
    dst_id: int
    src: _SiteRef
    dst: _SiteRef
    capacity_mbps: int | None

    @property
    def capacity_bps(self) -> float | None:
        return bps_from_mbps(self.capacity_mbps)


def _overview_paths(at: datetime, running: list[MaintenanceItem]) -> list:
    """Path versions in force at ``at``. Their hops are read only when maintenance is running (only then does
    the grid place maintenance on paths); otherwise plain rows: 10 000 paths as model instances with their sites
    cost a second and a half, as tuples a few hundredths."""
    if running:
        return list(path_list_valid_at(at=at))
    with read_connection().cursor() as cursor:
        cursor.execute(
            """SELECT p.id, p.src_id, p.dst_id, s.code, d.code, p.capacity_mbps
               FROM inventory_path p JOIN inventory_site s ON s.id = p.src_id JOIN inventory_site d ON d.id = p.dst_id
               WHERE p.valid_from <= %(at)s AND (p.valid_to IS NULL OR p.valid_to > %(at)s)
               ORDER BY s.code, d.code""",
            {"at": at},
        )
        rows = cursor.fetchall()
    refs: dict[str, _SiteRef] = {}  # one per site, shared by its paths
    return [
        _PathRow(pid, src_id, dst_id, refs.get(src) or refs.setdefault(src, _SiteRef(src)),
                 refs.get(dst) or refs.setdefault(dst, _SiteRef(dst)), capacity)
        for pid, src_id, dst_id, src, dst, capacity in rows
    ]


def _worst(statuses: Iterable[str]) -> str:
    present = set(statuses)
    return next((st for st in STATUS_ORDER if st in present), k.NODATA)


def overview(
    *,
    at: datetime,
    now: datetime | None = None,
    site: str | None = None,
    region: str | None = None,
    tier: int | None = None,
    q: str | None = None,
    status: str | None = None,
) -> OverviewData:
    """Everything the overview shows as of ``at``; ``site`` keeps only the paths touching that site.

    With more than GRID_MAX_SITES sites (and no ``site``) the overview is *scaled*: the problem cells worst
    first, the sites grouped by region and tier with their aggregated status, and the grid only of the sites
    chosen by ``region``, ``tier`` and the search ``q`` (site code or name). ``status`` keeps the problems and
    groups of that status.
    """
    now = now or timezone.now()
    running = maintenance_running(at)
    paths = _overview_paths(at, running)
    sites = {s.code: s for s in Site.objects.all()}
    scaled = not site and len({c for p in paths for c in (p.src.code, p.dst.code)}) > GRID_MAX_SITES
    if site:
        paths = [p for p in paths if site in (p.src.code, p.dst.code)]
    cells = path_observations(at=at, paths=paths, running=running)
    findings = list(finding_list_active_at(at)[:50])
    if site:
        findings = [f for f in findings if _finding_touches_site(f, site, cells)]
    windows = maintenance_list(start=at, end=at + k.MAINTENANCE_HORIZON)
    silent, total = agent_list_silent(now=now)
    counts: dict[str, int] = defaultdict(int)
    for cell in cells.values():
        counts[cell.health.status] += 1
    data = OverviewData(
        at=at,
        sources=[],
        destinations=[],
        cells=cells,
        findings=findings,
        maintenance_running=[w for w in windows if w.running_at(at)],
        maintenance_upcoming=[w for w in windows if w.start > at],
        silent_agents=silent,
        agent_count=total,
        incidents=incident_list_open(),
        latest_data=latest_measurement_time(),
        status_counts=dict(counts),
        scaled=scaled,
        site_count=len(sites),
    )
    if not scaled:
        data.sources = _site_order({c[0] for c in cells})
        data.destinations = _site_order({c[1] for c in cells})
        return data
    chosen = _sites_matching(sites.values(), region=region, tier=tier, q=q)
    filtered = region is not None or tier is not None or bool(q)
    data.matched_sites = sorted(chosen, key=lambda c: (sites[c].tier if sites[c].tier is not None else 9, c))
    rank = {st: n for n, st in enumerate(STATUS_ORDER)}
    problems = [
        c for c in cells.values()
        if c.health.status not in (k.OK, k.NODATA)
        and (not filtered or c.src in chosen or c.dst in chosen)
        and (status is None or c.health.status == status)
    ]
    problems.sort(key=lambda c: (rank.get(c.health.status, 9), -c.finding_count, c.src, c.dst))
    data.problem_count = len(problems)
    data.problems = problems[:PROBLEMS_SHOWN]
    by_group: dict[tuple[str, int | None], list[str]] = defaultdict(list)
    for code in chosen if filtered else sites:
        by_group[(sites[code].region, sites[code].tier)].append(code)
    group_of = {code: key for key, codes in by_group.items() for code in codes}
    group_counts: dict[tuple, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for cell in cells.values():
        key = group_of.get(cell.src)
        if key is not None:
            group_counts[key][cell.health.status] += 1
    groups = [
        SiteGroup(region=key[0], tier=key[1], sites=sorted(codes), status_counts=dict(group_counts[key]),
                  status=_worst(group_counts[key]))
        for key, codes in by_group.items()
    ]
    if status is not None:
        groups = [g for g in groups if g.status_counts.get(status)]
    groups.sort(key=lambda g: (rank.get(g.status, 9), g.region or "~", g.tier if g.tier is not None else 9))
    data.groups = groups
    data.regions = sorted({s.region for s in sites.values() if s.region})
    if filtered and len(chosen) <= GRID_MAX_SITES:
        data.sources = data.destinations = data.matched_sites
    return data


def _sites_matching(sites: Iterable[Site], *, region: str | None, tier: int | None, q: str | None) -> set[str]:
    needle = (q or "").strip().lower()
    return {
        s.code for s in sites
        if (region is None or s.region == region)
        and (tier is None or s.tier == tier)
        and (not needle or needle in s.code.lower() or needle in s.name.lower())
    }


def _finding_touches_site(finding: Finding, site: str, cells) -> bool:
    subject = finding.subject or {}
    if site in (subject.get("src"), subject.get("dst"), subject.get("site")):
        return True
    return bool(subject.get("equipment") or subject.get("trunk"))



@dataclass
class MapInputs:
    sites: list[Site]
    paths: list[Path]
    cells: dict[tuple[str, str], GridCell]
    suspects: set[str]
    equipment_owner: dict[str, str]
    equipment_site: dict[str, str | None]


#: Element findings that make an element red on the map.
SUSPECT_CODES = ("SHARED_EQUIPMENT_SUSPECT", "INTERFACE_ERRORS", "LINK_CONGESTION", "TRUNK_IMBALANCE")


def map_inputs(*, at: datetime) -> MapInputs:
    paths = list(path_list_valid_at(at=at))
    cells = path_observations(at=at, paths=paths)
    suspects = set()
    for finding in finding_list_active_at(at).filter(code__in=SUSPECT_CODES):
        subject = finding.subject or {}
        if finding.code == "SHARED_EQUIPMENT_SUSPECT" and finding.rank not in (None, 1):
            continue
        if subject.get("equipment"):
            suspects.add(subject["equipment"])
        if subject.get("trunk"):
            suspects.update(
                Interface.objects.filter(trunks__name=subject["trunk"]).values_list("equipment__name", flat=True)
            )
    equipment = list(Equipment.objects.select_related("site", "carrier"))
    owners = {e.name: e.owner_code for e in equipment}
    site_of = {e.name: (e.site.code if e.site_id else None) for e in equipment}
    sites = list(Site.objects.filter(lat__isnull=False, lon__isnull=False).order_by("code"))
    return MapInputs(sites=sites, paths=paths, cells=cells, suspects=suspects, equipment_owner=owners,
                     equipment_site=site_of)

