"""Case study 1 of docs/diagnosis.md#case-studies: reverse-path loss on a shared backbone."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

from tests.scenarios.noise.noise import poisson
from tests.scenarios.regression.builder import MiB, Scenario, healthy_pair, scenario, segments, tcp_rate_bps
from tests.scenarios.regression.counters import Counter64Port


# --------------------------------------------------------------------------- case 1
@scenario(
    "case1-reverse-path-loss-shared-backbone",
    datetime(2026, 3, 3, 6, 0, tzinfo=UTC),
    carriers=("GEANT", "DFN", "GARR", "RENATER"),
    sites=("CERN", "FZK", "CNAF", "IN2P3"),
    routers=(
        "cern-border",
        "fzk-border",
        "cnaf-border",
        "in2p3-border",
        "geant-gva",
        "geant-par",
        "geant-fra",
        "geant-mil",
        "dfn-fra",
        "garr-mil",
        "renater-lyo",
    ),
)
def scenario_case1(sc: Scenario) -> None:
    """Case study 1 (LHC SC2, CERN-FZK and CERN-CNAF). From 08:10 a dirty patch panel on the GEANT Paris->Geneva fibre
    loses ~2-6 % of the frames towards Geneva: FZK->CERN and CNAF->CERN, which share that fibre, fall from ~940 Mb/s
    to a few tens of Mb/s (Mathis rate at 14-17 ms RTT) while CERN->FZK and CERN->CNAF stay near 900 Mb/s;
    IN2P3->CERN enters geant-gva through another port and stays clean. geant-gva:xe-1/0/0 (the receiving port of
    that fibre) counts CRC errors in proportion.
    """
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
    fibre_loss = sc.drifting(onset, None, mean=0.04, sd=0.012, low=0.02, high=0.06)

    window, mss = 16 * MiB, 8948
    for dst, rtt in (("FZK", 14.2), ("CNAF", 16.8)):
        for t in sc.every(30):
            # CERN->X: clean; its ACKs cross the bad fibre, which costs a few spurious retransmits only
            p_ack = fibre_loss(t)
            thr = sc.jitter(tcp_rate_bps(1e9, rtt, mss, window, 0, 0.94e9), 0.015) * (1 - 0.3 * p_ack)
            sc.tcp(
                t,
                "CERN",
                dst,
                thr,
                rtt_ms=sc.jitter(rtt, 0.004),
                mss=mss,
                window=window,
                retransmits=poisson(sc.rng, 2 + 400 * p_ack),
            )
            # X->CERN: the data crosses the bad fibre
            t2 = t + timedelta(seconds=20)
            p = fibre_loss(t2)
            # at a few per cent loss and ~15 ms CUBIC runs in its Reno-friendly region: the Reno ceiling applies
            rate = tcp_rate_bps(1e9, rtt, mss, window, p, 0.94e9, cc="reno")
            thr = sc.jitter(rate, 0.25 if p else 0.015)
            sc.tcp(
                t2,
                dst,
                "CERN",
                thr,
                rtt_ms=sc.jitter(rtt, 0.004),
                mss=mss,
                window=window,
                retransmits=round(p * segments(thr, 10, mss) / (1 - p)) + poisson(sc.rng, 1),
            )
        for t in sc.every(5, 40):
            sc.quiet_owamp(t, "CERN", dst, rtt, single_loss=0.03)
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
    for t in sc.every(1):
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
    sc.forbid_codes(
        "WINDOW_LIMITED",
        "LINK_CONGESTION",
        "MAINTENANCE_EXPLAINED",
        "UNEXPLAINED_DEGRADATION",
        "PATH_DOWN",
        "COUNTER_DISCONTINUITY",
        "CLOCK_UNSYNC",
        "DELAY_LEVEL_SHIFT",
        "PERIODIC_LOSS",
    )
