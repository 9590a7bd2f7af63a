"""Healthy meshes. Each carries the noise of docs/diagnosis.md#what-the-rules-tolerate in its own mix; none has a
fault, so a correct diagnosis reports nothing above info on any of them. The first eight are 7-day meshes; the
ones after them (THIN) cover what the first meshes run minute by minute showed the corpus lacked: BBR-only hosts,
1500-byte frames, diurnal load up to 85 % of a shared link with tests getting only the spare capacity, ECMP
alternates in every traceroute, tests piled up at line rate, and paths with one or two days of history."""

from __future__ import annotations

from ..mesh import DataChallenge, MeshSpec
from ..noise import NoiseSpec
from ..physics import LINUX_MAX_SOCKET_BUFFER_BYTES as LINUX_MAX_BUFFER

EU_10G = MeshSpec(
    name="noise-eu-10g-cubic-jumbo",
    description=(
        "7 European Tier-1s on 10G jumbo-frame paths, CUBIC, autotuned 512 MiB buffers; tests failing once, busy "
        "hosts, single lost owamp packets, ECMP at Frankfurt, RAL's border router silent to traceroute, diurnal load "
        "on three site uplinks."
    ),
    sites=("CERN", "FZK", "CNAF", "IN2P3", "RAL", "SARA", "PIC"),
    seed=101,
    capacity_mbps=10_000,
    polled=("cern-border:et-0/0/0", "fzk-border:et-0/0/0", "sara-border:et-0/0/0"),
    ecmp_pops=("geant-fra",),
    silent_last_hop_sites=("RAL",),
)

LHCOPN_100G_BBR = MeshSpec(
    name="noise-lhcopn-100g-bbr",
    description=(
        "CERN, three European and two US Tier-1s on 100G, BBR, 2 GiB buffers; single streams host-limited at "
        "20-40 Gb/s varying ~28 % run to run with hundreds of retransmits; input discards of a few per minute on "
        "100G ports; a data challenge filling CERN's uplink outbound for 8 hours on day 5."
    ),
    sites=("CERN", "FZK", "IN2P3", "SARA", "FNAL", "BNL"),
    seed=202,
    capacity_mbps=100_000,
    congestion_control="bbr",
    buffer_max_bytes=LINUX_MAX_BUFFER,
    tcp_interval_h=3.0,
    polled=("cern-border:et-0/0/0", "geant-ams:et-7/0/0", "esnet-nyc:et-3/0/0", "bnl-border:et-0/0/0"),
    data_challenges=(DataChallenge("cern-border:et-0/0/0", "out", start_h=4 * 24 + 9, duration_h=8, util=0.93),),
)

LHCONE_100G_ASGC = MeshSpec(
    name="noise-lhcone-100g-cubic-asgc",
    description=(
        "CERN, FZK, CNAF, FNAL, TRIUMF and ASGC on 100G, CUBIC, buffers at Linux's 2 GiB cap: on the ~250 ms "
        "paths to ASGC no buffer reaches the BDP (parallel streams are the advice, not a sysctl); UDP tests at "
        "2 Gb/s twice a day; transpacific links polled."
    ),
    sites=("CERN", "FZK", "CNAF", "FNAL", "TRIUMF", "ASGC"),
    seed=303,
    capacity_mbps=100_000,
    buffer_max_bytes=LINUX_MAX_BUFFER,
    udp_interval_h=12.0,
    polled=("cern-border:et-0/0/0", "esnet-sea:et-4/0/0", "twaren-tpe:et-1/0/0", "asgc-border:et-0/0/0"),
)

EU_10G_RENO_1500 = MeshSpec(
    name="noise-eu-10g-reno-mtu1500",
    description=(
        "6 European sites on 10G with standard 1500-byte frames and Reno hosts; UDP tests at 2 Gb/s twice a day "
        "(a datagram lost now and then at the receiver); two uplinks polled."
    ),
    sites=("CERN", "CNAF", "IN2P3", "PIC", "NDGF", "RAL"),
    seed=404,
    capacity_mbps=10_000,
    mtu=1500,
    congestion_control="reno",
    udp_interval_h=12.0,
    polled=("cern-border:et-0/0/0", "cnaf-border:et-0/0/0"),
)

