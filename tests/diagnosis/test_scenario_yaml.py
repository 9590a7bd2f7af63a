"""Case studies written as scenario documents (docs/scenario-format.md), replayed on production's road.

`manage.py replay --json --check` loads each document into the database and runs the periodic cycle over its
timeline at the document's own test interval: the same evidence builder, rules and findings' lifecycle as the
beat.
"""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
import yaml

from tests.diagnosis.builders import T0
from tests.replays import corpus_replay

pytestmark = pytest.mark.django_db

NOW = T0 + timedelta(hours=6)


def iso(minute: float) -> str:
    return (T0 + timedelta(minutes=minute)).isoformat().replace("+00:00", "Z")


def _equipment(paths, interfaces, trunks) -> set[str]:
    """Every router the document names: hops (a hop may name one of its ports), interfaces, trunk members."""
    labels = [h for p in paths for h in p["hops"]] + [m for t in trunks for m in t["members"]]
    return {label.partition(":")[0] for label in labels} | {i["equipment"] for i in interfaces}


def topology(paths, interfaces=(), trunks=(), hosts=()):
    return {
        "carriers": [{"code": "GEANT", "name": "GEANT"}],
        "sites": [{"code": c, "name": c, "tier": 1, "lat": 0, "lon": 0} for c in ("CERN", "FZK", "RAL")],
        "hosts": list(hosts),
        "equipment": [{"name": n} for n in sorted(_equipment(paths, interfaces, trunks))],
        "interfaces": list(interfaces),
        "trunks": list(trunks),
        "paths": paths,
    }


def write(tmp_path, doc) -> str:
    f = tmp_path / f"{doc['scenario']}.yaml"
    f.write_text(yaml.safe_dump(doc, sort_keys=False))
    return str(f)


def tcp(minute, src, dst, thr, **kw):
    return {
        "type": "throughput",
        "time": iso(minute),
        "src": src,
        "dst": dst,
        "tool": "nuttcp",
        "protocol": "tcp",
        "duration_s": 10,
        "streams": 1,
        "window_bytes": 2_450_000,
        "mss_bytes": 8948,
        "throughput_bps": thr,
        "retransmits": 0,
        "rtt_ms": 9.8,
        **kw,
    }


def owamp(minute, src, dst, lost=0, dmin=4.9):
    return {
        "type": "owamp",
        "time": iso(minute),
        "src": src,
        "dst": dst,
        "packets_sent": 600,
        "packets_lost": lost,
        "duplicates": 0,
        "reordered": 0,
        "delay_min_ms": dmin,
        "delay_median_ms": dmin + 0.3,
        "delay_max_ms": dmin + 2,
        "jitter_ms": 0.05,
        "clock_error_ms": 0.2,
    }


EU = ["cern-border", "geant-gva", "geant-par:xe-1/0/0", "dfn-fra", "fzk-border"]


def eu_paths():
    return [
        {"src": "CERN", "dst": "FZK", "capacity_mbps": 1000, "hops": EU},
        {"src": "FZK", "dst": "CERN", "capacity_mbps": 1000, "hops": list(reversed(EU))},
    ]


def run(tmp_path, doc) -> dict:
    """The replay's JSON; fails with the check's report unless every expectation held on the road."""
    code, out, err = corpus_replay(write(tmp_path, doc))
    assert code == 0 and "check passed" in err, f"{err}\n{out}"
    return json.loads(out)


def test_case8_maintenance_scenario(tmp_path):
    ms = []
    for m in range(0, 361, 30):
        collapsed = 120 <= m <= 240
        for src, dst in (("CERN", "FZK"), ("FZK", "CERN")):
            ms.append(
                tcp(m, 2e7 if collapsed else 9.2e8, src, dst)
                | {"src": src, "dst": dst, "throughput_bps": 2e7 if collapsed else 9.2e8}
            )
    for m in range(0, 361, 5):
        ms += [
            owamp(m, "CERN", "FZK", lost=150 if 120 <= m <= 240 else 0),
            owamp(m, "FZK", "CERN", lost=150 if 120 <= m <= 240 else 0),
        ]
    doc = {
        "scenario": "scheduled-intervention",
        "now": iso(360),
        "topology": topology(
            eu_paths(), interfaces=[{"equipment": "geant-par", "name": "xe-1/0/0", "speed_mbps": 10000}]
        ),
        "maintenance": [
            {
                "reference": "GEANT-CHG-0042",
                "carrier": "GEANT",
                "impact": "outage",
                "start": iso(110),
                "end": iso(250),
                "affects": ["geant-par"],
            }
        ],
        "measurements": ms,
        "expect": {
            "findings": [{"code": "MAINTENANCE_EXPLAINED", "subject": {"equipment": "geant-par"}}],
            "absent": [{"code": "UNEXPLAINED_DEGRADATION"}, {"code": "SHARED_EQUIPMENT_SUSPECT"}],
        },
    }
    findings = run(tmp_path, doc)["findings"]
    assert findings and all(f["severity"] == "info" for f in findings)


