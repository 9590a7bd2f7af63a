"""Evidence the rules read and the RuleFinding they return (stored as a diagnosis.models.Finding).

Frozen dataclasses, no Django: the database selectors fill them for one look-back
window (``EvidenceBundle.window_start`` .. ``now``); tests build them by hand.
Units are in the field names; times are timezone-aware UTC datetimes.

Conventions the selectors must respect:

* ``None`` means *unknown*, never zero (a test without a retransmit count has
  ``retransmits=None``).
* Path hops are element names in path order: an equipment (``"geant-fra"``), an
  interface (``"geant-fra:xe-1/0/0"``) or a trunk name.
* Interface rate rows only exist for intervals that produced a valid rate; an
  interval discarded for a counter reset appears in ``discontinuities`` instead.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from collectors.records.types import iso_z
from wanmon.core.jsonable import jsonable
from wanmon.diagnosis import codes
from wanmon.diagnosis.baseline import LearnedLevel, learn_level, level_at
from wanmon.diagnosis.stats import median

__all__ = [
    "AgentSchedule",
    "CounterDiscontinuity",
    "DerivedFigures",
    "EquipmentInfo",
    "EvidenceBundle",
    "RuleFinding",
    "HostTcpEvidence",
    "InterfaceEvidence",
    "InterfaceRate",
    "InterfaceStatus",
    "KnownHost",
    "MaintenanceEvidence",
    "OwampTest",
    "PathDirection",
    "PathEvidence",
    "PathSummary",
    "ThroughputTest",
    "TracerouteObservation",
    "TrunkEvidence",
    "element_subject",
    "path_key",
    "path_subject",
    "split_element",
    "summarise_path",
]


# --------------------------------------------------------------------------- measurements of a path direction
@dataclass(frozen=True)
class ThroughputTest:
    """One nuttcp-style test (TCP or UDP) on a path direction."""

    time: datetime
    protocol: str  # "tcp" | "udp"
    throughput_bps: float | None
    duration_s: float | None = None
    streams: int = 1
    window_bytes: int | None = None
    mss_bytes: int | None = None
    rtt_ms: float | None = None
    retransmits: int | None = None  # None: unknown, never 0
    offered_bps: float | None = None  # UDP
    packets_sent: int | None = None  # UDP
    packets_lost: int | None = None  # UDP
    src_host: str | None = None  # address (or name) of the sending host
    dst_host: str | None = None  # address (or name) of the receiving host
    error: str | None = None  # set when the test failed (connection refused, timeout ...)
    tool: str | None = None
    measurement_id: int | str | None = None


@dataclass(frozen=True)
class OwampTest:
    """One owamp session (typically 600 packets at 10/s) on a path direction."""

    time: datetime
    packets_sent: int
    packets_lost: int
    duplicates: int = 0
    reordered: int = 0
    delay_min_ms: float | None = None
    delay_median_ms: float | None = None
    delay_max_ms: float | None = None
    jitter_ms: float | None = None
    clock_error_ms: float | None = None
    lost_at: tuple[datetime, ...] = ()  # optional per-packet loss times
    measurement_id: int | str | None = None
    # Sessions summed into this one (the cycle buckets dense series), each session's time: the sampling grid the
    # periodic-loss rule judges a period against. Empty: one session, at ``time``.
    session_times: tuple[datetime, ...] = ()


@dataclass(frozen=True)
class TracerouteObservation:
    """One traceroute: hop element names in order (None / '*' for silent hops) and the path MTU."""

    time: datetime
    hops: tuple[str | None, ...]
    pmtu_bytes: int | None = None
    measurement_id: int | str | None = None


@dataclass(frozen=True)
class PathSummary:
    """Aggregate figures of a path direction over a period.

    Used for the path's own baseline (an earlier period) and for the reverse
    direction's reference.  Build it with ``summarise_path``.
    """

    start: datetime | None
    end: datetime | None
    tcp_tests: int = 0
    tcp_throughput_median_bps: float | None = None
    tcp_throughput_mad_bps: float | None = None  # median absolute deviation
    tcp_loss_fraction: float | None = None  # retransmit estimate, None = unknown
    probe_packets: int = 0  # owamp + UDP packets sent
    probe_loss_fraction: float | None = None  # owamp + UDP, None = no probes
    delay_min_ms: float | None = None  # minimum one-way delay
    delay_median_ms: float | None = None  # median of the sessions' median one-way delay
    rtt_ms: float | None = None
    mss_bytes: int | None = None
    traceroute_hops: tuple[str | None, ...] | None = None  # last traceroute of the period
    # The distinct hop lists the period's traceroutes saw, the most recently seen first (at most
    # ROUTES_REMEMBERED): the routes the path takes in its ordinary state, ECMP alternates among them, so that a
    # traceroute of the window on one of them is no new route.
    traceroute_routes: tuple[tuple[str | None, ...], ...] = ()
    tcp_excluded_tests: int = 0  # results left out of the level (excluded periods, degraded days, clear drops)
    tcp_level: LearnedLevel | None = None  # the learned level with its time-of-day/week profile

    def tcp_reference_at(self, t: datetime) -> float | None:
        """The level a TCP result at ``t`` is judged against (its hour's when the history shows one)."""
        if self.tcp_level is None:
            return self.tcp_throughput_median_bps
        return level_at(self.tcp_level, t)


@dataclass(frozen=True)
class PathDirection:
    """A path direction src -> dst, the subject of path findings; ``key`` ('SRC->DST') names it in evidence."""

    src: str
    dst: str

    @property
    def key(self) -> str:
        return path_key(self.src, self.dst)


@dataclass(frozen=True)
class PathEvidence(PathDirection):
    """Everything measured on one path direction within the look-back window."""

    capacity_bps: float
    hops: tuple[str, ...]
    throughput_tests: tuple[ThroughputTest, ...] = ()
    owamp_tests: tuple[OwampTest, ...] = ()
    traceroutes: tuple[TracerouteObservation, ...] = ()
    baseline: PathSummary | None = None  # the path's own earlier period
    reverse: PathSummary | None = None  # reference for dst->src when that direction is not in the bundle
    # (time, throughput_bps) of the completed TCP tests of the LEVEL_SHIFT_WINDOW_S before the window: a lasting
    # level change is judged on the median of a day of results, longer than the window
    earlier_tcp_results: tuple[tuple[datetime, float], ...] = ()
    # the last completed UDP test before the window (within the baseline period): UDP tests come every 6-12 h, and a
    # rule that needs one beside the window's TCP (TCP_ONLY_DEGRADATION) would otherwise find, lose and find again
    # the same fault as the window slides past each UDP test. Kept apart from ``throughput_tests``: the window's
    # loss estimate is the window's.
    udp_before: ThroughputTest | None = None
    # the last DELAY_LEVEL_MIN_SAMPLES owamp sessions before the window (not outages): the delay level the window's
    # first sessions left; with hourly owamp a level that ended an hour into the window has one session in it
    owamp_before: tuple[OwampTest, ...] = ()
    # (time, throughput_bps, room_bps) of the baseline period's completed TCP tests where a polled port of the path
    # measured the room the other traffic left them (speed less load, the tightest port): what the path's tests get
    # of their room is learned from it (``room.room_model``), and the day before the window is judged by it
    room_history: tuple[tuple[datetime, float, float], ...] = ()


# --------------------------------------------------------------------------- hosts
@dataclass(frozen=True)
class HostTcpEvidence:
    """Agent-reported TCP settings of a transfer host (one snapshot; several snapshots per host are allowed)."""

    site: str
    host: str
    time: datetime | None = None
    rmem_max: int | None = None  # net.core.rmem_max
    wmem_max: int | None = None  # net.core.wmem_max
    tcp_rmem: tuple[int, int, int] | None = None  # net.ipv4.tcp_rmem (min, default, max)
    tcp_wmem: tuple[int, int, int] | None = None  # net.ipv4.tcp_wmem
    congestion_control: str | None = None  # net.ipv4.tcp_congestion_control
    mtu: int | None = None
    address: str | None = None
    nic_speed_mbps: float | None = None  # link speed of the test interface; None when the host could not tell


@dataclass(frozen=True)
class KnownHost:
    """A test/transfer host of the inventory (maps test addresses to sites and names)."""

    site: str
    name: str
    address: str | None = None


@dataclass(frozen=True)
class AgentSchedule:
    """How often a site's agent runs one of its collectors (e.g. host_tcp every 300 s)."""

    site: str
    collector: str
    interval_s: float
    host: str | None = None


# --------------------------------------------------------------------------- network elements
@dataclass(frozen=True)
class InterfaceRate:
    """One valid polling interval of an interface (rates are per second over the interval ending at ``time``).

    The six rates are those of the agent's ``collectors.counters.InterfaceRates``, listed again on purpose: built on
    it, this class would need keyword-only fields, and rows become these by the hundred thousand a cycle
    (``selectors.records.interface_rate_of``, positional: 1.0 us a row against 1.4 us by keyword).
    """

    time: datetime
    in_bps: float | None = None
    out_bps: float | None = None
    in_errors_per_s: float | None = None
    out_errors_per_s: float | None = None
    in_discards_per_s: float | None = None
    out_discards_per_s: float | None = None
    in_pkts_per_s: float | None = None
    out_pkts_per_s: float | None = None
    oper_status: str | None = None
    interval_s: float | None = None


@dataclass(frozen=True)
class CounterDiscontinuity:
    """An interval dropped by the rate computation, e.g. reason 'sysuptime_reset' or 'discontinuity_time'."""

    time: datetime
    reason: str
    previous_time: datetime | None = None


@dataclass(frozen=True)
class InterfaceStatus:
    """An oper-status sample (also available when no rate could be computed)."""

    time: datetime
    oper_status: str


@dataclass(frozen=True)
class InterfaceEvidence:
    """SNMP-derived rates, status and counter discontinuities of one interface."""

    equipment: str
    interface: str
    speed_bps: float | None
    rates: tuple[InterfaceRate, ...] = ()
    discontinuities: tuple[CounterDiscontinuity, ...] = ()
    status: tuple[InterfaceStatus, ...] = ()
    mtu_bytes: int | None = None

    @property
    def name(self) -> str:
        return f"{self.equipment}:{self.interface}"


@dataclass(frozen=True)
class TrunkEvidence:
    """A bundle (LAG) and its member interfaces, at one end or at both (members on two pieces of equipment)."""

    name: str
    members: tuple[InterfaceEvidence, ...]

    @property
    def aggregate_bps(self) -> float:
        """The bundle's capacity: the member speeds of one end added up (both ends listed count once)."""
        per_end: dict[str, float] = {}
        for m in self.members:
            per_end[m.equipment] = per_end.get(m.equipment, 0.0) + (m.speed_bps or 0.0)
        return max(per_end.values(), default=0.0)


@dataclass(frozen=True)
class EquipmentInfo:
    """Inventory facts used to rank suspects (carrier equipment vs a site's border)."""

    name: str
    site: str | None = None
    carrier: str | None = None
    role: str | None = None


@dataclass(frozen=True)
class MaintenanceEvidence:
    """A scheduled intervention; ``affects`` holds equipment, 'equipment:interface' or trunk names."""

    reference: str
    start: datetime
    end: datetime
    impact: str  # outage | degraded | at-risk | reduced-redundancy | no-impact
    affects: tuple[str, ...] = ()  # equipment, 'equipment:interface', trunk, 'circuit:CID' or 'site:CODE'
    carrier: str | None = None
    description: str | None = None
    element_impacts: Mapping[str, str] = field(default_factory=dict)  # per-affect impact overriding ``impact``

    def __hash__(self) -> int:
        return hash((self.reference, self.start, self.end, self.affects))

    def impact_for(self, element: str) -> str:
        """The impact on one affected element (its own, else the window's)."""
        return self.element_impacts.get(element) or self.impact


@dataclass(frozen=True)
class EvidenceBundle:
    """All evidence of one diagnosis run (one look-back window ending at ``now``)."""

    paths: tuple[PathEvidence, ...]
    window_start: datetime | None = None
    hosts: tuple[HostTcpEvidence, ...] = ()
    known_hosts: tuple[KnownHost, ...] = ()
    interfaces: tuple[InterfaceEvidence, ...] = ()
    trunks: tuple[TrunkEvidence, ...] = ()
    maintenance: tuple[MaintenanceEvidence, ...] = ()
    equipment: tuple[EquipmentInfo, ...] = ()
    agent_schedules: tuple[AgentSchedule, ...] = ()

    def path(self, src: str, dst: str) -> PathEvidence | None:
        for p in self.paths:
            if p.src == src and p.dst == dst:
                return p
        return None

    def all_interfaces(self) -> tuple[InterfaceEvidence, ...]:
        """Interfaces, including trunk members not listed separately."""
        seen = {i.name for i in self.interfaces}
        extra = [m for t in self.trunks for m in t.members if m.name not in seen]
        return self.interfaces + tuple(extra)


# --------------------------------------------------------------------------- findings
@dataclass(frozen=True)
class DerivedFigures:
    """The physics of a path every degraded-path finding carries (docs/diagnosis.md#the-physics)."""

    rtt_ms: float | None
    capacity_bps: float
    mss_bytes: int
    bdp_bytes: float | None
    required_window_bytes: float | None
    window_bytes: float | None
    window_limited_rate_bps: float | None
    loss_fraction: float | None
    loss_source: str | None
    loss_detection_limit: float | None
    mathis_ceiling_bps: float | None  # conservative C = 0.7, per stream
    mathis_reno_bps: float | None  # C = sqrt(3/2), per stream
    responsiveness_s: float | None
    congestion_control: str | None
    loss_packets: float | None = None  # packets (segments) of the source the loss figure comes from

    def to_dict(self) -> dict[str, Any]:
        return jsonable(self.__dict__)


@dataclass(frozen=True)
class RuleFinding:
    """One diagnosis result as a rule returns it, field for field the replay JSON of docs/scenario-format.md
    (``findings_sync`` stores it as a diagnosis.models.Finding, with its lifecycle).

    ``derived`` (path physics) is rendered into ``evidence["derived"]``; ``explained_by``
    (e.g. a maintenance reference) into ``evidence["explained_by"]``.
    """

    code: str
    severity: str
    subject: Mapping[str, str]
    start: datetime
    end: datetime
    rank: int | None = None
    summary: str = ""
    explanation: str = ""
    evidence: Mapping[str, Any] = field(default_factory=dict)
    actions: tuple[str, ...] = ()
    derived: DerivedFigures | None = None
    explained_by: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not codes.is_known(self.code):
            raise ValueError(f"unknown finding code {self.code!r}")
        if self.severity not in codes.SEVERITIES:
            raise ValueError(f"unknown severity {self.severity!r}")
        if self.end < self.start:
            raise ValueError(f"finding {self.code} ends before it starts")

    def __hash__(self) -> int:
        return hash((self.key, self.start, self.end, self.rank))

    @property
    def key(self) -> tuple[str, tuple[tuple[str, str], ...]]:
        """Deduplication key: the code and the subject."""
        return self.code, tuple(sorted(self.subject.items()))

    def to_dict(self) -> dict[str, Any]:
        """The replay / API JSON object."""
        evidence = dict(self.evidence)
        if self.derived is not None:
            evidence["derived"] = self.derived.to_dict()
        if self.explained_by:
            evidence["explained_by"] = list(self.explained_by)
        return {
            "code": self.code,
            "severity": self.severity,
            "subject": dict(self.subject),
            "start": iso_z(self.start, utc=True),
            "end": iso_z(self.end, utc=True),
            "rank": self.rank,
            "summary": self.summary,
            "explanation": self.explanation,
            "evidence": jsonable(evidence),
            "actions": list(self.actions),
        }


# --------------------------------------------------------------------------- helpers
def path_key(src: str, dst: str) -> str:
    return f"{src}->{dst}"


def path_subject(src: str, dst: str) -> dict[str, str]:
    return {"src": src, "dst": dst}


def split_element(name: str) -> tuple[str, str | None]:
    """'geant-fra:xe-1/0/0' -> ('geant-fra', 'xe-1/0/0'); 'geant-fra' -> ('geant-fra', None)."""
    equipment, sep, interface = name.partition(":")
    return (equipment, interface) if sep else (name, None)


def element_subject(name: str, trunk_names: Iterable[str] = ()) -> dict[str, str]:
    """Finding subject of a hop element: {trunk}, {equipment, interface} or {equipment}."""
    if name in set(trunk_names):
        return {"trunk": name}
    equipment, interface = split_element(name)
    return {"equipment": equipment, "interface": interface} if interface else {"equipment": equipment}


def summarise_path(
    throughput_tests: Iterable[ThroughputTest],
    owamp_tests: Iterable[OwampTest] = (),
    traceroutes: Iterable[TracerouteObservation] = (),
    start: datetime | None = None,
    end: datetime | None = None,
    excluded: Sequence[tuple[datetime, datetime]] = (),
) -> PathSummary:
    """Summarise a period of one path direction (its baseline).

    Failed tests and sessions with 100 % loss (outages) are left out of the
    rates and loss figures: an outage is not a loss rate.  The TCP level is
    learned (wanmon/diagnosis/baseline.py): ``excluded`` periods (maintenance)
    and degraded days are left out, and a time-of-day/week profile is kept
    where the history shows one.
    """

    def inside(t: datetime) -> bool:
        return (start is None or t >= start) and (end is None or t <= end)

    tests = [t for t in throughput_tests if inside(t.time)]
    tcp = [t for t in tests if t.protocol == "tcp" and t.error is None and t.throughput_bps]
    udp = [t for t in tests if t.protocol == "udp" and t.error is None and t.packets_sent]
    sessions = [o for o in owamp_tests if inside(o.time) and o.packets_sent and o.packets_lost < o.packets_sent]
    level = learn_level(((t.time, t.throughput_bps) for t in tcp if t.throughput_bps is not None), excluded, end)
    level_bps, mad = level.median_bps, level.mad_bps

    retrans_lost = 0.0
    retrans_sent = 0.0
    for t in tcp:
        if t.retransmits is None or not t.duration_s or not t.mss_bytes or t.throughput_bps is None:
            continue
        delivered = t.throughput_bps * t.duration_s / 8.0 / t.mss_bytes
        retrans_lost += t.retransmits
        retrans_sent += delivered + t.retransmits
    probe_sent = sum(o.packets_sent for o in sessions) + sum(t.packets_sent or 0 for t in udp)
    probe_lost = sum(o.packets_lost for o in sessions) + sum(t.packets_lost or 0 for t in udp)
    mins = [o.delay_min_ms for o in sessions if o.delay_min_ms is not None]
    medians = [o.delay_median_ms for o in sessions if o.delay_median_ms is not None]
    rtts = [t.rtt_ms for t in tcp if t.rtt_ms]
    msss = [t.mss_bytes for t in tcp if t.mss_bytes]
    routes = sorted((r for r in traceroutes if inside(r.time)), key=lambda r: r.time)
    times = [t.time for t in tests] + [o.time for o in sessions]
    return PathSummary(
        start=start if start is not None else (min(times) if times else None),
        end=end if end is not None else (max(times) if times else None),
        tcp_tests=len(level.rates_bps),
        tcp_excluded_tests=level.excluded,
        tcp_level=level,
        tcp_throughput_median_bps=level_bps,
        tcp_throughput_mad_bps=mad,
        tcp_loss_fraction=(retrans_lost / retrans_sent) if retrans_sent > 0 else None,
        probe_packets=int(probe_sent),
        probe_loss_fraction=(probe_lost / probe_sent) if probe_sent > 0 else None,
        delay_min_ms=min(mins) if mins else None,
        delay_median_ms=median(medians),
        rtt_ms=median(rtts),
        mss_bytes=int(statistics.median(msss)) if msss else None,
        traceroute_hops=tuple(routes[-1].hops) if routes else None,
        traceroute_routes=routes_seen((r.time, r.hops) for r in routes),
    )


#: How many distinct hop lists a baseline remembers (the most recently seen): ECMP alternates and traceroutes with
#: a silent hop here or there are a handful; more is history no rule needs.
ROUTES_REMEMBERED = 32


def routes_seen(
    observations: Iterable[tuple[datetime, Sequence[str | None]]],
) -> tuple[tuple[str | None, ...], ...]:
    """The distinct hop lists of these traceroutes (time, hops), the most recently seen first, at most
    ROUTES_REMEMBERED of them (ties in time by hop list, as the database orders them)."""
    last: dict[tuple[str | None, ...], datetime] = {}
    for t, hops in observations:
        key = tuple(hops)
        if key not in last or t > last[key]:
            last[key] = t
    ordered = sorted(last.items(), key=lambda kv: (kv[1], [h or "" for h in kv[0]]), reverse=True)
    return tuple(h for h, _ in ordered[:ROUTES_REMEMBERED])