TRANSATLANTIC_10G_MIXED = MeshSpec(
    name="noise-transatlantic-10g-mixed-cc",
    description=(
        "CERN, FZK, RAL and three North American sites on 10G; FNAL runs BBR, BNL H-TCP, the others CUBIC; "
        "throughput every 3 hours; the transatlantic gateway polled at both ends."
    ),
    sites=("CERN", "FZK", "RAL", "FNAL", "BNL", "TRIUMF"),
    seed=505,
    capacity_mbps=10_000,
    congestion_control_by_site=(("FNAL", "bbr"), ("BNL", "htcp")),
    tcp_interval_h=3.0,
    polled=("geant-ams:et-7/0/0", "esnet-nyc:et-3/0/0", "fnal-border:et-0/0/0"),
)

EU_100G_FLAKY = MeshSpec(
    name="noise-eu-100g-flaky-hosts",
    description=(
        "7 European sites on 100G, CUBIC, 1 GiB buffers, with noisier hosts and probes than usual: more failed "
        "and slow tests, more single lost packets and short bursts, delay spikes, SNMP polls jittering by 8 s; "
        "a data challenge fills FZK's uplink inbound for 12 hours."
    ),
    sites=("CERN", "FZK", "CNAF", "IN2P3", "SARA", "NDGF", "PIC"),
    seed=606,
    capacity_mbps=100_000,
    buffer_max_bytes=1 << 30,
    polled=("cern-border:et-0/0/0", "fzk-border:et-0/0/0", "sara-border:et-0/0/0"),
    data_challenges=(DataChallenge("fzk-border:et-0/0/0", "in", start_h=5 * 24 + 6, duration_h=12, util=0.91),),
    noise=NoiseSpec(
        tcp_fail_prob=0.04,
        busy_host_prob=0.05,
        owamp_single_loss_prob=0.06,
        owamp_burst_prob=0.005,
        delay_spike_prob=0.06,
        poll_jitter_s=8.0,
        in_discards_per_min_100g=5.0,
    ),
)

ECMP_100G = MeshSpec(
    name="noise-ecmp-silent-hops-100g",
    description=(
        "CERN, FZK, CNAF, FNAL, BNL and ASGC on 100G; ECMP at Frankfurt, New York and Chicago makes traceroutes "
        "alternate between parallel routers; FNAL's and ASGC's border routers never answer traceroute; owamp "
        "clock error estimates up to 1 ms."
    ),
    sites=("CERN", "FZK", "CNAF", "FNAL", "BNL", "ASGC"),
    seed=707,
    capacity_mbps=100_000,
    buffer_max_bytes=LINUX_MAX_BUFFER,
    congestion_control_by_site=(("FNAL", "bbr"), ("BNL", "bbr")),
    ecmp_pops=("geant-fra", "esnet-nyc", "esnet-chi"),
    silent_last_hop_sites=("FNAL", "ASGC"),
    polled=("geant-ams:et-7/0/0", "esnet-sea:et-4/0/0"),
    noise=NoiseSpec(host_clock_error_ms=(0.1, 0.5), traceroute_star_prob=0.06),
)

EU_10G_LARGE = MeshSpec(
    name="noise-eu-10g-8-sites",
    description=(
        "8 European sites (56 path directions) on 10G jumbo paths, CUBIC, throughput every 6 hours; strong "
        "diurnal swings on the polled uplinks."
    ),
    sites=("CERN", "FZK", "CNAF", "IN2P3", "RAL", "SARA", "PIC", "NDGF"),
    seed=808,
    capacity_mbps=10_000,
    tcp_interval_h=6.0,
    diurnal=(0.12, 0.35),
    polled=("cern-border:et-0/0/0", "ndgf-border:et-0/0/0"),
)

EU_10G_CAPPED = MeshSpec(
    name="noise-eu-10g-capped-line-rate",
    description=(
        "4 European sites on 10G jumbo paths, CUBIC, hourly throughput tests that pile up at ~97 % of line rate "
        "(hosts faster than the line, little load on the uplinks) with a fifth of them in a tail 4-30 % below it; "
        "single owamp packets lost in one session in ten."
    ),
    sites=("CERN", "FZK", "NDGF", "IN2P3"),
    seed=909,
    capacity_mbps=10_000,
    tcp_interval_h=1.0,
    diurnal=(0.02, 0.02),
    noise=NoiseSpec(capped_tail_prob=0.2, owamp_single_loss_prob=0.1),
)

CAPPED_10G_BBR = MeshSpec(
    name="noise-10g-bbr-capped-at-line-rate",
    description=(
        "6 European sites on dedicated 10G jumbo-frame circuits (1-3 % load), BBR hosts, hourly tests: the results "
        "pile up at ~97 % of the line and a quarter of them, meeting transfers on the hosts' LAN, spread down to "
        "70 % of it."
    ),
    sites=("CERN", "FZK", "NDGF", "SARA", "IN2P3", "CNAF"),
    seed=909,
    capacity_mbps=10_000,
    congestion_control="bbr",
    tcp_interval_h=1.0,
    diurnal=(0.01, 0.02),
    polled=("cern-border:et-0/0/0", "ndgf-border:et-0/0/0"),
    noise=NoiseSpec(below_cap_prob=0.25),
)

