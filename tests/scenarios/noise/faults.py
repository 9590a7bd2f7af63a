"""Faults injected into a noisy mesh. Each changes the ground truth (paths, interfaces, hosts, clocks) from
``start_h`` (hours after the scenario start) to ``end_h`` (None: until the scenario's ``now``), and says
which finding (code and subject) a correct diagnosis must report.

The replay's baseline is the first third of the 7 days, so every fault starts after day 3.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from . import physics
from .noise import rng
from .topology import POPS, border, host_name

if TYPE_CHECKING:
    from .mesh import HostState, IfaceState, Mesh, PathState
    from .topology import PathModel


@dataclass(frozen=True)
class Fault:
    """Base: a fault that changes nothing. Subclasses override the hooks they need."""

    start_h: float
    end_h: float | None = None

    def active(self, t_h: float) -> bool:
        return self.start_h <= t_h < (self.end_h if self.end_h is not None else math.inf)

    def polled(self, mesh: Mesh) -> tuple[str, ...]:
        """Interfaces the fault's evidence needs polled (the operators poll what they care about)."""
        return ()

    def trunks(self, mesh: Mesh) -> dict[str, tuple[str, ...]]:
        return {}

    def extra_equipment(self, mesh: Mesh) -> tuple[str, ...]:
        return ()

    def iface(self, mesh: Mesh, name: str, t_h: float, st: IfaceState) -> IfaceState:
        return st

    def host(self, mesh: Mesh, site: str, t_h: float, st: HostState) -> HostState:
        return st

    def path(self, mesh: Mesh, path: PathModel, t_h: float, st: PathState) -> PathState:
        return st

    def clock_offset_ms(self, mesh: Mesh, site: str, t_h: float) -> float:
        return 0.0

    def owamp_times(self, mesh: Mesh, path: PathModel) -> list[float] | None:
        return None

    def maintenance(self, mesh: Mesh) -> list[dict]:
        return []

    def expect(self, mesh: Mesh) -> list[dict]:
        return []


def _path_subject(src: str, dst: str) -> dict:
    return {"src": src, "dst": dst}


def _iface_subject(name: str) -> dict:
    eq, _, ifname = name.partition(":")
    return {"equipment": eq, "interface": ifname}


@dataclass(frozen=True)
class DirectionFault(Fault):
    """A fault on the direction ``src`` -> ``dst`` of a path, found as ``code`` about that direction. While it
    lasts, :meth:`change` says what it does to that direction's state."""

    src: str = ""
    dst: str = ""
    code: str = ""

    def hits(self, path: PathModel) -> bool:
        return path.key == (self.src, self.dst)

    def change(self, st: PathState) -> PathState:
        return st

    def path(self, mesh, path, t_h, st):
        return self.change(st) if self.hits(path) and self.active(t_h) else st

    def expect(self, mesh):
        return [{"code": self.code, "subject": _path_subject(self.src, self.dst)}]


@dataclass(frozen=True)
class PairFault(DirectionFault):
    """A fault on both directions of the pair ``src`` <-> ``dst``, found about each."""

    def hits(self, path: PathModel) -> bool:
        return {path.src, path.dst} == {self.src, self.dst}

    def expect(self, mesh):
        return [
            {"code": self.code, "subject": _path_subject(a, b)}
            for a, b in ((self.src, self.dst), (self.dst, self.src))
        ]


@dataclass(frozen=True)
class InterfaceFault(Fault):
    """A fault of one polled interface (``equipment:name``), found as ``code`` about it. While it lasts,
    :meth:`change` says what it does to the interface's state."""

    interface: str = ""
    code: str = ""

    def polled(self, mesh):
        return (self.interface,)

    def lasts(self, t_h: float) -> bool:
        return self.active(t_h)

    def change(self, st: IfaceState, t_h: float) -> IfaceState:
        return st

    def iface(self, mesh, name, t_h, st):
        return self.change(st, t_h) if name == self.interface and self.lasts(t_h) else st

    def expect(self, mesh):
        return [{"code": self.code, "subject": _iface_subject(self.interface)}]


@dataclass(frozen=True)
class PathLoss(DirectionFault):
    """Random loss on one path direction (a dirty fibre on a link nobody polls)."""

    loss: float = 1e-4
    code: str = "LOSS_LIMITED"

    def change(self, st):
        return replace(st, loss_fwd=st.loss_fwd + self.loss)


