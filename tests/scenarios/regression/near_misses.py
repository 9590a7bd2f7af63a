"""Near misses: each sits just on the healthy side of one or more rules' criteria for a physical reason;
its ``expect.absent`` names the codes that must not be drawn, and ``expect.findings`` what must still be found."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

from tests.scenarios.noise.noise import poisson
from tests.scenarios.regression.builder import ALL_CODES, MiB, Scenario, hops_from, scenario, segments, tcp_rate_bps
from tests.scenarios.regression.counters import Counter64Port, octets_before_wrap
from tests.scenarios.regression.places import RAL_HOSTS


# --------------------------------------------------------------------------- near misses
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


@scenario(
    "near-miss-balanced-trunk-ral",
    datetime(2026, 3, 21, 0, 0, tzinfo=UTC),
    carriers=("GEANT", "JANET"),
    sites=("CERN", "RAL"),
    routers=("cern-border", "geant-gva", "geant-lon", "janet-lon", "ral-border"),
)
def scenario_near_miss_trunk(sc: Scenario) -> None:
    """Near misses of TRUNK_IMBALANCE, MTU_MISMATCH and TCP_ONLY_DEGRADATION. CERN<->RAL crosses ral-lag, two 10 Gb/s
    members bundled into 20 Gb/s between janet-lon and ral-border with layer-3+4 hashing, listed (and polled) at
    both ends. RAL's production inflow (~5 Gb/s, against ~2 Gb/s out: one end's 'out' is the other's 'in', so the
    ends are only compared with themselves) is shared 55 % / 45 % between the members, with a few per cent of
    minute-to-minute variance: the normal hashing variance of a few hundred flows, not broken load sharing (which
    leaves the least busy member below half of the busiest). Every nuttcp stream hashes onto one member, whatever
    the parity of the host address, and gets ~95 % of what production leaves free there (~7 Gb/s towards RAL, ~8.5
    Gb/s back): tests to odd and even hosts are equal, and 3 Gb/s UDP tests are clean. Jumbo frames end to end:
    hosts MTU 9000, tracepath PMTU 9000 and MSS 8948 (9000 - 40 - 12 of timestamps), members MTU 9192. Nothing to
    report.
    """
    cern_host = "192.0.2.12"
    hosts = RAL_HOSTS
    sc.host("CERN", "cern-dt02", cern_host)
    for name, addr in hosts:
        sc.host("RAL", name, addr)
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
    polls = sc.every(1)
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
    for i, t in enumerate(sc.every(30)):
        name, addr = hosts[i % 4]
        for when, src, dst, loads, sh, dh in (
            (t, "CERN", "RAL", towards_ral, cern_host, addr),
            (t + timedelta(minutes=5), "RAL", "CERN", from_ral, addr, cern_host),
        ):
            if when > sc.now:
                continue
            member = sc.rng.randrange(2)  # the hash of addresses and ports picks a member, not the parity
            thr = sc.jitter(min(9.4e9, 0.95 * _free_bps(loads, sc, when, member, speed)), 0.015)
            sc.tcp_test(
                when,
                src,
                dst,
                thr,
                rtt_ms=rtt,
                rtt_rel=0.004,
                mss=mss,
                window=window,
                retransmits=(0, 0, 1, 2),
                hosts=(sh, dh),
            )
            _carry(loads, sc, when, member, thr)
        u = t + timedelta(minutes=15)
        if u < sc.now:
            sc.udp(u, "CERN", "RAL", 3e9, sent, 0, datagram_bytes=8972, hosts=(cern_host, addr))
            _carry(towards_ral, sc, u, sc.rng.randrange(2), 3e9)
        tr = t + timedelta(minutes=20)
        if tr < sc.now:
            sc.traceroute(tr, "CERN", "RAL", hops, pmtu=9000)
            sc.traceroute(tr + timedelta(seconds=30), "RAL", "CERN", list(reversed(hops)), pmtu=9000)
    for t in sc.every(5, 50):
        for src, dst in (("CERN", "RAL"), ("RAL", "CERN")):
            sc.quiet_owamp(t, src, dst, rtt)
    for t in sc.every(60, 400):
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

    sc.forbid_codes(*ALL_CODES)


@scenario(
    "near-miss-reduced-redundancy-ndgf",
    datetime(2026, 3, 22, 0, 0, tzinfo=UTC),
    carriers=("GEANT", "NORDUNET"),
    sites=("CERN", "NDGF"),
    routers=("cern-border", "geant-gva", "geant-ham", "nordunet-cph", "ndgf-border"),
)
def scenario_near_miss_maintenance(sc: Scenario) -> None:
    """Near miss of MAINTENANCE_EXPLAINED (and of TRUNK_IMBALANCE, SHARED_EQUIPMENT_SUSPECT and PATH_DOWN). NORDUnet
    announced NORDUNET-CHG-2026-0322-004, impact reduced-redundancy, 02:00-04:00 UTC: the optic of
    nordunet-cph:xe-1/2/1, one member of ndgf-lag (2 x 10 Gb/s into NDGF), is replaced. The member is shut (oper
    down, counters still) from 02:00:30 to 03:57:40 and the bundle carries on over xe-1/2/0, whose load doubles from
    ~1.1 to ~2.2 Gb/s: a member out of service is not broken load sharing, load moved over from a sibling is not
    extra traffic through the bundle, and a bundle with a member left is not down. Unrelated to that work, the optic
    of geant-ham:et-2/0/0 (100 Gb/s, receiving from Geneva) fails at 02:25: CRC errors on ~1e-4 of the ~1000-byte
    frames, ~9e-4 of the jumbo TCP segments, until GEANT swaps it at 03:35. CERN->NDGF (RTT 24.2 ms) falls from ~8.5
    Gb/s to the CUBIC ceiling of that loss, ~250 Mb/s; NDGF->CERN is clean. The degradation lies inside the window
    and the path crosses the member under work, but reduced-redundancy work does not affect traffic: the degradation
    is not explained and INTERFACE_ERRORS and the asymmetry must alert.
    """
    sc.interface("geant-ham", "et-2/0/0", 700, 100000)
    members = ("xe-1/2/0", "xe-1/2/1")
    for i, m in enumerate(members):
        sc.interface("nordunet-cph", m, 1120 + i, 10000)
    sc.trunks.append({"name": "ndgf-lag", "members": [f"nordunet-cph:{m}" for m in members]})
    sc.path("CERN", "NDGF", 20000, ["cern-border", "geant-gva", "geant-ham:et-2/0/0", "nordunet-cph", "ndgf-border"])
    sc.window(
        "NORDUNET-CHG-2026-0322-004",
        "NORDUNET",
        "reduced-redundancy",
        "02:00-04:00",
        ["nordunet-cph:xe-1/2/1"],
        "optic replacement on xe-1/2/1 (ndgf-lag); traffic continues over xe-1/2/0",
    )
    shut, unshut = sc.at("02:00:30"), sc.at("03:57:40")
    fault, fixed = sc.at("02:25"), sc.at("03:35")

    def drained(t: datetime) -> bool:
        return shut <= t < unshut

    # the fraction of ~1000-byte frames the failing optic corrupts (it drifts, 0.6-1.5e-4)
    p_frame = sc.drifting(fault, fixed, mean=1.0e-4, sd=0.25e-4, low=0.6e-4, high=1.5e-4)

    speed, frame_bytes = 10e9, 1000.0
    polls = sc.every(1)
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
    for t in sc.every(30):
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
            thr = sc.jitter(rate, 0.12 if p else 0.015)
            sc.tcp_test(when, src, dst, thr, rtt_ms=rtt, mss=mss, window=window, p=p)
            _carry(loads, sc, when, member, thr)
    for t in sc.every(5, 20):
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
    sc.want_one_way("ASYMMETRIC_PATH", "CERN", "NDGF")
    # xe-1/2/0's load doubled because its sibling's flows moved over, not because other traffic arrived
    sc.forbid("SHARED_EQUIPMENT_SUSPECT", equipment="nordunet-cph")
    sc.forbid("SHARED_EQUIPMENT_SUSPECT", trunk="ndgf-lag")
    sc.forbid_codes(
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
    )


@scenario(
    "near-miss-long-fat-paths-bnl-asgc",
    datetime(2026, 3, 23, 0, 0, tzinfo=UTC),
    carriers=("GEANT", "ESNET", "ASGCNET"),
    sites=("CERN", "BNL", "ASGC"),
    routers=(
        "cern-border",
        "esnet-gva",
        "esnet-ams",
        "esnet-nyc",
        "bnl-border",
        "geant-ams",
        "asgc-ams",
        "asgc-tpe",
        "asgc-border",
    ),
)
def scenario_near_miss_long_paths(sc: Scenario) -> None:
    """Near misses of WINDOW_LIMITED, HOST_TCP_TUNING, DELAY_LEVEL_SHIFT, REORDERING and CLOCK_UNSYNC on two healthy
    long fat paths. CERN<->BNL (10 Gb/s, RTT 92 ms, BDP 115 MB): nuttcp -w128m gives a window limit of 128 MiB * 8 /
    92 ms = 11.7 Gb/s, above the capacity, so the streams reach 94 % of it (9.4 Gb/s, the hosts' limit) -- 80 % of
    the window limit, but the window does not bind; bnl-dt02's 128 MiB buffers cover the BDP. The minimum one-way
    delay (46.0 ms) wanders within 0.1 ms and each session's jitter is ~0.1 ms, no level change. CERN->BNL owamp
    sessions (600 packets 1 ms apart) see 0.02 % of the packets out of order (a router's parallel switching fabric
    now and then), five times below the threshold. CERN<->ASGC (10 Gb/s, 512 MiB windows): 152.6 ms one way out and
    152.1 ms back -- the two directions' light paths differ by 100 km -- summing to the 304.7 ms RTT, with owamp
    reporting a clock error of ~0.5 ms, negligible against delays of 150 ms. Nothing to report.
    """
    cern, bnl, asgc = "192.0.2.15", "198.51.100.82", "203.0.113.62"
    sc.host("CERN", "cern-dt05", cern)
    sc.host("BNL", "bnl-dt02", bnl)
    sc.host("ASGC", "asgc-dt02", asgc)
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
            for t in sc.every(30, off + d):
                r = sc.jitter(rtt, 0.002)
                thr = sc.jitter(tcp_rate_bps(10e9, r, mss, window, 0, 9.4e9), 0.015)
                sc.tcp_test(
                    t,
                    src,
                    dst,
                    thr,
                    rtt_ms=r,
                    rtt_rel=0,
                    mss=mss,
                    window=window,
                    retransmits=(0, 0, 0, 1),
                    hosts=(sh, dh),
                )
            for t in sc.every(60, 900 + off + d):
                sc.traceroute(t, src, dst, hops_from(src, a, hops))
    sessions = sc.every(5, 30)
    # 0.02 % of the CERN->BNL packets out of order: 9 of 73 x 600, one here and there
    reordering = set(sc.rng.sample(range(len(sessions)), round(2e-4 * 600 * len(sessions))))
    burst = {"packet_interval_s": 0.001}  # the BNL sessions send their packets 1 ms apart
    for i, t in enumerate(sessions):
        for src, dst in (("CERN", "BNL"), ("BNL", "CERN")):
            reordered = 1 if src == "CERN" and i in reordering else 0
            # a queue of 0.15-0.25 ms: jitter ~0.1 ms
            sc.quiet_owamp(
                t, src, dst, owd_ms=46.0, spread_ms=0.1, queue_ms=(0.15, 0.25), reordered=reordered, extra=burst
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
    for t in sc.every(60, 300):
        sc.host_tcp(t, "CERN", "cern-dt05", buf=512 * MiB)
        sc.host_tcp(t + timedelta(seconds=20), "BNL", "bnl-dt02", buf=128 * MiB)
        sc.host_tcp(t + timedelta(seconds=40), "ASGC", "asgc-dt02", buf=512 * MiB)

    sc.forbid_codes(*ALL_CODES)


@scenario(
    "near-miss-busy-link-random-loss-lrz",
    datetime(2026, 3, 24, 0, 0, tzinfo=UTC),
    carriers=("GEANT", "DFN"),
    sites=("CERN", "LRZ"),
    routers=("cern-border", "geant-gva", "geant-fra"),
)
def scenario_near_miss_busy_link(sc: Scenario) -> None:
    """Near misses of LINK_CONGESTION, PERIODIC_LOSS and COUNTER_DISCONTINUITY. CERN<->LRZ (Tier-2, 1 Gb/s access, RTT
    12.6 ms) crosses geant-fra:xe-2/0/0, GEANT's 10 Gb/s port towards DFN. At 02:00 a data campaign raises its
    outbound load from ~50 % to ~85 % (83-89.6 %): busy but below the 90 % where queues form, and the ~1.5 Gb/s left
    free still carries the 940 Mb/s tests, which stay healthy. CERN->LRZ owamp runs continuously (one 600-packet
    session per minute, like case 2) and loses single packets at random moments -- a Poisson process of one drop per
    ~12 min on average (1.4e-4 of the packets), some 30 loss events with no period -- while LRZ's agent reads /proc
    every 300 s; LRZ->CERN (a session every 5 min) loses a packet now and then. At 1.4e-4 the CUBIC ceiling at 12.6
    ms is 1.2 Gb/s: TCP does not notice (a few retransmits per test). The port's ifHCOutOctets crosses 2^64 at 03:17
    (a wrap: the rate across it is the ~8.4 Gb/s the port carries) and geant-fra's sysUpTime crosses 2^32 ticks
    (497.1 days) at 01:44:30: no reboot, every interval keeps its rate and no counter discontinuity may be reported.
    """
    cern, lrz = "192.0.2.16", "198.51.100.110"
    sc.host("CERN", "cern-dt06", cern)
    sc.host("LRZ", "lrz-ps01", lrz)
    sc.router("dfn-fra", carrier="DFN", model="MX960")
    sc.add_routers("dfn-gar", "lrz-border")
    sc.interface("geant-fra", "xe-2/0/0", 2200, 10000)  # towards dfn-fra
    sc.interface("geant-fra", "et-1/0/0", 1000, 100000)  # from geant-gva
    sc.path("CERN", "LRZ", 1000, ["cern-border", "geant-gva", "geant-fra:xe-2/0/0", "dfn-fra", "dfn-gar", "lrz-border"])
    sc.agents.append({"site": "LRZ", "collector": "host_tcp", "interval_s": 300})

    rtt, mss, window = 12.6, 8948, 16 * MiB
    polls = sc.every(1)
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

    for t in sc.every(30):
        for when, src, dst, sh, dh, loads in (
            (t, "CERN", "LRZ", cern, lrz, out_bps),
            (t + timedelta(seconds=30), "LRZ", "CERN", lrz, cern, in_bps),
        ):
            p = p_of[(src, dst)]  # the drops hit TCP segments as often as probe packets
            thr = sc.jitter(tcp_rate_bps(1e9, rtt, mss, window, p, 0.94e9), 0.01)
            sc.tcp(
                when,
                src,
                dst,
                thr,
                rtt_ms=sc.jitter(rtt, 0.004),
                mss=mss,
                window=window,
                retransmits=poisson(sc.rng, p * segments(thr, 10, mss)),
                hosts=(sh, dh),
            )
            _carry(loads, sc, when, 0, thr)
    for (src, dst), every_min in ((("CERN", "LRZ"), 1), (("LRZ", "CERN"), 5)):
        times = drop_times[(src, dst)]
        for t in sc.every(every_min, 0 if src == "CERN" else 20):
            lost = sum(1 for d in times if t <= d < t + timedelta(seconds=60))  # a session lasts 60 s
            sc.quiet_owamp(t, src, dst, rtt, lost=lost)
    for t in sc.every(5, 130):
        sc.host_tcp(t, "LRZ", "lrz-ps01", buf=32 * MiB)
    for t in sc.every(60, 400):
        sc.host_tcp(t, "CERN", "cern-dt06", buf=64 * MiB)

    # Counter64 wrap: ifHCOutOctets starts where the traffic up to the middle of the 03:17 interval brings it to 2^64
    wrap_at = sc.at("03:17")
    start_out = octets_before_wrap(polls, {t: bps for t, (bps,) in out_bps.items()}, wrap_at)
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

    sc.forbid_codes(*ALL_CODES)
