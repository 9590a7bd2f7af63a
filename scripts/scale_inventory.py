"""A generated WLCG-like world for the scale benchmark and tests (scripts/bench scale, tests/scale).

200 sites in regions and tiers (one Tier-0, Tier-1s, Tier-2s), each with a border router and a
perfSONAR switch; carrier core routers per region (1 000 equipment in all, 20 interfaces each:
20 000 interfaces); directed latency paths (latencybg, one result a minute) site router -> region
core -> [the other region's core] -> site router, both directions of a site pair; a subset of
throughput paths tested every 6 h. Everything is seeded: the same arguments give the same world.

Measurements are wire records (collectors/records/) so that they go through the real ingest
(``batch_ingest``: COPY) and rates/rollups (``measurements_process``), as an agent's would.
Noise: a diurnal load on every port, single-packet losses now and then, delay jitter. Faults: a few
paths losing 1-2 % of their packets, a core interface counting CRC errors, a site with a delay step.
"""

from __future__ import annotations

import math
import random
import zlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta

REGIONS = ("Europe-West", "Europe-Central", "Europe-North", "Europe-South", "North-America", "Asia-Pacific",
           "Latin-America", "Africa-MiddleEast")
REGION_DELAY_MS = {  # one-way delay from a region's core to the Geneva-centred backbone
    "Europe-West": 6.0, "Europe-Central": 5.0, "Europe-North": 12.0, "Europe-South": 10.0,
    "North-America": 45.0, "Asia-Pacific": 120.0, "Latin-America": 95.0, "Africa-MiddleEast": 60.0,
}
IFACES_PER_EQUIPMENT = 20
OWAMP_PACKETS = 600


@dataclass
class World:
    """The generated inventory: plain values, ready for bulk_create and for building records."""

    sites: list[dict] = field(default_factory=list)  # code, name, region, tier, lat, lon
    equipment: list[dict] = field(default_factory=list)  # name, site (code|None), carrier (code|None), region
    paths: list[tuple[str, str]] = field(default_factory=list)  # directed (src, dst), pairs adjacent
    hops: dict[tuple[str, str], list[tuple[str, str]]] = field(default_factory=dict)  # (equipment, interface)
    delay_ms: dict[tuple[str, str], float] = field(default_factory=dict)
    throughput_paths: list[tuple[str, str]] = field(default_factory=list)
    lossy_paths: dict[tuple[str, str], float] = field(default_factory=dict)  # fault: loss fraction
    crc_interface: tuple[str, str] | None = None  # fault: a core port counting input errors
    delay_step_site: str | None = None  # fault: every path into this site +8 ms in the last 3 h

    @property
    def interfaces(self) -> list[tuple[str, str]]:
        return [(e["name"], _ifname(i)) for e in self.equipment for i in range(IFACES_PER_EQUIPMENT)]


def _ifname(i: int) -> str:
    return f"et-{i // 10}/0/{i % 10}"


def _h(*parts) -> int:
    return zlib.crc32("|".join(map(str, parts)).encode())