@dataclass(frozen=True)
class RateCap(DirectionFault):
    """Every protocol on one path direction is held to ``cap_bps`` (a policer, a failover onto a thin link)."""

    cap_bps: float = 8e9
    code: str = "UNEXPLAINED_DEGRADATION"
    #: A collapse of one direction while the other keeps its rate is also, correctly, an ASYMMETRIC_PATH.
    also_accepted: tuple[str, ...] = ()

    def change(self, st):
        return replace(st, cap_bps=min(st.cap_bps, self.cap_bps))

    def expect(self, mesh):
        (found,) = super().expect(mesh)
        return [{**found, "also_accepted": list(self.also_accepted)} if self.also_accepted else found]


@dataclass(frozen=True)
class RateFactor(DirectionFault):
    """Every protocol on one path direction loses a fraction of its rate (an inline device slower than the line)."""

    factor: float = 0.8
    code: str = "UNEXPLAINED_DEGRADATION"

    def change(self, st):
        return replace(st, rate_factor=st.rate_factor * self.factor)


@dataclass(frozen=True)
class TcpOnly(DirectionFault):
    """TCP collapses on one direction while UDP and owamp stay clean (duplex mismatch, a middlebox)."""

    factor: float = 0.08
    code: str = "TCP_ONLY_DEGRADATION"

    def change(self, st):
        return replace(st, tcp_factor=self.factor)


@dataclass(frozen=True)
class EquipmentFault(Fault):
    """A fault of one router (``equipment``): while it lasts, :meth:`change` says what it does to every path
    direction through it."""

    equipment: str = ""

    def change(self, st: PathState) -> PathState:
        return st

    def path(self, mesh, path, t_h, st):
        return self.change(st) if self.equipment in st.pops and self.active(t_h) else st


@dataclass(frozen=True)
class EquipmentLoss(EquipmentFault):
    """A line card of a router drops a fraction of every packet it forwards: every path through it suffers."""

    loss: float = 2e-4

    def change(self, st):
        return replace(st, loss_fwd=st.loss_fwd + self.loss)

    def expect(self, mesh):
        return [{"code": "SHARED_EQUIPMENT_SUSPECT", "subject": {"equipment": self.equipment}, "rank": 1}]


@dataclass(frozen=True)
class CrcErrors(InterfaceFault):
    """A patch panel going bad: CRC (input) errors rising slowly, from none to ``max_per_s`` over ``ramp_h``."""

    max_per_s: float = 2.0
    ramp_h: float = 72.0
    code: str = "INTERFACE_ERRORS"

    def change(self, st, t_h):
        rate = self.max_per_s * min(1.0, (t_h - self.start_h) / self.ramp_h)
        return replace(st, in_errors_per_s=st.in_errors_per_s + rate)


@dataclass(frozen=True)
class MicroBurstDiscards(InterfaceFault):
    """An egress port with too shallow buffers drops micro-bursts at moderate load (``util`` ~ 45 %)."""

    util: float = 0.45
    discards_per_s: float = 15.0
    code: str = "INTERFACE_ERRORS"

    def change(self, st, t_h):
        util = self.util + 0.05 * math.sin(t_h * 0.9)
        return replace(st, util_out=util, out_discards_per_s=self.discards_per_s * util / self.util)


@dataclass(frozen=True)
class Congestion(InterfaceFault):
    """Unplanned traffic saturates an egress link: ~99 % utilisation, tail drops, a standing queue."""

    loss: float = 2e-3
    queue_ms: float = 8.0
    code: str = "LINK_CONGESTION"

    def change(self, st, t_h):
        pkts = st.speed_bps * 0.99 / 8 / 3000
        return replace(st, util_out=0.99, out_discards_per_s=st.out_discards_per_s + self.loss * pkts)

    def path(self, mesh, path, t_h, st):
        if (self.interface, "out") in path.crossings and self.active(t_h):
            return replace(st, queue_ms=st.queue_ms + self.queue_ms)
        return st


@dataclass(frozen=True)
class PeriodicReceiverLoss(DirectionFault):
    """A periodic job on the receiving host (every ``period_min``) drops 10-70 % of the packets of the
    following second on every path into it; the path ``src`` -> host is monitored by owamp every 10 minutes."""

    period_min: float = 30.0
    phase_min: float = 7.3
    code: str = "PERIODIC_LOSS"

    def owamp_times(self, mesh, path):
        if path.key != (self.src, self.dst):
            return None
        r = rng(mesh.spec.seed, "periodic-owamp")
        # Sessions of 60 s every 10 min on a fixed grid (the powstream schedule), starting at minute 6.8.
        return [(k * 10 + 6.8 + r.uniform(-0.05, 0.05)) / 60 for k in range(int(mesh.spec.days * 24 * 6))]

    def path(self, mesh, path, t_h, st):
        if path.dst != self.dst or not self.active(t_h):
            return st
        minute = (t_h * 60) % self.period_min
        if self.phase_min - 1.0 <= minute <= self.phase_min:  # the 60-s session covers the job's second
            frac = rng(mesh.spec.seed, "periodic", round(t_h * 600)).uniform(0.1, 0.7)
            return replace(st, loss_fwd=st.loss_fwd + frac * 10 / 600)
        return st


