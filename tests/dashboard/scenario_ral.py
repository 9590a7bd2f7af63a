"""A scenario (docs/scenario-format.md) with everything the corpus scenarios lack for the dashboard:
SNMP counters on the path's ports and on a trunk whose members are unevenly loaded, interface
errors, a maintenance window that ran and one that is announced, and a route change seen by
traceroute. Names follow wanmon/demo/data/lhc-topology.yaml (CERN <-> RAL over GEANT and
Jisc Janet, RAL behind the 2 x 10G trunk ral-lag).

Deterministic: the same numbers every time, so tests can compare charts with them.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

import yaml

from tests.scenarios.noise.mesh import iso

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
START = datetime(2026, 3, 1, 6, 0, tzinfo=UTC)
POLL = timedelta(minutes=5)
#: Mean egress rates (bit/s) per polled port: the trunk's two members towards RAL are 7 vs 1 Gb/s.
RATES_OUT_BPS = {
    "janet-lon:xe-4/0/0": 7.0e9,
    "janet-lon:xe-4/1/0": 1.0e9,
    "ral-border:xe-0/0/0": 3.0e9,
    "ral-border:xe-0/1/0": 3.1e9,
    "geant-lon:et-1/0/0": 8.2e9,
}
#: CRC errors per second on janet-lon:xe-4/0/0 from ERRORS_FROM on (a dirty patch on the trunk).
ERRORS_PER_S = 2.0
ERRORS_FROM = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
ROUTE_CHANGE_AT = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
TCP_CERN_RAL_BPS = 8.5e9  # 42 % of 20 Gb/s: warning
TCP_RAL_CERN_BPS = 12.0e9  # 60 %: ok

SPEEDS_MBPS = {"et": 100000, "xe": 10000}


def _interface(label: str, if_index: int, description: str) -> dict:
    equipment, name = label.split(":", 1)
    return {"equipment": equipment, "name": name, "if_index": if_index,
            "speed_mbps": SPEEDS_MBPS[name[:2]], "mtu": 9000, "description": description}


def scenario() -> dict:
    measurements: list[dict] = []
    # SNMP: Counter64 octets, Counter32 errors, every 5 min, a little deterministic wobble.
    polls = int((NOW - START) / POLL) + 1
    for index_port, (label, rate) in enumerate(RATES_OUT_BPS.items()):
        equipment, interface = label.split(":", 1)
        out_octets = in_octets = 10**12 * (index_port + 1)
        errors = 0
        for i in range(polls):
            moment = START + i * POLL
            if i:
                wobble = 1 + 0.05 * math.sin(i / 3 + index_port)
                out_octets += int(rate * wobble * POLL.total_seconds() / 8)
                in_octets += int(rate * 0.2 * POLL.total_seconds() / 8)
                if label == "janet-lon:xe-4/0/0" and moment > ERRORS_FROM:
                    errors += int(ERRORS_PER_S * POLL.total_seconds())
            measurements.append({
                "type": "snmp", "time": iso(moment), "equipment": equipment, "interface": interface,
                "sys_uptime_ticks": 500_000_000 + i * 30_000, "oper_status": "up",
                "counters": {"hc_in_octets": in_octets, "hc_out_octets": out_octets, "in_errors": errors,
                             "out_errors": 0, "in_discards": 0, "out_discards": 0},
            })
    # TCP tests every 30 min each way, UDP tests every hour CERN->RAL.
    moment = START
    i = 0
    while moment <= NOW:
        for src, dst, rate in (("CERN", "RAL", TCP_CERN_RAL_BPS), ("RAL", "CERN", TCP_RAL_CERN_BPS)):
            measurements.append({
                "type": "throughput", "time": iso(moment), "src": src, "dst": dst, "tool": "nuttcp",
                "protocol": "tcp", "duration_s": 10, "streams": 4, "window_bytes": 134217728, "mss_bytes": 8948,
                "throughput_bps": rate * (1 + 0.02 * math.sin(i)), "retransmits": 0, "rtt_ms": 20.2,
            })
        if moment.minute == 0:
            measurements.append({
                "type": "throughput", "time": iso(moment + timedelta(minutes=1)), "src": "CERN", "dst": "RAL",
                "tool": "nuttcp", "protocol": "udp", "duration_s": 10, "offered_bps": 1.0e9,
                "throughput_bps": 0.999e9, "packets_sent": 139_000, "packets_lost": i % 3,
            })
        moment += timedelta(minutes=30)
        i += 1
    # One-way probes every 10 min; CERN->RAL takes 1 ms longer after the route change.
    moment = START
    while moment <= NOW:
        for src, dst in (("CERN", "RAL"), ("RAL", "CERN")):
            extra = 1.0 if (src == "CERN" and moment >= ROUTE_CHANGE_AT) else 0.0
            measurements.append({
                "type": "owamp", "time": iso(moment), "src": src, "dst": dst, "packets_sent": 600,
                "packets_lost": 0, "duplicates": 0, "reordered": 0, "delay_min_ms": 9.8 + extra,
                "delay_median_ms": 10.1 + extra, "delay_max_ms": 12.0 + extra, "jitter_ms": 0.1,
                "clock_error_ms": 0.2,
            })
        moment += timedelta(minutes=10)
    # Traceroutes every hour: the route moves from Paris to Amsterdam at 10:00.
    moment = START
    while moment <= NOW:
        middle = "geant-ams" if moment >= ROUTE_CHANGE_AT else "geant-par"
        measurements.append({
            "type": "traceroute", "time": iso(moment + timedelta(minutes=2)), "src": "CERN", "dst": "RAL",
            "hops": ["cern-border", "geant-gva", middle, "geant-lon", "janet-lon", "ral-border"],
            "pmtu_bytes": 9000,
        })
        moment += timedelta(hours=1)

    return {
        "scenario": "dashboard-ral-trunk",
        "description": "CERN<->RAL: unevenly loaded trunk members, CRC errors on one of them, a maintenance "
                       "window, an announced one and a route change (dashboard test data).",
        "now": iso(NOW),
        "topology": {
            "carriers": [{"code": "GEANT", "name": "GEANT"}, {"code": "JANET", "name": "Jisc Janet"}],
            "sites": [{"code": "CERN", "name": "CERN", "tier": 0, "lat": 46.23, "lon": 6.05},
                      {"code": "RAL", "name": "RAL (STFC)", "tier": 1, "lat": 51.57, "lon": -1.31}],
            "hosts": [],
            "equipment": [
                {"name": "cern-border", "site": "CERN", "role": "router", "vendor": "Juniper", "model": "MX960"},
                {"name": "geant-gva", "carrier": "GEANT", "role": "router", "vendor": "Juniper", "model": "MX480"},
                {"name": "geant-par", "carrier": "GEANT", "role": "router", "vendor": "Juniper", "model": "MX480"},
                {"name": "geant-ams", "carrier": "GEANT", "role": "router", "vendor": "Juniper", "model": "MX480"},
                {"name": "geant-lon", "carrier": "GEANT", "role": "router", "vendor": "Juniper", "model": "MX480"},
                {"name": "janet-lon", "carrier": "JANET", "role": "router", "vendor": "Juniper", "model": "MX960"},
                {"name": "ral-border", "site": "RAL", "role": "router", "vendor": "Juniper", "model": "MX480"},
            ],
            "interfaces": [
                _interface("cern-border:et-1/0/0", 501, "to geant-gva"),
                _interface("geant-gva:et-3/0/0", 505, "to geant-par"),
                _interface("geant-gva:et-1/1/0", 502, "to cern-border"),
                _interface("geant-par:et-1/0/0", 501, "to geant-lon"),
                _interface("geant-par:et-1/1/0", 502, "to geant-gva"),
                _interface("geant-lon:et-1/0/0", 501, "to janet-lon"),
                _interface("geant-lon:et-1/1/0", 502, "to geant-par"),
                _interface("janet-lon:et-1/0/0", 501, "to geant-lon"),
                _interface("janet-lon:xe-4/0/0", 502, "to ral-border"),
                _interface("janet-lon:xe-4/1/0", 503, "to ral-border"),
                _interface("ral-border:xe-0/0/0", 501, "to janet-lon"),
                _interface("ral-border:xe-0/1/0", 502, "to janet-lon"),
            ],
            "trunks": [{"name": "ral-lag", "members": ["janet-lon:xe-4/0/0", "janet-lon:xe-4/1/0",
                                                       "ral-border:xe-0/0/0", "ral-border:xe-0/1/0"]}],
            "paths": [
                {"src": "CERN", "dst": "RAL", "capacity_mbps": 20000,
                 "hops": ["cern-border:et-1/0/0", "geant-gva:et-3/0/0", "geant-par:et-1/0/0", "geant-lon:et-1/0/0",
                          "janet-lon:xe-4/0/0", "ral-border"]},
                {"src": "RAL", "dst": "CERN", "capacity_mbps": 20000,
                 "hops": ["ral-border:xe-0/0/0", "janet-lon:et-1/0/0", "geant-lon:et-1/1/0", "geant-par:et-1/1/0",
                          "geant-gva:et-1/1/0", "cern-border"]},
            ],
        },
        "maintenance": [
            {"reference": "JANET-CHG-1001", "carrier": "JANET", "impact": "at-risk",
             "start": "2026-03-01T08:00:00Z", "end": "2026-03-01T08:45:00Z", "affects": ["janet-lon"]},
            {"reference": "GEANT-CHG-2002", "carrier": "GEANT", "impact": "outage",
             "start": "2026-03-03T02:00:00Z", "end": "2026-03-03T04:00:00Z", "affects": ["geant-par"]},
        ],
        "measurements": measurements,
    }


def write(directory: Path) -> Path:
    """Write the scenario as YAML into ``directory`` and return the file."""
    target = Path(directory) / "dashboard-ral-trunk.yaml"
    target.write_text(yaml.safe_dump(scenario(), sort_keys=False))
    return target
