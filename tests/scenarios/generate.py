"""Generate the regression corpus of the diagnosis engine (tests/scenarios/*.yaml).

    .venv/bin/python tests/scenarios/generate.py            # (re)write every generated scenario
    .venv/bin/python tests/scenarios/generate.py case6      # only the files whose name contains 'case6'

Each ``scenario_*`` function below builds one file of docs/scenario-format.md: a topology of real LHC
sites and carriers, a timeline of nuttcp tests (every 30 min), owamp sessions (600 packets at
10/s every 5 min), SNMP polls (every 60 s) and traceroutes, and the ``expect`` block an expert
would demand.  Every number comes from the physics of docs/diagnosis.md#the-physics, computed here:

* window limit R_w = W * 8 / RTT and BDP = C * RTT / 8;
* the rate a stream reaches under a loss p: the Mathis ceiling (C = sqrt(3/2) for Reno, about
  twice that for CUBIC), never more than the window limit, the capacity or the host's limit;
* TCP retransmits = p * segments sent (segments = rate * duration / 8 / MSS);
* SNMP Counter64 octets advance by rate * 60 s / 8 per poll, wrap modulo 2^64; sysUpTime advances
  6000 ticks per 60 s poll and restarts from the boot after a reboot;
* one-way delays are fibre propagation (200 km per ms) plus processing; forward + reverse minimum
  equals the RTT when the clocks agree.

Randomness (jitter of rates and delays, which session loses a packet) is seeded from the scenario
name, so the output is reproducible byte for byte.  Most incidents start after the first third of
the timeline, which the replay uses as the path's baseline.

The two example scenarios (reverse-path-loss-fzk, window-limited-asgc) are copies of
scenarios/examples/ and are not generated here.
"""

from __future__ import annotations

import math
import random
import sys
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
MiB = 1 << 20
C64 = 2**64
MATHIS_RENO = math.sqrt(1.5)
CUBIC_FACTOR = 2.0
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
def window_rate_bps(window_bytes: float, rtt_ms: float) -> float:
    return window_bytes * 8 / (rtt_ms / 1000)


def bdp_bytes(capacity_bps: float, rtt_ms: float) -> float:
    return capacity_bps * rtt_ms / 1000 / 8


def mathis_bps(mss: int, rtt_ms: float, p: float, c: float = 0.7) -> float:
    return math.inf if p <= 0 else c * mss * 8 / (rtt_ms / 1000 * math.sqrt(p))


def tcp_rate_bps(
    cap_bps: float, rtt_ms: float, mss: int, window: float, p: float, host_limit_bps: float, cc: str = "cubic"
) -> float:
    """What one stream reaches: min(capacity, window limit, host limit, loss ceiling of the stack)."""
    factor = 1.0 if cc == "reno" else CUBIC_FACTOR
    loss = mathis_bps(mss, rtt_ms, p, MATHIS_RENO) * factor
    return min(cap_bps, window_rate_bps(window, rtt_ms), host_limit_bps, loss)


def segments(rate_bps: float, duration_s: float, mss: int) -> float:
    return rate_bps * duration_s / 8 / mss


def fibre_ms(km: float) -> float:
    return km / 200.0


# --------------------------------------------------------------------------- building blocks
def iso(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


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

    def interface(self, equipment: str, name: str, if_index: int, speed_mbps: int, mtu: int = 9192) -> None:
        self.interfaces.append(
            {"equipment": equipment, "name": name, "if_index": if_index, "speed_mbps": speed_mbps, "mtu": mtu}
        )

    def path(self, src: str, dst: str, capacity_mbps: int, hops: list[str], both: bool = True) -> None:
        self.paths.append({"src": src, "dst": dst, "capacity_mbps": capacity_mbps, "hops": list(hops)})
        if both:
            self.paths.append({"src": dst, "dst": src, "capacity_mbps": capacity_mbps, "hops": list(reversed(hops))})

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
        src_host: str | None = None,
        dst_host: str | None = None,
        schedule_s: float | None = None,
    ) -> None:
        m = {
            "type": "throughput",
            "time": iso(t),
            "src": src,
            "dst": dst,
            "tool": "nuttcp",
            "protocol": "tcp",
            "duration_s": duration_s,
            "streams": streams,
        }
        if window is not None:
            m["window_bytes"] = int(window)
        m.update(
            {"mss_bytes": mss, "throughput_bps": round(thr), "retransmits": retransmits, "rtt_ms": round(rtt_ms, 2)}
        )
        if retransmits is None:
            del m["retransmits"]
        if src_host:
            m["src_host"] = src_host
        if dst_host:
            m["dst_host"] = dst_host
        if schedule_s:
            m["schedule_interval_s"] = schedule_s
        self.measurements.append(m)

    def tcp_failed(self, t: datetime, src: str, dst: str, error: str, duration_s: float = 10) -> None:
        self.measurements.append(
            {
                "type": "throughput",
                "time": iso(t),
                "src": src,
                "dst": dst,
                "tool": "nuttcp",
                "protocol": "tcp",
                "duration_s": duration_s,
                "error": error,
            }
        )

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
        dst_host: str | None = None,
        src_host: str | None = None,
    ) -> None:
        received = sent - lost
        m = {
            "type": "throughput",
            "time": iso(t),
            "src": src,
            "dst": dst,
            "tool": "nuttcp",
            "protocol": "udp",
            "duration_s": duration_s,
            "offered_bps": round(offered),
            "throughput_bps": round(received * datagram_bytes * 8 / duration_s),
            "packets_sent": sent,
            "packets_lost": lost,
        }
        if src_host:
            m["src_host"] = src_host
        if dst_host:
            m["dst_host"] = dst_host
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
        self.measurements.append(
            {
                "type": "owamp",
                "time": iso(t),
                "src": src,
                "dst": dst,
                "packets_sent": sent,
                "packets_lost": sent,
                "duplicates": 0,
                "reordered": 0,
                "clock_error_ms": 0.2,
            }
        )

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
        e: dict = {"code": code}
        if subject:
            e["subject"] = dict(subject)
        if rank is not None:
            e["rank"] = rank
        self.expect.append(e)

    def forbid(self, code: str, rank: int | None = None, **subject: str) -> None:
        e: dict = {"code": code}
        if subject:
            e["subject"] = dict(subject)
        if rank is not None:
            e["rank"] = rank
        self.absent.append(e)

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


def _flow(value: dict) -> str:
    return yaml.safe_dump(value, default_flow_style=True, sort_keys=False, width=10_000).strip()


def _block(value: dict) -> str:
    return yaml.safe_dump(value, sort_keys=False, width=110, allow_unicode=False).strip()


class Counter64Port:
    """SNMP counters of one interface: Counter64 octets/packets (mod 2^64), Counter32 errors, sysUpTime."""

    def __init__(
        self,
        equipment: str,
        name: str,
        uptime_s: float,
        in_octets: int = 0,
        out_octets: int = 0,
        mean_frame_bytes: float = 900.0,
    ) -> None:
        self.equipment, self.name = equipment, name
        self.uptime_s = uptime_s
        self.c = {
            "hc_in_octets": in_octets % C64,
            "hc_out_octets": out_octets % C64,
            "hc_in_ucast_pkts": in_octets // 1400 % C64,
            "hc_out_ucast_pkts": out_octets // 1400 % C64,
            "in_errors": 0,
            "out_errors": 0,
            "in_discards": 0,
            "out_discards": 0,
        }
        self.frame = mean_frame_bytes
        self.frac = {k: 0.0 for k in self.c}

    def advance(
        self,
        seconds: float,
        in_bps: float,
        out_bps: float,
        in_errors_per_s: float = 0.0,
        out_discards_per_s: float = 0.0,
    ) -> None:
        self.uptime_s += seconds
        for name, amount in (
            ("hc_in_octets", in_bps * seconds / 8),
            ("hc_out_octets", out_bps * seconds / 8),
            ("hc_in_ucast_pkts", in_bps * seconds / 8 / self.frame),
            ("hc_out_ucast_pkts", out_bps * seconds / 8 / self.frame),
            ("in_errors", in_errors_per_s * seconds),
            ("out_discards", out_discards_per_s * seconds),
        ):
            total = self.frac[name] + amount
            whole = int(total)
            self.frac[name] = total - whole
            modulus = C64 if name.startswith("hc_") else 2**32
            self.c[name] = (self.c[name] + whole) % modulus

    def reboot(self, uptime_s: float) -> None:
        """The device booted ``uptime_s`` seconds ago: sysUpTime and every counter restart from zero."""
        self.uptime_s = uptime_s
        for k in self.c:
            self.c[k] = 0
            self.frac[k] = 0.0

    def poll(self, sc: Scenario, t: datetime, oper: str = "up") -> None:
        sc.snmp(t, self.equipment, self.name, round(self.uptime_s * 100) % 2**32, dict(self.c), oper)


def jitter(rng: random.Random, value: float, rel: float) -> float:
    return value * (1 + rng.uniform(-rel, rel))


def poisson(rng: random.Random, lam: float) -> int:
    """Knuth's Poisson sampler (lam is small here)."""
    if lam <= 0:
        return 0
    if lam > 30:
        return max(0, round(rng.gauss(lam, math.sqrt(lam))))
    limit, k, prod = math.exp(-lam), 0, rng.random()
    while prod > limit:
        k += 1
        prod *= rng.random()
    return k


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
        for t in minutes(sc.start, 30, sc.hours, tcp_offset_s + off):
            rate = tcp_rate_bps(cap_bps, rtt_ms, mss, window, 0, limit)
            thr = jitter(sc.rng, rate, 0.02)
            sh, dh = (hosts if src == a else tuple(reversed(hosts))) if hosts else (None, None)
            sc.tcp(
                t,
                src,
                dst,
                thr,
                rtt_ms=jitter(sc.rng, rtt_ms, 0.003),
                mss=mss,
                window=window,
                retransmits=sc.rng.choice([0, 0, 0, 1, 2]),
                src_host=sh,
                dst_host=dh,
            )
        for t in minutes(sc.start, 5, sc.hours, owamp_offset_s + off):
            lost = 1 if sc.rng.random() < 0.03 else 0
            sc.owamp(
                t,
                src,
                dst,
                rtt_ms * share - 0.05 + sc.rng.uniform(0, 0.02),
                lost=lost,
                queue_ms=sc.rng.uniform(0.03, 0.1),
            )


# --------------------------------------------------------------------------- the sites and carriers
SITES = {
    "CERN": ("CERN", 0, 46.23, 6.05),
    "FZK": ("KIT GridKa", 1, 49.09, 8.43),
    "CNAF": ("INFN CNAF", 1, 44.49, 11.34),
    "IN2P3": ("CC-IN2P3", 1, 45.78, 4.87),
    "RAL": ("RAL Tier-1", 1, 51.57, -1.31),
    "FNAL": ("Fermilab", 1, 41.84, -88.26),
    "BNL": ("Brookhaven National Laboratory", 1, 40.87, -72.88),
    "ASGC": ("Academia Sinica Grid Computing", 1, 25.04, 121.61),
    "PIC": ("Port d'Informacio Cientifica", 1, 41.50, 2.11),
    "NDGF": ("Nordic Data Grid Facility", 1, 55.70, 12.57),
    "SARA": ("NL-T1 SARA/Nikhef", 1, 52.36, 4.95),
    "TRIUMF": ("TRIUMF", 1, 49.25, -123.23),
    "CALTECH": ("Caltech Tier-2", 2, 34.14, -118.13),
    "TAU": ("Tel Aviv University Tier-2", 2, 32.11, 34.80),
    "LRZ": ("LRZ-LMU Munich Tier-2", 2, 48.26, 11.67),
}
CARRIERS = {
    "GEANT": "GEANT",
    "DFN": "DFN (Deutsches Forschungsnetz)",
    "GARR": "GARR",
    "RENATER": "RENATER",
    "JANET": "Janet",
    "REDIRIS": "RedIRIS",
    "NORDUNET": "NORDUnet",
    "SURFNET": "SURF",
    "USLHCNET": "USLHCNet",
    "ESNET": "ESnet",
    "STARLIGHT": "StarLight",
    "CENIC": "CENIC",
    "CANARIE": "CANARIE",
    "ASGCNET": "ASGCNet",
    "IUCC": "IUCC (Israel)",
}


def add_sites(sc: Scenario, *codes: str) -> None:
    for code in codes:
        name, tier, lat, lon = SITES[code]
        sc.site(code, name, tier, lat, lon)


def add_carriers(sc: Scenario, *codes: str) -> None:
    for code in codes:
        sc.carrier(code, CARRIERS[code])