DIURNAL_85 = MeshSpec(
    name="noise-10g-diurnal-85pct-spare-only",
    description=(
        "6 European sites on 10G whose uplinks carry production traffic that ramps every morning to up to 85 % of "
        "the link at the peak and falls every night; a test gets only the spare capacity (nothing yields to it), "
        "so its result follows the load; every uplink polled."
    ),
    sites=("CERN", "FZK", "CNAF", "IN2P3", "PIC", "RAL"),
    seed=1010,
    capacity_mbps=10_000,
    tcp_interval_h=2.0,
    diurnal=(0.12, 0.62),
    elastic_share=0.0,
    polled=(
        "cern-border:et-0/0/0",
        "fzk-border:et-0/0/0",
        "cnaf-border:et-0/0/0",
        "in2p3-border:et-0/0/0",
        "pic-border:et-0/0/0",
        "ral-border:et-0/0/0",
    ),
)

BBR_1500_100G = MeshSpec(
    name="noise-100g-bbr-only-mtu1500",
    description=(
        "CERN, three European and two US sites on 100G with 1500-byte frames everywhere and BBR on every host "
        "(few retransmits, host-limited single streams); UDP at 2 Gb/s twice a day; the transatlantic link polled."
    ),
    sites=("CERN", "FZK", "SARA", "NDGF", "FNAL", "BNL"),
    seed=1111,
    capacity_mbps=100_000,
    mtu=1500,
    congestion_control="bbr",
    buffer_max_bytes=LINUX_MAX_BUFFER,
    tcp_interval_h=3.0,
    udp_interval_h=12.0,
    polled=("cern-border:et-0/0/0", "geant-ams:et-7/0/0", "esnet-nyc:et-3/0/0"),
)

ECMP_30MIN = MeshSpec(
    name="noise-10g-ecmp-alternates-30min-traceroutes",
    description=(
        "6 European sites on 10G; every GEANT PoP is a pair of routers with equal-cost paths, so the traceroutes, "
        "every 30 minutes, alternate between alternates of equal length on every path; nothing else changes."
    ),
    sites=("CERN", "FZK", "CNAF", "IN2P3", "SARA", "PIC"),
    seed=1212,
    capacity_mbps=10_000,
    traceroute_interval_h=0.5,
    ecmp_pops=("geant-gva", "geant-fra", "geant-mil", "geant-par", "geant-ams", "geant-mad"),
    polled=("cern-border:et-0/0/0",),
)

NEW_DEPLOYMENT_2D = MeshSpec(
    name="noise-new-deployment-2-days",
    description=(
        "A new deployment: 5 European sites on 10G whose tests began two days ago; the diagnosis runs from its "
        "first measurement, with hours of history and then a day or two."
    ),
    sites=("CERN", "FZK", "IN2P3", "SARA", "NDGF"),
    seed=1313,
    capacity_mbps=10_000,
    days=2.0,
    polled=("cern-border:et-0/0/0", "fzk-border:et-0/0/0"),
)

NEW_SITE = MeshSpec(
    name="noise-eu-10g-new-site-joins",
    description=(
        "6 European sites on 10G over 7 days; NDGF joins the mesh on day 5.5, so its ten path directions have a "
        "day and a half of history beside paths with a week of it."
    ),
    sites=("CERN", "FZK", "IN2P3", "SARA", "PIC", "NDGF"),
    seed=1414,
    capacity_mbps=10_000,
    joined_h=(("NDGF", 5.5 * 24),),
    polled=("cern-border:et-0/0/0", "ndgf-border:et-0/0/0"),
)

THIN: tuple[MeshSpec, ...] = (CAPPED_10G_BBR, DIURNAL_85, BBR_1500_100G, ECMP_30MIN, NEW_DEPLOYMENT_2D, NEW_SITE)

HEALTHY: tuple[MeshSpec, ...] = (
    EU_10G,
    LHCOPN_100G_BBR,
    LHCONE_100G_ASGC,
    EU_10G_RENO_1500,
    TRANSATLANTIC_10G_MIXED,
    EU_100G_FLAKY,
    ECMP_100G,
    EU_10G_LARGE,
    EU_10G_CAPPED,
    *THIN,
)