@pytest.mark.parametrize("reboot", [False, True])
def test_case9_counter_wrap_and_reset_scenario(tmp_path, reboot):
    per_poll = 6_000_000_000 * 60 // 8
    octets, uptime, ms = 2**64 - 45 * per_poll, 883_412_200, []
    for m in range(0, 361):
        if reboot and m == 200:
            octets, uptime = 1_200_000_000, 3000
        ms.append(
            {
                "type": "snmp",
                "time": iso(m),
                "equipment": "geant-par",
                "interface": "xe-1/0/0",
                "sys_uptime_ticks": uptime,
                "oper_status": "up",
                "counters": {
                    "hc_in_octets": octets % 2**64,
                    "hc_out_octets": (octets // 7) % 2**64,
                    "in_errors": 0,
                    "in_discards": 0,
                    "out_discards": 0,
                },
            }
        )
        octets += per_poll
        uptime += 6000
    for m in range(0, 361, 30):
        ms += [tcp(m, "CERN", "FZK", 9.2e8), tcp(m, "FZK", "CERN", 9.2e8)]
    doc = {
        "scenario": "counter-wrap-reset",
        "now": iso(360),
        "topology": topology(
            eu_paths(),
            interfaces=[
                {"equipment": "geant-par", "name": "xe-1/0/0", "if_index": 501, "speed_mbps": 10000, "mtu": 9000}
            ],
        ),
        "measurements": ms,
        "expect": {
            "findings": [
                {"code": "COUNTER_DISCONTINUITY", "subject": {"equipment": "geant-par", "interface": "xe-1/0/0"}}
            ]
            if reboot
            else [],
            "absent": [{"code": "LINK_CONGESTION"}, {"code": "INTERFACE_ERRORS"}, {"code": "PATH_DOWN"}]
            + ([] if reboot else [{"code": "COUNTER_DISCONTINUITY"}]),
        },
    }
    rates = run(tmp_path, doc)["interface_rates"]
    # exact across the 2^64 wrap; the interval across the reboot is dropped, not read as a rate
    assert rates and all(r["in_bps"] == pytest.approx(6e9) for r in rates)
    assert len(rates) == (359 if reboot else 360)


def test_case3_trunk_scenario(tmp_path):
    hops = ["cern-border", "geant-lon", "uk-lon", "ral-border"]
    paths = [{"src": "CERN", "dst": "RAL", "capacity_mbps": 2000, "hops": hops}]
    hosts = [{"site": "RAL", "name": f"ral-dt0{i}", "address": f"192.0.2.{20 + i}"} for i in (1, 2, 3, 4)]
    ms = []
    for i, m in enumerate(range(0, 361, 15)):
        addr = f"192.0.2.{21 + i % 4}"
        odd = int(addr.rsplit(".", 1)[1]) % 2 == 1
        ms.append(
            tcp(
                m,
                "CERN",
                "RAL",
                (1.1e8 + 6e7 * (i % 3)) if odd else 9.2e8,
                dst_host=addr,
                rtt_ms=8.0,
                retransmits=700 if odd else 1,
            )
        )
        ms.append(
            {
                "type": "throughput",
                "time": iso(m + 5),
                "src": "CERN",
                "dst": "RAL",
                "tool": "nuttcp",
                "protocol": "udp",
                "duration_s": 10,
                "offered_bps": 8e8,
                "throughput_bps": 8e8,
                "packets_sent": 69_000,
                "packets_lost": 0,
                "dst_host": addr,
            }
        )
    doc = {
        "scenario": "odd-even-trunk",
        "now": iso(360),
        "topology": topology(
            paths,
            hosts=hosts,
            interfaces=[{"equipment": "uk-lon", "name": n, "speed_mbps": 1000} for n in ("ge-1/0/0", "ge-1/0/1")],
            trunks=[{"name": "ral-lag", "members": ["uk-lon:ge-1/0/0", "uk-lon:ge-1/0/1"]}],
        ),
        "measurements": ms,
        "expect": {
            "findings": [
                {"code": "TRUNK_IMBALANCE", "subject": {"trunk": "ral-lag"}},
                {"code": "TCP_ONLY_DEGRADATION", "subject": {"src": "CERN", "dst": "RAL"}},
            ],
            "absent": [{"code": "LOSS_LIMITED"}, {"code": "UNEXPLAINED_DEGRADATION"}],
        },
    }
    run(tmp_path, doc)
