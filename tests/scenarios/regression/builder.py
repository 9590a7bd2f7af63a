"""The scenario builder of the regression corpus: a :class:`Scenario` collects topology, maintenance,
measurements and expectations and writes a file of docs/scenario-format.md; :func:`scenario` declares one;
:func:`healthy_pair` builds both directions of a clean path. The sites, carriers and routers the cases share are in
``places``, the SNMP counters in ``counters``."""

from __future__ import annotations

import functools
import inspect
import random
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import yaml

from tests.scenarios.noise import physics
from tests.scenarios.noise.mesh import iso
from tests.scenarios.regression.places import CARRIERS, ROUTERS, SITES

MiB = 1 << 20
ALL_CODES = (
    "WINDOW_LIMITED",
    "LOSS_LIMITED",
    "ASYMMETRIC_PATH",
    "TCP_ONLY_DEGRADATION",
    "TRUNK_IMBALANCE",
    "SHARED_EQUIPMENT_SUSPECT",
    "INTERFACE_ERRORS",
    "LINK_CONGESTION",
    "PERIODIC_LOSS",
    "DELAY_LEVEL_SHIFT",
    "ROUTE_CHANGE",
    "MTU_MISMATCH",
    "REORDERING",
    "CLOCK_UNSYNC",
    "COUNTER_DISCONTINUITY",
    "PATH_DOWN",
    "HOST_TCP_TUNING",
    "MAINTENANCE_EXPLAINED",
    "UNEXPLAINED_DEGRADATION",
)


# --------------------------------------------------------------------------- physics
# Every figure comes from the physics oracle (tests/scenarios/noise/physics.py, written independently of the
# engine on purpose); these name the forms the cases use.
def window_rate_bps(window_bytes: float, rtt_ms: float) -> float:
    """W * 8 / RTT of a window the test sets itself (no autotuning)."""
    return physics.window_limit_bps(window_bytes, rtt_ms, autotuned=False)


def bdp_bytes(capacity_bps: float, rtt_ms: float) -> float:
    return physics.bdp_bytes(capacity_bps, rtt_ms)


def mathis_bps(mss: int, rtt_ms: float, p: float, c: float = physics.MATHIS_C_RENO) -> float:
    """The Mathis ceiling of one Reno stream (constant ``c``)."""
    return physics.mathis_bps(mss, rtt_ms, p, "reno", c=c)


def tcp_rate_bps(
    cap_bps: float, rtt_ms: float, mss: int, window: float, p: float, host_limit_bps: float, cc: str = "cubic"
) -> float:
    """What one stream reaches: min(capacity, window limit, host limit, loss ceiling of the stack).

    CUBIC is taken as twice Reno's Mathis rate (the emulated test of docs/diagnosis.md#the-physics)."""
    factor = 1.0 if cc == "reno" else physics.CUBIC_RENO_FACTOR
    loss = mathis_bps(mss, rtt_ms, p) * factor
    return min(cap_bps, window_rate_bps(window, rtt_ms), host_limit_bps, loss)


def segments(rate_bps: float, duration_s: float, mss: int) -> float:
    return physics.packets(rate_bps, duration_s, mss)


def fibre_ms(km: float) -> float:
    """Propagation over ``km`` of fibre."""
    return physics.one_way_delay_ms(km, 0)


# --------------------------------------------------------------------------- building blocks
def hops_from(src: str, a: str, hops: list[str]) -> list[str]:
    """The ``hops`` of a route written from ``a``, in the order ``src`` (``a`` or the other end) travels them."""
    return list(hops) if src == a else list(reversed(hops))


def minutes(t0: datetime, every_min: float, hours: float, offset_s: float = 0) -> list[datetime]:
    n = int(round(hours * 60 / every_min))
    return [t0 + timedelta(seconds=offset_s + i * every_min * 60) for i in range(n + 1)]


