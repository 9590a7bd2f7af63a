"""The mesh simulator: a MeshSpec (+ faults) -> a scenario document (docs/scenario-format.md).

The ground truth at any moment is a state per path direction, per interface and per host, computed
from the topology, the diurnal load, the noise models and the faults. Every measurement samples
that truth through the physics oracle: throughput tests (TCP, optionally UDP) every few hours,
hourly owamp sessions, traceroutes, SNMP polls of a handful of shared interfaces every 5 minutes
and a daily report of each host's TCP settings.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from . import physics
from .noise import NoiseSpec, binomial, poisson, rng
from .topology import POPS, SITES, UPLINK, PathModel, Topology, border, build_topology, host_name

if TYPE_CHECKING:
    from .faults import Fault

T0 = datetime(2026, 6, 1, tzinfo=UTC)
OWAMP_PACKETS = 600  # 10 packets/s for 60 s, perfSONAR's default session
TCP_DURATION_S = 10
LINUX_TCP_RMEM = (4096, 131072)  # min and default of tcp_rmem
LINUX_TCP_WMEM = (4096, 16384)
BASE_LOSS_PER_HOP = 2e-9  # a healthy optical path loses almost nothing
MEAN_FRAME_BYTES = 3000  # research traffic: jumbo bulk data mixed with ACKs and small packets
ELASTIC_SHARE = 0.25  # of a link's other traffic that yields to a new TCP stream (the rest is host-limited)
UPTIME_AT_T0_S = 86 * 86400.0  # routers last rebooted ~3 months before the scenario
CLOCK_WANDER_OF_ERROR = 0.2  # the true offset stays within a fifth of the NTP error estimate (it is a bound)


def iso(moment: datetime) -> str:
    """ISO 8601 UTC to the second (what the collectors report)."""
    return moment.replace(microsecond=0).isoformat().replace("+00:00", "Z")


def at(hours: float) -> datetime:
    return T0 + timedelta(hours=hours)


@dataclass(frozen=True)
class DataChallenge:
    """Transfers that fill a link on purpose (a WLCG data challenge): utilisation held near ``util``."""

    interface: str
    direction: str  # "in" | "out"
    start_h: float
    duration_h: float
    util: float = 0.92


@dataclass(frozen=True)
class MeshSpec:
    """A healthy mesh: which sites, which links, how the hosts are set up, how often each test runs, how noisy."""

    name: str
    description: str
    sites: tuple[str, ...]
    seed: int
    capacity_mbps: int = 10_000
    mtu: int = 9000
    congestion_control: str = "cubic"
    congestion_control_by_site: tuple[tuple[str, str], ...] = ()
    host_limit_gbps: tuple[float, float] = (20.0, 40.0)  # single-stream host level per host pair
    buffer_max_bytes: int = 536_870_912  # tcp_rmem/tcp_wmem max, net.core.[rw]mem_max
    days: float = 7.0
    tcp_interval_h: float = 4.0
    udp_interval_h: float | None = None
    udp_rate_bps: float = 2e9
    owamp_interval_min: float = 60.0
    owamp_packets: int = OWAMP_PACKETS  # per session (a powstream-like 10-minute session sends 6000)
    traceroute_interval_h: float = 6.0
    snmp_interval_s: float = 300.0
    polled: tuple[str, ...] = ()  # "equipment:interface" polled by SNMP
    diurnal: tuple[float, float] = (0.08, 0.25)  # base utilisation and day-time swing of shared links
    data_challenges: tuple[DataChallenge, ...] = ()
    ecmp_pops: tuple[str, ...] = ()
    silent_last_hop_sites: tuple[str, ...] = ()
    noise: NoiseSpec = field(default_factory=NoiseSpec)
    #: Of a shared link's other traffic, the share that yields to a test stream; 0: tests get only the spare capacity.
    elastic_share: float = ELASTIC_SHARE
    #: Sites that joined the mesh late, with the hour their first tests ran: their paths have a short history.
    joined_h: tuple[tuple[str, float], ...] = ()

    def cc(self, site: str) -> str:
        return dict(self.congestion_control_by_site).get(site, self.congestion_control)


@dataclass(frozen=True)
class PathState:
    """The truth of one path direction at one moment (faults change it)."""

    owd_ms: float
    rtt_ms: float
    loss_fwd: float
    loss_rev: float
    queue_ms: float = 0.0
    available_bps: float = math.inf
    pmtu: int = 9000
    pops: tuple[str, ...] = ()
    cap_bps: float = math.inf  # every protocol is held to this rate (a policer, a backup link)
    rate_factor: float = 1.0  # every protocol carries this fraction (an inline device at less than line rate)
    tcp_factor: float = 1.0  # TCP only (duplex mismatch, a middlebox)
    host_factor: float = 1.0  # the sending host got slower
    reorder: float = 0.0
    down: bool = False
    failure: str | None = None  # the test tool fails for a reason that is not the network
    silent: bool = False  # no measurement of this path arrives at all


@dataclass(frozen=True)
class IfaceState:
    """The truth of one interface at one moment."""

    speed_bps: float
    util_in: float
    util_out: float
    in_errors_per_s: float = 0.0
    out_discards_per_s: float = 0.0
    in_discards_per_s: float = 0.0
    oper_up: bool = True
    discontinuity_at_h: float | None = None  # ifCounterDiscontinuityTime moved (line card reset) at this time
    reboot_at_h: float | None = None  # the device rebooted at this time


@dataclass(frozen=True)
class HostState:
    """A test host's TCP settings."""

    buffer_max_bytes: int
    congestion_control: str
    mtu: int