@dataclass(frozen=True)
class ProtectionSwitching(PairFault):
    """An optical protection switch moves both directions of a pair onto a longer fibre and back, every
    10-20 hours; IP sees no route change."""

    extra_km: float = 160.0  # 0.8 ms one way
    code: str = "DELAY_LEVEL_SHIFT"

    def _protected(self, mesh, t_h):
        r = rng(mesh.spec.seed, "protection", self.src, self.dst)
        t, on = self.start_h, True
        while t <= t_h:
            span = r.uniform(10, 20)
            if t_h < t + span:
                return on
            t, on = t + span, not on
        return False

    def path(self, mesh, path, t_h, st):
        if self.hits(path) and self.active(t_h) and self._protected(mesh, t_h):
            extra = self.extra_km / physics.FIBRE_KM_PER_MS
            return replace(st, owd_ms=st.owd_ms + extra, rtt_ms=st.rtt_ms + 2 * extra)
        return st


@dataclass(frozen=True)
class RouteChange(DirectionFault):
    """A routing change sends one direction through another PoP (longer by the detour)."""

    via: str = "geant-par"
    code: str = "ROUTE_CHANGE"

    def extra_equipment(self, mesh):
        return (self.via,)

    def path(self, mesh, path, t_h, st):
        if not self.hits(path) or not self.active(t_h):
            return st
        pops = st.pops
        a, b = POPS[pops[0]], POPS[pops[1]]
        v = POPS[self.via]
        detour = (
            physics.great_circle_km(a.lat, a.lon, v.lat, v.lon)
            + physics.great_circle_km(v.lat, v.lon, b.lat, b.lon)
            - physics.great_circle_km(a.lat, a.lon, b.lat, b.lon)
        ) * physics.ROUTE_FACTOR
        extra = detour / physics.FIBRE_KM_PER_MS + physics.PER_HOP_MS
        return replace(st, pops=(pops[0], self.via, *pops[1:]), owd_ms=st.owd_ms + extra, rtt_ms=st.rtt_ms + extra)


@dataclass(frozen=True)
class MtuDrop(PairFault):
    """A new link with a 1500-byte MTU in the middle of a jumbo-frame path (both directions)."""

    mtu: int = 1500
    code: str = "MTU_MISMATCH"
    expect = DirectionFault.expect  # found about the direction measured first

    def change(self, st):
        # Six times the packets for the same data: the host's per-packet cost shows.
        return replace(st, pmtu=self.mtu, host_factor=st.host_factor * 0.6)


@dataclass(frozen=True)
class Reordering(DirectionFault):
    """Per-packet load balancing over two unequal members reorders a fraction of one direction's packets."""

    fraction: float = 0.006
    code: str = "REORDERING"

    def change(self, st):
        return replace(st, reorder=self.fraction)


@dataclass(frozen=True)
class ClockDrift(Fault):
    """A site's NTP daemon lost its servers: its clock drifts at ``ppm`` while the stale error estimate stays small."""

    site: str = ""
    ppm: float = 1.0

    def clock_offset_ms(self, mesh, site, t_h):
        if site == self.site and t_h >= self.start_h:
            return (t_h - self.start_h) * 3600 * self.ppm * 1e-3
        return 0.0

    def expect(self, mesh):
        return [{"code": "CLOCK_UNSYNC", "subject": {"site": self.site}}]


@dataclass(frozen=True)
class CounterReset(InterfaceFault):
    """A line card resets: its counters restart from zero and ifCounterDiscontinuityTime moves (no reboot)."""

    code: str = "COUNTER_DISCONTINUITY"

    def lasts(self, t_h):
        return t_h >= self.start_h  # a reset is for good

    def change(self, st, t_h):
        return replace(st, discontinuity_at_h=self.start_h)


@dataclass(frozen=True)
class PrefixWithdrawn(PairFault):
    """A routing policy error withdraws one site pair's prefixes: both directions are unreachable."""

    code: str = "PATH_DOWN"

    def change(self, st):
        return replace(st, down=True)


