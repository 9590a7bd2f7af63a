"""Healthy paths and single symptoms of a path: clock, MTU, reordering, path down."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.scenarios.regression.builder import ALL_CODES, MiB, Scenario, healthy_pair, hops_from, scenario, segments
from tests.scenarios.regression.counters import Counter64Port


# --------------------------------------------------------------------------- healthy and single-symptom paths
@scenario(
    "healthy-long-fat-path-bnl",
    datetime(2026, 3, 12, 0, 0, tzinfo=UTC),
    carriers=("GEANT", "ESNET"),
    sites=("CERN", "BNL"),
    routers=("cern-border", "esnet-gva", "esnet-ams", "esnet-nyc", "bnl-border"),
)
def scenario_healthy(sc: Scenario) -> None:
    """A clean long fat path: CERN<->BNL, 10 Gb/s, RTT 92 ms (BDP 115 MB), hosts with 256 MiB buffers and a 256 MiB
    window (window limit 23 Gb/s): single streams reach 9.2-9.5 Gb/s, owamp loses a stray packet now and then (as on
    any shared path), traceroutes never change. Nothing to report.
    """
    sc.host("CERN", "cern-dt03", "192.0.2.13")
    sc.host("BNL", "bnl-dt01", "198.51.100.80")
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
    for t in sc.every(60, 600):
        sc.traceroute(t, "CERN", "BNL", hops)
        sc.traceroute(t + timedelta(seconds=20), "BNL", "CERN", list(reversed(hops)))
        sc.host_tcp(t, "CERN", "cern-dt03", buf=256 * MiB)
        sc.host_tcp(t + timedelta(seconds=30), "BNL", "bnl-dt01", buf=256 * MiB)
    sc.forbid_codes(*ALL_CODES)


@scenario(
    "clock-unsync-pic",
    datetime(2026, 3, 13, 0, 0, tzinfo=UTC),
    carriers=("GEANT", "REDIRIS", "DFN"),
    sites=("CERN", "PIC", "FZK"),
    routers=(
        "cern-border",
        "geant-gva",
        "geant-mar",
        "geant-fra",
        "rediris-bcn",
        "dfn-fra",
        "pic-border",
        "fzk-border",
    ),
)
def scenario_clock_unsync(sc: Scenario) -> None:
    """The owamp host at PIC loses its NTP sources at 02:20 and a falseticker steps its clock 4.6 ms ahead; from then
    owamp reports a clock error estimate that keeps growing. CERN->PIC reads 6.95 + 4.6 = 11.55 ms, PIC->CERN 2.35
    ms: each direction's minimum delay 'jumps' without any route change, but the sum stays 13.9 ms = the RTT.
    CERN<->FZK is measured from the same CERN host and is fine, so the clock at PIC is the one to fix. No delay
    finding may be drawn from PIC's one-way delays.
    """
    pic = ["cern-border", "geant-gva", "geant-mar", "rediris-bcn", "pic-border"]
    sc.path("CERN", "PIC", 10000, pic)
    sc.path("CERN", "FZK", 10000, ["cern-border", "geant-gva", "geant-fra", "dfn-fra", "fzk-border"])
    step_at = sc.at("02:20")
    mss, window, rtt = 8948, 64 * MiB, 13.9
    for src, dst, off in (("CERN", "PIC", 0), ("PIC", "CERN", 30)):
        sign = 1 if dst == "PIC" else -1  # PIC's clock ahead: arrivals at PIC look late, departures early
        for t in sc.every(30, off):
            sc.tcp_test(t, src, dst, sc.jitter(9.35e9, 0.015), rtt_ms=rtt, rtt_rel=0.002, mss=mss, window=window)
            sc.traceroute(t + timedelta(seconds=300), src, dst, hops_from(src, "CERN", pic))
        for t in sc.every(5, 15 + off):
            offset = 4.6 if t >= step_at else 0.0
            err = 0.15 + (12 + 0.9 * (t - step_at).total_seconds() / 60 if t >= step_at else 0.0)
            owd = 6.95 + sign * offset
            sc.quiet_owamp(t, src, dst, owd_ms=owd, below_ms=0.02, spread_ms=0.03, clock_error_ms=err)
    healthy_pair(sc, "CERN", "FZK", rtt_ms=9.8, cap_bps=10e9, tcp_offset_s=60, owamp_offset_s=45)

    sc.want("CLOCK_UNSYNC", site="PIC")
    sc.want_both_ways("CLOCK_UNSYNC", "CERN", "PIC")
    sc.forbid("CLOCK_UNSYNC", site="CERN")
    sc.forbid("CLOCK_UNSYNC", site="FZK")
    sc.forbid("CLOCK_UNSYNC", src="CERN", dst="FZK")
    sc.forbid("CLOCK_UNSYNC", src="FZK", dst="CERN")
    sc.forbid_codes("DELAY_LEVEL_SHIFT", "ROUTE_CHANGE", "UNEXPLAINED_DEGRADATION", "ASYMMETRIC_PATH", "PATH_DOWN")


@scenario(
    "mtu-mismatch-in2p3",
    datetime(2026, 3, 14, 0, 0, tzinfo=UTC),
    carriers=("GEANT", "RENATER"),
    sites=("CERN", "IN2P3"),
    routers=("cern-border", "geant-gva", "renater-lyo", "in2p3-border"),
)
def scenario_mtu(sc: Scenario) -> None:
    """CERN<->IN2P3 is a jumbo-frame path (hosts MTU 9000, MSS 8948). At 02:10 RENATER swaps a line card in renater-lyo
    and the new port comes up with the default MTU 1500: tracepath reports a path MTU of 1500, PMTU discovery drops
    the MSS to 1448, and single-stream throughput falls a little (9.4 -> ~8.6 Gb/s, more packets per second); the
    Mathis ceiling at any given loss is now 6.2 times lower.
    """
    sc.host("CERN", "cern-dt04", "192.0.2.14")
    sc.host("IN2P3", "ccdt01", "198.51.100.90")
    hops = ["cern-border", "geant-gva", "renater-lyo", "in2p3-border"]
    sc.path("CERN", "IN2P3", 10000, hops)
    swap = sc.at("02:10")
    rtt, window = 4.1, 32 * MiB
    for src, dst, off, sh, dh in (
        ("CERN", "IN2P3", 0, "192.0.2.14", "198.51.100.90"),
        ("IN2P3", "CERN", 20, "198.51.100.90", "192.0.2.14"),
    ):
        for t in sc.every(30, off):
            small = t >= swap
            thr = sc.jitter(8.6e9 if small else 9.4e9, 0.02)
            mss = 1448 if small else 8948
            sc.tcp_test(
                t,
                src,
                dst,
                thr,
                rtt_ms=rtt,
                rtt_rel=0.005,
                mss=mss,
                window=window,
                retransmits=(0, 0, 1, 2),
                hosts=(sh, dh),
            )
            route = hops_from(src, "CERN", hops)
            sc.traceroute(
                t + timedelta(seconds=200), src, dst, route, pmtu=1500 if t + timedelta(seconds=200) >= swap else 9000
            )
        for t in sc.every(5, 35 + off):
            sc.quiet_owamp(t, src, dst, rtt, below_ms=0.03, queue_ms=(0.02, 0.06))
    for t in sc.every(60, 500):
        sc.host_tcp(t, "CERN", "cern-dt04", buf=128 * MiB)
        sc.host_tcp(t + timedelta(seconds=30), "IN2P3", "ccdt01", buf=128 * MiB)

    sc.want_both_ways("MTU_MISMATCH", "CERN", "IN2P3")
    sc.forbid_codes(
        "UNEXPLAINED_DEGRADATION",
        "LOSS_LIMITED",
        "WINDOW_LIMITED",
        "ROUTE_CHANGE",
        "HOST_TCP_TUNING",
        "ASYMMETRIC_PATH",
        "PATH_DOWN",
    )


@scenario(
    "reordering-triumf",
    datetime(2026, 3, 15, 0, 0, tzinfo=UTC),
    carriers=("GEANT", "CANARIE"),
    sites=("CERN", "TRIUMF"),
    routers=("cern-border", "geant-ams", "canarie-ams", "canarie-mtl", "canarie-van", "triumf-border"),
)
def scenario_reordering(sc: Scenario) -> None:
    """CERN->TRIUMF (10 Gb/s, RTT 150 ms). At 02:05 a misconfiguration enables per-packet load sharing over the two
    CANARIE transatlantic waves, whose lengths differ by a few ms. The reordering owamp sessions of this path send
    their 600 packets 1 ms apart (bursts; at 10 packets/s only >100 ms of delay difference could reorder): 0.8-2.5 %
    of them arrive out of order. No packet is lost, but TCP takes the reordering for loss: spurious fast
    retransmits, and the single stream falls from ~9.2 Gb/s to 1.5-3 Gb/s. TRIUMF->CERN is hashed per flow and
    unaffected.
    """
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
        for t in sc.every(30, off):
            if src == "CERN" and t >= start:
                thr = sc.rng.uniform(1.5e9, 3.0e9)
                retrans = round(segments(thr, 10, mss) * sc.rng.uniform(0.002, 0.006))
            else:
                thr, retrans = sc.jitter(9.2e9, 0.015), sc.rng.choice([0, 0, 1])
            sc.tcp(t, src, dst, thr, rtt_ms=sc.jitter(rtt, 0.002), mss=mss, window=window, retransmits=retrans)
        for t in sc.every(5, 70 + off):
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

    sc.want_one_way("REORDERING", "CERN", "TRIUMF")
    sc.forbid_codes("LOSS_LIMITED", "UNEXPLAINED_DEGRADATION", "PATH_DOWN", "WINDOW_LIMITED", "PERIODIC_LOSS")


@scenario(
    "path-down-ndgf",
    datetime(2026, 3, 16, 0, 0, tzinfo=UTC),
    carriers=("GEANT", "NORDUNET"),
    sites=("CERN", "NDGF"),
    routers=("cern-border", "geant-gva", "geant-ham", "nordunet-cph", "ndgf-border"),
)
def scenario_path_down(sc: Scenario) -> None:
    """CERN<->NDGF: at 03:12 a ship's anchor cuts the submarine cable between Hamburg and Copenhagen.
    nordunet-cph:xe-1/2/0 goes oper-down (SNMP, every 60 s), its counters stop, every nuttcp test fails to connect
    and every owamp session loses all 600 packets -- still so at 06:00. No maintenance is announced. An outage is
    not a loss rate.
    """
    sc.interface("nordunet-cph", "xe-1/2/0", 1120, 10000)
    sc.path("CERN", "NDGF", 10000, ["cern-border", "geant-gva", "geant-ham", "nordunet-cph:xe-1/2/0", "ndgf-border"])
    cut = sc.at("03:12")
    rtt, mss, window = 24.2, 8948, 64 * MiB
    for src, dst, off in (("CERN", "NDGF", 0), ("NDGF", "CERN", 30)):
        for t in sc.every(30, off):
            if t >= cut:
                sc.tcp_failed(t, src, dst, "nuttcp-t: connect: Connection timed out")
            else:
                sc.tcp_test(t, src, dst, sc.jitter(9.3e9, 0.015), rtt_ms=rtt, mss=mss, window=window)
        for t in sc.every(5, 20 + off):
            if t >= cut:
                sc.owamp_down(t, src, dst)
            else:
                sc.quiet_owamp(t, src, dst, rtt)
    port = Counter64Port("nordunet-cph", "xe-1/2/0", 86400 * 63.0, 2_771_004_118_220_118, 2_519_880_300_117_445)
    for i, t in enumerate(sc.every(1)):
        down = t >= cut
        if i:
            port.advance(
                60, 0 if down else 3.1e9 + sc.rng.gauss(0, 0.15e9), 0 if down else 2.7e9 + sc.rng.gauss(0, 0.15e9)
            )
        port.poll(sc, t, oper="down" if down else "up")

    sc.want_both_ways("PATH_DOWN", "CERN", "NDGF")
    sc.forbid_codes(
        "LOSS_LIMITED",
        "MAINTENANCE_EXPLAINED",
        "UNEXPLAINED_DEGRADATION",
        "COUNTER_DISCONTINUITY",
        "LINK_CONGESTION",
        "ASYMMETRIC_PATH",
        "INTERFACE_ERRORS",
        "PERIODIC_LOSS",
        "SHARED_EQUIPMENT_SUSPECT",
    )
