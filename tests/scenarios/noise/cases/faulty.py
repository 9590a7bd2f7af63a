"""Faults injected into the healthy meshes: at least one subtle fault per finding code of docs/diagnosis.md section 2.

Each case is a healthy mesh (usually with fewer sites, to keep the replay cheap), the same noise, and one fault
starting after the baseline (the first third of the 7 days). Its ``expect`` names the code and the subject
the fault must produce. The cases after them (THIN_FAULTS) put faults into the thin spots' meshes: a drop hidden
among results piled up at line rate or under an 85 % diurnal load, congestion at the load's peak, a TCP-only
fault on BBR hosts with 1500-byte frames, a route change among ECMP alternates, and outages and loss on paths
with one or two days of history; most start and end inside the file.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .. import faults as f
from ..mesh import MeshSpec
from ..noise import NoiseSpec
from ..topology import build_topology
from .healthy import (
    BBR_1500_100G,
    CAPPED_10G_BBR,
    DIURNAL_85,
    ECMP_30MIN,
    ECMP_100G,
    EU_10G,
    EU_10G_RENO_1500,
    EU_100G_FLAKY,
    LHCONE_100G_ASGC,
    LHCOPN_100G_BBR,
    NEW_DEPLOYMENT_2D,
    NEW_SITE,
    TRANSATLANTIC_10G_MIXED,
)

DAY = 24.0


@dataclass(frozen=True)
class FaultyCase:
    """A healthy mesh with faults injected."""

    name: str
    description: str
    base: MeshSpec
    faults: tuple[f.Fault, ...]


def _small(spec: MeshSpec, sites: tuple[str, ...], **changes) -> MeshSpec:
    """The mesh on fewer sites; it keeps polling the interfaces its paths still cross."""
    crossed = build_topology(sites, spec.capacity_mbps, spec.mtu).interfaces
    polled = tuple(i for i in spec.polled if i in crossed)
    return replace(spec, sites=sites, polled=polled, **changes)


#: Transatlantic 10G with loss measured precisely: 5 Gb/s UDP tests every hour (~700 000 datagrams each), and hourly
#: 10-minute owamp sessions (6000 packets) whose receiver drops a single stray packet in about half of them: the
#: density of the 32 stray losses in 343 200 packets of the meshes run minute by minute.
TA_10G_UDP_PRECISE = MeshSpec(
    name="noise-ta-10g-udp-precise",
    description=(
        "CERN, FNAL and BNL on 10G, CUBIC, hourly TCP and 5 Gb/s UDP tests, hourly 6000-packet owamp sessions with "
        "a stray single lost packet in about half of them."
    ),
    sites=("CERN", "FNAL", "BNL"),
    seed=910,
    capacity_mbps=10_000,
    tcp_interval_h=1.0,
    udp_interval_h=1.0,
    udp_rate_bps=5e9,
    owamp_packets=6000,
    noise=NoiseSpec(owamp_single_loss_prob=0.5),
)

EU4 = ("CERN", "FZK", "IN2P3", "SARA")
TA4 = ("CERN", "FZK", "FNAL", "TRIUMF")

FIRST_FAULTS: tuple[FaultyCase, ...] = (
    FaultyCase(
        "fault-loss-limited-udp-precise-fnal",
        "1.1e-5 random loss on CERN->FNAL (~98 ms) from day 6.5 (case 6 on a transatlantic 10G path): a CUBIC "
        "stream falls from ~9.7 Gb/s to 0.4-0.7 Gb/s; the hourly UDP tests lose ~8 of 700 000 datagrams each, "
        "while owamp's stray single losses alone would say about ten times more.",
        TA_10G_UDP_PRECISE,
        (f.PathLoss(start_h=6.5 * DAY, src="CERN", dst="FNAL", loss=1.1e-5, code="LOSS_LIMITED"),),
    ),
    FaultyCase(
        "fault-loss-limited-1e-4-at-100ms",
        "0.01 % random loss on CERN->FNAL (~98 ms) from day 4: a CUBIC stream falls from ~9.9 Gb/s to ~150 Mb/s; "
        "owamp sessions of 600 packets cannot see it, UDP tests at 2 Gb/s lose ~30 datagrams.",
        _small(TRANSATLANTIC_10G_MIXED, ("CERN", "FZK", "FNAL", "BNL"), udp_interval_h=12.0),
        (f.PathLoss(start_h=4 * DAY, src="CERN", dst="FNAL", loss=1e-4, code="LOSS_LIMITED"),),
    ),
    FaultyCase(
        "fault-reverse-path-loss-fzk",
        "1 % loss on FZK->CERN only (a dirty fibre of one direction) from day 4.5; CERN->FZK keeps its rate.",
        _small(EU_10G, EU4),
        (f.PathLoss(start_h=4.5 * DAY, src="FZK", dst="CERN", loss=0.01, code="ASYMMETRIC_PATH"),),
    ),
    FaultyCase(
        "fault-tcp-only-duplex-pic",
        "A duplex mismatch on CERN->PIC from day 4: TCP at ~8 % of its rate, UDP at 2 Gb/s and owamp clean.",
        _small(EU_10G_RENO_1500, ("CERN", "IN2P3", "PIC", "RAL")),
        (f.TcpOnly(start_h=4 * DAY, src="CERN", dst="PIC", factor=0.08),),
    ),
    FaultyCase(
        "fault-trunk-hashing-sara",
        "SARA's uplink is a 2-member LAG; from day 4 its hashing keeps 80 % of the traffic on one member.",
        _small(EU_10G, EU4),
        (f.TrunkHashing(start_h=4 * DAY, site="SARA", share=0.8),),
    ),
    FaultyCase(
        "fault-trunk-member-down-sara",
        "SARA's uplink is a 2-member LAG; from day 4.5 one member is down and the other carries the whole load.",
        _small(EU_10G, EU4),
        (f.TrunkMemberDown(start_h=4.5 * DAY, site="SARA"),),
    ),
    FaultyCase(
        "fault-shared-line-card-nyc",
        "A line card in esnet-nyc drops 0.02 % of the packets from day 4.5: every path through New York "
        "(transatlantic and BNL<->FNAL) degrades, FNAL<->TRIUMF and the European paths do not.",
        _small(TRANSATLANTIC_10G_MIXED, ("CERN", "FZK", "FNAL", "BNL", "TRIUMF")),
        (f.EquipmentLoss(start_h=4.5 * DAY, equipment="esnet-nyc", loss=2e-4),),
    ),
    FaultyCase(
        "fault-crc-patch-panel-fzk",
        "A patch panel on FZK's uplink (receive side) goes bad from day 3.5: CRC errors rise slowly from none "
        "to 2/s over three days.",
        _small(EU_10G, EU4),
        (f.CrcErrors(start_h=3.5 * DAY, interface="fzk-border:et-0/0/0", max_per_s=2.0, ramp_h=72),),
    ),
    FaultyCase(
        "fault-microburst-discards-ams",
        "The transatlantic egress port at Amsterdam drops micro-bursts (~15 out_discards/s) at ~45 % load from day 4.",
        _small(LHCOPN_100G_BBR, ("CERN", "FZK", "FNAL", "BNL"), data_challenges=()),
        (f.MicroBurstDiscards(start_h=4 * DAY, interface="geant-ams:et-7/0/0", util=0.45, discards_per_s=15.0),),
    ),
    FaultyCase(
        "fault-link-congestion-cnaf",
        "Unplanned traffic saturates CNAF's 10G uplink outbound for 12 hours on day 6 (99 %, tail drops, "
        "8 ms standing queue).",
        _small(EU_10G_RENO_1500, ("CERN", "CNAF", "IN2P3", "PIC")),
        (f.Congestion(start_h=5 * DAY + 8, end_h=5 * DAY + 20, interface="cnaf-border:et-0/0/0"),),
    ),
    FaultyCase(
        "fault-periodic-receiver-loss-cern",
        "From day 3 a job on CERN's test host every 30 min drops 10-70 % of the packets of the following second "
        "on every path into it; FZK->CERN has owamp sessions every 10 minutes.",
        _small(EU_10G, EU4),
        (f.PeriodicReceiverLoss(start_h=3 * DAY, src="FZK", dst="CERN", period_min=30.0),),
    ),
    FaultyCase(
        "fault-protection-switch-in2p3",
        "From day 3.5 an optical protection switch moves CERN<->IN2P3 onto a fibre 160 km longer and back every "
        "10-20 hours (+0.8 ms one way); traceroute unchanged.",
        _small(EU_100G_FLAKY, ("CERN", "FZK", "IN2P3", "PIC"), data_challenges=()),
        (f.ProtectionSwitching(start_h=3.5 * DAY, src="CERN", dst="IN2P3", extra_km=160.0),),
    ),
    FaultyCase(
        "fault-route-change-cnaf",
        "From day 4.6 CERN->CNAF is routed through Paris (a few ms longer) in a mesh where ECMP makes the "
        "traceroutes of other paths alternate.",
        _small(ECMP_100G, ("CERN", "FZK", "CNAF", "FNAL")),
        (f.RouteChange(start_h=4.6 * DAY, src="CERN", dst="CNAF", via="geant-par"),),
    ),
    FaultyCase(
        "fault-mtu-1500-sara",
        "From day 4.2 a new link with a 1500-byte MTU sits in the jumbo-frame path CERN<->SARA.",
        _small(LHCOPN_100G_BBR, ("CERN", "FZK", "SARA", "FNAL"), data_challenges=()),
        (f.MtuDrop(start_h=4.2 * DAY, src="CERN", dst="SARA"),),
    ),
    FaultyCase(
        "fault-reordering-fnal",
        "From day 3.8 per-packet load balancing reorders 0.6 % of FNAL->CERN's packets.",
        _small(LHCONE_100G_ASGC, ("CERN", "FZK", "FNAL", "ASGC")),
        (f.Reordering(start_h=3.8 * DAY, src="FNAL", dst="CERN", fraction=0.006),),
    ),
    FaultyCase(
        "fault-clock-drift-in2p3",
        "From day 5.4 IN2P3's test host lost its NTP servers: its clock drifts at 1 ppm (3.6 ms/hour) while the "
        "reported error estimate stays small.",
        _small(EU_10G, EU4),
        (f.ClockDrift(start_h=5.4 * DAY, site="IN2P3", ppm=1.0),),
    ),
    FaultyCase(
        "fault-counter-reset-cern",
        "On day 4 a line card of cern-border resets: the uplink's counters restart from zero and "
        "ifCounterDiscontinuityTime moves; no reboot.",
        _small(LHCOPN_100G_BBR, ("CERN", "FZK", "SARA", "FNAL"), data_challenges=()),
        (f.CounterReset(start_h=4 * DAY + 1.3, interface="cern-border:et-0/0/0"),),
    ),
    FaultyCase(
        "fault-path-down-fzk-ndgf",
        "A routing policy error withdraws the FZK<->NDGF prefixes for the last 5 hours: tests cannot connect, "
        "owamp loses every packet.",
        _small(EU_100G_FLAKY, ("CERN", "FZK", "NDGF", "PIC"), data_challenges=()),
        (f.PrefixWithdrawn(start_h=7 * DAY - 5, src="FZK", dst="NDGF"),),
    ),
    FaultyCase(
        "fault-host-reno-fnal",
        "From day 4 FNAL's test host runs Reno after a kernel update (paths up to ~250 ms long).",
        _small(LHCONE_100G_ASGC, ("CERN", "FNAL", "TRIUMF", "ASGC")),
        (f.HostSettings(start_h=4 * DAY, site="FNAL", congestion_control="reno"),),
    ),
    FaultyCase(
        "fault-window-triumf",
        "From day 4 TRIUMF's test host was reinstalled with 64 MiB buffer maxima: on the ~150 ms paths to "
        "Europe a stream is held to ~1.8 Gb/s of 10G.",
        _small(TRANSATLANTIC_10G_MIXED, TA4),
        (
            f.HostSettings(
                start_h=4 * DAY,
                site="TRIUMF",
                buffer_max_bytes=64 << 20,
                window_limited_paths=(("CERN", "TRIUMF"), ("TRIUMF", "CERN")),
            ),
        ),
    ),
    FaultyCase(
        "fault-maintenance-geant-fra",
        "Announced GEANT work takes geant-fra out of service for 4 hours on day 5: FZK's paths go down.",
        _small(EU_10G, EU4),
        (f.Maintenance(start_h=5 * DAY + 2, end_h=5 * DAY + 6, equipment="geant-fra"),),
    ),
    FaultyCase(
        "fault-drop-20pct-pic-fzk",
        "From day 4 an inline device forwarding at 80 % of line rate sits in PIC->FZK: every test carries 20 % "
        "less than before, for good; owamp clean.",
        _small(EU_10G, ("CERN", "FZK", "IN2P3", "PIC")),
        (f.RateFactor(start_h=4 * DAY, src="PIC", dst="FZK", factor=0.8),),
    ),
    FaultyCase(
        "fault-collapse-6h-fzk-cern",
        "On day 5 FZK->CERN collapses from its ~30 Gb/s to 120 Mb/s for 6 hours (failover onto a shaped backup), "
        "then recovers; owamp clean.",
        _small(LHCOPN_100G_BBR, ("CERN", "FZK", "SARA", "FNAL"), data_challenges=()),
        (
            f.RateCap(
                start_h=5 * DAY + 1,
                end_h=5 * DAY + 7,
                src="FZK",
                dst="CERN",
                cap_bps=120e6,
                also_accepted=("ASYMMETRIC_PATH",),
            ),
        ),
    ),
    FaultyCase(
        "fault-measurement-gap",
        "From day 5.8 no measurement of CNAF->SARA arrives (the test daemon died); from day 5 every throughput "
        "test PIC->CERN is refused (server busy) while owamp shows the path clean.",
        _small(EU_100G_FLAKY, ("CERN", "CNAF", "SARA", "PIC"), data_challenges=()),
        (
            f.TestsStop(start_h=5.8 * DAY, src="CNAF", dst="SARA"),
            f.ServerBusy(start_h=5 * DAY, src="PIC", dst="CERN"),
        ),
    ),
)

THIN_FAULTS: tuple[FaultyCase, ...] = (
    FaultyCase(
        "fault-drop-20pct-20h-capped-ndgf-cern",
        "For 20 hours of day 4 an inline device forwarding at 80 % of line rate sits in NDGF->CERN, whose hourly "
        "results pile up at ~97 % of the 10G line with a quarter of them spreading below; then it is removed.",
        _small(CAPPED_10G_BBR, ("CERN", "FZK", "NDGF", "SARA")),
        (f.RateFactor(start_h=4 * DAY + 3, end_h=4 * DAY + 23, src="NDGF", dst="CERN", factor=0.8),),
    ),
    FaultyCase(
        "fault-drop-20pct-under-diurnal-load-pic-fzk",
        "From day 4 PIC->FZK carries 20 % less than the spare capacity its tests get, on uplinks loaded up to 85 % "
        "every afternoon: the results swing with the load every day, and sit a fifth lower at the same load.",
        _small(DIURNAL_85, ("CERN", "FZK", "IN2P3", "PIC")),
        (f.RateFactor(start_h=4 * DAY + 5, src="PIC", dst="FZK", factor=0.8),),
    ),
    FaultyCase(
        "fault-congestion-at-diurnal-peak-cnaf",
        "On day 6 unplanned traffic on top of CNAF's afternoon peak (up to 85 %) saturates its 10G uplink "
        "outbound for 6 hours (99 %, tail drops, a standing queue).",
        _small(DIURNAL_85, ("CERN", "CNAF", "IN2P3", "PIC")),
        (f.Congestion(start_h=5 * DAY + 9, end_h=5 * DAY + 15, interface="cnaf-border:et-0/0/0"),),
    ),
    FaultyCase(
        "fault-tcp-only-bbr-mtu1500-fzk-sara",
        "From day 4 to day 5.5 a stateful firewall on FZK->SARA polices each TCP flow to 3 % of its rate (~0.7 "
        "Gb/s of ~24), far below the 2 Gb/s at which UDP tests and owamp stay clean, on BBR hosts with 1500-byte "
        "frames: only TCP can be the victim.",
        _small(BBR_1500_100G, ("CERN", "FZK", "SARA", "FNAL")),
        (f.TcpOnly(start_h=4 * DAY, end_h=5.5 * DAY, src="FZK", dst="SARA", factor=0.03),),
    ),
    FaultyCase(
        "fault-route-change-among-ecmp-alternates-cnaf",
        "From day 4.4 to day 5.4 CERN->CNAF is routed through Paris, in a mesh whose traceroutes every 30 minutes "
        "alternate between equal-length alternates at every PoP.",
        _small(ECMP_30MIN, ("CERN", "FZK", "CNAF", "IN2P3")),
        (f.RouteChange(start_h=4.4 * DAY, end_h=5.4 * DAY, src="CERN", dst="CNAF", via="geant-par"),),
    ),
    FaultyCase(
        "fault-path-down-2-days-history-fzk-sara",
        "A new deployment with two days of tests: FZK<->SARA's prefixes are withdrawn for 6 hours on its second "
        "day, then restored.",
        _small(NEW_DEPLOYMENT_2D, ("CERN", "FZK", "IN2P3", "SARA")),
        (f.PrefixWithdrawn(start_h=30, end_h=36, src="FZK", dst="SARA"),),
    ),
    FaultyCase(
        "fault-reverse-loss-2-days-history-in2p3",
        "A new deployment with two days of tests: from hour 28 a dirty fibre loses 1 % of IN2P3->CERN's packets "
        "while CERN->IN2P3 keeps its rate.",
        _small(NEW_DEPLOYMENT_2D, ("CERN", "FZK", "IN2P3", "SARA")),
        (f.PathLoss(start_h=28, src="IN2P3", dst="CERN", loss=0.01, code="ASYMMETRIC_PATH"),),
    ),
    FaultyCase(
        "fault-path-down-new-site-cern-ndgf",
        "NDGF joined the mesh on day 5.5; on day 6.5 CERN<->NDGF's prefixes are withdrawn for 4 hours, then "
        "restored.",
        _small(NEW_SITE, ("CERN", "FZK", "PIC", "NDGF")),
        (f.PrefixWithdrawn(start_h=6.5 * DAY, end_h=6.5 * DAY + 4, src="CERN", dst="NDGF"),),
    ),
)

FAULTY: tuple[FaultyCase, ...] = (*FIRST_FAULTS, *THIN_FAULTS)
