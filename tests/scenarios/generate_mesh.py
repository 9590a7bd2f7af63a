"""Generate healthy-mesh-12.yaml: 12 LHC sites, all 132 directed paths healthy for 6 hours (~10 000 records).

Run `python tests/scenarios/generate_mesh.py` to rewrite the file. Numbers follow the physics:
RTT from the great-circle distance (fibre ~200 km/ms, routes ~1.5x the geodesic), windows
autotuned well above the BDP, TCP at 90-95 % of a 10 Gb/s path, one-way delay = RTT / 2, no loss.
The expectation: not a single finding (every code is listed as absent).
"""

from __future__ import annotations

import random
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script: the physics is imported as tests.scenarios.noise
    sys.path.insert(0, str(ROOT))

from tests.scenarios.noise.mesh import iso  # noqa: E402
from tests.scenarios.noise.physics import great_circle_km  # noqa: E402

SITES = {  # code: (name, tier, lat, lon, region)
    "CERN": ("CERN", 0, 46.23, 6.05, "eu"), "FZK": ("KIT GridKa", 1, 49.09, 8.43, "eu"),
    "CNAF": ("INFN CNAF", 1, 44.49, 11.34, "eu"), "IN2P3": ("CC-IN2P3", 1, 45.78, 4.87, "eu"),
    "RAL": ("RAL", 1, 51.57, -1.31, "eu"), "SARA": ("SARA/NIKHEF", 1, 52.36, 4.95, "eu"),
    "PIC": ("PIC", 1, 41.50, 2.11, "eu"), "NDGF": ("NDGF", 1, 55.70, 12.56, "eu"),
    "FNAL": ("Fermilab", 1, 41.84, -88.26, "na"), "BNL": ("BNL", 1, 40.87, -72.87, "na"),
    "TRIUMF": ("TRIUMF", 1, 49.25, -123.23, "na"), "ASGC": ("ASGC", 1, 25.04, 121.61, "asia"),
}
CORE = {"eu": ("geant-core", "GEANT"), "na": ("esnet-core", "ESNET"), "asia": ("twaren-core", "TWAREN")}
T0 = datetime(2026, 5, 4, 6, 0, tzinfo=UTC)
HOURS = 6
CAPACITY_MBPS = 10_000
MSS = 8948


def km(a: str, b: str) -> float:
    (_, _, la1, lo1, _), (_, _, la2, lo2, _) = SITES[a], SITES[b]
    return great_circle_km(la1, lo1, la2, lo2)


def rtt_ms(a: str, b: str) -> float:
    return max(2.0, 2 * km(a, b) * 1.5 / 200 + 0.5)


OUT = Path(__file__).with_name("healthy-mesh-12.yaml")


def document() -> str:
    """The scenario file's text (the same bytes on every run: the randomness is seeded)."""
    rnd = random.Random(12)
    topo = {
        "carriers": [{"code": c, "name": c} for c in sorted({c for _, c in CORE.values()})],
        "sites": [{"code": s, "name": n, "tier": t, "lat": la, "lon": lo} for s, (n, t, la, lo, _) in SITES.items()],
        "equipment": [{"name": f"{s.lower()}-border", "site": s, "role": "router"} for s in SITES]
        + [{"name": eq, "carrier": c, "role": "router"} for eq, c in CORE.values()],
        "paths": [],
    }
    measurements = []
    for a in SITES:
        for b in SITES:
            if a == b:
                continue
            ra, rb = SITES[a][4], SITES[b][4]
            hops = [f"{a.lower()}-border", CORE[ra][0]] + ([CORE[rb][0]] if rb != ra else []) + [f"{b.lower()}-border"]
            topo["paths"].append({"src": a, "dst": b, "capacity_mbps": CAPACITY_MBPS, "hops": hops})
            rtt = rtt_ms(a, b)
            window = int(2 * CAPACITY_MBPS * 1e6 * rtt / 1e3 / 8)  # autotuned to twice the BDP
            for k in range(HOURS * 60 // 45):
                t = T0 + timedelta(minutes=45 * k, seconds=rnd.randint(0, 50))
                measurements.append({
                    "type": "throughput", "time": iso(t), "src": a, "dst": b, "tool": "nuttcp", "protocol": "tcp",
                    "duration_s": 10, "streams": 1, "window_bytes": window, "mss_bytes": MSS,
                    "throughput_bps": round(CAPACITY_MBPS * 1e6 * rnd.uniform(0.90, 0.95)),
                    "retransmits": rnd.randint(0, 3), "rtt_ms": round(rtt * rnd.uniform(1.0, 1.01), 2)})
            for k in range(HOURS * 60 // 6):
                t = T0 + timedelta(minutes=6 * k, seconds=rnd.randint(0, 30))
                d = rtt / 2
                measurements.append({
                    "type": "owamp", "time": iso(t), "src": a, "dst": b, "packets_sent": 600, "packets_lost": 0,
                    "duplicates": 0, "reordered": 0, "delay_min_ms": round(d, 3),
                    "delay_median_ms": round(d + 0.2, 3), "delay_max_ms": round(d + 1.5, 3), "jitter_ms": 0.05,
                    "clock_error_ms": 0.1})
    for s in SITES:
        measurements.append({
            "type": "host_tcp", "time": iso(T0 + timedelta(minutes=5)), "site": s, "host": f"{s.lower()}-dt01",
            "tcp_rmem": [4096, 87380, 536870912], "tcp_wmem": [4096, 65536, 536870912],
            "rmem_max": 536870912, "wmem_max": 536870912, "congestion_control": "cubic", "mtu": 9000})
    measurements.sort(key=lambda m: m["time"])
    from wanmon.diagnosis import codes  # noqa: PLC0415 - run from the repository root

    doc = {
        "scenario": "healthy-mesh-12",
        "description": "12 LHC sites, all 132 directed paths healthy for 6 hours: no finding at all.",
        "now": iso(T0 + timedelta(hours=HOURS)),
        "topology": topo,
        "measurements": measurements,
        "expect": {"findings": [], "absent": [{"code": c} for c in codes.CODES]},
    }
    return yaml.safe_dump(doc, sort_keys=False, width=200)


def main() -> None:
    text = document()
    OUT.write_text(text)
    print(f"{OUT}: {len(text) / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
