"""Single symptoms of elements and routes: interface errors, congestion, route change, unexplained."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

from tests.scenarios.noise.noise import poisson
from tests.scenarios.regression.builder import MiB, Scenario, hops_from, scenario, tcp_rate_bps
from tests.scenarios.regression.counters import Counter64Port


@scenario(
    "interface-errors-cnaf",
    datetime(2026, 3, 17, 0, 0, tzinfo=UTC),
    carriers=("GEANT", "GARR"),
    sites=("CERN", "CNAF"),
    routers=("cern-border", "geant-gva", "geant-mil"),
)
def scenario_interface_errors(sc: Scenario) -> None:
    """CERN->CNAF: from 02:30 a dirty connector on garr-mil:xe-0/0/3 (receiving from GEANT) corrupts a growing share of
    the frames: in_errors climb from ~1/s to ~40/s of ~370 k frames/s (1e-4 of 1000-byte frames, so ~9e-4 of the
    9000-byte TCP segments). 600 small owamp packets per session see none of it; TCP retransmits do, and one stream
    at 11.8 ms drops from 9.3 Gb/s to the CUBIC ceiling of that loss, a few hundred Mb/s. CNAF->CERN uses the other
    fibre of the pair and stays clean.
    """
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
    for t in sc.every(30):
        frames = traffic / 8 / frame_bytes
        p_tcp = errors_per_s(t) / frames * (mss + 52) / frame_bytes  # corruption scales with the frame length
        thr = sc.jitter(tcp_rate_bps(10e9, rtt, mss, window, p_tcp, 9.3e9), 0.1 if p_tcp else 0.015)
        sc.tcp_test(t, "CERN", "CNAF", thr, rtt_ms=rtt, mss=mss, window=window, p=p_tcp)
        back = t + timedelta(seconds=30)
        sc.tcp_test(back, "CNAF", "CERN", sc.jitter(9.3e9, 0.015), rtt_ms=rtt, mss=mss, window=window)
    for t in sc.every(5, 40):
        for src, dst in (("CERN", "CNAF"), ("CNAF", "CERN")):
            sc.quiet_owamp(t, src, dst, rtt)
    port = Counter64Port(
        "garr-mil",
        "xe-0/0/3",
        86400 * 144.2,
        5_550_118_204_337_001,
        4_020_991_337_184_220,
        mean_frame_bytes=frame_bytes,
    )
    port.c["in_errors"] = 17
    for i, t in enumerate(sc.every(1)):
        if i:
            port.advance(
                60, traffic + sc.rng.gauss(0, 0.1e9), 2.5e9 + sc.rng.gauss(0, 0.1e9), in_errors_per_s=errors_per_s(t)
            )
        port.poll(sc, t)

    sc.want("INTERFACE_ERRORS", equipment="garr-mil", interface="xe-0/0/3")
    sc.want_one_way("ASYMMETRIC_PATH", "CERN", "CNAF")
    sc.forbid_codes(
        "UNEXPLAINED_DEGRADATION",
        "LINK_CONGESTION",
        "COUNTER_DISCONTINUITY",
        "PATH_DOWN",
        "WINDOW_LIMITED",
        "TCP_ONLY_DEGRADATION",
    )


@scenario(
    "link-congestion-pic",
    datetime(2026, 3, 18, 0, 0, tzinfo=UTC),
    carriers=("GEANT", "REDIRIS"),
    sites=("CERN", "PIC"),
    routers=("cern-border", "geant-gva", "geant-mar", "rediris-bcn", "pic-border"),
)
def scenario_link_congestion(sc: Scenario) -> None:
    """CERN->PIC: rediris-bcn:te-0/0/1, the 10 Gb/s link into PIC, carries 4-6 Gb/s until 02:30, when a
    data-distribution campaign fills it to 92-99 % with output discards. The single nuttcp stream competes with
    hundreds of flows: 0.3-0.8 % loss (owamp sees it too), queueing adds 2-6 ms to the median delay (not to the
    minimum), and the stream gets a few hundred Mb/s. PIC->CERN is not affected.
    """
    sc.interface("rediris-bcn", "te-0/0/1", 601, 10000)
    sc.path("CERN", "PIC", 10000, ["cern-border", "geant-gva", "geant-mar", "rediris-bcn:te-0/0/1", "pic-border"])
    busy = sc.at("02:30")
    rtt, mss, window = 13.9, 8948, 64 * MiB
    for t in sc.every(30):
        if t >= busy:
            p = sc.rng.uniform(0.003, 0.008)
            thr = sc.jitter(tcp_rate_bps(10e9, rtt + 4, mss, window, p, 9.3e9), 0.15)
            # queueing adds ~4 ms to the RTT; the retransmits are the losses, nothing more
            sc.tcp_test(t, "CERN", "PIC", thr, rtt_ms=rtt + 4, rtt_rel=0.05, mss=mss, window=window, p=p, retransmits=0)
        else:
            sc.tcp_test(t, "CERN", "PIC", sc.jitter(9.3e9, 0.015), rtt_ms=rtt, mss=mss, window=window)
        back = t + timedelta(seconds=30)
        sc.tcp_test(back, "PIC", "CERN", sc.jitter(9.3e9, 0.015), rtt_ms=rtt, mss=mss, window=window)
    for t in sc.every(5, 20):
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
            sc.quiet_owamp(t, "CERN", "PIC", rtt)
        sc.quiet_owamp(t + timedelta(seconds=70), "PIC", "CERN", rtt)
    port = Counter64Port(
        "rediris-bcn", "te-0/0/1", 86400 * 301.7, 901_337_221_004_118, 11_902_774_118_330_402, mean_frame_bytes=1400
    )
    for i, t in enumerate(sc.every(1)):
        if i:
            out = sc.rng.uniform(9.2e9, 9.9e9) if t >= busy else sc.rng.uniform(4.0e9, 6.0e9)
            drops = sc.rng.uniform(300, 1500) if t >= busy else 0.0
            port.advance(60, 1.2e9 + sc.rng.gauss(0, 0.05e9), out, out_discards_per_s=drops)
        port.poll(sc, t)

    sc.want("LINK_CONGESTION", equipment="rediris-bcn", interface="te-0/0/1")
    sc.forbid("ASYMMETRIC_PATH", src="PIC", dst="CERN")
    sc.forbid_codes(
        "UNEXPLAINED_DEGRADATION",
        "INTERFACE_ERRORS",
        "COUNTER_DISCONTINUITY",
        "PATH_DOWN",
        "DELAY_LEVEL_SHIFT",
        "WINDOW_LIMITED",
        "MAINTENANCE_EXPLAINED",
    )


@scenario(
    "route-change-fnal",
    datetime(2026, 3, 19, 0, 0, tzinfo=UTC),
    carriers=("USLHCNET", "STARLIGHT", "ESNET"),
    sites=("CERN", "FNAL"),
)
def scenario_route_change(sc: Scenario) -> None:
    """CERN<->FNAL normally crosses the USLHCNet Geneva-Chicago link (RTT 118 ms). At 03:05 that link fails and IP
    routing moves both directions via Amsterdam and New York: traceroutes show the new hops and the RTT becomes 131
    ms (+6.5 ms one way, ~1300 km of fibre). The 256 MiB window still covers the BDP, so throughput is unchanged.
    """
    sc.router("cern-border", site="CERN", model="MX960")
    for name in ("uslhcnet-gva", "uslhcnet-chi", "uslhcnet-ams", "uslhcnet-nyc"):
        sc.router(name, carrier="USLHCNET", model="MX480")
    sc.add_routers("starlight", "esnet-chi", "fnal-border")
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
        for t in sc.every(30, off):
            rtt = 131.0 if t >= failover else 118.0
            sc.tcp_test(t, src, dst, sc.jitter(9.2e9, 0.015), rtt_ms=rtt, rtt_rel=0.002, mss=mss, window=window)
            tr = t + timedelta(seconds=240)
            route = detour if tr >= failover else primary
            sc.traceroute(tr, src, dst, hops_from(src, "CERN", route))
        for t in sc.every(5, 60 + off):
            owd = 65.5 if t >= failover else 59.0
            sc.quiet_owamp(t, src, dst, owd_ms=owd, spread_ms=0.03, queue_ms=(0.05, 0.15))

    sc.want_both_ways("ROUTE_CHANGE", "CERN", "FNAL")
    sc.forbid_codes(
        "DELAY_LEVEL_SHIFT",
        "UNEXPLAINED_DEGRADATION",
        "CLOCK_UNSYNC",
        "PATH_DOWN",
        "WINDOW_LIMITED",
        "ASYMMETRIC_PATH",
    )


@scenario(
    "unexplained-degradation-fzk",
    datetime(2026, 3, 20, 0, 0, tzinfo=UTC),
    carriers=("GEANT", "DFN"),
    sites=("CERN", "FZK"),
    routers=("cern-border", "geant-gva", "geant-fra", "dfn-fra", "fzk-border"),
)
def scenario_unexplained(sc: Scenario) -> None:
    """CERN->FZK (10 Gb/s, RTT 9.8 ms, 64 MiB window) runs at ~9.3 Gb/s until 02:40, then at 4.2-4.8 Gb/s: no loss in
    owamp or TCP retransmits, the same RTT and route, no SNMP symptom, no maintenance, FZK->CERN unchanged. None of
    the rules explains it; the engine must say so rather than stay silent.
    """
    hops = ["cern-border", "geant-gva", "geant-fra", "dfn-fra", "fzk-border"]
    sc.path("CERN", "FZK", 10000, hops)
    onset = sc.at("02:40")
    rtt, mss, window = 9.8, 8948, 64 * MiB
    for src, dst, off in (("CERN", "FZK", 0), ("FZK", "CERN", 30)):
        for t in sc.every(30, off):
            slow = src == "CERN" and t >= onset
            thr = sc.rng.uniform(4.2e9, 4.8e9) if slow else sc.jitter(9.3e9, 0.015)
            sc.tcp_test(t, src, dst, thr, rtt_ms=rtt, mss=mss, window=window)
            sc.traceroute(t + timedelta(seconds=300), src, dst, hops_from(src, "CERN", hops))
        for t in sc.every(5, 10 + off):
            sc.quiet_owamp(t, src, dst, rtt)

    sc.want_one_way("UNEXPLAINED_DEGRADATION", "CERN", "FZK")
    sc.forbid_codes(
        "LOSS_LIMITED",
        "WINDOW_LIMITED",
        "ASYMMETRIC_PATH",
        "PATH_DOWN",
        "SHARED_EQUIPMENT_SUSPECT",
        "ROUTE_CHANGE",
        "MAINTENANCE_EXPLAINED",
        "TCP_ONLY_DEGRADATION",
    )
