"""Case study 2 of docs/diagnosis.md#case-studies: periodic loss at a monitoring receiver."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.scenarios.regression.builder import MiB, Scenario, scenario, tcp_rate_bps


# --------------------------------------------------------------------------- case 2
@scenario(
    "case2-periodic-loss-monitoring-receiver",
    datetime(2026, 3, 4, 0, 0, tzinfo=UTC),
    carriers=("GEANT", "DFN"),
    sites=("CERN", "FZK"),
    routers=("cern-border", "fzk-border", "geant-gva", "geant-fra", "dfn-fra"),
)
def scenario_case2(sc: Scenario) -> None:
    """Case study 2 (LHC SC2, FZK->CERN after the patch panel was fixed). At 02:00 a new monitoring agent starts on the
    receiving transfer host cern-dt01; its host_tcp collector reads /proc/net/tcp every 300 s, and each read drops
    10-70 % of the packets arriving in the following second. owamp runs continuously as perfSONAR powstream does
    (one 600-packet session at 10/s per minute), so each read costs 1-7 packets of the session in progress: one
    lossy session in five, FZK->CERN only. The sender side (CERN->FZK, received at FZK) is clean. The 10 s nuttcp
    tests at :00 and :30 never overlap a read.
    """
    sc.host("CERN", "cern-dt01", "192.0.2.10")
    sc.host("FZK", "fzk-dt01", "198.51.100.20")
    sc.path("FZK", "CERN", 10000, ["fzk-border", "dfn-fra", "geant-fra", "geant-gva", "cern-border"])
    sc.agents.append({"site": "CERN", "collector": "host_tcp", "interval_s": 300})

    rtt, mss, window = 9.8, 8948, 64 * MiB
    agent_start = sc.at("02:00:40")
    reads = [agent_start + timedelta(seconds=300 * i) for i in range(int(4 * 3600 / 300))]
    for r in reads:
        sc.host_tcp(r, "CERN", "cern-dt01", buf=256 * MiB)
    for t in sc.every(30):
        for src, dst, sh, dh in (
            ("FZK", "CERN", "198.51.100.20", "192.0.2.10"),
            ("CERN", "FZK", "192.0.2.10", "198.51.100.20"),
        ):
            thr = sc.jitter(tcp_rate_bps(10e9, rtt, mss, window, 0, 9.4e9), 0.015)
            when = t + timedelta(seconds=0 if src == "FZK" else 15)
            sc.tcp_test(
                when, src, dst, thr, rtt_ms=rtt, mss=mss, window=window, retransmits=(0, 0, 1, 2, 3), hosts=(sh, dh)
            )
    # a few random single-packet losses on both directions, as on any shared path
    stray = {("FZK", "CERN"): {sc.at("00:47"), sc.at("04:23")}, ("CERN", "FZK"): {sc.at("01:31"), sc.at("03:52")}}
    for t in sc.every(1):
        for src, dst in (("FZK", "CERN"), ("CERN", "FZK")):
            lost = 1 if t in stray[(src, dst)] else 0
            if dst == "CERN" and any(t <= r < t + timedelta(seconds=60) for r in reads):
                lost += sc.rng.randint(1, 7)  # 10-70 % of the 10 packets of the second after the read
            sc.quiet_owamp(t, src, dst, rtt, lost=lost)

    sc.want_one_way("PERIODIC_LOSS", "FZK", "CERN")
    sc.want("PERIODIC_LOSS", site="CERN", host="cern-dt01")
    sc.forbid("PERIODIC_LOSS", site="FZK")
    sc.forbid_codes(
        "ASYMMETRIC_PATH",
        "LOSS_LIMITED",
        "UNEXPLAINED_DEGRADATION",
        "SHARED_EQUIPMENT_SUSPECT",
        "HOST_TCP_TUNING",
        "INTERFACE_ERRORS",
        "PATH_DOWN",
        "WINDOW_LIMITED",
    )
