"""Case study 4 of docs/diagnosis.md#case-studies: a window-limited long path."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.scenarios.regression.builder import MiB, Scenario, scenario, tcp_rate_bps, window_rate_bps


# --------------------------------------------------------------------------- case 4
@scenario(
    "case4-window-limited-fnal-asgc",
    datetime(2026, 3, 6, 0, 0, tzinfo=UTC),
    carriers=("GEANT", "USLHCNET", "STARLIGHT", "ESNET", "ASGCNET"),
    sites=("CERN", "FNAL", "ASGC"),
    routers=(
        "cern-border",
        "uslhcnet-gva",
        "uslhcnet-chi",
        "starlight",
        "esnet-chi",
        "fnal-border",
        "geant-ams",
        "asgc-ams",
        "asgc-tpe",
        "asgc-border",
    ),
)
def scenario_case4(sc: Scenario) -> None:
    """Case study 4 (window-limited transatlantic and East-Asian flows). CERN<->FNAL: 10 Gb/s, RTT 125 ms, nuttcp
    -w128m reaches ~6.5 Gb/s (host limit) until fnal-dt01 is reinstalled at 01:55 with an old sysctl profile
    (net.core.rmem_max = wmem_max = 4 MiB): from then the 128 MiB request is cut to 4 MiB and both directions run at
    ~0.95 x 4 MiB * 8 / 125 ms = 255 Mb/s. CERN<->ASGC: 1 Gb/s, RTT 318 ms, autotuned with tcp_rmem/tcp_wmem max 16
    MiB at ASGC: ~0.6 x 422 Mb/s; 1 Gb/s there needs 2 x BDP = 79.5 MB. CERN's hosts are tuned (256 MiB).
    """
    sc.host("CERN", "cern-dt01", "192.0.2.10")
    sc.host("FNAL", "fnal-dt01", "198.51.100.40")
    sc.host("ASGC", "asgc-dt01", "203.0.113.60")
    sc.path(
        "CERN", "FNAL", 10000, ["cern-border", "uslhcnet-gva", "uslhcnet-chi", "starlight", "esnet-chi", "fnal-border"]
    )
    sc.path("CERN", "ASGC", 1000, ["cern-border", "geant-ams", "asgc-ams", "asgc-tpe", "asgc-border"])

    reinstall = sc.at("01:55")
    for t in sc.every(60):
        sc.host_tcp(t, "CERN", "cern-dt01", buf=256 * MiB)
        sc.host_tcp(t + timedelta(seconds=30), "FNAL", "fnal-dt01", buf=256 * MiB if t < reinstall else 4 * MiB)
        sc.host_tcp(t + timedelta(seconds=60), "ASGC", "asgc-dt01", buf=16 * MiB)
    mss = 8948
    for t in sc.every(30):
        window = 128 * MiB if t < reinstall else 4 * MiB  # what the kernel grants of the 128 MiB asked for
        for src, dst, off, sh, dh in (
            ("CERN", "FNAL", 0, "192.0.2.10", "198.51.100.40"),
            ("FNAL", "CERN", 40, "198.51.100.40", "192.0.2.10"),
        ):
            rtt = sc.jitter(125.0, 0.002)
            rate = tcp_rate_bps(10e9, rtt, mss, window, 0, 6.5e9)
            thr = rate * sc.rng.uniform(0.93, 0.98) if t >= reinstall else sc.jitter(rate, 0.02)
            sc.tcp_test(
                t + timedelta(seconds=off),
                src,
                dst,
                thr,
                rtt_ms=rtt,
                rtt_rel=0,
                mss=mss,
                window=128 * MiB,
                retransmits=(0, 0, 0, 1),
                hosts=(sh, dh),
            )
        for src, dst, off, sh, dh in (
            ("CERN", "ASGC", 120, "192.0.2.10", "203.0.113.60"),
            ("ASGC", "CERN", 160, "203.0.113.60", "192.0.2.10"),
        ):
            rtt = sc.jitter(318.0, 0.002)
            # autotuning: the advertised window is only part of tcp_rmem's maximum (skb overhead)
            thr = window_rate_bps(16 * MiB, rtt) * sc.rng.uniform(0.55, 0.68)
            sc.tcp_test(
                t + timedelta(seconds=off), src, dst, thr, rtt_ms=rtt, rtt_rel=0, mss=mss, window=None, hosts=(sh, dh)
            )
    for t in sc.every(5, 70):
        for far, owd in (("FNAL", 62.5), ("ASGC", 159.0)):
            for src, dst in (("CERN", far), (far, "CERN")):
                sc.quiet_owamp(t, src, dst, owd_ms=owd, spread_ms=0.03, queue_ms=(0.03, 0.12))

    for far in ("FNAL", "ASGC"):
        sc.want_both_ways("WINDOW_LIMITED", "CERN", far)
    sc.want("HOST_TCP_TUNING", site="FNAL", host="fnal-dt01")
    sc.want("HOST_TCP_TUNING", site="ASGC", host="asgc-dt01")
    sc.forbid("HOST_TCP_TUNING", site="CERN")
    sc.forbid_codes(
        "LOSS_LIMITED",
        "ASYMMETRIC_PATH",
        "UNEXPLAINED_DEGRADATION",
        "TCP_ONLY_DEGRADATION",
        "SHARED_EQUIPMENT_SUSPECT",
        "PATH_DOWN",
        "MTU_MISMATCH",
    )