# --------------------------------------------------------------------------- case 1
def scenario_case1() -> Scenario:
    sc = Scenario(
        "case1-reverse-path-loss-shared-backbone",
        "Case study 1 (LHC SC2, CERN-FZK and CERN-CNAF). From 08:10 a dirty patch panel on the GEANT Paris->Geneva "
        "fibre loses ~2-6 % of the frames towards Geneva: FZK->CERN and CNAF->CERN, which share that fibre, fall "
        "from ~940 Mb/s to a few tens of Mb/s (Mathis rate at 14-17 ms RTT) while CERN->FZK and CERN->CNAF stay "
        "near 900 Mb/s; IN2P3->CERN enters geant-gva through another port and stays clean. geant-gva:xe-1/0/0 "
        "(the receiving port of that fibre) counts CRC errors in proportion.",
        datetime(2026, 3, 3, 6, 0, tzinfo=UTC),
    )
    add_carriers(sc, "GEANT", "DFN", "GARR", "RENATER")
    add_sites(sc, "CERN", "FZK", "CNAF", "IN2P3")
    sc.router("cern-border", site="CERN", model="MX960")
    sc.router("fzk-border", site="FZK", vendor="Cisco", model="Nexus 7700")
    sc.router("cnaf-border", site="CNAF", vendor="Cisco", model="Nexus 7700")
    sc.router("in2p3-border", site="IN2P3", vendor="Cisco", model="ASR 9006")
    for name in ("geant-gva", "geant-par", "geant-fra", "geant-mil"):
        sc.router(name, carrier="GEANT", model="MX960")
    sc.router("dfn-fra", carrier="DFN")
    sc.router("garr-mil", carrier="GARR")
    sc.router("renater-lyo", carrier="RENATER")
    sc.interface("geant-gva", "xe-1/0/0", 1100, 10000)  # towards geant-par
    sc.interface("geant-gva", "xe-2/0/0", 1200, 10000)  # towards renater-lyo
    fzk = ["cern-border", "geant-gva:xe-1/0/0", "geant-par", "geant-fra", "dfn-fra", "fzk-border"]
    cnaf = ["cern-border", "geant-gva:xe-1/0/0", "geant-par", "geant-mil", "garr-mil", "cnaf-border"]
    in2p3 = ["cern-border", "geant-gva:xe-2/0/0", "renater-lyo", "in2p3-border"]
    sc.path("CERN", "FZK", 1000, fzk)
    sc.path("CERN", "CNAF", 1000, cnaf)
    sc.path("CERN", "IN2P3", 1000, in2p3)

    onset = sc.at("08:10")
    # Frame loss of the bad fibre: it drifts (the light coupling of a dirty connector is random), 2-6 %.
    loss_at: dict[int, float] = {}

    def fibre_loss(t: datetime) -> float:
        if t < onset:
            return 0.0
        key = int((t - onset).total_seconds() // 300)
        if key not in loss_at:
            loss_at[key] = min(0.06, max(0.02, 0.04 + 0.012 * sc.rng.gauss(0, 1)))
        return loss_at[key]

    window, mss = 16 * MiB, 8948
    for dst, rtt in (("FZK", 14.2), ("CNAF", 16.8)):
        for t in minutes(sc.start, 30, sc.hours):
            # CERN->X: clean; its ACKs cross the bad fibre, which costs a few spurious retransmits only
            p_ack = fibre_loss(t)
            thr = jitter(sc.rng, tcp_rate_bps(1e9, rtt, mss, window, 0, 0.94e9), 0.015) * (1 - 0.3 * p_ack)
            sc.tcp(
                t,
                "CERN",
                dst,
                thr,
                rtt_ms=jitter(sc.rng, rtt, 0.004),
                mss=mss,
                window=window,
                retransmits=poisson(sc.rng, 2 + 400 * p_ack),
            )
            # X->CERN: the data crosses the bad fibre
            t2 = t + timedelta(seconds=20)
            p = fibre_loss(t2)
            # at a few per cent loss and ~15 ms CUBIC runs in its Reno-friendly region: the Reno ceiling applies
            rate = tcp_rate_bps(1e9, rtt, mss, window, p, 0.94e9, cc="reno")
            thr = jitter(sc.rng, rate, 0.25 if p else 0.015)
            sc.tcp(
                t2,
                dst,
                "CERN",
                thr,
                rtt_ms=jitter(sc.rng, rtt, 0.004),
                mss=mss,
                window=window,
                retransmits=round(p * segments(thr, 10, mss) / (1 - p)) + poisson(sc.rng, 1),
            )
        for t in minutes(sc.start, 5, sc.hours, 40):
            sc.owamp(
                t,
                "CERN",
                dst,
                rtt / 2 - 0.05 + sc.rng.uniform(0, 0.02),
                lost=int(sc.rng.random() < 0.03),
                queue_ms=sc.rng.uniform(0.03, 0.1),
            )
            t2 = t + timedelta(seconds=75)
            p = fibre_loss(t2)
            sc.owamp(
                t2,
                dst,
                "CERN",
                rtt / 2 - 0.05 + sc.rng.uniform(0, 0.02),
                lost=poisson(sc.rng, 600 * p) if p else int(sc.rng.random() < 0.03),
                queue_ms=sc.rng.uniform(0.03, 0.1),
            )
    healthy_pair(sc, "CERN", "IN2P3", rtt_ms=2.4, cap_bps=1e9, window=16 * MiB, tcp_offset_s=40, owamp_offset_s=110)

    # SNMP of geant-gva's two ports; xe-1/0/0 receives the bad fibre: CRC errors = frame loss * frames/s
    bad = Counter64Port(
        "geant-gva",
        "xe-1/0/0",
        uptime_s=86400 * 87.3,
        in_octets=7_211_448_302_118_004,
        out_octets=6_002_117_804_551_200,
        mean_frame_bytes=1100,
    )
    good = Counter64Port(
        "geant-gva",
        "xe-2/0/0",
        uptime_s=86400 * 87.3,
        in_octets=3_118_804_227_950_112,
        out_octets=2_988_118_401_337_690,
        mean_frame_bytes=1100,
    )
    bad.c["in_errors"] = 1372
    good.c["in_errors"] = 88
    prev = None
    for t in minutes(sc.start, 1, sc.hours):
        if prev is not None:
            hour = (t - sc.start).total_seconds() / 3600
            base_in = 2.6e9 + 0.6e9 * math.sin(hour / 3) + sc.rng.gauss(0, 0.12e9)
            base_out = 2.2e9 + 0.4e9 * math.sin(hour / 4) + sc.rng.gauss(0, 0.1e9)
            p = fibre_loss(t)
            frames = base_in / 8 / 1100
            bad.advance(60, base_in * (1 - p), base_out, in_errors_per_s=frames * p)
            good.advance(60, 1.4e9 + sc.rng.gauss(0, 0.08e9), 1.1e9 + sc.rng.gauss(0, 0.08e9))
        bad.poll(sc, t)
        good.poll(sc, t + timedelta(seconds=2))
        prev = t

    sc.want("ASYMMETRIC_PATH", src="FZK", dst="CERN")
    sc.want("ASYMMETRIC_PATH", src="CNAF", dst="CERN")
    sc.want("SHARED_EQUIPMENT_SUSPECT", rank=1, equipment="geant-gva", interface="xe-1/0/0")
    sc.want("INTERFACE_ERRORS", equipment="geant-gva", interface="xe-1/0/0")
    sc.forbid("ASYMMETRIC_PATH", src="CERN", dst="FZK")
    sc.forbid("ASYMMETRIC_PATH", src="CERN", dst="CNAF")
    sc.forbid("INTERFACE_ERRORS", equipment="geant-gva", interface="xe-2/0/0")
    sc.forbid("SHARED_EQUIPMENT_SUSPECT", rank=1, equipment="cern-border")
    for code in (
        "WINDOW_LIMITED",
        "LINK_CONGESTION",
        "MAINTENANCE_EXPLAINED",
        "UNEXPLAINED_DEGRADATION",
        "PATH_DOWN",
        "COUNTER_DISCONTINUITY",
        "CLOCK_UNSYNC",
        "DELAY_LEVEL_SHIFT",
        "PERIODIC_LOSS",
    ):
        sc.forbid(code)
    return sc


# --------------------------------------------------------------------------- case 2
def scenario_case2() -> Scenario:
    sc = Scenario(
        "case2-periodic-loss-monitoring-receiver",
        "Case study 2 (LHC SC2, FZK->CERN after the patch panel was fixed). At 02:00 a new monitoring agent starts "
        "on the receiving transfer host cern-dt01; its host_tcp collector reads /proc/net/tcp every 300 s, and each "
        "read drops 10-70 % of the packets arriving in the following second. owamp runs continuously as perfSONAR "
        "powstream does (one 600-packet session at 10/s per minute), so each read costs 1-7 packets of the session "
        "in progress: one lossy session in five, FZK->CERN only. The sender side (CERN->FZK, received at FZK) is "
        "clean. The 10 s nuttcp tests at :00 and :30 never overlap a read.",
        datetime(2026, 3, 4, 0, 0, tzinfo=UTC),
    )
    add_carriers(sc, "GEANT", "DFN")
    add_sites(sc, "CERN", "FZK")
    sc.host("CERN", "cern-dt01", "192.0.2.10")
    sc.host("FZK", "fzk-dt01", "198.51.100.20")
    sc.router("cern-border", site="CERN", model="MX960")
    sc.router("fzk-border", site="FZK", vendor="Cisco", model="Nexus 7700")
    sc.router("geant-gva", carrier="GEANT", model="MX960")
    sc.router("geant-fra", carrier="GEANT", model="MX960")
    sc.router("dfn-fra", carrier="DFN")
    sc.path("FZK", "CERN", 10000, ["fzk-border", "dfn-fra", "geant-fra", "geant-gva", "cern-border"])
    sc.agents.append({"site": "CERN", "collector": "host_tcp", "interval_s": 300})

    rtt, mss, window = 9.8, 8948, 64 * MiB
    agent_start = sc.at("02:00:40")
    reads = [agent_start + timedelta(seconds=300 * i) for i in range(int(4 * 3600 / 300))]
    for r in reads:
        sc.host_tcp(r, "CERN", "cern-dt01", buf=256 * MiB)
    for t in minutes(sc.start, 30, sc.hours):
        for src, dst, sh, dh in (
            ("FZK", "CERN", "198.51.100.20", "192.0.2.10"),
            ("CERN", "FZK", "192.0.2.10", "198.51.100.20"),
        ):
            thr = jitter(sc.rng, tcp_rate_bps(10e9, rtt, mss, window, 0, 9.4e9), 0.015)
            sc.tcp(
                t + timedelta(seconds=0 if src == "FZK" else 15),
                src,
                dst,
                thr,
                rtt_ms=jitter(sc.rng, rtt, 0.003),
                mss=mss,
                window=window,
                retransmits=sc.rng.choice([0, 0, 1, 2, 3]),
                src_host=sh,
                dst_host=dh,
            )
    # a few random single-packet losses on both directions, as on any shared path
    stray = {("FZK", "CERN"): {sc.at("00:47"), sc.at("04:23")}, ("CERN", "FZK"): {sc.at("01:31"), sc.at("03:52")}}
    for t in minutes(sc.start, 1, sc.hours):
        for src, dst in (("FZK", "CERN"), ("CERN", "FZK")):
            lost = 1 if t in stray[(src, dst)] else 0
            if dst == "CERN" and any(t <= r < t + timedelta(seconds=60) for r in reads):
                lost += sc.rng.randint(1, 7)  # 10-70 % of the 10 packets of the second after the read
            sc.owamp(
                t, src, dst, rtt / 2 - 0.05 + sc.rng.uniform(0, 0.02), lost=lost, queue_ms=sc.rng.uniform(0.03, 0.1)
            )

    sc.want("PERIODIC_LOSS", src="FZK", dst="CERN")
    sc.want("PERIODIC_LOSS", site="CERN", host="cern-dt01")
    sc.forbid("PERIODIC_LOSS", src="CERN", dst="FZK")
    sc.forbid("PERIODIC_LOSS", site="FZK")
    for code in (
        "ASYMMETRIC_PATH",
        "LOSS_LIMITED",
        "UNEXPLAINED_DEGRADATION",
        "SHARED_EQUIPMENT_SUSPECT",
        "HOST_TCP_TUNING",
        "INTERFACE_ERRORS",
        "PATH_DOWN",
        "WINDOW_LIMITED",
    ):
        sc.forbid(code)
    return sc


# --------------------------------------------------------------------------- case 3
def scenario_case3() -> Scenario:
    sc = Scenario(
        "case3-trunk-odd-even-ral",
        "Case study 3 (LHC SC2, RAL). CERN->RAL crosses ral-lag, two 1 Gb/s members bundled into 2 Gb/s at "
        "janet-lon. From 08:10 the hashing sends flows to odd host addresses over a broken member: TCP to ral-dt01 "
        "and ral-dt03 (odd last octet) becomes slow and unstable with many retransmissions, TCP to ral-dt02 and "
        "ral-dt04 stays at ~940 Mb/s (one member's line rate), and 800 Mb/s UDP tests to every host are clean. "
        "The member counters show the broken member carrying far less than the other. RAL->CERN is fine.",
        datetime(2026, 3, 5, 6, 0, tzinfo=UTC),
    )
    add_carriers(sc, "GEANT", "JANET")
    add_sites(sc, "CERN", "RAL")
    hosts = [
        ("ral-dt01", "203.0.113.21"),
        ("ral-dt02", "203.0.113.22"),
        ("ral-dt03", "203.0.113.23"),
        ("ral-dt04", "203.0.113.24"),
    ]
    sc.host("CERN", "cern-dt02", "192.0.2.12")
    for name, addr in hosts:
        sc.host("RAL", name, addr)
    sc.router("cern-border", site="CERN", model="MX960")
    sc.router("geant-gva", carrier="GEANT", model="MX960")
    sc.router("geant-lon", carrier="GEANT", model="MX960")
    sc.router("janet-lon", carrier="JANET", vendor="Cisco", model="ASR 9010")
    sc.router("ral-border", site="RAL", vendor="Cisco", model="Nexus 7700")
    sc.interface("janet-lon", "ge-1/0/0", 2100, 1000, mtu=1500)
    sc.interface("janet-lon", "ge-1/0/1", 2101, 1000, mtu=1500)
    sc.trunks.append({"name": "ral-lag", "members": ["janet-lon:ge-1/0/0", "janet-lon:ge-1/0/1"]})
    sc.path("CERN", "RAL", 2000, ["cern-border", "geant-gva", "geant-lon", "janet-lon", "ral-border"])

    onset = sc.at("08:10")
    rtt, mss, window = 11.4, 1448, 16 * MiB
    line = 1e9 * 1448 / 1538  # TCP goodput of one 1 Gb/s member with 1500-byte frames
    for i, t in enumerate(minutes(sc.start, 30, sc.hours)):
        name, addr = hosts[i % 4]
        odd = int(addr.rsplit(".", 1)[1]) % 2 == 1
        if t >= onset and odd:
            thr = sc.rng.uniform(0.04, 0.32) * 1e9  # slow and unstable
            retrans = round(segments(thr, 10, mss) * sc.rng.uniform(0.01, 0.04))
        else:
            thr = jitter(sc.rng, line, 0.01)
            retrans = sc.rng.choice([0, 0, 1, 2])
        sc.tcp(
            t,
            "CERN",
            "RAL",
            thr,
            rtt_ms=jitter(sc.rng, rtt, 0.004),
            mss=mss,
            window=window,
            retransmits=retrans,
            src_host="192.0.2.12",
            dst_host=addr,
        )
        sent = round(800e6 * 10 / 8 / 1472)
        if t + timedelta(minutes=15) < sc.now:
            sc.udp(
                t + timedelta(minutes=15),
                "CERN",
                "RAL",
                800e6,
                sent - sc.rng.randint(0, 3),
                0,
                datagram_bytes=1472,
                src_host="192.0.2.12",
                dst_host=addr,
            )
        back = t + timedelta(minutes=5)
        sc.tcp(
            back,
            "RAL",
            "CERN",
            jitter(sc.rng, line, 0.01),
            rtt_ms=jitter(sc.rng, rtt, 0.004),
            mss=mss,
            window=window,
            retransmits=sc.rng.choice([0, 0, 1]),
            src_host=addr,
            dst_host="192.0.2.12",
        )
    for t in minutes(sc.start, 5, sc.hours, 50):
        for src, dst in (("CERN", "RAL"), ("RAL", "CERN")):
            sc.owamp(
                t,
                src,
                dst,
                rtt / 2 - 0.05 + sc.rng.uniform(0, 0.02),
                lost=int(sc.rng.random() < 0.02),
                queue_ms=sc.rng.uniform(0.03, 0.1),
            )
    m0 = Counter64Port("janet-lon", "ge-1/0/0", 86400 * 41.2, 912_334_201_778_112, 288_114_900_001_732, 1300)
    m1 = Counter64Port("janet-lon", "ge-1/0/1", 86400 * 41.2, 899_101_553_020_990, 281_447_010_553_118, 1300)
    for i, t in enumerate(minutes(sc.start, 1, sc.hours)):
        if i:
            towards_ral = 1.05e9 + sc.rng.gauss(0, 0.05e9)  # RAL's production inflow over the 2 Gb/s bundle
            crawl = 1.0 if t < onset else sc.rng.uniform(0.2, 0.35)  # flows hashed onto the broken member crawl
            m0.advance(60, sc.rng.gauss(0.21e9, 0.02e9), towards_ral * 0.5)
            m1.advance(60, sc.rng.gauss(0.2e9, 0.02e9), towards_ral * 0.5 * crawl)
        m0.poll(sc, t)
        m1.poll(sc, t + timedelta(seconds=1))

    sc.want("TRUNK_IMBALANCE", trunk="ral-lag")
    sc.want("TCP_ONLY_DEGRADATION", src="CERN", dst="RAL")
    sc.forbid("TCP_ONLY_DEGRADATION", src="RAL", dst="CERN")
    for code in (
        "LOSS_LIMITED",
        "ASYMMETRIC_PATH",
        "UNEXPLAINED_DEGRADATION",
        "INTERFACE_ERRORS",
        "LINK_CONGESTION",
        "WINDOW_LIMITED",
        "PATH_DOWN",
    ):
        sc.forbid(code)
    return sc


# --------------------------------------------------------------------------- case 4
def scenario_case4() -> Scenario:
    sc = Scenario(
        "case4-window-limited-fnal-asgc",
        "Case study 4 (window-limited transatlantic and East-Asian flows). CERN<->FNAL: 10 Gb/s, RTT 125 ms, "
        "nuttcp -w128m reaches ~6.5 Gb/s (host limit) until fnal-dt01 is reinstalled at 01:55 with an old sysctl "
        "profile (net.core.rmem_max = wmem_max = 4 MiB): from then the 128 MiB request is cut to 4 MiB and both "
        "directions run at ~0.95 x 4 MiB * 8 / 125 ms = 255 Mb/s. CERN<->ASGC: 1 Gb/s, RTT 318 ms, autotuned "
        "with tcp_rmem/tcp_wmem max 16 MiB at ASGC: ~0.6 x 422 Mb/s; 1 Gb/s there needs 2 x BDP = 79.5 MB. "
        "CERN's hosts are tuned (256 MiB).",
        datetime(2026, 3, 6, 0, 0, tzinfo=UTC),
    )
    add_carriers(sc, "GEANT", "USLHCNET", "STARLIGHT", "ESNET", "ASGCNET")
    add_sites(sc, "CERN", "FNAL", "ASGC")
    sc.host("CERN", "cern-dt01", "192.0.2.10")
    sc.host("FNAL", "fnal-dt01", "198.51.100.40")
    sc.host("ASGC", "asgc-dt01", "203.0.113.60")
    sc.router("cern-border", site="CERN", model="MX960")
    sc.router("uslhcnet-gva", carrier="USLHCNET", vendor="Ciena", model="5410", role="switch")
    sc.router("uslhcnet-chi", carrier="USLHCNET", vendor="Ciena", model="5410", role="switch")
    sc.router("starlight", carrier="STARLIGHT", vendor="Juniper", model="QFX10008", role="switch")
    sc.router("esnet-chi", carrier="ESNET", model="MX10003")
    sc.router("fnal-border", site="FNAL", vendor="Cisco", model="Nexus 9500")
    sc.router("geant-ams", carrier="GEANT", model="MX960")
    sc.router("asgc-ams", carrier="ASGCNET", vendor="Cisco", model="ASR 9006")
    sc.router("asgc-tpe", carrier="ASGCNET", vendor="Cisco", model="ASR 9006")
    sc.router("asgc-border", site="ASGC", vendor="Cisco", model="Nexus 7700")
    sc.path(
        "CERN", "FNAL", 10000, ["cern-border", "uslhcnet-gva", "uslhcnet-chi", "starlight", "esnet-chi", "fnal-border"]
    )
    sc.path("CERN", "ASGC", 1000, ["cern-border", "geant-ams", "asgc-ams", "asgc-tpe", "asgc-border"])

    reinstall = sc.at("01:55")
    for t in minutes(sc.start, 60, sc.hours):
        sc.host_tcp(t, "CERN", "cern-dt01", buf=256 * MiB)
        if t < reinstall:
            sc.host_tcp(t + timedelta(seconds=30), "FNAL", "fnal-dt01", buf=256 * MiB)
        else:
            sc.host_tcp(t + timedelta(seconds=30), "FNAL", "fnal-dt01", buf=4 * MiB)
        sc.host_tcp(t + timedelta(seconds=60), "ASGC", "asgc-dt01", buf=16 * MiB)
    mss = 8948
    for t in minutes(sc.start, 30, sc.hours):
        window = 128 * MiB if t < reinstall else 4 * MiB  # what the kernel grants of the 128 MiB asked for
        for src, dst, off, sh, dh in (
            ("CERN", "FNAL", 0, "192.0.2.10", "198.51.100.40"),
            ("FNAL", "CERN", 40, "198.51.100.40", "192.0.2.10"),
        ):
            rtt = jitter(sc.rng, 125.0, 0.002)
            rate = tcp_rate_bps(10e9, rtt, mss, window, 0, 6.5e9)
            thr = rate * sc.rng.uniform(0.93, 0.98) if t >= reinstall else jitter(sc.rng, rate, 0.02)
            sc.tcp(
                t + timedelta(seconds=off),
                src,
                dst,
                thr,
                rtt_ms=rtt,
                mss=mss,
                window=128 * MiB,
                retransmits=sc.rng.choice([0, 0, 0, 1]),
                src_host=sh,
                dst_host=dh,
            )
        for src, dst, off, sh, dh in (
            ("CERN", "ASGC", 120, "192.0.2.10", "203.0.113.60"),
            ("ASGC", "CERN", 160, "203.0.113.60", "192.0.2.10"),
        ):
            rtt = jitter(sc.rng, 318.0, 0.002)
            # autotuning: the advertised window is only part of tcp_rmem's maximum (skb overhead)
            thr = window_rate_bps(16 * MiB, rtt) * sc.rng.uniform(0.55, 0.68)
            sc.tcp(
                t + timedelta(seconds=off),
                src,
                dst,
                thr,
                rtt_ms=rtt,
                mss=mss,
                window=None,
                retransmits=sc.rng.choice([0, 0, 1]),
                src_host=sh,
                dst_host=dh,
            )
    for t in minutes(sc.start, 5, sc.hours, 70):
        for src, dst, owd in (
            ("CERN", "FNAL", 62.5),
            ("FNAL", "CERN", 62.5),
            ("CERN", "ASGC", 159.0),
            ("ASGC", "CERN", 159.0),
        ):
            sc.owamp(
                t,
                src,
                dst,
                owd - 0.05 + sc.rng.uniform(0, 0.03),
                lost=int(sc.rng.random() < 0.02),
                queue_ms=sc.rng.uniform(0.03, 0.12),
            )

    for src, dst in (("CERN", "FNAL"), ("FNAL", "CERN"), ("CERN", "ASGC"), ("ASGC", "CERN")):
        sc.want("WINDOW_LIMITED", src=src, dst=dst)
    sc.want("HOST_TCP_TUNING", site="FNAL", host="fnal-dt01")
    sc.want("HOST_TCP_TUNING", site="ASGC", host="asgc-dt01")
    sc.forbid("HOST_TCP_TUNING", site="CERN")
    for code in (
        "LOSS_LIMITED",
        "ASYMMETRIC_PATH",
        "UNEXPLAINED_DEGRADATION",
        "TCP_ONLY_DEGRADATION",
        "SHARED_EQUIPMENT_SUSPECT",
        "PATH_DOWN",
        "MTU_MISMATCH",
    ):
        sc.forbid(code)
    return sc


# --------------------------------------------------------------------------- case 5
def scenario_case5() -> Scenario:
    sc = Scenario(
        "case5-equipment-at-limits-fnal",
        "Case study 5 (LHC SC1, CERN-FNAL). A stable ~5 Gb/s from CERN to FNAL (hosts at their limit) over the "
        "USLHCNet Geneva-Chicago 10 Gb/s link. At 08:30 debugging transfers CERN->Caltech start on the same link "
        "rate-limited to 400 Mb/s, and CERN->FNAL drops to ~3 Gb/s with burst losses, although the link carries "
        "less than 60 % of 10 Gb/s (SNMP): equipment close to its limits, not congestion. CERN->BNL leaves "
        "Geneva on the New York link and stays healthy.",
        datetime(2026, 3, 7, 6, 0, tzinfo=UTC),
    )
    add_carriers(sc, "USLHCNET", "STARLIGHT", "ESNET", "CENIC")
    add_sites(sc, "CERN", "FNAL", "CALTECH", "BNL")
    sc.router("cern-border", site="CERN", model="MX960")
    sc.router("uslhcnet-gva", carrier="USLHCNET", vendor="Force10", model="E600")
    sc.router("uslhcnet-chi", carrier="USLHCNET", vendor="Force10", model="E600")
    sc.router("uslhcnet-nyc", carrier="USLHCNET", vendor="Force10", model="E600")
    sc.router("starlight", carrier="STARLIGHT", vendor="Force10", model="E1200", role="switch")
    sc.router("esnet-chi", carrier="ESNET", model="MX960")
    sc.router("esnet-nyc", carrier="ESNET", model="MX960")
    sc.router("cenic-lax", carrier="CENIC", vendor="Cisco", model="CRS-1")
    sc.router("fnal-border", site="FNAL", vendor="Cisco", model="Catalyst 6509")
    sc.router("caltech-border", site="CALTECH", vendor="Cisco", model="Catalyst 6509")
    sc.router("bnl-border", site="BNL", vendor="Cisco", model="Catalyst 6509")
    sc.interface("uslhcnet-gva", "xe-0/0/0", 500, 10000)  # Geneva -> Chicago
    sc.interface("uslhcnet-gva", "xe-0/0/1", 501, 10000)  # Geneva -> New York
    sc.path(
        "CERN",
        "FNAL",
        10000,
        ["cern-border", "uslhcnet-gva:xe-0/0/0", "uslhcnet-chi", "starlight", "esnet-chi", "fnal-border"],
    )
    sc.path(
        "CERN",
        "CALTECH",
        10000,
        ["cern-border", "uslhcnet-gva:xe-0/0/0", "uslhcnet-chi", "starlight", "cenic-lax", "caltech-border"],
        both=False,
    )
    sc.path("CERN", "BNL", 10000, ["cern-border", "uslhcnet-gva:xe-0/0/1", "uslhcnet-nyc", "esnet-nyc", "bnl-border"])

    onset = sc.at("08:30")
    mss, window = 8948, 128 * MiB
    fnal_rate: dict[datetime, float] = {}
    for t in minutes(sc.start, 30, sc.hours):
        rtt = jitter(sc.rng, 120.0, 0.002)
        if t < onset:
            thr, retrans = jitter(sc.rng, 5.0e9, 0.02), sc.rng.choice([0, 0, 1, 2])
        else:
            thr, retrans = sc.rng.uniform(2.6e9, 3.4e9), sc.rng.randint(20, 150)  # burst losses at the receivers
        fnal_rate[t] = thr
        sc.tcp(t, "CERN", "FNAL", thr, rtt_ms=rtt, mss=mss, window=window, retransmits=retrans)
        sc.tcp(
            t + timedelta(seconds=30),
            "FNAL",
            "CERN",
            jitter(sc.rng, 5.0e9, 0.02),
            rtt_ms=rtt,
            mss=mss,
            window=window,
            retransmits=sc.rng.choice([0, 0, 1]),
        )
        if t >= onset:
            # debugging transfers rate-limited to 400 Mb/s (nuttcp -R400m): steady and clean
            sc.tcp(
                t + timedelta(seconds=60),
                "CERN",
                "CALTECH",
                jitter(sc.rng, 3.99e8, 0.003),
                rtt_ms=jitter(sc.rng, 171.0, 0.002),
                mss=mss,
                window=window,
                retransmits=0,
            )
        for src, dst in (("CERN", "BNL"), ("BNL", "CERN")):
            sc.tcp(
                t + timedelta(seconds=90 if src == "CERN" else 120),
                src,
                dst,
                jitter(sc.rng, 9.2e9, 0.015),
                rtt_ms=jitter(sc.rng, 92.0, 0.002),
                mss=mss,
                window=window,
                retransmits=sc.rng.choice([0, 1]),
            )
    for t in minutes(sc.start, 5, sc.hours, 150):
        for src, dst, owd in (
            ("CERN", "FNAL", 60.0),
            ("FNAL", "CERN", 60.0),
            ("CERN", "BNL", 46.0),
            ("BNL", "CERN", 46.0),
        ):
            sc.owamp(
                t,
                src,
                dst,
                owd - 0.05 + sc.rng.uniform(0, 0.03),
                lost=int(sc.rng.random() < 0.02),
                queue_ms=sc.rng.uniform(0.05, 0.2),
            )
        if t >= onset:
            sc.owamp(
                t + timedelta(seconds=90),
                "CERN",
                "CALTECH",
                85.5 + sc.rng.uniform(0, 0.03),
                queue_ms=sc.rng.uniform(0.05, 0.2),
            )
    # the production transfer to FNAL, the debugging transfer to Caltech and other traffic, seen by SNMP
    chi = Counter64Port(
        "uslhcnet-gva", "xe-0/0/0", 86400 * 12.6, 1_118_302_447_001_234, 9_871_220_016_448_108, mean_frame_bytes=6000
    )
    nyc = Counter64Port(
        "uslhcnet-gva", "xe-0/0/1", 86400 * 12.6, 812_990_117_340_002, 5_442_781_990_017_776, mean_frame_bytes=6000
    )
    for i, t in enumerate(minutes(sc.start, 1, sc.hours)):
        if i:
            prod = 5.0e9 if t < onset else 3.3e9
            extra = 0.0 if t < onset else 0.4e9
            chi.advance(60, 1.1e9 + sc.rng.gauss(0, 0.05e9), prod + extra + 0.5e9 + sc.rng.gauss(0, 0.08e9))
            nyc.advance(60, 0.9e9 + sc.rng.gauss(0, 0.05e9), 2.4e9 + sc.rng.gauss(0, 0.1e9))
        chi.poll(sc, t)
        nyc.poll(sc, t + timedelta(seconds=1))

    sc.want("SHARED_EQUIPMENT_SUSPECT", rank=1, equipment="uslhcnet-gva", interface="xe-0/0/0")
    sc.forbid("SHARED_EQUIPMENT_SUSPECT", equipment="cern-border")
    sc.forbid("SHARED_EQUIPMENT_SUSPECT", equipment="uslhcnet-gva", interface="xe-0/0/1")
    for code in (
        "LINK_CONGESTION",
        "UNEXPLAINED_DEGRADATION",
        "WINDOW_LIMITED",
        "LOSS_LIMITED",
        "ASYMMETRIC_PATH",
        "PATH_DOWN",
        "INTERFACE_ERRORS",
    ):
        sc.forbid(code)
    return sc


# --------------------------------------------------------------------------- case 6
def scenario_case6() -> Scenario:
    sc = Scenario(
        "case6-loss-limited-oc12-tau",
        "Case study 6 (loss-limited path). CERN<->TAU over an OC-12 (622 Mb/s) circuit with a marginal optic: "
        "bit error rate ~1e-9, so 8000-byte UDP datagrams are lost at 6.4e-5 (5 of 78110 per 500 Mb/s test) and "
        "jumbo TCP segments alike, while 600 small owamp packets per session see nothing. With MSS 8948 and RTT "
        "72 ms Mathis gives 0.7 * 8948 * 8 / (0.072 * sqrt(6.4e-5)) = 87 Mb/s, and that is what TCP reaches, far "
        "below the 622 Mb/s capacity and the 1.86 Gb/s window limit of the 16 MiB window. A chronic condition: "
        "it holds over the whole timeline.",
        datetime(2026, 3, 8, 0, 0, tzinfo=UTC),
    )
    add_carriers(sc, "GEANT", "IUCC")
    add_sites(sc, "CERN", "TAU")
    sc.router("cern-border", site="CERN", model="MX960")
    sc.router("geant-gva", carrier="GEANT", model="MX960")
    sc.router("geant-mil", carrier="GEANT", model="MX960")
    sc.router("iucc-mil", carrier="IUCC", vendor="Cisco", model="7609")
    sc.router("iucc-tlv", carrier="IUCC", vendor="Cisco", model="7609")
    sc.router("tau-border", site="TAU", vendor="Cisco", model="Catalyst 6509")
    sc.interface("iucc-mil", "so-1/0/0", 300, 622, mtu=9180)
    sc.path(
        "CERN", "TAU", 622, ["cern-border", "geant-gva", "geant-mil", "iucc-mil:so-1/0/0", "iucc-tlv", "tau-border"]
    )
    mss, window, rtt = 8948, 16 * MiB, 72.0
    sent = 78110  # 500 Mb/s for 10 s in 8000-byte datagrams
    # Poisson(5) draws that sum to 5 per test exactly: the file's loss is 5/78110 = 6.4e-5
    lost_seq = {"CERN": [5, 4, 6, 5, 7, 3, 5, 6, 4, 5, 5, 5], "TAU": [6, 5, 4, 5, 3, 6, 5, 7, 4, 5, 5, 5]}
    p = 5 / sent
    for src, dst in (("CERN", "TAU"), ("TAU", "CERN")):
        off = 0 if src == "CERN" else 45
        for i, t in enumerate(minutes(sc.start, 30, sc.hours, off)):
            r = jitter(sc.rng, rtt, 0.003)
            thr = mathis_bps(mss, r, p) * sc.rng.uniform(0.9, 1.1)
            sc.tcp(
                t,
                src,
                dst,
                thr,
                rtt_ms=r,
                mss=mss,
                window=window,
                retransmits=poisson(sc.rng, p * segments(thr, 10, mss)),
            )
            if t + timedelta(minutes=15) < sc.now:
                sc.udp(t + timedelta(minutes=15), src, dst, 500e6, sent, lost_seq[src][i], datagram_bytes=8000)
        for t in minutes(sc.start, 5, sc.hours, 100 + off):
            sc.owamp(t, src, dst, rtt / 2 - 0.05 + sc.rng.uniform(0, 0.02), queue_ms=sc.rng.uniform(0.03, 0.1))

    sc.want("LOSS_LIMITED", src="CERN", dst="TAU")
    sc.want("LOSS_LIMITED", src="TAU", dst="CERN")
    for code in (
        "WINDOW_LIMITED",
        "ASYMMETRIC_PATH",
        "UNEXPLAINED_DEGRADATION",
        "MTU_MISMATCH",
        "TCP_ONLY_DEGRADATION",
        "PATH_DOWN",
        "PERIODIC_LOSS",
    ):
        sc.forbid(code)
    return sc


# --------------------------------------------------------------------------- case 7
def scenario_case7() -> Scenario:
    sc = Scenario(
        "case7-protection-switch-pic",
        "Case study 7 (protection switching). CERN<->PIC: minimum one-way delay 6.95 ms each way (RTT 13.9 ms). "
        "At 02:37 the SDH working span fails and both directions switch to the protection route via Madrid, "
        "520 km longer: +2.6 ms one way; at 04:12 they revert. Traceroutes every 30 min show the same IP hops "
        "all along: the change is below IP. Throughput is unaffected (64 MiB window).",
        datetime(2026, 3, 9, 0, 0, tzinfo=UTC),
    )
    add_carriers(sc, "GEANT", "REDIRIS")
    add_sites(sc, "CERN", "PIC")
    sc.router("cern-border", site="CERN", model="MX960")
    sc.router("geant-gva", carrier="GEANT", model="MX960")
    sc.router("geant-mar", carrier="GEANT", model="MX960")
    sc.router("rediris-bcn", carrier="REDIRIS", model="MX480")
    sc.router("pic-border", site="PIC", vendor="Cisco", model="Nexus 9500")
    hops = ["cern-border", "geant-gva", "geant-mar", "rediris-bcn", "pic-border"]
    sc.path("CERN", "PIC", 10000, hops)
    switch, revert = sc.at("02:37:30"), sc.at("04:12:10")
    extra = fibre_ms(520)

    def owd(t: datetime) -> float:
        return 6.95 + (extra if switch <= t < revert else 0.0)

    mss, window = 8948, 64 * MiB
    for src, dst, off in (("CERN", "PIC", 0), ("PIC", "CERN", 30)):
        for t in minutes(sc.start, 30, sc.hours, off):
            rtt = 2 * owd(t) + 0.05
            sc.tcp(
                t,
                src,
                dst,
                jitter(sc.rng, tcp_rate_bps(10e9, rtt, mss, window, 0, 9.4e9), 0.015),
                rtt_ms=jitter(sc.rng, rtt, 0.002),
                mss=mss,
                window=window,
                retransmits=sc.rng.choice([0, 0, 1]),
            )
            route = hops if src == "CERN" else list(reversed(hops))
            sc.traceroute(t + timedelta(seconds=300), src, dst, route)
        for t in minutes(sc.start, 5, sc.hours, 15 + off):
            sc.owamp(
                t,
                src,
                dst,
                owd(t) - 0.02 + sc.rng.uniform(0, 0.03),
                lost=int(sc.rng.random() < 0.02),
                queue_ms=sc.rng.uniform(0.03, 0.1),
            )

    sc.want("DELAY_LEVEL_SHIFT", src="CERN", dst="PIC")
    sc.want("DELAY_LEVEL_SHIFT", src="PIC", dst="CERN")
    for code in (
        "ROUTE_CHANGE",
        "CLOCK_UNSYNC",
        "UNEXPLAINED_DEGRADATION",
        "PATH_DOWN",
        "LOSS_LIMITED",
        "ASYMMETRIC_PATH",
    ):
        sc.forbid(code)
    return sc


# --------------------------------------------------------------------------- case 8
def scenario_case8() -> Scenario:
    sc = Scenario(
        "case8-maintenance-sara",
        "Case study 8 (scheduled intervention). SURF announced SURF-CHG-2026-0310-017: software upgrade of "
        "surfnet-asd, 03:00-04:30 UTC, impact degraded. From 03:02 to 04:27 CERN<->SARA is rerouted over the "
        "backup via surfnet-ut, shared with the rest of SURF's rerouted traffic: ~0.4 % loss, RTT 19.8 instead of "
        "18.6 ms, and TCP collapses from 9.3 Gb/s to the Mathis rate of that loss (~150 Mb/s). Everything is "
        "back at 04:30. CERN<->FZK, not on SURF, is unaffected. Known and expected: nothing may alert.",
        datetime(2026, 3, 10, 0, 0, tzinfo=UTC),
    )
    add_carriers(sc, "GEANT", "SURFNET", "DFN")
    add_sites(sc, "CERN", "SARA", "FZK")
    sc.router("cern-border", site="CERN", model="MX960")
    sc.router("geant-gva", carrier="GEANT", model="MX960")
    sc.router("geant-ams", carrier="GEANT", model="MX960")
    sc.router("geant-fra", carrier="GEANT", model="MX960")
    sc.router("surfnet-asd", carrier="SURFNET", model="MX2020")
    sc.router("surfnet-ut", carrier="SURFNET", model="MX2020")
    sc.router("sara-border", site="SARA", vendor="Arista", model="7280R")
    sc.router("dfn-fra", carrier="DFN")
    sc.router("fzk-border", site="FZK", vendor="Cisco", model="Nexus 7700")
    hops = ["cern-border", "geant-gva", "geant-ams", "surfnet-asd", "sara-border"]
    backup = ["cern-border", "geant-gva", "geant-ams", "surfnet-ut", "sara-border"]
    sc.path("CERN", "SARA", 10000, hops)
    sc.path("CERN", "FZK", 10000, ["cern-border", "geant-gva", "geant-fra", "dfn-fra", "fzk-border"])
    sc.maintenance.append(
        {
            "reference": "SURF-CHG-2026-0310-017",
            "carrier": "SURFNET",
            "impact": "degraded",
            "start": iso(sc.at("03:00")),
            "end": iso(sc.at("04:30")),
            "affects": ["surfnet-asd"],
            "description": "JunOS upgrade of surfnet-asd; traffic via surfnet-ut",
        }
    )
    moved, back = sc.at("03:02"), sc.at("04:27")

    def rerouted(t: datetime) -> bool:
        return moved <= t < back

    mss, window = 8948, 64 * MiB
    for src, dst, off in (("CERN", "SARA", 0), ("SARA", "CERN", 40)):
        for t in minutes(sc.start, 30, sc.hours, off):
            rtt = 19.8 if rerouted(t) else 18.6
            p = sc.rng.uniform(0.003, 0.005) if rerouted(t) else 0.0
            thr = jitter(sc.rng, tcp_rate_bps(10e9, rtt, mss, window, p, 9.3e9), 0.15 if p else 0.015)
            sc.tcp(
                t,
                src,
                dst,
                thr,
                rtt_ms=jitter(sc.rng, rtt, 0.003),
                mss=mss,
                window=window,
                retransmits=round(p * segments(thr, 10, mss)) + sc.rng.choice([0, 0, 1]),
            )
            route = backup if rerouted(t + timedelta(seconds=20)) else hops
            sc.traceroute(t + timedelta(seconds=20), src, dst, route if src == "CERN" else list(reversed(route)))
        for t in minutes(sc.start, 5, sc.hours, 25 + off):
            if rerouted(t):
                sc.owamp(
                    t,
                    src,
                    dst,
                    9.9 + sc.rng.uniform(0, 0.02),
                    lost=poisson(sc.rng, 600 * 0.004),
                    queue_ms=sc.rng.uniform(0.8, 2.5),
                    spread_ms=4.0,
                )
            else:
                sc.owamp(
                    t,
                    src,
                    dst,
                    9.3 + sc.rng.uniform(0, 0.02),
                    lost=int(sc.rng.random() < 0.02),
                    queue_ms=sc.rng.uniform(0.03, 0.1),
                )
    healthy_pair(sc, "CERN", "FZK", rtt_ms=9.8, cap_bps=10e9, tcp_offset_s=90, owamp_offset_s=130)

    sc.want("MAINTENANCE_EXPLAINED", equipment="surfnet-asd")
    for code in (
        "UNEXPLAINED_DEGRADATION",
        "SHARED_EQUIPMENT_SUSPECT",
        "PATH_DOWN",
        "DELAY_LEVEL_SHIFT",
        "ASYMMETRIC_PATH",
        "CLOCK_UNSYNC",
    ):
        sc.forbid(code)
    return sc


def scenario_near_miss_port_work() -> Scenario:
    sc = Scenario(
        "near-miss-port-work-elsewhere-sara",
        "Near miss of MAINTENANCE_EXPLAINED. GEANT announced GEANT-CHG-2026-0312-044, outage, 03:00-04:30 UTC, on "
        "geant-ams:et-7/1/0, the Amsterdam port towards another customer. CERN->SARA leaves geant-ams by et-3/0/0 (the "
        "topology names that port), so the work is not on it. By bad luck, from 03:05 to 04:25 a dirty connector on "
        "et-3/0/0 loses ~0.3 % of the frames towards SARA: TCP collapses from 9.3 Gb/s to the Mathis rate (~190 Mb/s "
        "at 18.6 ms), owamp sees the loss, SARA->CERN is clean. That is a fault to chase (LOSS_LIMITED), not "
        "announced work: explaining it by the window on another port would hide it.",
        datetime(2026, 3, 12, 0, 0, tzinfo=UTC),
    )
    add_carriers(sc, "GEANT", "SURFNET")
    add_sites(sc, "CERN", "SARA")
    sc.router("cern-border", site="CERN", model="MX960")
    sc.router("geant-gva", carrier="GEANT", model="MX960")
    sc.router("geant-ams", carrier="GEANT", model="MX960")
    sc.router("surfnet-asd", carrier="SURFNET", model="MX2020")
    sc.router("sara-border", site="SARA", vendor="Arista", model="7280R")
    sc.interface("geant-ams", "et-3/0/0", 3300, 100000)
    sc.interface("geant-ams", "et-7/1/0", 7100, 100000)
    hops = ["cern-border", "geant-gva", "geant-ams:et-3/0/0", "surfnet-asd", "sara-border"]
    sc.path("CERN", "SARA", 10000, hops, both=False)
    sc.path("SARA", "CERN", 10000, ["sara-border", "surfnet-asd", "geant-ams", "geant-gva", "cern-border"], both=False)
    sc.maintenance.append(
        {
            "reference": "GEANT-CHG-2026-0312-044",
            "carrier": "GEANT",
            "impact": "outage",
            "start": iso(sc.at("03:00")),
            "end": iso(sc.at("04:30")),
            "affects": ["geant-ams:et-7/1/0"],
            "description": "Replace the line card optic of et-7/1/0 (customer link)",
        }
    )
    dirty, clean = sc.at("03:05"), sc.at("04:25")

    def lossy(t: datetime, src: str) -> bool:
        return src == "CERN" and dirty <= t < clean

    rtt, mss, window = 18.6, 8948, 64 * MiB
    for src, dst, off in (("CERN", "SARA", 0), ("SARA", "CERN", 40)):
        for t in minutes(sc.start, 30, sc.hours, off):
            p = sc.rng.uniform(0.0025, 0.0035) if lossy(t, src) else 0.0
            thr = jitter(sc.rng, tcp_rate_bps(10e9, rtt, mss, window, p, 9.3e9), 0.15 if p else 0.015)
            sc.tcp(
                t,
                src,
                dst,
                thr,
                rtt_ms=jitter(sc.rng, rtt, 0.003),
                mss=mss,
                window=window,
                retransmits=round(p * segments(thr, 10, mss)) + sc.rng.choice([0, 0, 1]),
            )
        for t in minutes(sc.start, 5, sc.hours, 25 + off):
            p = 0.003 if lossy(t, src) else 0.0
            sc.owamp(
                t,
                src,
                dst,
                rtt / 2 + sc.rng.uniform(0, 0.02),
                lost=poisson(sc.rng, 600 * p) if p else int(sc.rng.random() < 0.02),
                queue_ms=sc.rng.uniform(0.03, 0.1),
            )

    sc.want("LOSS_LIMITED", src="CERN", dst="SARA")
    sc.forbid("LOSS_LIMITED", src="SARA", dst="CERN")
    for code in ("MAINTENANCE_EXPLAINED", "PATH_DOWN", "DELAY_LEVEL_SHIFT", "CLOCK_UNSYNC", "WINDOW_LIMITED"):
        sc.forbid(code)
    return sc


# --------------------------------------------------------------------------- case 9
def scenario_case9() -> Scenario:
    sc = Scenario(
        "case9-counter-wrap-and-reboot",
        "Case study 9 (counter wrap and reset). dfn-fra's 10 Gb/s port xe-2/0/0 (from GEANT, carrying CERN->FZK) "
        "is polled every 60 s with Counter64; its ifHCInOctets started close to 2^64 and wraps at 01:30 while "
        "the port carries 5.5-8.3 Gb/s (a wrap-safe rate is 5.5-8.3 Gb/s, a naive one negative or ~2.5e21 "
        "bit/s). At 04:02:40 the router reboots: polls fail until 04:08, when sysUpTime is 3.2 min and every "
        "counter restarted from zero; the interval across the reboot is discarded. The FZK-facing port xe-2/1/0 "
        "resets with it. The reboot costs one owamp session (04:05) in each direction, nothing more. Utilisation "
        "never reaches 90 %.",
        datetime(2026, 3, 11, 0, 0, tzinfo=UTC),
    )
    add_carriers(sc, "GEANT", "DFN")
    add_sites(sc, "CERN", "FZK")
    sc.router("cern-border", site="CERN", model="MX960")
    sc.router("geant-gva", carrier="GEANT", model="MX960")
    sc.router("geant-fra", carrier="GEANT", model="MX960")
    sc.router("dfn-fra", carrier="DFN", model="MX960")
    sc.router("fzk-border", site="FZK", vendor="Cisco", model="Nexus 7700")
    sc.interface("dfn-fra", "xe-2/0/0", 2000, 10000)
    sc.interface("dfn-fra", "xe-2/1/0", 2100, 10000)
    sc.path(
        "CERN",
        "FZK",
        10000,
        ["cern-border", "geant-gva", "geant-fra", "dfn-fra:xe-2/0/0", "dfn-fra:xe-2/1/0", "fzk-border"],
    )
    down_from, up_at = sc.at("04:02:40"), sc.at("04:04:50")
    healthy_pair(sc, "CERN", "FZK", rtt_ms=9.8, cap_bps=10e9, owamp_offset_s=0)
    # the reboot: the owamp sessions running while the router is down lose every packet
    for m in sc.measurements:
        if m["type"] == "owamp" and m["time"] == iso(sc.at("04:05")):
            for key in ("delay_min_ms", "delay_median_ms", "delay_max_ms", "jitter_ms"):
                m.pop(key, None)
            m["packets_lost"] = m["packets_sent"]

    # load: a slow swing plus minute-to-minute noise, 5.5-8.3 Gb/s into xe-2/0/0 (per 60 s poll interval)
    polls = minutes(sc.start, 1, sc.hours)
    load = {
        t: min(8.3e9, max(5.5e9, 6.9e9 + 0.9e9 * math.sin(i / 78) + sc.rng.gauss(0, 0.2e9)))
        for i, t in enumerate(polls)
    }
    wrap_at = sc.at("01:30")
    # ifHCInOctets starts where the traffic of the polls up to 01:29 and a half brings it to 2^64
    before_wrap = sum(int(load[t] * 60 / 8) for t in polls[1:] if t < wrap_at)
    start_in = C64 - before_wrap - int(load[wrap_at] * 30 / 8)
    ge = Counter64Port("dfn-fra", "xe-2/0/0", 86400 * 211.4, start_in, 4_411_006_219_338_770, mean_frame_bytes=1200)
    fz = Counter64Port(
        "dfn-fra", "xe-2/1/0", 86400 * 211.4, 3_098_117_466_002_118, 14_002_337_190_054_441, mean_frame_bytes=1200
    )
    boot_poll, port_up_s = sc.at("04:08"), 100.0
    for i, t in enumerate(polls):
        if down_from < t < boot_poll:
            continue  # the router is rebooting: polls time out
        if t == boot_poll:
            for port in (ge, fz):
                port.reboot(uptime_s=(t - up_at).total_seconds() - port_up_s)
            ge.advance(port_up_s, load[t], 2.0e9)  # the ports count from the moment they came up
            fz.advance(port_up_s, 2.0e9, load[t] * 0.97)
        elif i:
            before = ge.c["hc_in_octets"]
            ge.advance(60, load[t], 2.0e9 + sc.rng.gauss(0, 0.1e9))
            fz.advance(60, 2.0e9 + sc.rng.gauss(0, 0.1e9), load[t] * 0.97)
            assert (ge.c["hc_in_octets"] < before) == (t == wrap_at), f"unexpected wrap state at {t}"
        ge.poll(sc, t)
        fz.poll(sc, t + timedelta(seconds=1))

    sc.want("COUNTER_DISCONTINUITY", equipment="dfn-fra", interface="xe-2/0/0")
    sc.want("COUNTER_DISCONTINUITY", equipment="dfn-fra", interface="xe-2/1/0")
    for code in (
        "LINK_CONGESTION",
        "PATH_DOWN",
        "UNEXPLAINED_DEGRADATION",
        "INTERFACE_ERRORS",
        "SHARED_EQUIPMENT_SUSPECT",
        "LOSS_LIMITED",
    ):
        sc.forbid(code)
    return sc


# --------------------------------------------------------------------------- healthy and single-symptom paths
def scenario_healthy() -> Scenario:
    sc = Scenario(
        "healthy-long-fat-path-bnl",
        "A clean long fat path: CERN<->BNL, 10 Gb/s, RTT 92 ms (BDP 115 MB), hosts with 256 MiB buffers and a "
        "256 MiB window (window limit 23 Gb/s): single streams reach 9.2-9.5 Gb/s, owamp loses a stray packet "
        "now and then (as on any shared path), traceroutes never change. Nothing to report.",
        datetime(2026, 3, 12, 0, 0, tzinfo=UTC),
    )
    add_carriers(sc, "GEANT", "ESNET")
    add_sites(sc, "CERN", "BNL")
    sc.host("CERN", "cern-dt03", "192.0.2.13")
    sc.host("BNL", "bnl-dt01", "198.51.100.80")
    sc.router("cern-border", site="CERN", model="MX960")
    sc.router("esnet-gva", carrier="ESNET", model="MX10003")
    sc.router("esnet-ams", carrier="ESNET", model="MX10003")
    sc.router("esnet-nyc", carrier="ESNET", model="MX10003")
    sc.router("bnl-border", site="BNL", vendor="Arista", model="7280R")
    hops = ["cern-border", "esnet-gva", "esnet-ams", "esnet-nyc", "bnl-border"]
    sc.path("CERN", "BNL", 10000, hops)
    healthy_pair(
        sc,
        "CERN",
        "BNL",
        rtt_ms=92.0,
        cap_bps=10e9,
        window=256 * MiB,
        host_limit_bps=9.4e9,
        hosts=("192.0.2.13", "198.51.100.80"),
    )
    for t in minutes(sc.start, 60, sc.hours, 600):
        sc.traceroute(t, "CERN", "BNL", hops)
        sc.traceroute(t + timedelta(seconds=20), "BNL", "CERN", list(reversed(hops)))
        sc.host_tcp(t, "CERN", "cern-dt03", buf=256 * MiB)
        sc.host_tcp(t + timedelta(seconds=30), "BNL", "bnl-dt01", buf=256 * MiB)
    for code in ALL_CODES:
        sc.forbid(code)
    return sc


def scenario_clock_unsync() -> Scenario:
    sc = Scenario(
        "clock-unsync-pic",
        "The owamp host at PIC loses its NTP sources at 02:20 and a falseticker steps its clock 4.6 ms ahead; "
        "from then owamp reports a clock error estimate that keeps growing. CERN->PIC reads 6.95 + 4.6 = "
        "11.55 ms, PIC->CERN 2.35 ms: each direction's minimum delay 'jumps' without any route change, but the "
        "sum stays 13.9 ms = the RTT. CERN<->FZK is measured from the same CERN host and is fine, so the clock "
        "at PIC is the one to fix. No delay finding may be drawn from PIC's one-way delays.",
        datetime(2026, 3, 13, 0, 0, tzinfo=UTC),
    )
    add_carriers(sc, "GEANT", "REDIRIS", "DFN")
    add_sites(sc, "CERN", "PIC", "FZK")
    sc.router("cern-border", site="CERN", model="MX960")
    sc.router("geant-gva", carrier="GEANT", model="MX960")
    sc.router("geant-mar", carrier="GEANT", model="MX960")
    sc.router("geant-fra", carrier="GEANT", model="MX960")
    sc.router("rediris-bcn", carrier="REDIRIS", model="MX480")
    sc.router("dfn-fra", carrier="DFN")
    sc.router("pic-border", site="PIC", vendor="Cisco", model="Nexus 9500")
    sc.router("fzk-border", site="FZK", vendor="Cisco", model="Nexus 7700")
    pic = ["cern-border", "geant-gva", "geant-mar", "rediris-bcn", "pic-border"]
    sc.path("CERN", "PIC", 10000, pic)
    sc.path("CERN", "FZK", 10000, ["cern-border", "geant-gva", "geant-fra", "dfn-fra", "fzk-border"])
    step_at = sc.at("02:20")
    mss, window, rtt = 8948, 64 * MiB, 13.9
    for src, dst, off in (("CERN", "PIC", 0), ("PIC", "CERN", 30)):
        sign = 1 if dst == "PIC" else -1  # PIC's clock ahead: arrivals at PIC look late, departures early
        for t in minutes(sc.start, 30, sc.hours, off):
            sc.tcp(
                t,
                src,
                dst,
                jitter(sc.rng, 9.35e9, 0.015),
                rtt_ms=jitter(sc.rng, rtt, 0.002),
                mss=mss,
                window=window,
                retransmits=sc.rng.choice([0, 0, 1]),
            )
            sc.traceroute(t + timedelta(seconds=300), src, dst, pic if src == "CERN" else list(reversed(pic)))
        for t in minutes(sc.start, 5, sc.hours, 15 + off):
            offset = 4.6 if t >= step_at else 0.0
            err = 0.15 + (12 + 0.9 * (t - step_at).total_seconds() / 60 if t >= step_at else 0.0)
            sc.owamp(
                t,
                src,
                dst,
                6.95 + sign * offset - 0.02 + sc.rng.uniform(0, 0.03),
                lost=int(sc.rng.random() < 0.02),
                queue_ms=sc.rng.uniform(0.03, 0.1),
                clock_error_ms=err,
            )
    healthy_pair(sc, "CERN", "FZK", rtt_ms=9.8, cap_bps=10e9, tcp_offset_s=60, owamp_offset_s=45)

    sc.want("CLOCK_UNSYNC", site="PIC")
    sc.want("CLOCK_UNSYNC", src="CERN", dst="PIC")
    sc.want("CLOCK_UNSYNC", src="PIC", dst="CERN")
    sc.forbid("CLOCK_UNSYNC", site="CERN")
    sc.forbid("CLOCK_UNSYNC", site="FZK")
    sc.forbid("CLOCK_UNSYNC", src="CERN", dst="FZK")
    sc.forbid("CLOCK_UNSYNC", src="FZK", dst="CERN")
    for code in ("DELAY_LEVEL_SHIFT", "ROUTE_CHANGE", "UNEXPLAINED_DEGRADATION", "ASYMMETRIC_PATH", "PATH_DOWN"):
        sc.forbid(code)
    return sc


def scenario_mtu() -> Scenario:
    sc = Scenario(
        "mtu-mismatch-in2p3",
        "CERN<->IN2P3 is a jumbo-frame path (hosts MTU 9000, MSS 8948). At 02:10 RENATER swaps a line card in "
        "renater-lyo and the new port comes up with the default MTU 1500: tracepath reports a path MTU of "
        "1500, PMTU discovery drops the MSS to 1448, and single-stream throughput falls a little (9.4 -> "
        "~8.6 Gb/s, more packets per second); the Mathis ceiling at any given loss is now 6.2 times lower.",
        datetime(2026, 3, 14, 0, 0, tzinfo=UTC),
    )
    add_carriers(sc, "GEANT", "RENATER")
    add_sites(sc, "CERN", "IN2P3")
    sc.host("CERN", "cern-dt04", "192.0.2.14")
    sc.host("IN2P3", "ccdt01", "198.51.100.90")
    sc.router("cern-border", site="CERN", model="MX960")
    sc.router("geant-gva", carrier="GEANT", model="MX960")
    sc.router("renater-lyo", carrier="RENATER", model="MX480")
    sc.router("in2p3-border", site="IN2P3", vendor="Cisco", model="ASR 9006")
    hops = ["cern-border", "geant-gva", "renater-lyo", "in2p3-border"]
    sc.path("CERN", "IN2P3", 10000, hops)
    swap = sc.at("02:10")
    rtt, window = 4.1, 32 * MiB
    for src, dst, off, sh, dh in (
        ("CERN", "IN2P3", 0, "192.0.2.14", "198.51.100.90"),
        ("IN2P3", "CERN", 20, "198.51.100.90", "192.0.2.14"),
    ):
        for t in minutes(sc.start, 30, sc.hours, off):
            small = t >= swap
            thr = jitter(sc.rng, 8.6e9 if small else 9.4e9, 0.02)
            sc.tcp(
                t,
                src,
                dst,
                thr,
                rtt_ms=jitter(sc.rng, rtt, 0.005),
                mss=1448 if small else 8948,
                window=window,
                retransmits=sc.rng.choice([0, 0, 1, 2]),
                src_host=sh,
                dst_host=dh,
            )
            route = hops if src == "CERN" else list(reversed(hops))
            sc.traceroute(
                t + timedelta(seconds=200), src, dst, route, pmtu=1500 if t + timedelta(seconds=200) >= swap else 9000
            )
        for t in minutes(sc.start, 5, sc.hours, 35 + off):
            sc.owamp(
                t,
                src,
                dst,
                rtt / 2 - 0.03 + sc.rng.uniform(0, 0.02),
                lost=int(sc.rng.random() < 0.02),
                queue_ms=sc.rng.uniform(0.02, 0.06),
            )
    for t in minutes(sc.start, 60, sc.hours, 500):
        sc.host_tcp(t, "CERN", "cern-dt04", buf=128 * MiB)
        sc.host_tcp(t + timedelta(seconds=30), "IN2P3", "ccdt01", buf=128 * MiB)

    sc.want("MTU_MISMATCH", src="CERN", dst="IN2P3")
    sc.want("MTU_MISMATCH", src="IN2P3", dst="CERN")
    for code in (
        "UNEXPLAINED_DEGRADATION",
        "LOSS_LIMITED",
        "WINDOW_LIMITED",
        "ROUTE_CHANGE",
        "HOST_TCP_TUNING",
        "ASYMMETRIC_PATH",
        "PATH_DOWN",
    ):
        sc.forbid(code)
    return sc


def scenario_reordering() -> Scenario:
    sc = Scenario(
        "reordering-triumf",
        "CERN->TRIUMF (10 Gb/s, RTT 150 ms). At 02:05 a misconfiguration enables per-packet load sharing over "
        "the two CANARIE transatlantic waves, whose lengths differ by a few ms. The reordering owamp sessions "
        "of this path send their 600 packets 1 ms apart (bursts; at 10 packets/s only >100 ms of delay "
        "difference could reorder): 0.8-2.5 % of them arrive out of order. No packet is lost, but TCP takes the "
        "reordering for loss: spurious fast retransmits, and the single stream falls from ~9.2 Gb/s to "
        "1.5-3 Gb/s. TRIUMF->CERN is hashed per flow and unaffected.",
        datetime(2026, 3, 15, 0, 0, tzinfo=UTC),
    )
    add_carriers(sc, "GEANT", "CANARIE")
    add_sites(sc, "CERN", "TRIUMF")
    sc.router("cern-border", site="CERN", model="MX960")
    sc.router("geant-ams", carrier="GEANT", model="MX960")
    sc.router("canarie-ams", carrier="CANARIE", vendor="Ciena", model="8700", role="switch")
    sc.router("canarie-mtl", carrier="CANARIE", vendor="Ciena", model="8700", role="switch")
    sc.router("canarie-van", carrier="CANARIE", vendor="Ciena", model="8700", role="switch")
    sc.router("triumf-border", site="TRIUMF", vendor="Juniper", model="MX480")
    sc.path(
        "CERN",
        "TRIUMF",
        10000,
        ["cern-border", "geant-ams", "canarie-ams", "canarie-mtl", "canarie-van", "triumf-border"],
    )
    start = sc.at("02:05")
    rtt, mss, window = 150.0, 8948, 256 * MiB
    burst = {"packet_interval_s": 0.001}
    for src, dst, off in (("CERN", "TRIUMF", 0), ("TRIUMF", "CERN", 45)):
        for t in minutes(sc.start, 30, sc.hours, off):
            if src == "CERN" and t >= start:
                thr = sc.rng.uniform(1.5e9, 3.0e9)
                retrans = round(segments(thr, 10, mss) * sc.rng.uniform(0.002, 0.006))
            else:
                thr, retrans = jitter(sc.rng, 9.2e9, 0.015), sc.rng.choice([0, 0, 1])
            sc.tcp(t, src, dst, thr, rtt_ms=jitter(sc.rng, rtt, 0.002), mss=mss, window=window, retransmits=retrans)
        for t in minutes(sc.start, 5, sc.hours, 70 + off):
            reordered = round(600 * sc.rng.uniform(0.008, 0.025)) if (src == "CERN" and t >= start) else 0
            sc.owamp(
                t,
                src,
                dst,
                rtt / 2 - 0.05 + sc.rng.uniform(0, 0.02),
                queue_ms=sc.rng.uniform(0.05, 0.15),
                reordered=reordered,
                spread_ms=3.5 if reordered else 0.6,
                extra=burst,
            )

    sc.want("REORDERING", src="CERN", dst="TRIUMF")
    sc.forbid("REORDERING", src="TRIUMF", dst="CERN")
    for code in ("LOSS_LIMITED", "UNEXPLAINED_DEGRADATION", "PATH_DOWN", "WINDOW_LIMITED", "PERIODIC_LOSS"):
        sc.forbid(code)
    return sc


def scenario_path_down() -> Scenario:
    sc = Scenario(
        "path-down-ndgf",
        "CERN<->NDGF: at 03:12 a ship's anchor cuts the submarine cable between Hamburg and Copenhagen. "
        "nordunet-cph:xe-1/2/0 goes oper-down (SNMP, every 60 s), its counters stop, every nuttcp test fails "
        "to connect and every owamp session loses all 600 packets -- still so at 06:00. No maintenance is "
        "announced. An outage is not a loss rate.",
        datetime(2026, 3, 16, 0, 0, tzinfo=UTC),
    )
    add_carriers(sc, "GEANT", "NORDUNET")
    add_sites(sc, "CERN", "NDGF")
    sc.router("cern-border", site="CERN", model="MX960")
    sc.router("geant-gva", carrier="GEANT", model="MX960")
    sc.router("geant-ham", carrier="GEANT", model="MX960")
    sc.router("nordunet-cph", carrier="NORDUNET", model="MX10008")
    sc.router("ndgf-border", site="NDGF", vendor="Arista", model="7280R")
    sc.interface("nordunet-cph", "xe-1/2/0", 1120, 10000)
    sc.path("CERN", "NDGF", 10000, ["cern-border", "geant-gva", "geant-ham", "nordunet-cph:xe-1/2/0", "ndgf-border"])
    cut = sc.at("03:12")
    rtt, mss, window = 24.2, 8948, 64 * MiB
    for src, dst, off in (("CERN", "NDGF", 0), ("NDGF", "CERN", 30)):
        for t in minutes(sc.start, 30, sc.hours, off):
            if t >= cut:
                sc.tcp_failed(t, src, dst, "nuttcp-t: connect: Connection timed out")
            else:
                sc.tcp(
                    t,
                    src,
                    dst,
                    jitter(sc.rng, 9.3e9, 0.015),
                    rtt_ms=jitter(sc.rng, rtt, 0.003),
                    mss=mss,
                    window=window,
                    retransmits=sc.rng.choice([0, 0, 1]),
                )
        for t in minutes(sc.start, 5, sc.hours, 20 + off):
            if t >= cut:
                sc.owamp_down(t, src, dst)
            else:
                sc.owamp(
                    t,
                    src,
                    dst,
                    rtt / 2 - 0.05 + sc.rng.uniform(0, 0.02),
                    lost=int(sc.rng.random() < 0.02),
                    queue_ms=sc.rng.uniform(0.03, 0.1),
                )
    port = Counter64Port("nordunet-cph", "xe-1/2/0", 86400 * 63.0, 2_771_004_118_220_118, 2_519_880_300_117_445)
    for i, t in enumerate(minutes(sc.start, 1, sc.hours)):
        down = t >= cut
        if i:
            port.advance(
                60, 0 if down else 3.1e9 + sc.rng.gauss(0, 0.15e9), 0 if down else 2.7e9 + sc.rng.gauss(0, 0.15e9)
            )
        port.poll(sc, t, oper="down" if down else "up")

    sc.want("PATH_DOWN", src="CERN", dst="NDGF")
    sc.want("PATH_DOWN", src="NDGF", dst="CERN")
    for code in (
        "LOSS_LIMITED",
        "MAINTENANCE_EXPLAINED",
        "UNEXPLAINED_DEGRADATION",
        "COUNTER_DISCONTINUITY",
        "LINK_CONGESTION",
        "ASYMMETRIC_PATH",
        "INTERFACE_ERRORS",
        "PERIODIC_LOSS",
        "SHARED_EQUIPMENT_SUSPECT",
    ):
        sc.forbid(code)
    return sc


def scenario_interface_errors() -> Scenario:
    sc = Scenario(
        "interface-errors-cnaf",
        "CERN->CNAF: from 02:30 a dirty connector on garr-mil:xe-0/0/3 (receiving from GEANT) corrupts a growing "
        "share of the frames: in_errors climb from ~1/s to ~40/s of ~370 k frames/s (1e-4 of 1000-byte frames, "
        "so ~9e-4 of the 9000-byte TCP segments). 600 small owamp packets per session see none of it; TCP "
        "retransmits do, and one stream at 11.8 ms drops from 9.3 Gb/s to the CUBIC ceiling of that loss, "
        "a few hundred Mb/s. CNAF->CERN uses the other fibre of the pair and stays clean.",
        datetime(2026, 3, 17, 0, 0, tzinfo=UTC),
    )
    add_carriers(sc, "GEANT", "GARR")
    add_sites(sc, "CERN", "CNAF")
    sc.router("cern-border", site="CERN", model="MX960")
    sc.router("geant-gva", carrier="GEANT", model="MX960")
    sc.router("geant-mil", carrier="GEANT", model="MX960")
    sc.router("garr-mil", carrier="GARR", model="MX960")
    sc.router("cnaf-border", site="CNAF", vendor="Cisco", model="Nexus 7700")
    sc.interface("garr-mil", "xe-0/0/3", 1003, 10000)
    sc.path("CERN", "CNAF", 10000, ["cern-border", "geant-gva", "geant-mil", "garr-mil:xe-0/0/3", "cnaf-border"])
    onset = sc.at("02:30")
    frame_bytes = 1000.0

    def errors_per_s(t: datetime) -> float:
        if t < onset:
            return 0.0
        x = (t - onset).total_seconds() / (sc.now - onset).total_seconds()
        return 1.0 * math.exp(math.log(40.0) * x)  # the connector gets worse: 1/s -> 40/s

    traffic = 3.0e9
    rtt, mss, window = 11.8, 8948, 64 * MiB
    for t in minutes(sc.start, 30, sc.hours):
        frames = traffic / 8 / frame_bytes
        p_tcp = errors_per_s(t) / frames * (mss + 52) / frame_bytes  # corruption scales with the frame length
        thr = jitter(sc.rng, tcp_rate_bps(10e9, rtt, mss, window, p_tcp, 9.3e9), 0.1 if p_tcp else 0.015)
        sc.tcp(
            t,
            "CERN",
            "CNAF",
            thr,
            rtt_ms=jitter(sc.rng, rtt, 0.003),
            mss=mss,
            window=window,
            retransmits=round(p_tcp * segments(thr, 10, mss)) + sc.rng.choice([0, 0, 1]),
        )
        sc.tcp(
            t + timedelta(seconds=30),
            "CNAF",
            "CERN",
            jitter(sc.rng, 9.3e9, 0.015),
            rtt_ms=jitter(sc.rng, rtt, 0.003),
            mss=mss,
            window=window,
            retransmits=sc.rng.choice([0, 0, 1]),
        )
    for t in minutes(sc.start, 5, sc.hours, 40):
        for src, dst in (("CERN", "CNAF"), ("CNAF", "CERN")):
            sc.owamp(
                t,
                src,
                dst,
                rtt / 2 - 0.05 + sc.rng.uniform(0, 0.02),
                lost=int(sc.rng.random() < 0.02),
                queue_ms=sc.rng.uniform(0.03, 0.1),
            )
    port = Counter64Port(
        "garr-mil",
        "xe-0/0/3",
        86400 * 144.2,
        5_550_118_204_337_001,
        4_020_991_337_184_220,
        mean_frame_bytes=frame_bytes,
    )
    port.c["in_errors"] = 17
    for i, t in enumerate(minutes(sc.start, 1, sc.hours)):
        if i:
            port.advance(
                60, traffic + sc.rng.gauss(0, 0.1e9), 2.5e9 + sc.rng.gauss(0, 0.1e9), in_errors_per_s=errors_per_s(t)
            )
        port.poll(sc, t)

    sc.want("INTERFACE_ERRORS", equipment="garr-mil", interface="xe-0/0/3")
    sc.want("ASYMMETRIC_PATH", src="CERN", dst="CNAF")
    sc.forbid("ASYMMETRIC_PATH", src="CNAF", dst="CERN")
    for code in (
        "UNEXPLAINED_DEGRADATION",
        "LINK_CONGESTION",
        "COUNTER_DISCONTINUITY",
        "PATH_DOWN",
        "WINDOW_LIMITED",
        "TCP_ONLY_DEGRADATION",
    ):
        sc.forbid(code)
    return sc


def scenario_link_congestion() -> Scenario:
    sc = Scenario(
        "link-congestion-pic",
        "CERN->PIC: rediris-bcn:te-0/0/1, the 10 Gb/s link into PIC, carries 4-6 Gb/s until 02:30, when a "
        "data-distribution campaign fills it to 92-99 % with output discards. The single nuttcp stream "
        "competes with hundreds of flows: 0.3-0.8 % loss (owamp sees it too), queueing adds 2-6 ms to the "
        "median delay (not to the minimum), and the stream gets a few hundred Mb/s. PIC->CERN is not affected.",
        datetime(2026, 3, 18, 0, 0, tzinfo=UTC),
    )
    add_carriers(sc, "GEANT", "REDIRIS")
    add_sites(sc, "CERN", "PIC")
    sc.router("cern-border", site="CERN", model="MX960")
    sc.router("geant-gva", carrier="GEANT", model="MX960")
    sc.router("geant-mar", carrier="GEANT", model="MX960")
    sc.router("rediris-bcn", carrier="REDIRIS", model="MX480")
    sc.router("pic-border", site="PIC", vendor="Cisco", model="Nexus 9500")
    sc.interface("rediris-bcn", "te-0/0/1", 601, 10000)
    sc.path("CERN", "PIC", 10000, ["cern-border", "geant-gva", "geant-mar", "rediris-bcn:te-0/0/1", "pic-border"])
    busy = sc.at("02:30")
    rtt, mss, window = 13.9, 8948, 64 * MiB
    for t in minutes(sc.start, 30, sc.hours):
        if t >= busy:
            p = sc.rng.uniform(0.003, 0.008)
            thr = jitter(sc.rng, tcp_rate_bps(10e9, rtt + 4, mss, window, p, 9.3e9), 0.15)
            sc.tcp(
                t,
                "CERN",
                "PIC",
                thr,
                rtt_ms=jitter(sc.rng, rtt + 4, 0.05),
                mss=mss,
                window=window,
                retransmits=round(p * segments(thr, 10, mss)),
            )
        else:
            sc.tcp(
                t,
                "CERN",
                "PIC",
                jitter(sc.rng, 9.3e9, 0.015),
                rtt_ms=jitter(sc.rng, rtt, 0.003),
                mss=mss,
                window=window,
                retransmits=sc.rng.choice([0, 0, 1]),
            )
        sc.tcp(
            t + timedelta(seconds=30),
            "PIC",
            "CERN",
            jitter(sc.rng, 9.3e9, 0.015),
            rtt_ms=jitter(sc.rng, rtt, 0.003),
            mss=mss,
            window=window,
            retransmits=sc.rng.choice([0, 0, 1]),
        )
    for t in minutes(sc.start, 5, sc.hours, 20):
        if t >= busy:
            sc.owamp(
                t,
                "CERN",
                "PIC",
                rtt / 2 - 0.05 + sc.rng.uniform(0, 0.15),
                lost=poisson(sc.rng, 600 * sc.rng.uniform(0.003, 0.008)),
                queue_ms=sc.rng.uniform(2.0, 6.0),
                spread_ms=6.0,
            )
        else:
            sc.owamp(
                t,
                "CERN",
                "PIC",
                rtt / 2 - 0.05 + sc.rng.uniform(0, 0.02),
                lost=int(sc.rng.random() < 0.02),
                queue_ms=sc.rng.uniform(0.03, 0.1),
            )
        sc.owamp(
            t + timedelta(seconds=70),
            "PIC",
            "CERN",
            rtt / 2 - 0.05 + sc.rng.uniform(0, 0.02),
            lost=int(sc.rng.random() < 0.02),
            queue_ms=sc.rng.uniform(0.03, 0.1),
        )
    port = Counter64Port(
        "rediris-bcn", "te-0/0/1", 86400 * 301.7, 901_337_221_004_118, 11_902_774_118_330_402, mean_frame_bytes=1400
    )
    for i, t in enumerate(minutes(sc.start, 1, sc.hours)):
        if i:
            out = sc.rng.uniform(9.2e9, 9.9e9) if t >= busy else sc.rng.uniform(4.0e9, 6.0e9)
            drops = sc.rng.uniform(300, 1500) if t >= busy else 0.0
            port.advance(60, 1.2e9 + sc.rng.gauss(0, 0.05e9), out, out_discards_per_s=drops)
        port.poll(sc, t)

    sc.want("LINK_CONGESTION", equipment="rediris-bcn", interface="te-0/0/1")
    sc.forbid("ASYMMETRIC_PATH", src="PIC", dst="CERN")
    for code in (
        "UNEXPLAINED_DEGRADATION",
        "INTERFACE_ERRORS",
        "COUNTER_DISCONTINUITY",
        "PATH_DOWN",
        "DELAY_LEVEL_SHIFT",
        "WINDOW_LIMITED",
        "MAINTENANCE_EXPLAINED",
    ):
        sc.forbid(code)
    return sc


def scenario_route_change() -> Scenario:
    sc = Scenario(
        "route-change-fnal",
        "CERN<->FNAL normally crosses the USLHCNet Geneva-Chicago link (RTT 118 ms). At 03:05 that link fails "
        "and IP routing moves both directions via Amsterdam and New York: traceroutes show the new hops and the "
        "RTT becomes 131 ms (+6.5 ms one way, ~1300 km of fibre). The 256 MiB window still covers the BDP, so "
        "throughput is unchanged.",
        datetime(2026, 3, 19, 0, 0, tzinfo=UTC),
    )
    add_carriers(sc, "USLHCNET", "STARLIGHT", "ESNET")
    add_sites(sc, "CERN", "FNAL")
    sc.router("cern-border", site="CERN", model="MX960")
    for name in ("uslhcnet-gva", "uslhcnet-chi", "uslhcnet-ams", "uslhcnet-nyc"):
        sc.router(name, carrier="USLHCNET", model="MX480")
    sc.router("starlight", carrier="STARLIGHT", vendor="Juniper", model="QFX10008", role="switch")
    sc.router("esnet-chi", carrier="ESNET", model="MX10003")
    sc.router("fnal-border", site="FNAL", vendor="Cisco", model="Nexus 9500")
    primary = ["cern-border", "uslhcnet-gva", "uslhcnet-chi", "starlight", "esnet-chi", "fnal-border"]
    detour = [
        "cern-border",
        "uslhcnet-gva",
        "uslhcnet-ams",
        "uslhcnet-nyc",
        "uslhcnet-chi",
        "starlight",
        "esnet-chi",
        "fnal-border",
    ]
    sc.path("CERN", "FNAL", 10000, primary)
    failover = sc.at("03:05")
    mss, window = 8948, 256 * MiB
    for src, dst, off in (("CERN", "FNAL", 0), ("FNAL", "CERN", 30)):
        for t in minutes(sc.start, 30, sc.hours, off):
            rtt = 131.0 if t >= failover else 118.0
            sc.tcp(
                t,
                src,
                dst,
                jitter(sc.rng, 9.2e9, 0.015),
                rtt_ms=jitter(sc.rng, rtt, 0.002),
                mss=mss,
                window=window,
                retransmits=sc.rng.choice([0, 0, 1]),
            )
            tr = t + timedelta(seconds=240)
            route = detour if tr >= failover else primary
            sc.traceroute(tr, src, dst, route if src == "CERN" else list(reversed(route)))
        for t in minutes(sc.start, 5, sc.hours, 60 + off):
            owd = 65.5 if t >= failover else 59.0
            sc.owamp(
                t,
                src,
                dst,
                owd - 0.05 + sc.rng.uniform(0, 0.03),
                lost=int(sc.rng.random() < 0.02),
                queue_ms=sc.rng.uniform(0.05, 0.15),
            )

    sc.want("ROUTE_CHANGE", src="CERN", dst="FNAL")
    sc.want("ROUTE_CHANGE", src="FNAL", dst="CERN")
    for code in (
        "DELAY_LEVEL_SHIFT",
        "UNEXPLAINED_DEGRADATION",
        "CLOCK_UNSYNC",
        "PATH_DOWN",
        "WINDOW_LIMITED",
        "ASYMMETRIC_PATH",
    ):
        sc.forbid(code)
    return sc


def scenario_unexplained() -> Scenario:
    sc = Scenario(
        "unexplained-degradation-fzk",
        "CERN->FZK (10 Gb/s, RTT 9.8 ms, 64 MiB window) runs at ~9.3 Gb/s until 02:40, then at 4.2-4.8 Gb/s: no "
        "loss in owamp or TCP retransmits, the same RTT and route, no SNMP symptom, no maintenance, FZK->CERN "
        "unchanged. None of the rules explains it; the engine must say so rather than stay silent.",
        datetime(2026, 3, 20, 0, 0, tzinfo=UTC),
    )
    add_carriers(sc, "GEANT", "DFN")
    add_sites(sc, "CERN", "FZK")
    sc.router("cern-border", site="CERN", model="MX960")
    sc.router("geant-gva", carrier="GEANT", model="MX960")
    sc.router("geant-fra", carrier="GEANT", model="MX960")
    sc.router("dfn-fra", carrier="DFN")
    sc.router("fzk-border", site="FZK", vendor="Cisco", model="Nexus 7700")
    hops = ["cern-border", "geant-gva", "geant-fra", "dfn-fra", "fzk-border"]
    sc.path("CERN", "FZK", 10000, hops)
    onset = sc.at("02:40")
    rtt, mss, window = 9.8, 8948, 64 * MiB
    for src, dst, off in (("CERN", "FZK", 0), ("FZK", "CERN", 30)):
        for t in minutes(sc.start, 30, sc.hours, off):
            slow = src == "CERN" and t >= onset
            thr = sc.rng.uniform(4.2e9, 4.8e9) if slow else jitter(sc.rng, 9.3e9, 0.015)
            sc.tcp(
                t,
                src,
                dst,
                thr,
                rtt_ms=jitter(sc.rng, rtt, 0.003),
                mss=mss,
                window=window,
                retransmits=sc.rng.choice([0, 0, 1]),
            )
            sc.traceroute(t + timedelta(seconds=300), src, dst, hops if src == "CERN" else list(reversed(hops)))
        for t in minutes(sc.start, 5, sc.hours, 10 + off):
            sc.owamp(
                t,
                src,
                dst,
                rtt / 2 - 0.05 + sc.rng.uniform(0, 0.02),
                lost=int(sc.rng.random() < 0.02),
                queue_ms=sc.rng.uniform(0.03, 0.1),
            )

    sc.want("UNEXPLAINED_DEGRADATION", src="CERN", dst="FZK")
    sc.forbid("UNEXPLAINED_DEGRADATION", src="FZK", dst="CERN")
    for code in (
        "LOSS_LIMITED",
        "WINDOW_LIMITED",
        "ASYMMETRIC_PATH",
        "PATH_DOWN",
        "SHARED_EQUIPMENT_SUSPECT",
        "ROUTE_CHANGE",
        "MAINTENANCE_EXPLAINED",
        "TCP_ONLY_DEGRADATION",
    ):
        sc.forbid(code)
    return sc


# --------------------------------------------------------------------------- near misses
# Each scenario below sits just on the healthy side of one or more rules' criteria for a physical reason; its
# `expect.absent` names the codes that must not be drawn, and `expect.findings` what must still be found.
def _next_poll(sc: Scenario, t: datetime) -> datetime:
    """The 60 s SNMP poll whose interval contains a 10 s test starting at ``t`` (polls on the minute)."""
    return sc.start + timedelta(minutes=int((t - sc.start).total_seconds() // 60) + 1)


def _carry(loads: dict[datetime, list[float]], sc: Scenario, t: datetime, member: int, bps: float) -> None:
    """Add a 10 s test at ``bps`` to the 60 s average of the poll interval it falls in."""
    key = _next_poll(sc, t)
    if key in loads:
        loads[key][member] += bps * 10 / 60


def _free_bps(loads: dict[datetime, list[float]], sc: Scenario, t: datetime, member: int, speed_bps: float) -> float:
    """What the production traffic leaves of one member's speed while a test runs."""
    key = min(_next_poll(sc, t), max(loads))
    return speed_bps - loads[key][member]


def scenario_near_miss_trunk() -> Scenario:
    sc = Scenario(
        "near-miss-balanced-trunk-ral",
        "Near misses of TRUNK_IMBALANCE, MTU_MISMATCH and TCP_ONLY_DEGRADATION. CERN<->RAL crosses ral-lag, two "
        "10 Gb/s members bundled into 20 Gb/s between janet-lon and ral-border with layer-3+4 hashing, listed (and "
        "polled) at both ends. RAL's production inflow (~5 Gb/s, against ~2 Gb/s out: one end's 'out' is the "
        "other's 'in', so the ends are only compared with themselves) is shared 55 % / 45 % between the members, "
        "with a few per cent of minute-to-minute variance: the normal "
        "hashing variance of a few hundred flows, not broken load sharing (which leaves the least busy member below "
        "half of the busiest). Every nuttcp stream hashes onto one member, whatever the parity of the host address, "
        "and gets ~95 % of what production leaves free there (~7 Gb/s towards RAL, ~8.5 Gb/s back): tests to odd "
        "and even hosts are equal, and 3 Gb/s UDP tests are clean. Jumbo frames end to end: hosts MTU 9000, "
        "tracepath PMTU 9000 and MSS 8948 (9000 - 40 - 12 of timestamps), members MTU 9192. Nothing to report.",
        datetime(2026, 3, 21, 0, 0, tzinfo=UTC),
    )
    add_carriers(sc, "GEANT", "JANET")
    add_sites(sc, "CERN", "RAL")
    cern_host = "192.0.2.12"
    hosts = [
        ("ral-dt01", "203.0.113.21"),
        ("ral-dt02", "203.0.113.22"),
        ("ral-dt03", "203.0.113.23"),
        ("ral-dt04", "203.0.113.24"),
    ]
    sc.host("CERN", "cern-dt02", cern_host)
    for name, addr in hosts:
        sc.host("RAL", name, addr)
    sc.router("cern-border", site="CERN", model="MX960")
    sc.router("geant-gva", carrier="GEANT", model="MX960")
    sc.router("geant-lon", carrier="GEANT", model="MX960")
    sc.router("janet-lon", carrier="JANET", vendor="Cisco", model="ASR 9010")
    sc.router("ral-border", site="RAL", vendor="Cisco", model="Nexus 7700")
    members = ("xe-1/0/0", "xe-1/0/1")
    ral_members = ("xe-0/0/0", "xe-0/1/0")  # the same two links, seen from RAL's end
    for i, m in enumerate(members):
        sc.interface("janet-lon", m, 2200 + i, 10000)
    for i, m in enumerate(ral_members):
        sc.interface("ral-border", m, 3100 + i, 10000)
    sc.trunks.append(
        {"name": "ral-lag", "members": [f"janet-lon:{m}" for m in members] + [f"ral-border:{m}" for m in ral_members]}
    )
    hops = ["cern-border", "geant-gva", "geant-lon", "janet-lon", "ral-border"]
    sc.path("CERN", "RAL", 20000, hops)

    speed = 10e9
    polls = minutes(sc.start, 1, sc.hours)
    towards_ral: dict[datetime, list[float]] = {}  # members' out (towards RAL), per 60 s poll interval
    from_ral: dict[datetime, list[float]] = {}
    for i, t in enumerate(polls):
        total = 5.0e9 + 0.4e9 * math.sin(i / 120) + sc.rng.gauss(0, 0.12e9)
        share = 0.55 + sc.rng.gauss(0, 0.015)
        towards_ral[t] = [total * share, total * (1 - share)]
        back, share_back = 2.0e9 + sc.rng.gauss(0, 0.08e9), 0.5 + sc.rng.gauss(0, 0.015)
        from_ral[t] = [back * share_back, back * (1 - share_back)]

    rtt, mss, window = 11.4, 8948, 64 * MiB
    sent = round(3e9 * 10 / 8 / 8972)  # 3 Gb/s for 10 s in 8972-byte datagrams (MTU 9000)
    for i, t in enumerate(minutes(sc.start, 30, sc.hours)):
        name, addr = hosts[i % 4]
        for when, src, dst, loads, sh, dh in (
            (t, "CERN", "RAL", towards_ral, cern_host, addr),
            (t + timedelta(minutes=5), "RAL", "CERN", from_ral, addr, cern_host),
        ):
            if when > sc.now:
                continue
            member = sc.rng.randrange(2)  # the hash of addresses and ports picks a member, not the parity
            thr = jitter(sc.rng, min(9.4e9, 0.95 * _free_bps(loads, sc, when, member, speed)), 0.015)
            sc.tcp(
                when,
                src,
                dst,
                thr,
                rtt_ms=jitter(sc.rng, rtt, 0.004),
                mss=mss,
                window=window,
                retransmits=sc.rng.choice([0, 0, 1, 2]),
                src_host=sh,
                dst_host=dh,
            )
            _carry(loads, sc, when, member, thr)
        u = t + timedelta(minutes=15)
        if u < sc.now:
            sc.udp(u, "CERN", "RAL", 3e9, sent, 0, datagram_bytes=8972, src_host=cern_host, dst_host=addr)
            _carry(towards_ral, sc, u, sc.rng.randrange(2), 3e9)
        tr = t + timedelta(minutes=20)
        if tr < sc.now:
            sc.traceroute(tr, "CERN", "RAL", hops, pmtu=9000)
            sc.traceroute(tr + timedelta(seconds=30), "RAL", "CERN", list(reversed(hops)), pmtu=9000)
    for t in minutes(sc.start, 5, sc.hours, 50):
        for src, dst in (("CERN", "RAL"), ("RAL", "CERN")):
            sc.owamp(
                t,
                src,
                dst,
                rtt / 2 - 0.05 + sc.rng.uniform(0, 0.02),
                lost=int(sc.rng.random() < 0.02),
                queue_ms=sc.rng.uniform(0.03, 0.1),
            )
    for t in minutes(sc.start, 60, sc.hours, 400):
        sc.host_tcp(t, "CERN", "cern-dt02", buf=64 * MiB)
        for k, (name, _) in enumerate(hosts):
            sc.host_tcp(t + timedelta(seconds=10 * (k + 1)), "RAL", name, buf=64 * MiB)
    ports = [
        Counter64Port("janet-lon", members[0], 86400 * 96.4, 2_201_334_118_002_771, 6_114_902_337_180_045, 4200),
        Counter64Port("janet-lon", members[1], 86400 * 96.4, 2_188_017_446_310_902, 5_003_118_774_225_310, 4200),
    ]
    # RAL's end of each link receives what janet-lon sends and sends what it receives: 5 Gb/s in, 2 Gb/s out.
    ral_ports = [
        Counter64Port("ral-border", ral_members[0], 86400 * 212.7, 7_310_559_201_448_120, 2_410_007_813_552_904, 7300),
        Counter64Port("ral-border", ral_members[1], 86400 * 212.7, 6_998_120_337_006_415, 2_377_451_900_120_667, 7300),
    ]
    for i, t in enumerate(polls):
        if i:
            for k, port in enumerate(ports):
                port.advance(60, from_ral[t][k], towards_ral[t][k])
                ral_ports[k].advance(60, towards_ral[t][k], from_ral[t][k])
        ports[0].poll(sc, t)
        ports[1].poll(sc, t + timedelta(seconds=1))
        ral_ports[0].poll(sc, t + timedelta(seconds=2))
        ral_ports[1].poll(sc, t + timedelta(seconds=3))

    for code in ALL_CODES:
        sc.forbid(code)
    return sc


def scenario_near_miss_maintenance() -> Scenario:
    sc = Scenario(
        "near-miss-reduced-redundancy-ndgf",
        "Near miss of MAINTENANCE_EXPLAINED (and of TRUNK_IMBALANCE, SHARED_EQUIPMENT_SUSPECT and PATH_DOWN). "
        "NORDUnet announced NORDUNET-CHG-2026-0322-004, impact reduced-redundancy, 02:00-04:00 UTC: the optic of "
        "nordunet-cph:xe-1/2/1, one member of ndgf-lag (2 x 10 Gb/s into NDGF), is replaced. The member is shut (oper"
        " down, counters still) from 02:00:30 to 03:57:40 and the bundle carries on over xe-1/2/0, whose load doubles"
        " from ~1.1 to ~2.2 Gb/s: a member out of service is not broken load sharing, load moved over from a sibling "
        "is not extra traffic through the bundle, and a bundle with a member left is not down. Unrelated to that "
        "work, the optic of geant-ham:et-2/0/0 (100 Gb/s, receiving from Geneva) fails at 02:25: CRC errors on ~1e-4 "
        "of the ~1000-byte frames, ~9e-4 of the jumbo TCP segments, until GEANT swaps it at 03:35. CERN->NDGF (RTT "
        "24.2 ms) falls from ~8.5 Gb/s to the CUBIC ceiling of that loss, ~250 Mb/s; NDGF->CERN is clean. The "
        "degradation lies inside the window and the path crosses the member under work, but reduced-redundancy work "
        "does not affect traffic: the degradation is not explained and INTERFACE_ERRORS and the asymmetry must alert.",
        datetime(2026, 3, 22, 0, 0, tzinfo=UTC),
    )
    add_carriers(sc, "GEANT", "NORDUNET")
    add_sites(sc, "CERN", "NDGF")
    sc.router("cern-border", site="CERN", model="MX960")
    sc.router("geant-gva", carrier="GEANT", model="MX960")
    sc.router("geant-ham", carrier="GEANT", model="MX960")
    sc.router("nordunet-cph", carrier="NORDUNET", model="MX10008")
    sc.router("ndgf-border", site="NDGF", vendor="Arista", model="7280R")
    sc.interface("geant-ham", "et-2/0/0", 700, 100000)
    members = ("xe-1/2/0", "xe-1/2/1")
    for i, m in enumerate(members):
        sc.interface("nordunet-cph", m, 1120 + i, 10000)
    sc.trunks.append({"name": "ndgf-lag", "members": [f"nordunet-cph:{m}" for m in members]})
    sc.path("CERN", "NDGF", 20000, ["cern-border", "geant-gva", "geant-ham:et-2/0/0", "nordunet-cph", "ndgf-border"])
    sc.maintenance.append(
        {
            "reference": "NORDUNET-CHG-2026-0322-004",
            "carrier": "NORDUNET",
            "impact": "reduced-redundancy",
            "start": iso(sc.at("02:00")),
            "end": iso(sc.at("04:00")),
            "affects": ["nordunet-cph:xe-1/2/1"],
            "description": "optic replacement on xe-1/2/1 (ndgf-lag); traffic continues over xe-1/2/0",
        }
    )
    shut, unshut = sc.at("02:00:30"), sc.at("03:57:40")
    fault, fixed = sc.at("02:25"), sc.at("03:35")

    def drained(t: datetime) -> bool:
        return shut <= t < unshut

    frame_loss: dict[int, float] = {}

    def p_frame(t: datetime) -> float:
        """Fraction of ~1000-byte frames the failing optic corrupts (it drifts, 0.6-1.5e-4)."""
        if not fault <= t < fixed:
            return 0.0
        key = int((t - fault).total_seconds() // 300)
        if key not in frame_loss:
            frame_loss[key] = min(1.5e-4, max(0.6e-4, 1.0e-4 + 0.25e-4 * sc.rng.gauss(0, 1)))
        return frame_loss[key]

    speed, frame_bytes = 10e9, 1000.0
    polls = minutes(sc.start, 1, sc.hours)
    production: dict[datetime, tuple[float, float, float]] = {}  # per poll interval: into NDGF, its share, back
    into_ndgf: dict[datetime, list[float]] = {}  # members' 60 s averages
    from_ndgf: dict[datetime, list[float]] = {}
    for i, t in enumerate(polls):
        total = 2.2e9 + 0.2e9 * math.sin(i / 90) + sc.rng.gauss(0, 0.06e9)
        production[t] = (total, 0.52 + sc.rng.gauss(0, 0.015), 1.0e9 + sc.rng.gauss(0, 0.05e9))
        # the part of the interval with xe-1/2/1 shut: everything on xe-1/2/0 then
        f = max(0.0, (min(t, unshut) - max(t - timedelta(seconds=60), shut)).total_seconds()) / 60
        total, share, back = production[t]
        into_ndgf[t] = [total * (share * (1 - f) + f), total * (1 - share) * (1 - f)]
        from_ndgf[t] = [back * (0.5 * (1 - f) + f), back * 0.5 * (1 - f)]

    def member_load(when: datetime, member: int, towards_ndgf: bool) -> float:
        """Production on one member at the moment a test runs."""
        total, share, back = production[min(_next_poll(sc, when), polls[-1])]
        load, s = (total, share) if towards_ndgf else (back, 0.5)
        if drained(when):
            return load if member == 0 else 0.0
        return load * (s if member == 0 else 1 - s)

    rtt, mss, window = 24.2, 8948, 64 * MiB
    for t in minutes(sc.start, 30, sc.hours):
        for when, src, dst, loads in (
            (t, "CERN", "NDGF", into_ndgf),
            (t + timedelta(seconds=40), "NDGF", "CERN", from_ndgf),
        ):
            if when > sc.now:
                continue
            member = 0 if drained(when) else sc.rng.randrange(2)
            limit = min(9.4e9, 0.95 * (speed - member_load(when, member, dst == "NDGF")))
            # corruption scales with the frame length: 9000-byte segments see 9 x the loss of 1000-byte frames
            p = p_frame(when) * (mss + 52) / frame_bytes if dst == "NDGF" else 0.0
            rate = tcp_rate_bps(20e9, rtt, mss, window, p, limit)
            thr = jitter(sc.rng, rate, 0.12 if p else 0.015)
            sc.tcp(
                when,
                src,
                dst,
                thr,
                rtt_ms=jitter(sc.rng, rtt, 0.003),
                mss=mss,
                window=window,
                retransmits=round(p * segments(thr, 10, mss)) + sc.rng.choice([0, 0, 1]),
            )
            _carry(loads, sc, when, member, thr)
    for t in minutes(sc.start, 5, sc.hours, 20):
        for src, dst in (("CERN", "NDGF"), ("NDGF", "CERN")):
            # owamp's ~100-byte packets see a tenth of the frame loss: about nothing
            p = p_frame(t) * 0.1 if dst == "NDGF" else 0.0
            sc.owamp(
                t,
                src,
                dst,
                rtt / 2 - 0.05 + sc.rng.uniform(0, 0.02),
                lost=poisson(sc.rng, 600 * p) + int(sc.rng.random() < 0.02),
                queue_ms=sc.rng.uniform(0.03, 0.1),
            )
    ham = Counter64Port("geant-ham", "et-2/0/0", 86400 * 57.9, 41_220_918_004_113_208, 37_009_114_882_301_776, 1000)
    lag = [
        Counter64Port("nordunet-cph", members[0], 86400 * 133.0, 901_448_210_337_112, 3_310_776_129_004_511, 5000),
        Counter64Port("nordunet-cph", members[1], 86400 * 133.0, 887_301_004_219_660, 3_207_118_440_911_083, 5000),
    ]
    ham.c["in_errors"] = 212
    for i, t in enumerate(polls):
        if i:
            into_geneva = 31e9 + 2e9 * math.sin(i / 70) + sc.rng.gauss(0, 0.4e9)
            from_geneva = 36e9 + 2.5e9 * math.sin(i / 80) + sc.rng.gauss(0, 0.5e9)
            frames = from_geneva / 8 / frame_bytes
            ham.advance(60, from_geneva, into_geneva, in_errors_per_s=frames * p_frame(t - timedelta(seconds=30)))
            for k, port in enumerate(lag):
                port.advance(60, from_ndgf[t][k], into_ndgf[t][k])
        ham.poll(sc, t)
        for k, port in enumerate(lag):
            port.poll(sc, t + timedelta(seconds=1 + k), oper="down" if k == 1 and drained(t) else "up")

    sc.want("INTERFACE_ERRORS", equipment="geant-ham", interface="et-2/0/0")
    sc.want("ASYMMETRIC_PATH", src="CERN", dst="NDGF")
    sc.forbid("ASYMMETRIC_PATH", src="NDGF", dst="CERN")
    # xe-1/2/0's load doubled because its sibling's flows moved over, not because other traffic arrived
    sc.forbid("SHARED_EQUIPMENT_SUSPECT", equipment="nordunet-cph")
    sc.forbid("SHARED_EQUIPMENT_SUSPECT", trunk="ndgf-lag")
    for code in (
        "MAINTENANCE_EXPLAINED",
        "TRUNK_IMBALANCE",
        "PATH_DOWN",
        "UNEXPLAINED_DEGRADATION",
        "LINK_CONGESTION",
        "COUNTER_DISCONTINUITY",
        "TCP_ONLY_DEGRADATION",
        "DELAY_LEVEL_SHIFT",
        "CLOCK_UNSYNC",
        "WINDOW_LIMITED",
    ):
        sc.forbid(code)
    return sc


def scenario_near_miss_long_paths() -> Scenario:
    sc = Scenario(
        "near-miss-long-fat-paths-bnl-asgc",
        "Near misses of WINDOW_LIMITED, HOST_TCP_TUNING, DELAY_LEVEL_SHIFT, REORDERING and CLOCK_UNSYNC on two "
        "healthy long fat paths. CERN<->BNL (10 Gb/s, RTT 92 ms, BDP 115 MB): nuttcp -w128m gives a window limit "
        "of 128 MiB * 8 / 92 ms = 11.7 Gb/s, above the capacity, so the streams reach 94 % of it (9.4 Gb/s, "
        "the hosts' limit) -- 80 % of the window limit, but the window does not bind; bnl-dt02's 128 MiB buffers "
        "cover the BDP. The minimum one-way delay (46.0 ms) wanders within 0.1 ms and each session's jitter is "
        "~0.1 ms, no level change. CERN->BNL owamp sessions (600 packets 1 ms apart) see 0.02 % of the packets "
        "out of order (a router's parallel switching fabric now and then), five times below the threshold. "
        "CERN<->ASGC (10 Gb/s, 512 MiB windows): 152.6 ms one way out and 152.1 ms back -- the two directions' "
        "light paths differ by 100 km -- summing to the 304.7 ms RTT, with owamp reporting a clock error of "
        "~0.5 ms, negligible against delays of 150 ms. Nothing to report.",
        datetime(2026, 3, 23, 0, 0, tzinfo=UTC),
    )
    add_carriers(sc, "GEANT", "ESNET", "ASGCNET")
    add_sites(sc, "CERN", "BNL", "ASGC")
    cern, bnl, asgc = "192.0.2.15", "198.51.100.82", "203.0.113.62"
    sc.host("CERN", "cern-dt05", cern)
    sc.host("BNL", "bnl-dt02", bnl)
    sc.host("ASGC", "asgc-dt02", asgc)
    sc.router("cern-border", site="CERN", model="MX960")
    sc.router("esnet-gva", carrier="ESNET", model="MX10003")
    sc.router("esnet-ams", carrier="ESNET", model="MX10003")
    sc.router("esnet-nyc", carrier="ESNET", model="MX10003")
    sc.router("bnl-border", site="BNL", vendor="Arista", model="7280R")
    sc.router("geant-ams", carrier="GEANT", model="MX960")
    sc.router("asgc-ams", carrier="ASGCNET", vendor="Cisco", model="ASR 9006")
    sc.router("asgc-tpe", carrier="ASGCNET", vendor="Cisco", model="ASR 9006")
    sc.router("asgc-border", site="ASGC", vendor="Cisco", model="Nexus 7700")
    bnl_hops = ["cern-border", "esnet-gva", "esnet-ams", "esnet-nyc", "bnl-border"]
    asgc_hops = ["cern-border", "geant-ams", "asgc-ams", "asgc-tpe", "asgc-border"]
    sc.path("CERN", "BNL", 10000, bnl_hops)
    sc.path("CERN", "ASGC", 10000, asgc_hops)
    mss = 8948
    pairs = (
        # (a, b, hops, one-way a->b, b->a, window, a host, b host, offset)
        ("CERN", "BNL", bnl_hops, 46.0, 46.0, 128 * MiB, cern, bnl, 0),
        ("CERN", "ASGC", asgc_hops, 152.6, 152.1, 512 * MiB, cern, asgc, 100),
    )
    for a, b, hops, ab, ba, window, ha, hb, off in pairs:
        rtt = ab + ba + 0.2  # TCP's smoothed RTT sits a little above the propagation minimum
        for src, dst, sh, dh, d in ((a, b, ha, hb, 0), (b, a, hb, ha, 45)):
            for t in minutes(sc.start, 30, sc.hours, off + d):
                r = jitter(sc.rng, rtt, 0.002)
                thr = jitter(sc.rng, tcp_rate_bps(10e9, r, mss, window, 0, 9.4e9), 0.015)
                sc.tcp(
                    t,
                    src,
                    dst,
                    thr,
                    rtt_ms=r,
                    mss=mss,
                    window=window,
                    retransmits=sc.rng.choice([0, 0, 0, 1]),
                    src_host=sh,
                    dst_host=dh,
                )
            for t in minutes(sc.start, 60, sc.hours, 900 + off + d):
                sc.traceroute(t, src, dst, hops if src == a else list(reversed(hops)))
    sessions = minutes(sc.start, 5, sc.hours, 30)
    # 0.02 % of the CERN->BNL packets out of order: 9 of 73 x 600, one here and there
    reordering = set(sc.rng.sample(range(len(sessions)), round(2e-4 * 600 * len(sessions))))
    for i, t in enumerate(sessions):
        for src, dst in (("CERN", "BNL"), ("BNL", "CERN")):
            reordered = 1 if src == "CERN" and i in reordering else 0
            sc.owamp(
                t,
                src,
                dst,
                46.0 - 0.05 + sc.rng.uniform(0, 0.1),
                lost=int(sc.rng.random() < 0.02),
                queue_ms=sc.rng.uniform(0.15, 0.25),  # jitter ~0.1 ms
                reordered=reordered,
                extra={"packet_interval_s": 0.001},
            )
        for src, dst, owd in (("CERN", "ASGC", 152.6), ("ASGC", "CERN", 152.1)):
            sc.owamp(
                t + timedelta(seconds=130),
                src,
                dst,
                owd - 0.05 + sc.rng.uniform(0, 0.03),
                lost=int(sc.rng.random() < 0.02),
                queue_ms=sc.rng.uniform(0.05, 0.15),
                clock_error_ms=sc.rng.uniform(0.45, 0.55),
            )
    for t in minutes(sc.start, 60, sc.hours, 300):
        sc.host_tcp(t, "CERN", "cern-dt05", buf=512 * MiB)
        sc.host_tcp(t + timedelta(seconds=20), "BNL", "bnl-dt02", buf=128 * MiB)
        sc.host_tcp(t + timedelta(seconds=40), "ASGC", "asgc-dt02", buf=512 * MiB)

    for code in ALL_CODES:
        sc.forbid(code)
    return sc


def scenario_near_miss_busy_link() -> Scenario:
    sc = Scenario(
        "near-miss-busy-link-random-loss-lrz",
        "Near misses of LINK_CONGESTION, PERIODIC_LOSS and COUNTER_DISCONTINUITY. CERN<->LRZ (Tier-2, 1 Gb/s "
        "access, RTT 12.6 ms) crosses geant-fra:xe-2/0/0, GEANT's 10 Gb/s port towards DFN. At 02:00 a data "
        "campaign raises its outbound load from ~50 % to ~85 % (83-89.6 %): busy but below the 90 % where "
        "queues form, and the ~1.5 Gb/s left free still carries the 940 Mb/s tests, which stay healthy. CERN->LRZ "
        "owamp runs continuously (one 600-packet session per minute, like case 2) and loses single packets at random "
        "moments "
        "-- a Poisson process of one drop per ~12 min on average (1.4e-4 of the packets), some 30 loss events "
        "with no period -- while LRZ's agent reads /proc every 300 s; LRZ->CERN (a session every 5 min) loses a "
        "packet now and then. At 1.4e-4 the CUBIC ceiling at 12.6 ms is 1.2 Gb/s: TCP does not notice (a few "
        "retransmits per test). The port's ifHCOutOctets crosses 2^64 at 03:17 (a wrap: the rate across it is "
        "the ~8.4 Gb/s the port carries) and geant-fra's sysUpTime crosses 2^32 ticks (497.1 days) at 01:44:30: "
        "no reboot, every interval keeps its rate and no counter discontinuity may be reported.",
        datetime(2026, 3, 24, 0, 0, tzinfo=UTC),
    )
    add_carriers(sc, "GEANT", "DFN")
    add_sites(sc, "CERN", "LRZ")
    cern, lrz = "192.0.2.16", "198.51.100.110"
    sc.host("CERN", "cern-dt06", cern)
    sc.host("LRZ", "lrz-ps01", lrz)
    sc.router("cern-border", site="CERN", model="MX960")
    sc.router("geant-gva", carrier="GEANT", model="MX960")
    sc.router("geant-fra", carrier="GEANT", model="MX960")
    sc.router("dfn-fra", carrier="DFN", model="MX960")
    sc.router("dfn-gar", carrier="DFN", model="MX480")
    sc.router("lrz-border", site="LRZ", vendor="Cisco", model="Nexus 9300")
    sc.interface("geant-fra", "xe-2/0/0", 2200, 10000)  # towards dfn-fra
    sc.interface("geant-fra", "et-1/0/0", 1000, 100000)  # from geant-gva
    sc.path("CERN", "LRZ", 1000, ["cern-border", "geant-gva", "geant-fra:xe-2/0/0", "dfn-fra", "dfn-gar", "lrz-border"])
    sc.agents.append({"site": "LRZ", "collector": "host_tcp", "interval_s": 300})

    rtt, mss, window = 12.6, 8948, 16 * MiB
    polls = minutes(sc.start, 1, sc.hours)
    campaign = sc.at("02:00")
    out_bps, in_bps = {}, {}
    for i, t in enumerate(polls):
        ramp = min(1.0, max(0.0, (t - campaign).total_seconds() / 600))  # 10 min to full rate
        busy = min(8.8e9, max(8.25e9, 8.52e9 + 0.12e9 * math.sin(i / 40) + sc.rng.gauss(0, 0.07e9)))
        quiet = 5.0e9 + 0.3e9 * math.sin(i / 60) + sc.rng.gauss(0, 0.1e9)
        out_bps[t] = [quiet + (busy - quiet) * ramp]
        in_bps[t] = [3.2e9 + sc.rng.gauss(0, 0.1e9)]

    # the random drops: a Poisson process per direction (transient microbursts in front of the receivers)
    def drops(mean_gap_s: float) -> list[datetime]:
        out, x = [], 0.0
        while True:
            x += sc.rng.expovariate(1 / mean_gap_s)
            if x >= sc.hours * 3600:
                return out
            out.append(sc.start + timedelta(seconds=x))

    drop_times = {("CERN", "LRZ"): drops(720.0), ("LRZ", "CERN"): drops(1800.0)}
    p_of = {key: len(times) / (sc.hours * 3600 * 10) for key, times in drop_times.items()}  # per probe packet

    for t in minutes(sc.start, 30, sc.hours):
        for when, src, dst, sh, dh, loads in (
            (t, "CERN", "LRZ", cern, lrz, out_bps),
            (t + timedelta(seconds=30), "LRZ", "CERN", lrz, cern, in_bps),
        ):
            p = p_of[(src, dst)]  # the drops hit TCP segments as often as probe packets
            thr = jitter(sc.rng, tcp_rate_bps(1e9, rtt, mss, window, p, 0.94e9), 0.01)
            sc.tcp(
                when,
                src,
                dst,
                thr,
                rtt_ms=jitter(sc.rng, rtt, 0.004),
                mss=mss,
                window=window,
                retransmits=poisson(sc.rng, p * segments(thr, 10, mss)),
                src_host=sh,
                dst_host=dh,
            )
            _carry(loads, sc, when, 0, thr)
    for (src, dst), every_min in ((("CERN", "LRZ"), 1), (("LRZ", "CERN"), 5)):
        times = drop_times[(src, dst)]
        for t in minutes(sc.start, every_min, sc.hours, 0 if src == "CERN" else 20):
            lost = sum(1 for d in times if t <= d < t + timedelta(seconds=60))  # a session lasts 60 s
            sc.owamp(
                t, src, dst, rtt / 2 - 0.05 + sc.rng.uniform(0, 0.02), lost=lost, queue_ms=sc.rng.uniform(0.03, 0.1)
            )
    for t in minutes(sc.start, 5, sc.hours, 130):
        sc.host_tcp(t, "LRZ", "lrz-ps01", buf=32 * MiB)
    for t in minutes(sc.start, 60, sc.hours, 400):
        sc.host_tcp(t, "CERN", "cern-dt06", buf=64 * MiB)

    # Counter64 wrap: ifHCOutOctets starts where the traffic up to the middle of the 03:17 interval brings it to 2^64
    wrap_at = sc.at("03:17")
    before = sum(int(out_bps[t][0] * 60 / 8) for t in polls[1:] if t < wrap_at)
    start_out = C64 - before - int(out_bps[wrap_at][0] * 30 / 8)
    # sysUpTime: geant-fra has been up 497 days; its TimeTicks cross 2^32 at 01:44:30
    uptime_s = 2**32 / 100 - (sc.at("01:44:30") - sc.start).total_seconds()
    port = Counter64Port("geant-fra", "xe-2/0/0", uptime_s, 4_118_229_004_337_610, start_out, 1200)
    core = Counter64Port("geant-fra", "et-1/0/0", uptime_s, 38_004_112_776_209_448, 29_301_884_117_502_337, 1200)
    last_ticks = None
    for i, t in enumerate(polls):
        if i:
            prev = port.c["hc_out_octets"]
            port.advance(60, in_bps[t][0], out_bps[t][0])
            core.advance(60, 26e9 + sc.rng.gauss(0, 0.5e9), 21e9 + sc.rng.gauss(0, 0.5e9))
            assert (port.c["hc_out_octets"] < prev) == (t == wrap_at), f"unexpected wrap state at {t}"
        ticks = round(port.uptime_s * 100) % 2**32
        assert last_ticks is None or (ticks < last_ticks) == (t == sc.at("01:45")), f"sysUpTime at {t}"
        last_ticks = ticks
        port.poll(sc, t)
        core.poll(sc, t + timedelta(seconds=1))

    for code in ALL_CODES:
        sc.forbid(code)
    return sc


# --------------------------------------------------------------------------- registry and main
SCENARIOS: list[Callable[[], Scenario]] = [
    scenario_case1,
    scenario_case2,
    scenario_case3,
    scenario_case4,
    scenario_case5,
    scenario_case6,
    scenario_case7,
    scenario_case8,
    scenario_case9,
    scenario_healthy,
    scenario_clock_unsync,
    scenario_mtu,
    scenario_reordering,
    scenario_path_down,
    scenario_interface_errors,
    scenario_link_congestion,
    scenario_route_change,
    scenario_unexplained,
    scenario_near_miss_trunk,
    scenario_near_miss_maintenance,
    scenario_near_miss_port_work,
    scenario_near_miss_long_paths,
    scenario_near_miss_busy_link,
]


def main(argv: Iterable[str]) -> int:
    wanted = list(argv)
    for build in SCENARIOS:
        sc = build()
        if wanted and not any(w in sc.name for w in wanted):
            continue
        text = sc.document()
        target = HERE / f"{sc.name}.yaml"
        target.write_text(text)
        print(f"{target.name}: {len(sc.measurements)} measurements, {len(text) / 1024:.0f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
