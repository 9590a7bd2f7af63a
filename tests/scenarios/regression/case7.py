"""Case study 7 of docs/diagnosis.md#case-studies: a protection switch."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.scenarios.regression.builder import MiB, Scenario, fibre_ms, hops_from, scenario, tcp_rate_bps


# --------------------------------------------------------------------------- case 7
@scenario(
    "case7-protection-switch-pic",
    datetime(2026, 3, 9, 0, 0, tzinfo=UTC),
    carriers=("GEANT", "REDIRIS"),
    sites=("CERN", "PIC"),
    routers=("cern-border", "geant-gva", "geant-mar", "rediris-bcn", "pic-border"),
)
def scenario_case7(sc: Scenario) -> None:
    """Case study 7 (protection switching). CERN<->PIC: minimum one-way delay 6.95 ms each way (RTT 13.9 ms). At 02:37
    the SDH working span fails and both directions switch to the protection route via Madrid, 520 km longer: +2.6 ms
    one way; at 04:12 they revert. Traceroutes every 30 min show the same IP hops all along: the change is below IP.
    Throughput is unaffected (64 MiB window).
    """
    hops = ["cern-border", "geant-gva", "geant-mar", "rediris-bcn", "pic-border"]
    sc.path("CERN", "PIC", 10000, hops)
    switch, revert = sc.at("02:37:30"), sc.at("04:12:10")
    extra = fibre_ms(520)

    def owd(t: datetime) -> float:
        return 6.95 + (extra if switch <= t < revert else 0.0)

    mss, window = 8948, 64 * MiB
    for src, dst, off in (("CERN", "PIC", 0), ("PIC", "CERN", 30)):
        for t in sc.every(30, off):
            rtt = 2 * owd(t) + 0.05
            thr = sc.jitter(tcp_rate_bps(10e9, rtt, mss, window, 0, 9.4e9), 0.015)
            sc.tcp_test(t, src, dst, thr, rtt_ms=rtt, rtt_rel=0.002, mss=mss, window=window)
            sc.traceroute(t + timedelta(seconds=300), src, dst, hops_from(src, "CERN", hops))
        for t in sc.every(5, 15 + off):
            sc.quiet_owamp(t, src, dst, owd_ms=owd(t), below_ms=0.02, spread_ms=0.03)

    sc.want_both_ways("DELAY_LEVEL_SHIFT", "CERN", "PIC")
    sc.forbid_codes(
        "ROUTE_CHANGE",
        "CLOCK_UNSYNC",
        "UNEXPLAINED_DEGRADATION",
        "PATH_DOWN",
        "LOSS_LIMITED",
        "ASYMMETRIC_PATH",
    )
