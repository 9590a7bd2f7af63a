"""Case study 3 of docs/diagnosis.md#case-studies: a trunk member losing the odd-hashed flows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.scenarios.regression.builder import MiB, Scenario, scenario, segments
from tests.scenarios.regression.counters import Counter64Port
from tests.scenarios.regression.places import RAL_HOSTS


# --------------------------------------------------------------------------- case 3
@scenario(
    "case3-trunk-odd-even-ral",
    datetime(2026, 3, 5, 6, 0, tzinfo=UTC),
    carriers=("GEANT", "JANET"),
    sites=("CERN", "RAL"),
    routers=("cern-border", "geant-gva", "geant-lon", "janet-lon", "ral-border"),
)
def scenario_case3(sc: Scenario) -> None:
    """Case study 3 (LHC SC2, RAL). CERN->RAL crosses ral-lag, two 1 Gb/s members bundled into 2 Gb/s at janet-lon.
    From 08:10 the hashing sends flows to odd host addresses over a broken member: TCP to ral-dt01 and ral-dt03 (odd
    last octet) becomes slow and unstable with many retransmissions, TCP to ral-dt02 and ral-dt04 stays at ~940 Mb/s
    (one member's line rate), and 800 Mb/s UDP tests to every host are clean. The member counters show the broken
    member carrying far less than the other. RAL->CERN is fine.
    """
    hosts = RAL_HOSTS
    sc.host("CERN", "cern-dt02", "192.0.2.12")
    for name, addr in hosts:
        sc.host("RAL", name, addr)
    sc.interface("janet-lon", "ge-1/0/0", 2100, 1000, mtu=1500)
    sc.interface("janet-lon", "ge-1/0/1", 2101, 1000, mtu=1500)
    sc.trunks.append({"name": "ral-lag", "members": ["janet-lon:ge-1/0/0", "janet-lon:ge-1/0/1"]})
    sc.path("CERN", "RAL", 2000, ["cern-border", "geant-gva", "geant-lon", "janet-lon", "ral-border"])

    onset = sc.at("08:10")
    rtt, mss, window = 11.4, 1448, 16 * MiB
    line = 1e9 * 1448 / 1538  # TCP goodput of one 1 Gb/s member with 1500-byte frames
    for i, t in enumerate(sc.every(30)):
        name, addr = hosts[i % 4]
        odd = int(addr.rsplit(".", 1)[1]) % 2 == 1
        if t >= onset and odd:
            thr = sc.rng.uniform(0.04, 0.32) * 1e9  # slow and unstable
            retrans = round(segments(thr, 10, mss) * sc.rng.uniform(0.01, 0.04))
        else:
            thr = sc.jitter(line, 0.01)
            retrans = sc.rng.choice([0, 0, 1, 2])
        sc.tcp_test(
            t,
            "CERN",
            "RAL",
            thr,
            rtt_ms=rtt,
            rtt_rel=0.004,
            mss=mss,
            window=window,
            retransmits=retrans,
            hosts=("192.0.2.12", addr),
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
                hosts=("192.0.2.12", addr),
            )
        back = t + timedelta(minutes=5)
        thr = sc.jitter(line, 0.01)
        sc.tcp_test(
            back, "RAL", "CERN", thr, rtt_ms=rtt, rtt_rel=0.004, mss=mss, window=window, hosts=(addr, "192.0.2.12")
        )
    for t in sc.every(5, 50):
        for src, dst in (("CERN", "RAL"), ("RAL", "CERN")):
            sc.quiet_owamp(t, src, dst, rtt)
    m0 = Counter64Port("janet-lon", "ge-1/0/0", 86400 * 41.2, 912_334_201_778_112, 288_114_900_001_732, 1300)
    m1 = Counter64Port("janet-lon", "ge-1/0/1", 86400 * 41.2, 899_101_553_020_990, 281_447_010_553_118, 1300)
    for i, t in enumerate(sc.every(1)):
        if i:
            towards_ral = 1.05e9 + sc.rng.gauss(0, 0.05e9)  # RAL's production inflow over the 2 Gb/s bundle
            crawl = 1.0 if t < onset else sc.rng.uniform(0.2, 0.35)  # flows hashed onto the broken member crawl
            m0.advance(60, sc.rng.gauss(0.21e9, 0.02e9), towards_ral * 0.5)
            m1.advance(60, sc.rng.gauss(0.2e9, 0.02e9), towards_ral * 0.5 * crawl)
        m0.poll(sc, t)
        m1.poll(sc, t + timedelta(seconds=1))

    sc.want("TRUNK_IMBALANCE", trunk="ral-lag")
    sc.want_one_way("TCP_ONLY_DEGRADATION", "CERN", "RAL")
    sc.forbid_codes(
        "LOSS_LIMITED",
        "ASYMMETRIC_PATH",
        "UNEXPLAINED_DEGRADATION",
        "INTERFACE_ERRORS",
        "LINK_CONGESTION",
        "WINDOW_LIMITED",
        "PATH_DOWN",
    )
