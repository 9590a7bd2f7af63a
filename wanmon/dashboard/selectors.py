"""Reads behind the dashboard pages. All SQL and time_bucket of the dashboard live here.

Selectors return plain dataclasses (and model instances for inventory objects); the pure modules
(health, derived, figures) turn them into what the pages show. Interface series read the same
rollup tables the query API reads, chosen by the bucket width the time range asks for.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.apps import apps
from django.db import connection
from django.db.models import Case, Count, IntegerField, Prefetch, Q, QuerySet, Value, When
from django.utils import timezone

from wanmon.dashboard import constants as k
from wanmon.dashboard.health import Health, PathObservation, path_health
from wanmon.diagnosis.choices import ACTIVE_STATUSES
from wanmon.diagnosis.models import Finding
from wanmon.inventory.membership import IN, VIA_HOP, Element, bundles_on_path, element_on_path, memberships
from wanmon.inventory.models import Agent, Equipment, Interface, Path, PathHop, Site, Trunk
from wanmon.inventory.selectors import (
    MembershipInputs,
    path_hops,
    path_list_through_element,
    path_list_through_trunk,
    path_list_valid_at,
    path_membership_hops,
    path_membership_inputs,
    path_touched_by_labels,
)
from wanmon.maintenance.choices import Status as MaintenanceStatus
from wanmon.maintenance.models import MaintenanceWindow
from wanmon.measurements.selectors import LEVELS

RAW_RATES = "measurements_interfacerate"


def _rows(sql: str, params) -> list[dict]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


# --------------------------------------------------------------------------- common


def latest_measurement_time() -> datetime | None:
    """Time of the newest test or interface rate stored (each max() reads one chunk's index)."""
    row = _rows(
        """SELECT greatest((SELECT max(time) FROM measurements_throughputtest),
                           (SELECT max(time) FROM measurements_owamptest),
                           (SELECT max(time) FROM measurements_interfacerate)) AS latest""",
        [],
    )
    return row[0]["latest"]


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


# --------------------------------------------------------------------------- maintenance


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

    def running_at(self, at: datetime) -> bool:
        return self.start <= at < self.end


def maintenance_list(*, start: datetime, end: datetime) -> list[MaintenanceItem]:
    """Windows (not cancelled) overlapping [start, end), oldest first."""
    windows = (
        MaintenanceWindow.objects.filter(start__lt=end, end__gt=start)
        .exclude(status=MaintenanceStatus.CANCELLED)
        .select_related("carrier")
        .prefetch_related("affects__equipment", "affects__interface__equipment", "affects__trunk",
                          "affects__circuit", "affects__site")
        .order_by("start", "reference")
    )
    return [
        MaintenanceItem(
            pk=w.pk, reference=w.reference, carrier=w.carrier.code if w.carrier_id else None, summary=w.summary,
            start=w.start, end=w.end, impact=w.impact, status=w.status,
            affects=tuple(a.label for a in w.affects.all()),
        )
        for w in windows
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
        if any(element_on_path(element, h, inputs.bundles, inputs.circuits) for h in hops.values()):
            ports.add((eq_name, iface_name))
    trunk_names = {b.name for h in hops.values() for b in bundles_on_path(h, inputs.bundles)}
    return findings_for_elements(start=start, end=end, paths=pairs, boxes=equipment, ports=ports, trunks=trunk_names)


# --------------------------------------------------------------------------- overview grid


@dataclass(frozen=True)
class GridCell:
    src: str
    dst: str
    observation: PathObservation
    health: Health
    finding_count: int


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


def _latest_tcp(at: datetime) -> dict[tuple[int, int], dict]:
    rows = _rows(
        """SELECT DISTINCT ON (src_id, dst_id) src_id, dst_id, time, throughput_bps, error
           FROM measurements_throughputtest
           WHERE protocol = 'tcp' AND time > %s AND time <= %s
           ORDER BY src_id, dst_id, time DESC, id DESC""",
        [at - k.LATEST_LOOKBACK, at],
    )
    return {(r["src_id"], r["dst_id"]): r for r in rows}


def _recent_loss(at: datetime) -> dict[tuple[int, int], tuple[int, int]]:
    """(lost, sent) of one-way probes and UDP tests per direction over the loss window before ``at``."""
    rows = _rows(
        """SELECT src_id, dst_id, sum(packets_lost) AS lost, sum(packets_sent) AS sent FROM (
               SELECT src_id, dst_id, packets_lost, packets_sent FROM measurements_owamptest
               WHERE time > %(since)s AND time <= %(at)s AND packets_sent > 0 AND error IS NULL
               UNION ALL
               SELECT src_id, dst_id, packets_lost, packets_sent FROM measurements_throughputtest
               WHERE protocol = 'udp' AND time > %(since)s AND time <= %(at)s AND packets_sent > 0
                 AND error IS NULL) t
           GROUP BY src_id, dst_id""",
        {"since": at - k.LOSS_WINDOW, "at": at},
    )
    return {(r["src_id"], r["dst_id"]): (int(r["lost"] or 0), int(r["sent"] or 0)) for r in rows}


def path_findings_by_direction(findings: Iterable[Finding]) -> dict[tuple[str, str], list[Finding]]:
    out: dict[tuple[str, str], list[Finding]] = defaultdict(list)
    for finding in findings:
        subject = finding.subject or {}
        if "src" in subject and "dst" in subject:
            out[(subject["src"], subject["dst"])].append(finding)
    return out


def path_observations(*, at: datetime, paths: Sequence[Path] | None = None) -> dict[tuple[str, str], GridCell]:
    """Health of every path direction in force at ``at`` (or of the given versions)."""
    paths = list(paths) if paths is not None else list(path_list_valid_at(at=at))
    latest = _latest_tcp(at)
    loss = _recent_loss(at)
    by_direction = path_findings_by_direction(finding_list_active_at(at))
    running = [m for m in maintenance_list(start=at, end=at + timedelta(microseconds=1))]
    inputs = path_membership_inputs() if running else None
    cells: dict[tuple[str, str], GridCell] = {}
    for path in paths:
        key = (path.src_id, path.dst_id)
        test = latest.get(key)
        lost, sent = loss.get(key, (0, 0))
        findings = [f for f in by_direction.get((path.src.code, path.dst.code), []) if f.code != "ROUTE_CHANGE"]
        maintenance: tuple[str, ...] = ()
        if running:
            maintenance = tuple(m.reference for m in running if maintenance_touches_path(m, path, inputs))
        observation = PathObservation(
            src=path.src.code,
            dst=path.dst.code,
            at=at,
            capacity_bps=path.capacity_bps,
            latest_time=test["time"] if test else None,
            latest_bps=test["throughput_bps"] if test else None,
            latest_error=test["error"] if test else None,
            loss_fraction=lost / sent if sent else None,
            loss_packets=sent or None,
            finding_severities=tuple(f.severity for f in findings),
            maintenance=maintenance,
        )
        cells[(path.src.code, path.dst.code)] = GridCell(
            src=path.src.code, dst=path.dst.code, observation=observation, health=path_health(observation),
            finding_count=len(findings),
        )
    return cells


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


def overview(*, at: datetime, now: datetime | None = None, site: str | None = None) -> OverviewData:
    """Everything the overview shows as of ``at``; ``site`` keeps only the paths touching that site."""
    now = now or timezone.now()
    paths = list(path_list_valid_at(at=at))
    if site:
        paths = [p for p in paths if site in (p.src.code, p.dst.code)]
    cells = path_observations(at=at, paths=paths)
    findings = list(finding_list_active_at(at)[:50])
    if site:
        findings = [f for f in findings if _finding_touches_site(f, site, cells)]
    windows = maintenance_list(start=at, end=at + k.MAINTENANCE_HORIZON)
    silent, total = agent_list_silent(now=now)
    counts: dict[str, int] = defaultdict(int)
    for cell in cells.values():
        counts[cell.health.status] += 1
    return OverviewData(
        at=at,
        sources=_site_order({c[0] for c in cells}),
        destinations=_site_order({c[1] for c in cells}),
        cells=cells,
        findings=findings,
        maintenance_running=[w for w in windows if w.running_at(at)],
        maintenance_upcoming=[w for w in windows if w.start > at],
        silent_agents=silent,
        agent_count=total,
        incidents=incident_list_open(),
        latest_data=latest_measurement_time(),
        status_counts=dict(counts),
    )


def _finding_touches_site(finding: Finding, site: str, cells) -> bool:
    subject = finding.subject or {}
    if site in (subject.get("src"), subject.get("dst"), subject.get("site")):
        return True
    return bool(subject.get("equipment") or subject.get("trunk"))


# --------------------------------------------------------------------------- map


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


# --------------------------------------------------------------------------- path page


@dataclass
class TestRows:
    """Tests of one direction: one row per test (short ranges) or per bucket (avg, min, max)."""

    bucketed: bool
    times: list[datetime] = field(default_factory=list)
    values: list[float | None] = field(default_factory=list)
    lows: list[float | None] = field(default_factory=list)
    highs: list[float | None] = field(default_factory=list)
    details: list[dict] = field(default_factory=list)


@dataclass
class DirectionData:
    src: str
    dst: str
    path: Path | None
    versions: list[Path]
    tcp: TestRows
    failed: list[dict]
    udp_loss: TestRows
    owamp_loss: TestRows
    delay_min: TestRows
    delay_median: TestRows
    traceroutes: list[dict]
    derived_samples: dict


def _bucket(seconds: int) -> timedelta:
    return timedelta(seconds=seconds)


def _tcp_tests(src_id: int, dst_id: int, start, end, bucket_s: int, raw: bool) -> tuple[TestRows, list[dict]]:
    params = {"src": src_id, "dst": dst_id, "start": start, "end": end, "bucket": _bucket(bucket_s)}
    failed = _rows(
        """SELECT time, error FROM measurements_throughputtest
           WHERE src_id = %(src)s AND dst_id = %(dst)s AND time >= %(start)s AND time < %(end)s
             AND error IS NOT NULL ORDER BY time, id""",
        params,
    )
    if raw:
        rows = _rows(
            """SELECT time, throughput_bps, window_bytes, rtt_ms, retransmits, streams, mss_bytes, src_host, dst_host
               FROM measurements_throughputtest
               WHERE src_id = %(src)s AND dst_id = %(dst)s AND protocol = 'tcp' AND error IS NULL
                 AND time >= %(start)s AND time < %(end)s ORDER BY time, id""",
            params,
        )
        return TestRows(bucketed=False, times=[r["time"] for r in rows], values=[r["throughput_bps"] for r in rows],
                        details=rows), failed
    rows = _rows(
        """SELECT time_bucket(%(bucket)s, time) AS time, avg(throughput_bps) AS value, min(throughput_bps) AS low,
                  max(throughput_bps) AS high, count(*) AS tests
           FROM measurements_throughputtest
           WHERE src_id = %(src)s AND dst_id = %(dst)s AND protocol = 'tcp' AND error IS NULL
             AND time >= %(start)s AND time < %(end)s
           GROUP BY 1 ORDER BY 1""",
        params,
    )
    return _bucketed(rows), failed


def _bucketed(rows: list[dict]) -> TestRows:
    return TestRows(bucketed=True, times=[r["time"] for r in rows], values=[r["value"] for r in rows],
                    lows=[r.get("low") for r in rows], highs=[r.get("high") for r in rows], details=rows)


def _udp_loss(src_id, dst_id, start, end, bucket_s, raw) -> TestRows:
    params = {"src": src_id, "dst": dst_id, "start": start, "end": end, "bucket": _bucket(bucket_s)}
    if raw:
        rows = _rows(
            """SELECT time, packets_lost::float8 / packets_sent AS value, packets_lost, packets_sent, offered_bps,
                      throughput_bps
               FROM measurements_throughputtest
               WHERE src_id = %(src)s AND dst_id = %(dst)s AND protocol = 'udp' AND error IS NULL
                 AND packets_sent > 0 AND time >= %(start)s AND time < %(end)s ORDER BY time, id""",
            params,
        )
        return TestRows(bucketed=False, times=[r["time"] for r in rows], values=[r["value"] for r in rows],
                        details=rows)
    rows = _rows(
        """SELECT time_bucket(%(bucket)s, time) AS time, sum(packets_lost)::float8 / sum(packets_sent) AS value,
                  sum(packets_lost) AS packets_lost, sum(packets_sent) AS packets_sent
           FROM measurements_throughputtest
           WHERE src_id = %(src)s AND dst_id = %(dst)s AND protocol = 'udp' AND error IS NULL
             AND packets_sent > 0 AND time >= %(start)s AND time < %(end)s
           GROUP BY 1 ORDER BY 1""",
        params,
    )
    return _bucketed(rows)


def _owamp(src_id, dst_id, start, end, bucket_s, raw) -> tuple[TestRows, TestRows, TestRows]:
    """Loss, minimum delay and median delay of the one-way probes (per session, or per bucket)."""
    params = {"src": src_id, "dst": dst_id, "start": start, "end": end, "bucket": _bucket(bucket_s)}
    if raw:
        rows = _rows(
            """SELECT time, packets_lost, packets_sent, packets_lost::float8 / packets_sent AS loss,
                      delay_min_ms, delay_median_ms, delay_max_ms, jitter_ms, reordered, duplicates
               FROM measurements_owamptest
               WHERE src_id = %(src)s AND dst_id = %(dst)s AND error IS NULL AND packets_sent > 0
                 AND time >= %(start)s AND time < %(end)s ORDER BY time, id""",
            params,
        )
    else:
        rows = _rows(
            """SELECT time_bucket(%(bucket)s, time) AS time, sum(packets_lost) AS packets_lost,
                      sum(packets_sent) AS packets_sent, sum(packets_lost)::float8 / sum(packets_sent) AS loss,
                      min(delay_min_ms) AS delay_min_ms, avg(delay_median_ms) AS delay_median_ms,
                      max(delay_max_ms) AS delay_max_ms
               FROM measurements_owamptest
               WHERE src_id = %(src)s AND dst_id = %(dst)s AND error IS NULL AND packets_sent > 0
                 AND time >= %(start)s AND time < %(end)s
               GROUP BY 1 ORDER BY 1""",
            params,
        )
    times = [r["time"] for r in rows]
    return (
        TestRows(bucketed=not raw, times=times, values=[r["loss"] for r in rows], details=rows),
        TestRows(bucketed=not raw, times=times, values=[r["delay_min_ms"] for r in rows], details=rows),
        TestRows(bucketed=not raw, times=times, values=[r["delay_median_ms"] for r in rows], details=rows),
    )


def _traceroutes(src_id, dst_id, start, end) -> list[dict]:
    """Route changes seen by traceroute: the last traceroute before the range (so a change at the range
    start shows) or the first in it, then each one whose hop list differs from the one before it.

    Hourly traceroutes over a year are thousands of identical hop lists: the database keeps the first
    of each run of equal lists, so consecutive rows returned always differ."""
    return _rows(
        """SELECT time, hops, pmtu_bytes FROM (
               SELECT time, hops, pmtu_bytes, lag(hops) OVER (ORDER BY time, id) AS previous,
                      row_number() OVER (ORDER BY time, id) AS n
               FROM measurements_traceroute
               WHERE src_id = %(src)s AND dst_id = %(dst)s AND error IS NULL AND time < %(end)s
                 AND time >= coalesce((SELECT max(time) FROM measurements_traceroute
                                       WHERE src_id = %(src)s AND dst_id = %(dst)s AND error IS NULL
                                         AND time < %(start)s), %(start)s)) t
           WHERE n = 1 OR hops IS DISTINCT FROM previous
           ORDER BY time""",
        {"src": src_id, "dst": dst_id, "start": start, "end": end},
    )


def _positive_median(column: str) -> str:
    # The median _median of derived.py takes (positive, finite values; the mean of the two middle ones).
    return (f"percentile_cont(0.5) WITHIN GROUP (ORDER BY {column}) "
            f"FILTER (WHERE {column} > 0 AND {column}::float8 < 'Infinity'::float8)")


def _derived_samples(src_id, dst_id, start, end) -> dict:
    """Inputs of the derived figures over the range: medians of TCP RTT, MSS and window and of the probes'
    minimum delay (computed by the database: a year holds ~100 000 probe sessions), probe loss.

    Each median is handed on as a one-value list: the median of it is itself."""
    tcp = _rows(
        f"""SELECT {_positive_median("rtt_ms")} AS rtt, {_positive_median("mss_bytes")} AS mss,
                   {_positive_median("window_bytes")} AS window
            FROM measurements_throughputtest
            WHERE src_id = %s AND dst_id = %s AND protocol = 'tcp' AND error IS NULL AND time >= %s AND time < %s""",
        [src_id, dst_id, start, end],
    )[0]
    probes = _rows(
        f"""SELECT coalesce(sum(packets_lost), 0) AS lost, coalesce(sum(packets_sent), 0) AS sent,
                   {_positive_median("delay_min_ms")} AS delay
            FROM measurements_owamptest
            WHERE src_id = %s AND dst_id = %s AND error IS NULL AND packets_sent > 0 AND time >= %s AND time < %s""",
        [src_id, dst_id, start, end],
    )[0]

    def one(value) -> list:
        return [] if value is None else [value]

    return {
        "rtts": one(tcp["rtt"]),
        "mss": one(tcp["mss"]),
        "windows": one(tcp["window"]),
        "lost": int(probes["lost"]),
        "sent": int(probes["sent"]),
        "delays": one(probes["delay"]),
    }


def path_versions_in_range(*, src: str, dst: str, start: datetime, end: datetime) -> list[Path]:
    """Versions of a path direction in force at some time of [start, end), oldest first, hops prefetched."""
    return list(
        Path.objects.filter(src__code=src, dst__code=dst, valid_from__lt=end)
        .filter(Q(valid_to__isnull=True) | Q(valid_to__gt=start))
        .select_related("src", "dst")
        .prefetch_related(
            Prefetch("hops", queryset=PathHop.objects.select_related("equipment", "interface").order_by("position"))
        )
        .order_by("valid_from")
    )


def direction_data(*, src: str, dst: str, start: datetime, end: datetime, bucket_s: int, raw: bool) -> DirectionData:
    """Everything the path page draws for one direction."""
    sites = dict(Site.objects.filter(code__in=[src, dst]).values_list("code", "id"))
    versions = path_versions_in_range(src=src, dst=dst, start=start, end=end)
    current = versions[-1] if versions else None
    if src not in sites or dst not in sites:
        empty = TestRows(bucketed=not raw)
        return DirectionData(src, dst, current, versions, empty, [], empty, empty, empty, empty, [], {})
    s, d = sites[src], sites[dst]
    tcp, failed = _tcp_tests(s, d, start, end, bucket_s, raw)
    owamp_loss, delay_min, delay_median = _owamp(s, d, start, end, bucket_s, raw)
    return DirectionData(
        src=src, dst=dst, path=current, versions=versions, tcp=tcp, failed=failed,
        udp_loss=_udp_loss(s, d, start, end, bucket_s, raw), owamp_loss=owamp_loss, delay_min=delay_min,
        delay_median=delay_median, traceroutes=_traceroutes(s, d, start, end),
        derived_samples=_derived_samples(s, d, start, end),
    )


def path_site_pair_exists(src: str, dst: str) -> bool:
    return Path.objects.filter(
        Q(src__code=src, dst__code=dst) | Q(src__code=dst, dst__code=src)
    ).exists()


def path_interfaces(paths: Iterable[Path]) -> list[Interface]:
    """Interfaces a path crosses (``wanmon.inventory.membership``, ports known): the ports its hops leave by,
    every member of a trunk such a port belongs to (flows hash onto any member), and the far ends by which it
    arrives. In path order (arrival before departure at each hop), without duplicates."""
    hops = [path_membership_hops(p) for p in paths if p is not None]
    equipment = {hop.equipment for h in hops for hop in h}
    if not equipment:
        return []
    inputs = path_membership_inputs()
    ranked: dict[int, tuple] = {}
    for iface in Interface.objects.select_related("equipment").filter(equipment__name__in=equipment):
        element = Element(iface.equipment.name, iface.name)
        for index, h in enumerate(hops):
            for m in memberships(element, h, inputs.bundles, inputs.circuits):
                if not m.port_known:
                    continue
                key = (index, m.position, m.direction != IN, m.via != VIA_HOP, iface.name)
                if iface.pk not in ranked or key < ranked[iface.pk][0]:
                    ranked[iface.pk] = (key, iface)
    return [iface for _, iface in sorted(ranked.values(), key=lambda x: x[0])]


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


# --------------------------------------------------------------------------- interfaces


@dataclass
class InterfaceSeries:
    """Bucketed rates of one interface (bit/s, fractions of the speed, events per second)."""

    times: list[datetime] = field(default_factory=list)
    in_bps: list[float | None] = field(default_factory=list)
    out_bps: list[float | None] = field(default_factory=list)
    in_utilisation: list[float | None] = field(default_factory=list)
    out_utilisation: list[float | None] = field(default_factory=list)
    in_errors_per_s: list[float | None] = field(default_factory=list)
    out_errors_per_s: list[float | None] = field(default_factory=list)
    in_discards_per_s: list[float | None] = field(default_factory=list)
    out_discards_per_s: list[float | None] = field(default_factory=list)

    def mean(self, name: str) -> float | None:
        values = [v for v in getattr(self, name) if v is not None]
        return sum(values) / len(values) if values else None


def interface_table_for_bucket(bucket_s: int) -> str:
    """The coarsest table whose width divides the bucket: raw rates, or the 5 min / 1 h / 1 d rollup."""
    for width, table in reversed(LEVELS):
        if bucket_s % width == 0:
            return table
    return RAW_RATES


def _weighted(column: str, weight: str) -> str:
    return f"sum({column} * {weight}) / nullif(sum(CASE WHEN {column} IS NOT NULL THEN {weight} END), 0)"


def interface_series(
    *, interface_ids: Sequence[int], start: datetime, end: datetime, bucket_s: int
) -> tuple[str, dict[int, InterfaceSeries]]:
    """Rates of the interfaces per bucket, read from the table the bucket allows; returns (table, series).

    Traffic is the time-weighted mean, utilisation the maximum (the congestion that matters), errors
    and discards the mean rate over the bucket.
    """
    table = interface_table_for_bucket(bucket_s)
    out: dict[int, InterfaceSeries] = {i: InterfaceSeries() for i in interface_ids}
    if not interface_ids:
        return table, out
    if table == RAW_RATES:
        columns = f"""
            {_weighted("in_bps", "interval_s")} AS in_bps, {_weighted("out_bps", "interval_s")} AS out_bps,
            max(in_utilisation) AS in_utilisation, max(out_utilisation) AS out_utilisation,
            {_weighted("in_errors_per_s", "interval_s")} AS in_errors_per_s,
            {_weighted("out_errors_per_s", "interval_s")} AS out_errors_per_s,
            {_weighted("in_discards_per_s", "interval_s")} AS in_discards_per_s,
            {_weighted("out_discards_per_s", "interval_s")} AS out_discards_per_s"""
    else:  # rollups keep event counts and the covered seconds: back to a rate
        columns = f"""
            {_weighted("in_bps_avg", "covered_s")} AS in_bps, {_weighted("out_bps_avg", "covered_s")} AS out_bps,
            max(in_utilisation_max) AS in_utilisation, max(out_utilisation_max) AS out_utilisation,
            sum(in_errors) / nullif(sum(covered_s), 0) AS in_errors_per_s,
            sum(out_errors) / nullif(sum(covered_s), 0) AS out_errors_per_s,
            sum(in_discards) / nullif(sum(covered_s), 0) AS in_discards_per_s,
            sum(out_discards) / nullif(sum(covered_s), 0) AS out_discards_per_s"""
    rows = _rows(
        f"""SELECT interface_id, time_bucket(%(bucket)s, time) AS bucket, {columns}
            FROM {table}
            WHERE interface_id = ANY(%(ids)s) AND time >= %(start)s AND time < %(end)s
            GROUP BY interface_id, bucket ORDER BY interface_id, bucket""",
        {"ids": list(interface_ids), "start": start, "end": end, "bucket": _bucket(bucket_s)},
    )
    for row in rows:
        series = out[row["interface_id"]]
        series.times.append(row["bucket"])
        for name in ("in_bps", "out_bps", "in_utilisation", "out_utilisation", "in_errors_per_s",
                     "out_errors_per_s", "in_discards_per_s", "out_discards_per_s"):
            getattr(series, name).append(row[name])
    return table, out


def interface_latest(*, interface_ids: Sequence[int], at: datetime) -> dict[int, dict]:
    """The newest rate of each interface up to ``at`` (within the grid's look-back)."""
    if not interface_ids:
        return {}
    rows = _rows(
        """SELECT DISTINCT ON (interface_id) interface_id, time, in_bps, out_bps, in_utilisation, out_utilisation,
                  in_errors_per_s, out_errors_per_s, in_discards_per_s, out_discards_per_s, oper_status
           FROM measurements_interfacerate
           WHERE interface_id = ANY(%s) AND time > %s AND time <= %s
           ORDER BY interface_id, time DESC, id DESC""",
        [list(interface_ids), at - k.LATEST_LOOKBACK, at],
    )
    return {r["interface_id"]: r for r in rows}


def interface_discontinuities(*, interface_ids: Sequence[int], start: datetime, end: datetime) -> list[dict]:
    if not interface_ids:
        return []
    return _rows(
        """SELECT d.time, d.previous_time, d.code, d.reason, e.name AS equipment, i.name AS interface
           FROM measurements_counterdiscontinuity d
           JOIN inventory_interface i ON i.id = d.interface_id
           JOIN inventory_equipment e ON e.id = i.equipment_id
           WHERE d.interface_id = ANY(%s) AND d.time >= %s AND d.time < %s ORDER BY d.time""",
        [list(interface_ids), start, end],
    )


# --------------------------------------------------------------------------- equipment, interface, trunk pages


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


def equipment_get(name: str) -> Equipment | None:
    return Equipment.objects.select_related("site", "carrier").filter(name=name).first()


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


def interface_get(equipment: str, name: str) -> Interface | None:
    return Interface.objects.select_related("equipment__site", "equipment__carrier").filter(
        equipment__name=equipment, name=name
    ).first()


def interface_paths(interface: Interface, *, at: datetime) -> tuple[list[Crossing], list[Crossing]]:
    """Paths leaving by this port or a trunk sibling of it, and paths through its box whose port is unknown."""
    by_port = crossings(path_list_through_element(equipment=interface.equipment, interface=interface, at=at),
                        interface.equipment)
    all_paths = crossings(path_list_through_element(equipment=interface.equipment, at=at), interface.equipment)
    known = {c.path.pk for c in by_port}
    unknown = [c for c in all_paths if c.path.pk not in known and c.interface is None]
    return by_port, unknown


def trunk_list_for_equipment(equipment: Equipment) -> list[Trunk]:
    return list(
        Trunk.objects.filter(members__equipment=equipment).distinct()
        .prefetch_related("members__equipment").order_by("name")
    )


def trunk_list() -> list[Trunk]:
    return list(Trunk.objects.prefetch_related("members__equipment").order_by("name"))


def trunk_get(name: str) -> Trunk | None:
    return Trunk.objects.prefetch_related("members__equipment").filter(name=name).first()


def trunk_paths(trunk: Trunk, *, at: datetime) -> list[Path]:
    return path_list_through_trunk(trunk=trunk, at=at)
