"""The lab's scenarios: an emulated path, the tests the site agents run across it, and what physics predicts.

Each scenario pins what decides its outcome -- the impairments of both directions, the congestion control of both
namespaces (the host default, BBR here, ignores random loss), the emulator's random seed -- and keeps its tests
short: a few results per path are what the diagnosis needs, and the whole set runs in a few minutes.

Directions: A is the site whose agent runs the tests (nuttcp, with ``reverse`` where the far end must send too,
and TWAMP-light); B is the far site, whose agent reports its host's TCP settings. The router between them is the
emulator: its port ``to-a`` faces A, ``to-b`` faces B.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tests.lab.emulator import Impairment
from tests.scenarios.noise import physics

MSS_BYTES = physics.mss_bytes(1500)  # MTU 1500 with TCP timestamps: 1448


@dataclass(frozen=True)
class Scenario:
    """One emulated path and its expected diagnosis."""

    name: str  # WINDOW_LIMITED, ...; also the finding code expected (CLEAN: none at warning or above)
    code: str  # short, for site codes and namespace names
    index: int  # the path's /24: 10.77.<index>.0
    a_to_b: Impairment
    b_to_a: Impairment
    run_s: float  # how long the agents measure
    capacity_mbps: int = 100
    congestion_control: str = "reno"
    seed: int = 1
    nuttcp: tuple[dict[str, Any], ...] = ()  # [[nuttcp]] tables (dst, host and control port are filled in)
    twamp: dict[str, Any] | None = None  # the [[twamp]] table
    snmp_interval_s: float = 5.0
    expect_subject: str = "A->B"  # the direction the finding must name ("B->A"), or "port" (router port to-a)
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def rtt_ms(self) -> float:
        return self.a_to_b.delay_ms + self.b_to_a.delay_ms

    @property
    def site_a(self) -> str:
        return f"LAB-{self.code}-A"

    @property
    def site_b(self) -> str:
        return f"LAB-{self.code}-B"

    @property
    def router(self) -> str:
        return f"lab-{self.code.lower()}-rtr"


WINDOW = 64 * 1024
BIG_WINDOW = 8 * 1024 * 1024
QUEUE_BYTES = 512 * 1024  # ~40 ms at 100 Mb/s: a modest router buffer


def line(delay_ms: float, **impairment: Any) -> Impairment:
    """One direction of a 100 Mb/s path (the scenarios' capacity) through a modest router buffer, impaired."""
    return Impairment(delay_ms=delay_ms, rate_bps=100e6, queue_bytes=QUEUE_BYTES, **impairment)


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario(
            name="WINDOW_LIMITED",
            code="WIN",
            index=1,
            a_to_b=line(50),
            b_to_a=line(50),
            congestion_control="reno",
            nuttcp=({"window_bytes": WINDOW, "duration_s": 4, "interval_s": 6},),
            run_s=20,
            note="64 KiB window at 100 ms: W*8/RTT = 5.24 Mb/s on a 100 Mb/s path",
        ),
        Scenario(
            name="LOSS_LIMITED",
            code="LOSS",
            index=2,
            a_to_b=line(50, loss=0.001),
            b_to_a=line(50),
            congestion_control="reno",
            seed=7,
            # A 128 KiB window (W*8/RTT = 10.5 Mb/s) is above Reno's largest window at this loss (4/3 x 1.22 /
            # sqrt(p) = 51 segments, 74 kB), so it does not cut the sawtooth, yet it keeps slow start from running
            # far ahead of the steady state in a short test, and far below BDP + queue: every loss is the random one.
            # mss_bytes: nuttcp -M1460 (what MTU 1500 gives anyway) makes the record carry the MSS, which the
            # retransmission estimate of the loss needs (1448 bytes of payload with timestamps)
            # 12 s tests: a shorter one is carried far above the steady state by its slow start
            nuttcp=({"window_bytes": 128 * 1024, "duration_s": 12, "interval_s": 15, "mss_bytes": 1460},),
            run_s=44,
            note="0.1 % random loss, Reno, 100 ms: Mathis (C=1.22) 4.47 Mb/s",
        ),
        Scenario(
            name="ASYMMETRIC_PATH",
            code="ASYM",
            index=3,
            a_to_b=line(20),
            b_to_a=Impairment(delay_ms=20, rate_bps=300e3, queue_bytes=32 * 1024),
            congestion_control="reno",
            # a 64 KiB window: what B sends into the 300 kb/s direction drains within seconds after the test
            nuttcp=({"window_bytes": WINDOW, "duration_s": 4, "interval_s": 10, "reverse": True},),
            run_s=26,
            expect_subject="B->A",
            note="B->A (the ACK path of A->B) limited to 300 kb/s",
        ),
        Scenario(
            name="TCP_ONLY_DEGRADATION",
            code="TCPO",
            index=4,
            a_to_b=line(10, loss=0.02, tcp_only=True),
            b_to_a=line(10),
            congestion_control="reno",
            seed=3,
            nuttcp=(
                {"window_bytes": BIG_WINDOW, "duration_s": 4, "interval_s": 9},
                # 4 MiB of receive buffer: the receiving host must not drop what the path delivers
                {"protocol": "udp", "rate_bps": 12e6, "duration_s": 3, "interval_s": 9, "window_bytes": BIG_WINDOW},
            ),
            run_s=24,
            note="2 % loss of TCP only at 20 ms (Reno); UDP at 12 Mb/s untouched",
        ),
        Scenario(
            name="PERIODIC_LOSS",
            code="PER",
            index=5,
            # Sessions every 2 s send 12 packets 0.15 s apart (0 .. 1.65 s): the 0.35 s without a packet between
            # two sessions is shorter than a loss of 0.37 s, so every loss hits a session, and (but for a 20 ms
            # coincidence) only one.
            a_to_b=Impairment(delay_ms=10, periodic_every_s=6.0, periodic_for_s=0.37),
            b_to_a=Impairment(delay_ms=10),
            congestion_control="reno",
            twamp={"packets": 12, "packet_interval_s": 0.15, "timeout_s": 0.15, "interval_s": 2},
            # 36 sessions, 11-12 losses: a period of three sessions seen 7 times in 23 is what random loss at that
            # rate gives with a probability of 2e-3, above what a mesh of thousands of paths can afford
            # (PERIODIC_MAX_CHANCE_PROBABILITY); 11 regular losses are 1e-7 to 1e-5, one of them missed included.
            run_s=72,
            extra={"period_s": 6.0},
            note="all packets A->B lost for 0.37 s every 6 s",
        ),
        Scenario(
            name="INTERFACE_ERRORS",
            code="IFE",
            index=6,
            a_to_b=line(5, error_rate=0.05),
            b_to_a=line(5),
            congestion_control="reno",
            seed=5,
            twamp={"packets": 100, "packet_interval_s": 0.02, "timeout_s": 0.3, "interval_s": 2.5},
            snmp_interval_s=3.0,
            run_s=20,
            expect_subject="port",
            note="5 % of the frames entering the router's port to-a are input errors",
        ),
        Scenario(
            name="CLEAN",
            code="CLN",
            index=7,
            a_to_b=line(5),
            b_to_a=line(5),
            congestion_control="bbr",
            # 240 KiB at 10 ms: W*8/RTT = 197 Mb/s, above the capacity (no window limit), yet no more in flight than
            # BDP (125 kB) plus a fraction of the queue: a loss-based flow (or BBR's start-up) with a larger window
            # overflows the router's buffer, which is a congested port, not a clean path
            nuttcp=({"window_bytes": 240 * 1024, "duration_s": 4, "interval_s": 8},),
            twamp={"packets": 20, "packet_interval_s": 0.05, "timeout_s": 0.5, "interval_s": 4},
            run_s=20,
            note="10 ms, 100 Mb/s, no impairment",
        ),
    )
}


def predicted_bps(scenario: Scenario) -> float | None:
    """What physics says the scenario's forward TCP tests reach (None where no single figure applies)."""
    capacity = scenario.capacity_mbps * 1e6
    if scenario.name == "WINDOW_LIMITED":  # nuttcp sets the window itself: no autotuning
        return physics.window_limit_bps(WINDOW, scenario.rtt_ms, autotuned=False)
    if scenario.name in ("LOSS_LIMITED", "TCP_ONLY_DEGRADATION"):
        return physics.mathis_bps(MSS_BYTES, scenario.rtt_ms, scenario.a_to_b.loss, scenario.congestion_control)
    if scenario.name == "ASYMMETRIC_PATH":
        return scenario.b_to_a.rate_bps
    return capacity if scenario.nuttcp else None