@dataclass(frozen=True)
class HostSettings(Fault):
    """A test host reinstalled with other TCP settings (smaller buffers, another congestion control)."""

    site: str = ""
    buffer_max_bytes: int | None = None
    congestion_control: str | None = None
    window_limited_paths: tuple[tuple[str, str], ...] = ()

    def host(self, mesh, site, t_h, st):
        if site == self.site and self.active(t_h):
            return replace(
                st,
                buffer_max_bytes=self.buffer_max_bytes or st.buffer_max_bytes,
                congestion_control=self.congestion_control or st.congestion_control,
            )
        return st

    def expect(self, mesh):
        found = [{"code": "HOST_TCP_TUNING", "subject": {"site": self.site, "host": host_name(self.site)}}]
        window = [{"code": "WINDOW_LIMITED", "subject": _path_subject(a, b)} for a, b in self.window_limited_paths]
        return found + window


@dataclass(frozen=True)
class Maintenance(EquipmentFault):
    """Announced carrier work: a PoP router is out of service during the window; its paths go down."""

    reference: str = "GEANT-CHG-2026-0614"

    def change(self, st):
        return replace(st, down=True)

    def maintenance(self, mesh):
        from .mesh import at, iso

        return [
            {
                "reference": self.reference,
                "carrier": POPS[self.equipment].carrier,
                "impact": "outage",
                "start": iso(at(self.start_h - 0.25)),
                "end": iso(at((self.end_h or mesh.spec.days * 24) + 0.25)),
                "affects": [self.equipment],
                "description": "Router software upgrade",
            }
        ]

    def expect(self, mesh):
        return [{"code": "MAINTENANCE_EXPLAINED", "subject": {"equipment": self.equipment}}]


@dataclass(frozen=True)
class TrunkHashing(Fault):
    """The site uplink is a LAG of two members; after a software change its hashing puts most flows on one."""

    site: str = ""
    share: float = 0.8  # of the traffic on the first member

    @property
    def trunk(self) -> str:
        return f"{self.site.lower()}-ae0"

    @property
    def members(self) -> tuple[str, str]:
        """The LAG's two members on the site's border router."""
        return (f"{border(self.site)}:et-0/0/0", f"{border(self.site)}:et-0/0/1")

    def trunks(self, mesh):
        return {self.trunk: self.members}

    def polled(self, mesh):
        return self.members

    def iface(self, mesh, name, t_h, st):
        members = self.members
        if name not in members:
            return st
        # Healthy hashing splits the flows within a few per cent; the broken one keeps `share` on member 0.
        share = self.share if self.active(t_h) else 0.5 + 0.03 * math.sin(t_h * 1.7)
        mine = share if name == members[0] else 1 - share
        return replace(st, util_in=min(0.98, st.util_in * 2 * mine), util_out=min(0.98, st.util_out * 2 * mine))

    def expect(self, mesh):
        return [{"code": "TRUNK_IMBALANCE", "subject": {"trunk": self.trunk}}]


@dataclass(frozen=True)
class TrunkMemberDown(TrunkHashing):
    """The site uplink is a LAG of two members; the second member's optic dies: it goes oper down (counters still)
    and the bundle hashes every flow onto the member left, whose load doubles."""

    @property
    def member(self) -> str:
        return self.members[1]

    def iface(self, mesh, name, t_h, st):
        members = self.members
        if name not in members:
            return st
        if not self.active(t_h):
            return super().iface(mesh, name, t_h, st)
        if name == self.member:
            return replace(st, util_in=0.0, util_out=0.0, oper_up=False)
        return replace(st, util_in=min(0.98, st.util_in * 2), util_out=min(0.98, st.util_out * 2))

    def expect(self, mesh):
        return [{"code": "TRUNK_IMBALANCE", "subject": {"trunk": self.trunk, "member": self.member}}]


@dataclass(frozen=True)
class TestsStop(DirectionFault):
    """The remote test daemon died: no measurement of this path direction arrives any more."""

    code: str = "MEASUREMENT_GAP"

    def change(self, st):
        return replace(st, silent=True)


@dataclass(frozen=True)
class ServerBusy(DirectionFault):
    """The receiving test server refuses every test (its pScheduler limits are full) while owamp and SNMP show
    the path carrying traffic."""

    reason: str = "nuttcp-t: Error: server busy (another test is running)"
    code: str = "MEASUREMENT_GAP"
    #: only a throughput test can be refused: the first one after it began shows it (a class attribute, not a field)
    seen_by = "tcp"

    def change(self, st):
        return replace(st, failure=self.reason)