@dataclass
class Scenario:
    """A scenario being built: topology sections, maintenance, measurements and expectations."""

    name: str
    description: str
    start: datetime
    hours: float = 6.0
    carriers: list[dict] = field(default_factory=list)
    sites: list[dict] = field(default_factory=list)
    hosts: list[dict] = field(default_factory=list)
    equipment: list[dict] = field(default_factory=list)
    interfaces: list[dict] = field(default_factory=list)
    trunks: list[dict] = field(default_factory=list)
    paths: list[dict] = field(default_factory=list)
    maintenance: list[dict] = field(default_factory=list)
    agents: list[dict] = field(default_factory=list)
    measurements: list[dict] = field(default_factory=list)
    expect: list[dict] = field(default_factory=list)
    absent: list[dict] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.rng = random.Random(zlib.crc32(self.name.encode()))

    @property
    def now(self) -> datetime:
        return self.start + timedelta(hours=self.hours)

    def at(self, hh_mm: str) -> datetime:
        """A time of the scenario's day, 'HH:MM' or 'HH:MM:SS'."""
        parts = [int(x) for x in hh_mm.split(":")]
        h, m, s = (parts + [0, 0])[:3]
        return self.start.replace(hour=h, minute=m, second=s)

    def every(self, every_min: float, offset_s: float = 0) -> list[datetime]:
        """The times of a test run every ``every_min`` minutes over the scenario, ``offset_s`` after the start."""
        return minutes(self.start, every_min, self.hours, offset_s)

    def jitter(self, value: float, rel: float) -> float:
        """``value`` give or take ``rel`` of it, drawn from the scenario's seeded generator."""
        return jitter(self.rng, value, rel)

    def drifting(
        self,
        start: datetime,
        end: datetime | None,
        *,
        mean: float,
        sd: float,
        low: float,
        high: float,
        block_s: float = 300,
    ) -> Callable[[datetime], float]:
        """A fault's figure that drifts (a loss rate, say): 0 before ``start`` and from ``end`` on (None: never
        ends), else ``mean`` plus ``sd`` times a normal draw, kept within ``low`` .. ``high``; one draw per
        ``block_s`` from ``start``, taken from the scenario's generator the first time a moment of the block asks.
        """
        drawn: dict[int, float] = {}

        def figure(t: datetime) -> float:
            if t < start or (end is not None and t >= end):
                return 0.0
            key = int((t - start).total_seconds() // block_s)
            if key not in drawn:
                drawn[key] = min(high, max(low, mean + sd * self.rng.gauss(0, 1)))
            return drawn[key]

        return figure

    # -- topology
    def carrier(self, code: str, name: str) -> None:
        self.carriers.append({"code": code, "name": name})

    def site(self, code: str, name: str, tier: int, lat: float, lon: float) -> None:
        self.sites.append({"code": code, "name": name, "tier": tier, "lat": lat, "lon": lon})

    def host(self, site: str, name: str, address: str) -> None:
        self.hosts.append({"site": site, "name": name, "address": address})

    def router(
        self,
        name: str,
        *,
        site: str | None = None,
        carrier: str | None = None,
        vendor="Juniper",
        model="MX480",
        role="router",
    ) -> None:
        e = {"name": name}
        if site:
            e["site"] = site
        if carrier:
            e["carrier"] = carrier
        e.update({"role": role, "vendor": vendor, "model": model})
        self.equipment.append(e)

    def add_carriers(self, *codes: str) -> None:
        """Carriers of :data:`CARRIERS`, in this order."""
        for code in codes:
            self.carrier(code, CARRIERS[code])

    def add_sites(self, *codes: str) -> None:
        """Sites of :data:`SITES`, in this order."""
        for code in codes:
            name, tier, lat, lon = SITES[code]
            self.site(code, name, tier, lat, lon)

    def add_routers(self, *names: str) -> None:
        """Routers of :data:`ROUTERS` as declared there; a router a case declares otherwise goes through router()."""
        for name in names:
            owner, code, vendor, model, role = ROUTERS[name]
            self.router(name, **{owner: code}, vendor=vendor, model=model, role=role)

    def interface(self, equipment: str, name: str, if_index: int, speed_mbps: int, mtu: int = 9192) -> None:
        self.interfaces.append(
            {"equipment": equipment, "name": name, "if_index": if_index, "speed_mbps": speed_mbps, "mtu": mtu}
        )

    def path(self, src: str, dst: str, capacity_mbps: int, hops: list[str], both: bool = True) -> None:
        self.paths.append({"src": src, "dst": dst, "capacity_mbps": capacity_mbps, "hops": list(hops)})
        if both:
            self.paths.append({"src": dst, "dst": src, "capacity_mbps": capacity_mbps, "hops": list(reversed(hops))})

    def window(self, reference: str, carrier: str, impact: str, hours: str, affects: list[str], why: str) -> None:
        """A carrier's maintenance window ``hours`` ('HH:MM-HH:MM' of the scenario's day) on ``affects``."""
        start, end = hours.split("-")
        self.maintenance.append(
            {
                "reference": reference,
                "carrier": carrier,
                "impact": impact,
                "start": iso(self.at(start)),
                "end": iso(self.at(end)),
                "affects": affects,
                "description": why,
            }
        )

    # -- measurements
    def tcp(
        self,
        t: datetime,
        src: str,
        dst: str,
        thr: float,
        *,
        rtt_ms: float,
        mss: int,
        window: int | None,
        retransmits: int | None,
        duration_s: float = 10,
        streams: int = 1,
        hosts: tuple[str, str] | None = None,
        schedule_s: float | None = None,
    ) -> None:
        m = _nuttcp(t, src, dst, "tcp", duration_s, streams=streams)
        if window is not None:
            m["window_bytes"] = int(window)
        m.update(
            {"mss_bytes": mss, "throughput_bps": round(thr), "retransmits": retransmits, "rtt_ms": round(rtt_ms, 2)}
        )
        if retransmits is None:
            del m["retransmits"]
        _on_hosts(m, hosts)
        if schedule_s:
            m["schedule_interval_s"] = schedule_s
        self.measurements.append(m)

    def tcp_test(
        self,
        t: datetime,
        src: str,
        dst: str,
        thr: float,
        *,
        rtt_ms: float,
        mss: int,
        window: int | None,
        rtt_rel: float = 0.003,
        p: float = 0.0,
        retransmits: int | tuple[int, ...] = (0, 0, 1),
        **record,
    ) -> None:
        """A 10 s test reaching ``thr``: its RTT ``rtt_ms`` give or take ``rtt_rel`` (0: as given), then the
        retransmits, ``p`` of the segments sent plus ``retransmits`` more (a tuple: a few drawn from it), in that
        order: the seeded sequence of every case depends on it. ``record`` goes to :meth:`tcp` as it is."""
        rtt = self.jitter(rtt_ms, rtt_rel) if rtt_rel else rtt_ms
        few = self.rng.choice(retransmits) if isinstance(retransmits, tuple) else retransmits
        retrans = round(p * segments(thr, 10, mss)) + few
        self.tcp(t, src, dst, thr, rtt_ms=rtt, mss=mss, window=window, retransmits=retrans, **record)

    def tcp_failed(self, t: datetime, src: str, dst: str, error: str, duration_s: float = 10) -> None:
        self.measurements.append(_nuttcp(t, src, dst, "tcp", duration_s, error=error))

    def udp(
        self,
        t: datetime,
        src: str,
        dst: str,
        offered: float,
        sent: int,
        lost: int,
        *,
        datagram_bytes: int,
        duration_s: float = 10,
        hosts: tuple[str, str] | None = None,
    ) -> None:
        received = sent - lost
        m = _nuttcp(
            t,
            src,
            dst,
            "udp",
            duration_s,
            offered_bps=round(offered),
            throughput_bps=round(received * datagram_bytes * 8 / duration_s),
            packets_sent=sent,
            packets_lost=lost,
        )
        _on_hosts(m, hosts)
        self.measurements.append(m)

    def owamp(
        self,
        t: datetime,
        src: str,
        dst: str,
        dmin: float | None,
        *,
        lost: int = 0,
        sent: int = 600,
        queue_ms: float = 0.05,
        spread_ms: float = 0.6,
        clock_error_ms: float = 0.2,
        reordered: int = 0,
        extra: dict | None = None,
    ) -> None:
        m = {
            "type": "owamp",
            "time": iso(t),
            "src": src,
            "dst": dst,
            "packets_sent": sent,
            "packets_lost": lost,
            "duplicates": 0,
            "reordered": reordered,
        }
        if lost < sent:
            med = dmin + queue_ms
            m.update(
                {
                    "delay_min_ms": round(dmin, 3),
                    "delay_median_ms": round(med, 3),
                    "delay_max_ms": round(med + spread_ms, 3),
                    "jitter_ms": round(max(0.01, queue_ms / 2), 3),
                }
            )
        m["clock_error_ms"] = round(clock_error_ms, 2)
        if extra:
            m.update(extra)
        self.measurements.append(m)

    def owamp_down(self, t: datetime, src: str, dst: str, sent: int = 600) -> None:
        """A session of a path that is down: every packet lost, no delays."""
        self.owamp(t, src, dst, None, lost=sent, sent=sent)

    def quiet_owamp(
        self,
        t: datetime,
        src: str,
        dst: str,
        rtt_ms: float | None = None,
        *,
        owd_ms: float | None = None,
        below_ms: float = 0.05,
        spread_ms: float = 0.02,
        lost: int | None = None,
        single_loss: float = 0.02,
        queue_ms: tuple[float, float] = (0.03, 0.1),
        **record,
    ) -> None:
        """An owamp session of a path without queueing: its one-way delay (half the RTT unless given) less
        ``below_ms`` plus up to ``spread_ms``, ``lost`` packets lost (unless given, one with the probability
        ``single_loss``), a queue drawn from ``queue_ms``; ``record`` goes to :meth:`owamp` as it is. Drawn in
        that order: the seeded sequence of every case depends on it."""
        owd = owd_ms if owd_ms is not None else rtt_ms / 2
        delay_ms = owd - below_ms + self.rng.uniform(0, spread_ms)
        if lost is None:
            lost = int(self.rng.random() < single_loss)
        self.owamp(t, src, dst, delay_ms, lost=lost, queue_ms=self.rng.uniform(*queue_ms), **record)

    def traceroute(self, t: datetime, src: str, dst: str, hops: list[str], pmtu: int | None = 9000) -> None:
        m = {"type": "traceroute", "time": iso(t), "src": src, "dst": dst, "hops": list(hops)}
        if pmtu:
            m["pmtu_bytes"] = pmtu
        self.measurements.append(m)

    def host_tcp(
        self,
        t: datetime,
        site: str,
        host: str,
        *,
        buf: int,
        rmem: int | None = None,
        wmem: int | None = None,
        cc: str = "cubic",
        mtu: int = 9000,
        rmem_max: int | None = None,
        wmem_max: int | None = None,
    ) -> None:
        self.measurements.append(
            {
                "type": "host_tcp",
                "time": iso(t),
                "site": site,
                "host": host,
                "tcp_rmem": [4096, 87380, rmem or buf],
                "tcp_wmem": [4096, 65536, wmem or buf],
                "rmem_max": rmem_max or buf,
                "wmem_max": wmem_max or buf,
                "congestion_control": cc,
                "mtu": mtu,
            }
        )

    def snmp(
        self, t: datetime, equipment: str, interface: str, uptime_ticks: int, counters: dict, oper: str = "up"
    ) -> None:
        self.measurements.append(
            {
                "type": "snmp",
                "time": iso(t),
                "equipment": equipment,
                "interface": interface,
                "sys_uptime_ticks": int(uptime_ticks),
                "oper_status": oper,
                "counters": {k: int(v) for k, v in counters.items()},
            }
        )

    # -- expectations
    def want(self, code: str, rank: int | None = None, **subject: str) -> None:
        """``code`` must be found (about ``subject``, at ``rank``)."""
        self.expect.append(_expectation(code, rank, subject))

    def forbid(self, code: str, rank: int | None = None, **subject: str) -> None:
        """``code`` must not be found (about ``subject``, at ``rank``)."""
        self.absent.append(_expectation(code, rank, subject))

    def want_both_ways(self, code: str, a: str, b: str) -> None:
        """``code`` must be found on a->b and on b->a."""
        self.want(code, src=a, dst=b)
        self.want(code, src=b, dst=a)

    def want_one_way(self, code: str, src: str, dst: str) -> None:
        """``code`` must be found on src->dst and not on dst->src: the fault is on one direction only."""
        self.want(code, src=src, dst=dst)
        self.forbid(code, src=dst, dst=src)

    def forbid_codes(self, *codes: str) -> None:
        """None of ``codes`` may be found, about anything."""
        for code in codes:
            self.forbid(code)

    # -- output
    def document(self) -> str:
        topology = {
            "carriers": self.carriers,
            "sites": self.sites,
            "hosts": self.hosts,
            "equipment": self.equipment,
            "interfaces": self.interfaces,
            "trunks": self.trunks,
            "paths": self.paths,
        }
        head = {"scenario": self.name, "description": self.description, "now": iso(self.now)}
        out = [_block(head), "topology:"]
        for key, items in topology.items():
            out.append(f"  {key}:" + ("" if items else " []"))
            out += [f"  - {_flow(item)}" for item in items]
        if self.maintenance:
            out.append("maintenance:")
            out += [f"- {_flow(w)}" for w in self.maintenance]
        if self.agents:
            out.append("agents:")
            out += [f"- {_flow(a)}" for a in self.agents]
        out.append("measurements:")
        order = {"host_tcp": 0, "traceroute": 1, "snmp": 2, "throughput": 3, "owamp": 4}
        for m in sorted(self.measurements, key=lambda m: (m["time"], order[m["type"]])):
            out.append(f"- {_flow(m)}")
        out.append("expect:")
        out.append("  findings:" + ("" if self.expect else " []"))
        out += [f"  - {_flow(e)}" for e in self.expect]
        out.append("  absent:" + ("" if self.absent else " []"))
        out += [f"  - {_flow(e)}" for e in self.absent]
        return "\n".join(out) + "\n"


def scenario(
    name: str,
    start: datetime,
    *,
    carriers: Iterable[str] = (),
    sites: Iterable[str] = (),
    routers: Iterable[str] = (),
) -> Callable[[Callable[[Scenario], None]], Callable[[], Scenario]]:
    """Declare a scenario: ``name`` starting at ``start`` among the ``carriers``, ``sites`` and ``routers`` of
    ``places``; the decorated function adds the rest of it to the :class:`Scenario` it is given, and its docstring
    is the scenario's description (the lines joined by single spaces). The result builds the scenario when called.
    """

    def declare(build: Callable[[Scenario], None]) -> Callable[[], Scenario]:
        @functools.wraps(build)
        def make() -> Scenario:
            sc = Scenario(name, _description(build), start)
            sc.add_carriers(*carriers)
            sc.add_sites(*sites)
            sc.add_routers(*routers)
            build(sc)
            return sc

        return make

    return declare


def _description(build: Callable) -> str:
    if not build.__doc__:  # python -OO drops docstrings, and with them every scenario's description
        raise ValueError(f"{build.__qualname__}: a scenario is described by its docstring")
    return " ".join(inspect.cleandoc(build.__doc__).split())


def _nuttcp(t: datetime, src: str, dst: str, protocol: str, duration_s: float, **fields) -> dict:
    """The head every nuttcp record starts with, then ``fields``."""
    return {
        "type": "throughput",
        "time": iso(t),
        "src": src,
        "dst": dst,
        "tool": "nuttcp",
        "protocol": protocol,
        "duration_s": duration_s,
        **fields,
    }


def _on_hosts(m: dict, hosts: tuple[str, str] | None) -> None:
    """The addresses of the sending and the receiving host, where a test names them."""
    src_host, dst_host = hosts or (None, None)
    if src_host:
        m["src_host"] = src_host
    if dst_host:
        m["dst_host"] = dst_host


def _expectation(code: str, rank: int | None, subject: dict) -> dict:
    e: dict = {"code": code}
    if subject:
        e["subject"] = dict(subject)
    if rank is not None:
        e["rank"] = rank
    return e


def _flow(value: dict) -> str:
    return yaml.safe_dump(value, default_flow_style=True, sort_keys=False, width=10_000).strip()


def _block(value: dict) -> str:
    return yaml.safe_dump(value, sort_keys=False, width=110, allow_unicode=False).strip()


def jitter(rng: random.Random, value: float, rel: float) -> float:
    return value * (1 + rng.uniform(-rel, rel))


def healthy_pair(
    sc: Scenario,
    a: str,
    b: str,
    *,
    rtt_ms: float,
    cap_bps: float,
    mss: int = 8948,
    window: int = 64 * MiB,
    host_limit_bps: float | None = None,
    owd_split: float = 0.5,
    tcp_offset_s: float = 0,
    owamp_offset_s: float = 0,
    hosts: tuple[str, str] | None = None,
) -> None:
    """Both directions of a clean path: TCP every 30 min, owamp every 5 min, rare single-packet loss."""
    limit = host_limit_bps or 0.94 * cap_bps
    for src, dst, share, off in ((a, b, owd_split, 0), (b, a, 1 - owd_split, 7)):
        for t in sc.every(30, tcp_offset_s + off):
            thr = sc.jitter(tcp_rate_bps(cap_bps, rtt_ms, mss, window, 0, limit), 0.02)
            ends = (hosts if src == a else hosts[::-1]) if hosts else None
            sc.tcp_test(
                t, src, dst, thr, rtt_ms=rtt_ms, mss=mss, window=window, retransmits=(0, 0, 0, 1, 2), hosts=ends
            )
        for t in sc.every(5, owamp_offset_s + off):
            lost = 1 if sc.rng.random() < 0.03 else 0  # drawn before the delay
            sc.quiet_owamp(t, src, dst, owd_ms=rtt_ms * share, lost=lost)
