"""Case study 5 of docs/diagnosis.md#case-studies: equipment at its limits."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.scenarios.regression.builder import MiB, Scenario, scenario
from tests.scenarios.regression.counters import Counter64Port


# --------------------------------------------------------------------------- case 5
@scenario(
    "case5-equipment-at-limits-fnal",
    datetime(2026, 3, 7, 6, 0, tzinfo=UTC),
    carriers=("USLHCNET", "STARLIGHT", "ESNET", "CENIC"),
    sites=("CERN", "FNAL", "CALTECH", "BNL"),
)
def scenario_case5(sc: Scenario) -> None:
    """Case study 5 (LHC SC1, CERN-FNAL). A stable ~5 Gb/s from CERN to FNAL (hosts at their limit) over the USLHCNet
    Geneva-Chicago 10 Gb/s link. At 08:30 debugging transfers CERN->Caltech start on the same link rate-limited to
    400 Mb/s, and CERN->FNAL drops to ~3 Gb/s with burst losses, although the link carries less than 60 % of 10 Gb/s
    (SNMP): equipment close to its limits, not congestion. CERN->BNL leaves Geneva on the New York link and stays
    healthy.
    """
    sc.router("cern-border", site="CERN", model="MX960")
    sc.router("uslhcnet-gva", carrier="USLHCNET", vendor="Force10", model="E600")
    sc.router("uslhcnet-chi", carrier="USLHCNET", vendor="Force10", model="E600")
    sc.router("uslhcnet-nyc", carrier="USLHCNET", vendor="Force10", model="E600")
    sc.router("starlight", carrier="STARLIGHT", vendor="Force10", model="E1200", role="switch")
    sc.router("esnet-chi", carrier="ESNET", model="MX960")
    sc.router("esnet-nyc", carrier="ESNET", model="MX960")
    sc.router("cenic-lax", carrier="CENIC", vendor="Cisco", model="CRS-1")
    sc.router("fnal-border", site="FNAL", vendor="Cisco", model="Catalyst 6509")
    sc.router("caltech-border", site="CALTECH", vendor="Cisco", model="Catalyst 6509")
    sc.router("bnl-border", site="BNL", vendor="Cisco", model="Catalyst 6509")
    sc.interface("uslhcnet-gva", "xe-0/0/0", 500, 10000)  # Geneva -> Chicago
    sc.interface("uslhcnet-gva", "xe-0/0/1", 501, 10000)  # Geneva -> New York
    sc.path(
        "CERN",
        "FNAL",
        10000,
        ["cern-border", "uslhcnet-gva:xe-0/0/0", "uslhcnet-chi", "starlight", "esnet-chi", "fnal-border"],
    )
    sc.path(
        "CERN",
        "CALTECH",
        10000,
        ["cern-border", "uslhcnet-gva:xe-0/0/0", "uslhcnet-chi", "starlight", "cenic-lax", "caltech-border"],
        both=False,
    )
    sc.path("CERN", "BNL", 10000, ["cern-border", "uslhcnet-gva:xe-0/0/1", "uslhcnet-nyc", "esnet-nyc", "bnl-border"])

    onset = sc.at("08:30")
    mss, window = 8948, 128 * MiB
    fnal_rate: dict[datetime, float] = {}
    for t in sc.every(30):
        rtt = sc.jitter(120.0, 0.002)
        if t < onset:
            thr, retrans = sc.jitter(5.0e9, 0.02), sc.rng.choice([0, 0, 1, 2])
        else:
            thr, retrans = sc.rng.uniform(2.6e9, 3.4e9), sc.rng.randint(20, 150)  # burst losses at the receivers
        fnal_rate[t] = thr
        sc.tcp(t, "CERN", "FNAL", thr, rtt_ms=rtt, mss=mss, window=window, retransmits=retrans)
        sc.tcp_test(
            t + timedelta(seconds=30),
            "FNAL",
            "CERN",
            sc.jitter(5.0e9, 0.02),
            rtt_ms=rtt,
            rtt_rel=0,
            mss=mss,
            window=window,
        )
        if t >= onset:
            # debugging transfers rate-limited to 400 Mb/s (nuttcp -R400m): steady and clean
            thr = sc.jitter(3.99e8, 0.003)
            when = t + timedelta(seconds=60)
            sc.tcp_test(
                when, "CERN", "CALTECH", thr, rtt_ms=171.0, rtt_rel=0.002, mss=mss, window=window, retransmits=0
            )
        for src, dst in (("CERN", "BNL"), ("BNL", "CERN")):
            thr = sc.jitter(9.2e9, 0.015)
            when = t + timedelta(seconds=90 if src == "CERN" else 120)
            sc.tcp_test(when, src, dst, thr, rtt_ms=92.0, rtt_rel=0.002, mss=mss, window=window, retransmits=(0, 1))
    for t in sc.every(5, 150):
        for far, owd in (("FNAL", 60.0), ("BNL", 46.0)):
            for src, dst in (("CERN", far), (far, "CERN")):
                sc.quiet_owamp(t, src, dst, owd_ms=owd, spread_ms=0.03, queue_ms=(0.05, 0.2))
        if t >= onset:
            when = t + timedelta(seconds=90)
            sc.quiet_owamp(
                when, "CERN", "CALTECH", owd_ms=85.5, below_ms=0, spread_ms=0.03, lost=0, queue_ms=(0.05, 0.2)
            )
    # the production transfer to FNAL, the debugging transfer to Caltech and other traffic, seen by SNMP
    chi = Counter64Port(
        "uslhcnet-gva", "xe-0/0/0", 86400 * 12.6, 1_118_302_447_001_234, 9_871_220_016_448_108, mean_frame_bytes=6000
    )
    nyc = Counter64Port(
        "uslhcnet-gva", "xe-0/0/1", 86400 * 12.6, 812_990_117_340_002, 5_442_781_990_017_776, mean_frame_bytes=6000
    )
    for i, t in enumerate(sc.every(1)):
        if i:
            prod = 5.0e9 if t < onset else 3.3e9
            extra = 0.0 if t < onset else 0.4e9
            chi.advance(60, 1.1e9 + sc.rng.gauss(0, 0.05e9), prod + extra + 0.5e9 + sc.rng.gauss(0, 0.08e9))
            nyc.advance(60, 0.9e9 + sc.rng.gauss(0, 0.05e9), 2.4e9 + sc.rng.gauss(0, 0.1e9))
        chi.poll(sc, t)
        nyc.poll(sc, t + timedelta(seconds=1))

    sc.want("SHARED_EQUIPMENT_SUSPECT", rank=1, equipment="uslhcnet-gva", interface="xe-0/0/0")
    sc.forbid("SHARED_EQUIPMENT_SUSPECT", equipment="cern-border")
    sc.forbid("SHARED_EQUIPMENT_SUSPECT", equipment="uslhcnet-gva", interface="xe-0/0/1")
    sc.forbid_codes(
        "LINK_CONGESTION",
        "UNEXPLAINED_DEGRADATION",
        "WINDOW_LIMITED",
        "LOSS_LIMITED",
        "ASYMMETRIC_PATH",
        "PATH_DOWN",
        "INTERFACE_ERRORS",
    )
