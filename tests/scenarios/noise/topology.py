"""Topology builder: LHC sites on research-network PoPs, paths routed PoP to PoP, RTT from the route length.

A site hangs off its national/regional PoP through its border router's uplink (``et-0/0/0``).
Inside a region PoPs are fully meshed; regions meet at gateway PoPs (Amsterdam-New York for
Europe-North America, Seattle-Taipei for North America-Asia; Europe-Asia goes through North
America, as LHCONE traffic to ASGC does). A path's one-way delay is the fibre length of that
route (great circle between consecutive locations x ROUTE_FACTOR) plus per-hop forwarding.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import physics

UPLINK = "et-0/0/0"


@dataclass(frozen=True)
class SiteInfo:
    """A site of the catalogue: where it is and which PoP it attaches to."""

    code: str
    name: str
    tier: int
    lat: float
    lon: float
    pop: str
    address: str


@dataclass(frozen=True)
class Pop:
    """A research-network point of presence (one core router)."""

    name: str
    carrier: str
    lat: float
    lon: float
    region: str


POPS = {
    p.name: p
    for p in (
        Pop("geant-gva", "GEANT", 46.20, 6.14, "eu"),
        Pop("geant-fra", "GEANT", 50.11, 8.68, "eu"),
        Pop("geant-mil", "GEANT", 45.46, 9.19, "eu"),
        Pop("geant-par", "GEANT", 48.86, 2.35, "eu"),
        Pop("geant-lon", "GEANT", 51.51, -0.13, "eu"),
        Pop("geant-ams", "GEANT", 52.37, 4.90, "eu"),
        Pop("geant-mad", "GEANT", 40.42, -3.70, "eu"),
        Pop("geant-cph", "GEANT", 55.68, 12.57, "eu"),
        Pop("esnet-nyc", "ESNET", 40.71, -74.01, "na"),
        Pop("esnet-chi", "ESNET", 41.88, -87.63, "na"),
        Pop("esnet-sea", "ESNET", 47.61, -122.33, "na"),
        Pop("twaren-tpe", "TWAREN", 25.03, 121.57, "asia"),
    )
}

SITES = {
    s.code: s
    for s in (
        SiteInfo("CERN", "CERN", 0, 46.23, 6.05, "geant-gva", "192.0.2.10"),
        SiteInfo("FZK", "KIT GridKa", 1, 49.09, 8.43, "geant-fra", "192.0.2.20"),
        SiteInfo("CNAF", "INFN CNAF", 1, 44.49, 11.34, "geant-mil", "192.0.2.30"),
        SiteInfo("IN2P3", "CC-IN2P3", 1, 45.78, 4.87, "geant-par", "192.0.2.40"),
        SiteInfo("RAL", "RAL", 1, 51.57, -1.31, "geant-lon", "192.0.2.50"),
        SiteInfo("SARA", "SARA/NIKHEF", 1, 52.36, 4.95, "geant-ams", "192.0.2.60"),
        SiteInfo("PIC", "PIC", 1, 41.50, 2.11, "geant-mad", "192.0.2.70"),
        SiteInfo("NDGF", "NDGF", 1, 55.70, 12.56, "geant-cph", "192.0.2.80"),
        SiteInfo("FNAL", "Fermilab", 1, 41.84, -88.26, "esnet-chi", "198.51.100.10"),
        SiteInfo("BNL", "BNL", 1, 40.87, -72.87, "esnet-nyc", "198.51.100.20"),
        SiteInfo("TRIUMF", "TRIUMF", 1, 49.25, -123.23, "esnet-sea", "198.51.100.30"),
        SiteInfo("ASGC", "ASGC", 1, 25.04, 121.61, "twaren-tpe", "203.0.113.10"),
    )
}

#: Inter-region links: (PoP, its interface toward the other region, the other PoP, its interface).
GATEWAYS = {
    ("eu", "na"): ("geant-ams", "et-7/0/0", "esnet-nyc", "et-3/0/0"),
    ("na", "asia"): ("esnet-sea", "et-4/0/0", "twaren-tpe", "et-1/0/0"),
}
GATEWAY_SPEED_MBPS = 400_000  # transatlantic / transpacific capacity shared by the mesh


@dataclass(frozen=True)
class PathModel:
    """One direction of a site pair: its hops, its interfaces with the direction traffic crosses them, and physics."""

    src: str
    dst: str
    pops: tuple[str, ...]
    hops: tuple[str, ...]
    crossings: tuple[tuple[str, str], ...]  # ("equipment:interface", "in" | "out")
    route_km: float
    owd_ms: float
    capacity_mbps: int

    @property
    def key(self) -> tuple[str, str]:
        return (self.src, self.dst)

    @property
    def rtt_ms(self) -> float:
        return 2 * self.owd_ms


def border(site: str) -> str:
    return f"{site.lower()}-border"


def host_name(site: str) -> str:
    return f"{site.lower()}-ps01"


def _region_chain(a: str, b: str) -> list[str]:
    order = ["eu", "na", "asia"]
    i, j = order.index(a), order.index(b)
    return order[i : j + 1] if i <= j else order[j : i + 1][::-1]


def pop_route(src_pop: str, dst_pop: str) -> list[tuple[str, str | None, str | None]]:
    """PoPs from src_pop to dst_pop: (PoP, gateway interface it is left by, gateway interface it is entered by)."""
    regions = _region_chain(POPS[src_pop].region, POPS[dst_pop].region)
    route: list[tuple[str, str | None, str | None]] = []
    here, entered_by = src_pop, None
    for r1, r2 in zip(regions, regions[1:], strict=False):
        if (r1, r2) in GATEWAYS:
            gw, gw_if, far, far_if = GATEWAYS[(r1, r2)]
        else:
            far, far_if, gw, gw_if = GATEWAYS[(r2, r1)]
        if here != gw:
            route.append((here, None, entered_by))
            entered_by = None
        route.append((gw, gw_if, entered_by))
        here, entered_by = far, far_if
    if here != dst_pop:
        route.append((here, None, entered_by))
        entered_by = None
    route.append((dst_pop, None, entered_by))
    return route


def build_path(src: str, dst: str, capacity_mbps: int) -> PathModel:
    """Route src -> dst through the PoPs and derive its length, delay and interface crossings."""
    s, d = SITES[src], SITES[dst]
    route = pop_route(s.pop, d.pop)
    points = [(s.lat, s.lon)] + [(POPS[p].lat, POPS[p].lon) for p, _, _ in route] + [(d.lat, d.lon)]
    km = sum(physics.great_circle_km(*a, *b) for a, b in zip(points, points[1:], strict=False))
    route_km = km * physics.ROUTE_FACTOR + 20  # metro fibre from campus to PoP at each end
    hops = [f"{border(src)}:{UPLINK}"]
    crossings = [(f"{border(src)}:{UPLINK}", "out")]
    for pop, out_if, in_if in route:
        if in_if:
            crossings.append((f"{pop}:{in_if}", "in"))
        if out_if:
            crossings.append((f"{pop}:{out_if}", "out"))
        hops.append(f"{pop}:{out_if}" if out_if else pop)
    hops.append(f"{border(dst)}:{UPLINK}")
    crossings.append((f"{border(dst)}:{UPLINK}", "in"))
    return PathModel(
        src=src,
        dst=dst,
        pops=tuple(p for p, _, _ in route),
        hops=tuple(hops),
        crossings=tuple(crossings),
        route_km=route_km,
        owd_ms=physics.one_way_delay_ms(route_km, hops=len(hops)),
        capacity_mbps=capacity_mbps,
    )


@dataclass
class Topology:
    """The inventory of one mesh (docs/scenario-format.md#topology) and its path models."""

    sites: tuple[str, ...]
    capacity_mbps: int
    mtu: int
    paths: dict[tuple[str, str], PathModel] = field(default_factory=dict)
    ecmp_twins: dict[str, str] = field(default_factory=dict)  # PoP -> its ECMP twin router

    @property
    def interfaces(self) -> dict[str, int]:
        """Every "equipment:interface" the paths cross, with its speed in Mb/s."""
        out: dict[str, int] = {}
        for site in self.sites:
            out[f"{border(site)}:{UPLINK}"] = self.capacity_mbps
        for p in self.paths.values():
            for name, _ in p.crossings:
                out.setdefault(name, GATEWAY_SPEED_MBPS)
        return out

    def as_document(
        self, trunks: dict[str, tuple[str, ...]] | None = None, extra_equipment: tuple[str, ...] = ()
    ) -> dict:
        """The ``topology`` block (docs/scenario-format.md#topology); a trunk stays on its paths through its first
        member (a hop)."""
        trunks = trunks or {}
        pops = sorted(
            {pop for p in self.paths.values() for pop in p.pops} | set(self.ecmp_twins.values()) | set(extra_equipment)
        )
        carriers = sorted({POPS[p].carrier for p in pops if p in POPS} | {"GEANT"})
        twin_of = {twin: pop for pop, twin in self.ecmp_twins.items()}
        equipment = [{"name": border(s), "site": s, "role": "router"} for s in self.sites]
        for p in pops:
            base = POPS[twin_of.get(p, p)]
            equipment.append({"name": p, "carrier": base.carrier, "role": "router"})
        speeds = dict(self.interfaces)
        for members in trunks.values():
            for m in members:
                speeds.setdefault(m, speeds[members[0]])
        interfaces = []
        for index, (name, speed) in enumerate(sorted(speeds.items()), start=1):
            eq, _, ifname = name.partition(":")
            interfaces.append(
                {"equipment": eq, "name": ifname, "if_index": 500 + index, "speed_mbps": speed, "mtu": 9000}
            )
        return {
            "carriers": [{"code": c, "name": c} for c in carriers],
            "sites": [
                {"code": s, "name": SITES[s].name, "tier": SITES[s].tier, "lat": SITES[s].lat, "lon": SITES[s].lon}
                for s in self.sites
            ],
            "hosts": [{"site": s, "name": host_name(s), "address": SITES[s].address} for s in self.sites],
            "equipment": equipment,
            "interfaces": interfaces,
            "trunks": [{"name": name, "members": list(members)} for name, members in trunks.items()],
            "paths": [
                {"src": p.src, "dst": p.dst, "capacity_mbps": p.capacity_mbps, "hops": list(p.hops)}
                for p in self.paths.values()
            ],
        }


def build_topology(sites: tuple[str, ...], capacity_mbps: int, mtu: int, ecmp_pops: tuple[str, ...] = ()) -> Topology:
    """A full mesh of the sites: every ordered pair is a path direction."""
    topo = Topology(sites=sites, capacity_mbps=capacity_mbps, mtu=mtu)
    for a in sites:
        for b in sites:
            if a != b:
                topo.paths[(a, b)] = build_path(a, b, capacity_mbps)
    topo.ecmp_twins = {pop: f"{pop}2" for pop in ecmp_pops}
    return topo