class Mesh:
    """A mesh spec with its faults, able to say the truth at any time and to emit the measurements."""

    def __init__(self, spec: MeshSpec, faults: Sequence[Fault] = ()):
        self.spec = spec
        self.faults = tuple(faults)
        self.topology: Topology = build_topology(spec.sites, spec.capacity_mbps, spec.mtu, spec.ecmp_pops)
        speeds = dict(self.topology.interfaces)
        self.trunks: dict[str, tuple[str, ...]] = {}
        for fault in self.faults:
            self.trunks.update(fault.trunks(self))
        for members in self.trunks.values():
            for m in members:
                speeds.setdefault(m, speeds[members[0]])
        self.speed_bps = {name: mbps * 1e6 for name, mbps in speeds.items()}
        polled = list(spec.polled)
        for fault in self.faults:
            polled += [i for i in fault.polled(self) if i not in polled]
        self.polled = tuple(polled)
        r = rng(spec.seed, "hosts")
        lo, hi = spec.host_limit_gbps
        self.host_level_bps = {key: r.uniform(lo, hi) * 1e9 for key in sorted(self.topology.paths)}
        self.clock_error_ms = {s: r.uniform(*spec.noise.host_clock_error_ms) for s in spec.sites}
        self.clock_phase = {s: (r.uniform(0, 2 * math.pi), r.uniform(9, 30)) for s in spec.sites}
        self.load_params = {}
        for name in sorted(speeds):
            base, swing = spec.diurnal
            self.load_params[name] = (
                base * r.uniform(0.6, 1.4),
                base * r.uniform(0.6, 1.4),
                swing * r.uniform(0.5, 1.2),
                swing * r.uniform(0.5, 1.2),
            )
        for members in self.trunks.values():  # a LAG's members share its load: same daily pattern
            for m in members:
                self.load_params[m] = self.load_params[members[0]]

    # ------------------------------------------------------------------ truth
    def _longitude(self, iface: str) -> float:
        eq = iface.partition(":")[0]
        for s in self.spec.sites:
            if border(s) == eq:
                return SITES[s].lon
        return POPS[eq].lon if eq in POPS else 0.0

    def clock_offset_ms(self, site: str, t_h: float) -> float:
        """The true offset of a site's clock: NTP keeps it wandering well inside its (conservative) error estimate."""
        phase, period_h = self.clock_phase[site]
        offset = CLOCK_WANDER_OF_ERROR * self.clock_error_ms[site] * math.sin(2 * math.pi * t_h / period_h + phase)
        return offset + sum(fault.clock_offset_ms(self, site, t_h) for fault in self.faults)

    def iface_state(self, name: str, t_h: float) -> IfaceState:
        speed = self.speed_bps[name]
        base_in, base_out, swing_in, swing_out = self.load_params[name]
        local_h = (t_h + self._longitude(name) / 15.0) % 24
        day = 0.5 - 0.5 * math.cos(2 * math.pi * (local_h - 4) / 24)  # 0 at 04:00 local, 1 at 16:00
        wobble = 0.02 * math.sin(t_h * 7.3 + len(name))
        util_in = min(0.85, base_in + swing_in * day + wobble)
        util_out = min(0.85, base_out + swing_out * day - wobble)
        for dc in self.spec.data_challenges:
            if dc.interface == name and dc.start_h <= t_h < dc.start_h + dc.duration_h:
                ramp = min(1.0, (t_h - dc.start_h) / 0.5, (dc.start_h + dc.duration_h - t_h) / 0.5)
                target = dc.util + 0.015 * math.sin(t_h * 11.0)
                if dc.direction == "in":
                    util_in = max(util_in, util_in + (target - util_in) * ramp)
                else:
                    util_out = max(util_out, util_out + (target - util_out) * ramp)
        in_discards = 0.0
        if speed >= 100e9:
            in_discards = self.spec.noise.in_discards_per_min_100g / 60.0
        state = IfaceState(
            speed_bps=speed, util_in=max(0.0, util_in), util_out=max(0.0, util_out), in_discards_per_s=in_discards
        )
        for fault in self.faults:
            state = fault.iface(self, name, t_h, state)
        return state

    def host_state(self, site: str, t_h: float) -> HostState:
        state = HostState(self.spec.buffer_max_bytes, self.spec.cc(site), self.spec.mtu)
        for fault in self.faults:
            state = fault.host(self, site, t_h, state)
        return state

    def path_state(self, path: PathModel, t_h: float) -> PathState:
        loss_fwd = BASE_LOSS_PER_HOP * len(path.hops)
        available = path.capacity_mbps * 1e6
        queue_ms = 0.0
        down = False
        for name, direction in path.crossings:
            st = self.iface_state(name, t_h)
            util = st.util_in if direction == "in" else st.util_out
            # A test stream gets the spare capacity plus part of what the (partly elastic) transfers use.
            available = min(available, st.speed_bps * (max(1.0 - util, 0.0) + self.spec.elastic_share * min(util, 1.0)))
            u = min(util, 0.98)
            queue_ms += min(2.0, 0.02 * u / (1 - u))
            pkts = st.speed_bps * util / 8 / MEAN_FRAME_BYTES
            if pkts > 0:
                # A few input discards per minute are frames for unknown VLANs or protocols, not the path's packets.
                drops = st.in_errors_per_s if direction == "in" else st.out_discards_per_s
                loss_fwd += drops / pkts
            down = down or not st.oper_up
        reverse = self.topology.paths[(path.dst, path.src)]
        loss_rev = BASE_LOSS_PER_HOP * len(reverse.hops)
        mtu = min(self.host_state(path.src, t_h).mtu, self.host_state(path.dst, t_h).mtu, self.spec.mtu)
        state = PathState(
            owd_ms=path.owd_ms,
            rtt_ms=path.owd_ms + reverse.owd_ms,
            loss_fwd=loss_fwd,
            loss_rev=loss_rev,
            queue_ms=queue_ms,
            available_bps=available,
            pmtu=mtu,
            pops=path.pops,
            down=down,
            silent=self._not_joined(t_h, path.src, path.dst),
        )
        for fault in self.faults:
            state = fault.path(self, path, t_h, state)
        if state.down:
            state = replace(state, loss_fwd=1.0)
        return state

    def _not_joined(self, t_h: float, *sites: str) -> bool:
        """A site that joined late runs no test (and reports no host settings) before it joined."""
        return any(site in sites and t_h < since for site, since in self.spec.joined_h)

    # ------------------------------------------------------------------ measurements
    def _schedule(self, interval_h: float, label: str, path: PathModel, jitter_h: float) -> list[float]:
        """Test times of one path: a fixed phase per path (pScheduler spreads tests) and a small slip."""
        r = rng(self.spec.seed, "schedule", label, path.src, path.dst)
        phase = r.uniform(0, interval_h)
        times, t = [], phase
        while t < self.spec.days * 24:
            slip = r.uniform(0, jitter_h)
            if t + slip < self.spec.days * 24:
                times.append(t + slip)
            t += interval_h
        return times

    def throughput_records(self, path: PathModel) -> list[dict]:
        spec, noise = self.spec, self.spec.noise
        r = rng(spec.seed, "tcp", path.src, path.dst)
        # its own stream, so that meshes without a tail keep every other number
        tail = rng(spec.seed, "capped-tail", path.src, path.dst) if noise.capped_tail_prob else None
        out: list[dict] = []
        # Noise events are isolated (a failure or a busy host between normal results), as
        # docs/diagnosis.md#what-the-rules-tolerate has it.
        previous_noise = False
        for t_h in self._schedule(spec.tcp_interval_h, "tcp", path, 0.1):
            st = self.path_state(path, t_h)
            if st.silent:
                continue
            rec = self._test_base(path, t_h, "tcp")
            src_host, dst_host = self.host_state(path.src, t_h), self.host_state(path.dst, t_h)
            window = min(src_host.buffer_max_bytes, dst_host.buffer_max_bytes)
            mss = physics.mss_bytes(st.pmtu)
            rec.update(streams=1, window_bytes=window, mss_bytes=mss)
            noise_fail = r.random() < noise.tcp_fail_prob and not previous_noise
            if st.down:
                rec["error"] = "nuttcp-t: Error: connect: No route to host (timed out after 10 s)"
                out.append(rec)
                continue
            if st.failure or noise_fail:
                rec["error"] = st.failure or r.choice(noise.fail_reasons)
                out.append(rec)
                previous_noise = noise_fail
                continue
            cc = src_host.congestion_control
            host_bps = self.host_level_bps[path.key] * st.host_factor
            host_run = host_bps * r.uniform(1 - noise.host_run_spread, 1.0)
            busy = r.random() < noise.busy_host_prob and not previous_noise
            previous_noise = busy
            if busy:
                host_run *= r.uniform(*noise.busy_host_factor)
            # Drawn only where the mesh has such a spread, so that the other meshes' numbers stay as they were.
            below_cap = noise.below_cap_prob > 0 and not busy and r.random() < noise.below_cap_prob
            # ACKs lost on the reverse path hardly matter unless the reverse path is very lossy.
            loss = st.loss_fwd + (st.loss_rev if st.loss_rev > 0.05 else 0.0)
            ceiling = physics.tcp_ceiling_bps(
                capacity_bps=min(path.capacity_mbps * 1e6, st.cap_bps),
                available_bps=st.available_bps,
                mtu_bytes=st.pmtu,
                window_bytes=window,
                autotuned=True,
                rtt_ms=st.rtt_ms + st.queue_ms,
                loss=loss,
                congestion_control=cc,
                host_limit_bps=host_run,
            )
            mathis = physics.mathis_bps(mss, st.rtt_ms, loss, cc)
            measured = ceiling * r.uniform(1 - noise.network_run_spread, 1.0)
            if mathis <= ceiling * 1.001:  # loss-limited: Reno-like stacks reach 60-100 % of the ceiling
                measured = ceiling * r.uniform(0.6, 1.0)
            elif tail is not None and tail.random() < noise.capped_tail_prob:
                measured = ceiling * tail.uniform(*noise.capped_tail_factor)
            elif below_cap:
                measured = ceiling * r.uniform(*noise.below_cap_factor)
            measured *= st.tcp_factor * st.rate_factor
            segments = physics.packets(measured, TCP_DURATION_S, mss)
            per_gbps = noise.retransmits_per_gbps_bbr if cc.startswith("bbr") else noise.retransmits_per_gbps_loss_based
            retransmits = round(measured / 1e9 * r.uniform(*per_gbps)) + binomial(r, round(segments), loss)
            if st.tcp_factor < 1.0:  # a duplex mismatch or middlebox makes TCP retransmit a lot
                retransmits += round(segments * 0.01)
            rec.update(
                throughput_bps=round(measured),
                retransmits=retransmits,
                rtt_ms=round((st.rtt_ms + st.queue_ms) * r.uniform(1.0, 1.01), 3),
            )
            out.append(rec)
        return out

    def udp_records(self, path: PathModel) -> list[dict]:
        spec = self.spec
        if spec.udp_interval_h is None:
            return []
        r = rng(spec.seed, "udp", path.src, path.dst)
        out = []
        for t_h in self._schedule(spec.udp_interval_h, "udp", path, 0.1):
            st = self.path_state(path, t_h)
            if st.silent:
                continue
            rec = self._test_base(path, t_h, "udp")
            offered = min(spec.udp_rate_bps, path.capacity_mbps * 1e6 * 0.5)
            rec["offered_bps"] = offered
            if st.down:
                rec["error"] = "nuttcp-t: Error: no UDP data received by the server (timed out)"
                out.append(rec)
                continue
            if st.failure:
                rec["error"] = st.failure
                out.append(rec)
                continue
            sent = round(offered * TCP_DURATION_S / 8 / (st.pmtu - 28))
            carried = min(1.0, min(st.available_bps * st.rate_factor, st.cap_bps) / offered)
            lost = binomial(r, sent, st.loss_fwd) + (round(sent * (1 - carried)) if carried < 1 else 0)
            lost += 1 if r.random() < 0.05 else 0  # the receiving host drops one datagram now and then
            lost = min(lost, sent)
            rec.update(packets_sent=sent, packets_lost=lost, throughput_bps=round(offered * (sent - lost) / sent))
            out.append(rec)
        return out

    def _test_base(self, path: PathModel, t_h: float, protocol: str) -> dict:
        return {
            "type": "throughput",
            "time": iso(at(t_h)),
            "src": path.src,
            "dst": path.dst,
            "tool": "nuttcp",
            "protocol": protocol,
            "duration_s": TCP_DURATION_S,
            "src_host": SITES[path.src].address,
            "dst_host": SITES[path.dst].address,
        }

    def owamp_records(self, path: PathModel) -> list[dict]:
        spec, noise = self.spec, self.spec.noise
        r = rng(spec.seed, "owamp", path.src, path.dst)
        out = []
        times = next((ts for f in self.faults if (ts := f.owamp_times(self, path)) is not None), None)
        for t_h in times or self._schedule(spec.owamp_interval_min / 60, "owamp", path, 2 / 60):
            st = self.path_state(path, t_h)
            if st.silent:
                continue
            clock_error = self.clock_error_ms[path.src] + self.clock_error_ms[path.dst]
            rec = {
                "type": "owamp",
                "time": iso(at(t_h)),
                "src": path.src,
                "dst": path.dst,
                "src_host": SITES[path.src].address,
                "dst_host": SITES[path.dst].address,
                "packets_sent": spec.owamp_packets,
                "duplicates": 0,
            }
            lost = binomial(r, spec.owamp_packets, st.loss_fwd)
            if not st.down:
                roll = r.random()
                if roll < noise.owamp_burst_prob:
                    lost += r.randint(*noise.owamp_burst_packets)
                elif roll < noise.owamp_burst_prob + noise.owamp_single_loss_prob:
                    lost += 1
            lost = min(lost, spec.owamp_packets)
            received = spec.owamp_packets - lost
            rec["packets_lost"] = lost
            rec["reordered"] = binomial(r, received, st.reorder)
            if received:
                offset = self.clock_offset_ms(path.dst, t_h) - self.clock_offset_ms(path.src, t_h)
                low = st.owd_ms + offset + r.uniform(0.0, 0.01)
                mid = low + st.queue_ms / 2 + r.uniform(0.005, 0.05)
                high = mid + r.uniform(0.1, 1.5)
                if r.random() < noise.delay_spike_prob:
                    high += r.uniform(*noise.delay_spike_ms)
                rec.update(
                    delay_min_ms=round(low, 3),
                    delay_median_ms=round(mid, 3),
                    delay_max_ms=round(high, 3),
                    jitter_ms=round(r.uniform(0.005, 0.05) + st.queue_ms / 10, 3),
                )
            rec["clock_error_ms"] = round(clock_error, 2)
            out.append(rec)
        return out

    def traceroute_records(self, path: PathModel) -> list[dict]:
        spec, noise = self.spec, self.spec.noise
        r = rng(spec.seed, "traceroute", path.src, path.dst)
        out = []
        twins = self.topology.ecmp_twins
        for t_h in self._schedule(spec.traceroute_interval_h, "traceroute", path, 0.2):
            st = self.path_state(path, t_h)
            if st.silent:
                continue
            hops: list[str] = [border(path.src)]
            for pop in st.pops:
                if st.down:
                    break
                # ECMP: flows hash onto one of two parallel routers of the PoP; traceroute sees either.
                hops.append(twins[pop] if pop in twins and r.random() < 0.5 else pop)
                if 1 < len(hops) and r.random() < noise.traceroute_star_prob:
                    hops[-1] = "*"
            if st.down:
                hops += ["*", "*", "*"]
            else:
                hops.append("*" if path.dst in spec.silent_last_hop_sites else border(path.dst))
            out.append(
                {
                    "type": "traceroute",
                    "time": iso(at(t_h)),
                    "src": path.src,
                    "dst": path.dst,
                    "hops": hops,
                    "pmtu_bytes": st.pmtu,
                }
            )
        return out

    def snmp_records(self, name: str) -> list[dict]:
        spec, noise = self.spec, self.spec.noise
        r = rng(spec.seed, "snmp", name)
        eq, _, ifname = name.partition(":")
        if_index = 500 + sorted(self.speed_bps).index(name) + 1
        octets_in = r.randrange(10**14, 10**16)
        octets_out = r.randrange(10**14, 10**16)
        pkts_in, pkts_out = octets_in // MEAN_FRAME_BYTES, octets_out // MEAN_FRAME_BYTES
        errors_in, discards_in, discards_out = r.randrange(0, 500), r.randrange(0, 50000), r.randrange(0, 5000)
        boot_h = -UPTIME_AT_T0_S / 3600 - r.uniform(0, 500)
        discontinuity_ticks = 0
        out = []
        step_h = spec.snmp_interval_s / 3600
        prev_t = -step_h
        k = 0
        while True:
            t_h = k * step_h + r.uniform(-noise.poll_jitter_s, noise.poll_jitter_s) / 3600
            k += 1
            if t_h >= spec.days * 24:
                break
            if t_h <= prev_t:
                continue
            st = self.iface_state(name, (prev_t + t_h) / 2)  # rates: the middle of the interval
            events = self.iface_state(name, t_h)  # resets: anything that happened up to this poll
            dt_s = (t_h - prev_t) * 3600
            if events.reboot_at_h is not None and prev_t < events.reboot_at_h <= t_h:
                boot_h = events.reboot_at_h
                octets_in = octets_out = pkts_in = pkts_out = errors_in = discards_in = discards_out = 0
            if events.discontinuity_at_h is not None and prev_t < events.discontinuity_at_h <= t_h:
                discontinuity_ticks = int((events.discontinuity_at_h - boot_h) * 360000)
                octets_in = octets_out = pkts_in = pkts_out = errors_in = discards_in = discards_out = 0
            elif prev_t >= 0 and st.oper_up:
                bytes_in = st.speed_bps * st.util_in * dt_s / 8 * r.uniform(0.98, 1.02)
                bytes_out = st.speed_bps * st.util_out * dt_s / 8 * r.uniform(0.98, 1.02)
                octets_in += round(bytes_in)
                octets_out += round(bytes_out)
                pkts_in += round(bytes_in / MEAN_FRAME_BYTES)
                pkts_out += round(bytes_out / MEAN_FRAME_BYTES)
                errors_in += poisson(r, st.in_errors_per_s * dt_s)
                discards_in += poisson(r, st.in_discards_per_s * dt_s)
                discards_out += poisson(r, st.out_discards_per_s * dt_s)
            prev_t = t_h
            out.append(
                {
                    "type": "snmp",
                    "time": iso(at(t_h)),
                    "equipment": eq,
                    "interface": ifname,
                    "if_index": if_index,
                    "sys_uptime_ticks": int((t_h - boot_h) * 360000) % 2**32,
                    "counter_discontinuity_ticks": discontinuity_ticks,
                    "oper_status": "up" if st.oper_up else "down",
                    "counters": {
                        "hc_in_octets": octets_in % 2**64,
                        "hc_out_octets": octets_out % 2**64,
                        "hc_in_ucast_pkts": pkts_in % 2**64,
                        "hc_out_ucast_pkts": pkts_out % 2**64,
                        "in_errors": errors_in % 2**32,
                        "out_errors": 0,
                        "in_discards": discards_in % 2**32,
                        "out_discards": discards_out % 2**32,
                    },
                }
            )
        return out

    def host_records(self) -> list[dict]:
        r = rng(self.spec.seed, "host_tcp")
        out = []
        for site in self.spec.sites:
            for day in range(math.ceil(self.spec.days)):
                t_h = day * 24 + r.uniform(0.05, 1.0)
                if self._not_joined(t_h, site):
                    continue
                st = self.host_state(site, t_h)
                out.append(
                    {
                        "type": "host_tcp",
                        "time": iso(at(t_h)),
                        "site": site,
                        "host": host_name(site),
                        "tcp_rmem": [*LINUX_TCP_RMEM, max(st.buffer_max_bytes, LINUX_TCP_RMEM[1])],
                        "tcp_wmem": [*LINUX_TCP_WMEM, max(st.buffer_max_bytes, LINUX_TCP_WMEM[1])],
                        "rmem_max": st.buffer_max_bytes,
                        "wmem_max": st.buffer_max_bytes,
                        "congestion_control": st.congestion_control,
                        "mtu": st.mtu,
                        "interface": "ens1f0np0",
                    }
                )
        return out

    def measurements(self) -> list[dict]:
        records: list[dict] = []
        for path in self.topology.paths.values():
            records += self.throughput_records(path)
            records += self.udp_records(path)
            records += self.owamp_records(path)
            records += self.traceroute_records(path)
        for name in self.polled:
            records += self.snmp_records(name)
        records += self.host_records()
        records.sort(key=lambda m: (m["time"], m["type"], m.get("src", ""), m.get("dst", "")))
        return records

    def document(self, *, name: str | None = None, description: str | None = None) -> dict:
        """The scenario (docs/scenario-format.md). ``expect`` lists the injected faults' findings; a healthy mesh
        allows info only."""
        extra = tuple(e for fault in self.faults for e in fault.extra_equipment(self))
        topology = self.topology.as_document(self.trunks, extra)
        maintenance = [w for fault in self.faults for w in fault.maintenance(self)]
        expected = [e for fault in self.faults for e in fault.expect(self)]
        expect: dict = {"findings": expected, "absent": []}
        if not self.faults:
            # Not part of docs/scenario-format.md's contract: the noise corpus's own check (no warning or critical
            # at all).
            expect["max_severity"] = "info"
        doc = {
            "scenario": name or self.spec.name,
            "description": description or self.spec.description,
            "now": iso(at(self.spec.days * 24)),
            "topology": topology,
        }
        if maintenance:
            doc["maintenance"] = maintenance
        doc["measurements"] = self.measurements()
        doc["expect"] = expect
        return doc


def interface_key(site: str) -> str:
    """The uplink of a site's border router, as a path hop / polled interface."""
    return f"{border(site)}:{UPLINK}"