def world_generate(*, n_paths: int = 10_000, n_sites: int = 200, n_equipment: int = 1_000, seed: int = 19) -> World:
    """The inventory of ``n_sites`` sites with ``n_paths`` directed latency paths (an even number: pairs)."""
    rng = random.Random(seed)
    w = World()
    for i in range(n_sites):
        region = REGIONS[0] if i == 0 else REGIONS[i % len(REGIONS)]
        tier = 0 if i == 0 else (1 if i <= 13 else (2 if i % 10 else 3))
        w.sites.append({
            "code": "CERN" if i == 0 else f"S{i:03d}", "name": f"Site {i}", "region": region, "tier": tier,
            "lat": round(rng.uniform(-40, 65), 2), "lon": round(rng.uniform(-120, 150), 2),
        })
    for s in w.sites:
        w.equipment.append({"name": f"{s['code'].lower()}-rtr", "site": s["code"], "carrier": None,
                            "region": s["region"]})
        w.equipment.append({"name": f"{s['code'].lower()}-ps", "site": s["code"], "carrier": None,
                            "region": s["region"]})
    n_core = max(len(REGIONS), n_equipment - len(w.equipment))
    for i in range(n_core):
        region = REGIONS[i % len(REGIONS)]
        w.equipment.append({"name": f"core-{region.lower()}-{i // len(REGIONS):02d}", "site": None,
                            "carrier": "NREN", "region": region})
    cores: dict[str, list[str]] = {r: [] for r in REGIONS}
    for e in w.equipment:
        if e["carrier"]:
            cores[e["region"]].append(e["name"])
    site_region = {s["code"]: s["region"] for s in w.sites}
    site_core = {s["code"]: cores[s["region"]][_h(s["code"]) % len(cores[s["region"]])] for s in w.sites}

    # Site pairs: every site to the Tier-0 and the Tier-1s first, then seeded random pairs until n_paths.
    codes = [s["code"] for s in w.sites]
    tier1 = [s["code"] for s in w.sites if s["tier"] <= 1]
    pairs: list[tuple[str, str]] = []
    seen: set[frozenset] = set()

    def add(a: str, b: str) -> None:
        k = frozenset((a, b))
        if a != b and k not in seen and len(pairs) * 2 < n_paths:
            seen.add(k)
            pairs.append((a, b))

    for t in tier1:
        for c in codes:
            add(t, c)
    max_pairs = len(codes) * (len(codes) - 1) // 2
    while len(pairs) * 2 < n_paths and len(seen) < max_pairs:
        add(rng.choice(codes), rng.choice(codes))
    for a, b in pairs:
        for src, dst in ((a, b), (b, a)):
            w.paths.append((src, dst))
            hops = [(f"{src.lower()}-rtr", _ifname(_h(dst) % 4))]  # uplinks 0-3
            core_a, core_b = site_core[src], site_core[dst]
            hops.append((core_a, _ifname(4 + _h(dst, "a") % 16)))
            if core_b != core_a:
                hops.append((core_b, _ifname(4 + _h(dst, "b") % 16)))
            hops.append((f"{dst.lower()}-rtr", _ifname(4 + _h(src) % 16)))
            w.hops[(src, dst)] = hops
            same = site_region[src] == site_region[dst]
            w.delay_ms[(src, dst)] = round(
                1.0 + (_h(src, dst) % 40) / 10 + (0 if same else REGION_DELAY_MS[site_region[src]]
                                                 + REGION_DELAY_MS[site_region[dst]]), 3)
    w.throughput_paths = w.paths[: max(2, len(w.paths) // 5)]
    for k in range(0, min(len(w.paths), 5 * 97), 97):  # a handful of lossy directions (the reverse stays clean)
        w.lossy_paths[w.paths[k]] = 0.01 + 0.002 * (k % 5)
    core_hop = next((h for p in w.paths for h in w.hops[p][1:-1]), None)
    w.crc_interface = core_hop
    w.delay_step_site = codes[min(7, len(codes) - 1)]
    return w


def inventory_create(w: World, *, valid_from: datetime) -> None:
    """The world into the inventory tables (bulk: 20 000 interfaces and 60 000 path hops in seconds)."""
    from wanmon.inventory.models import Carrier, Equipment, Host, Interface, Path, PathHop, Site

    carrier, _ = Carrier.objects.get_or_create(code="NREN", defaults={"name": "Research networks"})
    Site.objects.bulk_create([Site(**{k: s[k] for k in ("code", "name", "region", "tier", "lat", "lon")})
                              for s in w.sites])
    site_id = dict(Site.objects.values_list("code", "id"))
    Host.objects.bulk_create([Host(site_id=site_id[s["code"]], name=f"ps.{s['code'].lower()}.example.org",
                                   address=f"10.{i // 250}.{i % 250}.10") for i, s in enumerate(w.sites)])
    Equipment.objects.bulk_create([
        Equipment(name=e["name"], site_id=site_id[e["site"]] if e["site"] else None,
                  carrier=carrier if e["carrier"] else None)
        for e in w.equipment
    ])
    eq_id = dict(Equipment.objects.values_list("name", "id"))
    Interface.objects.bulk_create([
        Interface(equipment_id=eq_id[e["name"]], name=_ifname(i), if_index=i + 1,
                  speed_mbps=100_000 if e["carrier"] else 10_000 if i >= 4 else 100_000, mtu=9000)
        for e in w.equipment for i in range(IFACES_PER_EQUIPMENT)
    ], batch_size=5000)
    if_id = {(eq, name): iid for iid, eq, name in Interface.objects.values_list("id", "equipment__name", "name")}
    Path.objects.bulk_create([
        Path(src_id=site_id[s], dst_id=site_id[d], capacity_mbps=10_000, rtt_ms=2 * w.delay_ms[(s, d)],
             valid_from=valid_from)
        for s, d in w.paths
    ], batch_size=5000)
    path_id = {(s, d): pid for pid, s, d in Path.objects.values_list("id", "src__code", "dst__code")}
    PathHop.objects.bulk_create([
        PathHop(path_id=path_id[p], position=pos, equipment_id=eq_id[eq], interface_id=if_id[(eq, ifn)])
        for p in w.paths for pos, (eq, ifn) in enumerate(w.hops[p])
    ], batch_size=10_000)


# --------------------------------------------------------------------------- measurements
def _delay_ms(w: World, p: tuple[str, str], t: datetime, end: datetime) -> float:
    base = w.delay_ms[p]
    if p[1] == w.delay_step_site and t >= end - timedelta(hours=3):
        base += 8.0
    return base


def owamp_records(w: World, t: datetime, *, end: datetime, paths=None) -> list:
    """One latencybg result per path for the minute starting at ``t`` (600 packets at 10/s)."""
    from collectors.records import OwampRecord

    minute = int(t.timestamp() // 60)
    out = []
    for p in paths or w.paths:
        h = _h(p[0], p[1], minute)
        loss_fraction = w.lossy_paths.get(p, 0.0)
        lost = int(round(OWAMP_PACKETS * loss_fraction)) + (h % 97 == 0)  # a stray lost packet now and then
        d = _delay_ms(w, p, t, end)
        jitter = 0.05 + (h % 100) / 1000
        out.append(OwampRecord(
            time=t, src=p[0], dst=p[1], packets_sent=OWAMP_PACKETS, packets_lost=lost, duplicates=0,
            reordered=0, delay_min_ms=d, delay_median_ms=round(d + jitter, 3), delay_max_ms=round(d + 10 * jitter, 3),
            jitter_ms=round(jitter, 3), clock_error_ms=0.5, tool="owping", schedule_interval_s=60,
        ))
    return out


def throughput_records(w: World, t: datetime, *, end: datetime) -> list:
    """TCP tests of the throughput paths whose 6-hour slot falls in the minute starting at ``t``."""
    from collectors.records import ThroughputRecord

    minute = int(t.timestamp() // 60)
    out = []
    for p in w.throughput_paths:
        if (minute - _h(p[0], p[1], "tp")) % 360:
            continue
        rtt_ms = 2 * _delay_ms(w, p, t, end)
        loss = w.lossy_paths.get(p, 0.0)
        # Mathis with 4 streams of 9000-byte MSS when lossy; otherwise near the 10G capacity
        rate = 9.2e9 if not loss else min(9.2e9, 4 * 8960 * 8 / (rtt_ms / 1000) * 1.22 / math.sqrt(loss))
        rate *= 1 - (_h(p, minute) % 50) / 1000
        out.append(ThroughputRecord(
            time=t, src=p[0], dst=p[1], tool="nuttcp", protocol="tcp", duration_s=10.0, throughput_bps=rate,
            streams=4, mss_bytes=8960, rtt_ms=round(rtt_ms, 3), window_bytes=2**31 - 1,
            retransmits=int(rate * 10 / 8 / 8960 * loss) if loss else 0, schedule_interval_s=21600,
        ))
    return out


def _octets(rate_bps: float, ts: float) -> int:
    # integral of rate * (1 + 0.4 sin(2 pi t / day)) dt, in bytes: a diurnal load without storing state
    omega = 2 * math.pi / 86400
    return int(rate_bps / 8 * (ts - 0.4 / omega * math.cos(omega * ts))) % 2**64


def snmp_records(w: World, t: datetime, *, interfaces=None) -> list:
    """One poll of every interface at ``t`` (Counter64 octets and packets, Counter32 errors)."""
    from collectors.records import Counters, SnmpRecord

    ts = t.timestamp()
    out = []
    for eq, ifn in interfaces or w.interfaces:
        base = 2e8 + (_h(eq, ifn) % 3000) * 1e6  # 0.2-3.2 Gb/s mean load
        errors = int((ts - 1.7e9) // 60 * 3) % 2**32 if (eq, ifn) == w.crc_interface else 0
        out.append(SnmpRecord(
            time=t, equipment=eq, interface=ifn, oper_status="up", speed_mbps=100_000,
            counters=Counters(
                hc_in_octets=_octets(base, ts), hc_out_octets=_octets(base * 0.8, ts),
                hc_in_ucast_pkts=_octets(base / 1000, ts), hc_out_ucast_pkts=_octets(base / 1250, ts),
                in_errors=errors, out_errors=0, in_discards=0, out_discards=0,
            ),
        ))
    return out
