"""Loss of a path direction: owamp, UDP tests and TCP retransmits combined by the precision of each, with
detection limits.

Each source gives a rate and a 95 % confidence interval from its packet count (Wilson's score interval for a
binomial proportion). The most precise source (the narrowest interval) leads; a source whose interval overlaps
the leader's measures the same loss and does not override it, so a few stray owamp losses cannot outweigh a
loss rate measured over millions of UDP packets. A less precise source overrides only with a loss its interval
cannot share, seen in several runs that are lossy on their own (the loss changed while only it measured).
Single lost packets scattered over owamp sessions are below what a session can see (about 2e-3 of 600
packets, docs/diagnosis.md): they bound the loss, they do not measure it. One estimator for every rule and for
the path page's derived figures (``lead_loss``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from wanmon.diagnosis import constants as k
from wanmon.diagnosis import text
from wanmon.diagnosis.evidence import OwampTest, ThroughputTest

TCP, UDP, OWAMP = "tcp", "udp", "owamp"  # measurement kinds
RETRANSMITS = "tcp_retransmits"

#: z of a two-sided 95 % interval (the confidence of the rule of three's detection limit).
Z_95 = 1.959964


def wilson_interval(lost: float, sent: float, z: float = Z_95) -> tuple[float, float]:
    """Wilson's score interval of a binomial proportion ``lost / sent`` (95 % by default).

    Unlike the normal approximation it stays inside [0, 1] and is right for the rare events of loss: with no
    loss in N packets its upper end is about z^2 / N (3.8 / N, near the rule of three), and 1.1e-5 measured
    over 33 M packets is known to a few per cent.
    """
    if sent <= 0:
        return 0.0, 1.0
    p = min(max(lost / sent, 0.0), 1.0)
    z2 = z * z
    denom = 1.0 + z2 / sent
    centre = (p + z2 / (2.0 * sent)) / denom
    half = z * math.sqrt(p * (1.0 - p) / sent + z2 / (4.0 * sent * sent)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class LossSource:
    """Packets lost and sent according to one kind of measurement."""

    source: str  # "owamp" | "udp" | "tcp_retransmits"
    lost: float
    sent: float
    samples: int
    #: packets lost in runs that are lossy evidence on their own (owamp sessions of OWAMP_MIN_LOST_PACKETS, UDP
    #: tests of UDP_MIN_LOST_PACKETS and more) and how many such runs; None: not counted (every loss counts)
    visible_lost: float | None = None
    visible_runs: int = 0

    @property
    def fraction(self) -> float:
        return self.lost / self.sent if self.sent > 0 else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        """95 % confidence interval of the loss fraction from this source's packet count."""
        return wilson_interval(self.lost, self.sent)

    @property
    def width(self) -> float:
        """Width of the interval: the smaller, the more precise the source."""
        low, high = self.interval
        return high - low

    @property
    def scattered(self) -> bool:
        """owamp sessions that each lost a packet or two: below what a session can see, a bound, not a rate."""
        return self.source == OWAMP and self.visible_lost is not None and self.lost > 0 and self.visible_lost <= 0

    def overrides(self, leader: LossSource) -> bool:
        """A less precise source's loss stands against the leader's when the loss it saw in runs that are lossy
        on their own, in at least MIN_EPISODE_OBSERVATIONS of them, cannot be the leader's (interval above it):
        the loss changed while only this one measured. One burst, or stray single losses, never override."""
        if self.visible_lost is None:
            lost, runs = self.lost, self.samples if self.lost > 0 else 0
        else:
            lost, runs = self.visible_lost, self.visible_runs
        if lost <= 0 or runs < k.MIN_EPISODE_OBSERVATIONS:
            return False
        return wilson_interval(lost, self.sent)[0] > leader.interval[1]

    @property
    def detection_limit(self) -> float:
        """Smallest loss fraction this many packets can reveal (95 %, rule of three); for scattered stray
        losses the upper end of their interval (the loss is at most that, and owamp cannot say more)."""
        if self.sent <= 0:
            return 1.0
        if self.scattered:
            return self.interval[1]
        return k.ZERO_LOSS_UPPER_BOUND_EVENTS / self.sent

    @property
    def is_probe(self) -> bool:
        return self.source in (OWAMP, UDP)

    def consistent_with(self, other: LossSource) -> bool:
        """The two 95 % intervals overlap: both may measure the same loss."""
        low, high = self.interval
        other_low, other_high = other.interval
        return low <= other_high and other_low <= high

    def describe(self) -> str:
        unit = "segments" if self.source == RETRANSMITS else "packets"
        label = {OWAMP: "owamp", UDP: "UDP tests", RETRANSMITS: "TCP retransmits"}[self.source]
        if self.lost == 0:
            return (
                f"{label}: 0 of {self.sent:,.0f} {unit} lost in {self.samples} run(s), so loss is below "
                f"{self.detection_limit:.1e} (the detection limit of that sample)"
            )
        if self.scattered:
            return (
                f"{label}: {self.lost:,.0f} of {self.sent:,.0f} {unit}, single losses scattered over "
                f"{self.samples} sessions (below a session's detection limit: loss below {self.detection_limit:.1e})"
            )
        return f"{label}: {self.lost:,.0f} of {self.sent:,.0f} {unit} ({text.loss(self.fraction)})"

    def as_evidence(self, leader: LossSource | None) -> dict:
        """The source as a finding's evidence keeps it: counts, interval, and how it stands to the leader."""
        low, high = self.interval
        return {
            "source": self.source,
            "lost": self.lost,
            "sent": self.sent,
            "runs": self.samples,
            "detection_limit": self.detection_limit,
            "interval": [low, high],
            "leads": self is leader,
            "consistent_with_leader": None if leader is None or self is leader else self.consistent_with(leader),
            "scattered": self.scattered,
        }


@dataclass(frozen=True)
class LossEstimate:
    """Loss of a path direction over a period, combining every source (see the module docstring).

    ``fraction`` is the best estimate: the leading probe's (owamp, UDP) when a probe saw loss, otherwise the
    TCP retransmit estimate, otherwise 0 with ``detection_limit`` saying how small a loss could have gone
    unseen; ``None`` when nothing measured loss at all. ``leader`` is the source the figure comes from.
    """

    fraction: float | None
    source: str | None
    detection_limit: float | None
    sources: tuple[LossSource, ...]
    leader: LossSource | None = None
    probe: LossSource | None = None  # the leading probe (owamp or UDP), also when it saw no loss

    def source_named(self, name: str) -> LossSource | None:
        for s in self.sources:
            if s.source == name:
                return s
        return None

    @property
    def packets(self) -> float | None:
        """Packets (or segments) behind ``fraction``: the leading source's."""
        return self.leader.sent if self.leader else None

    @property
    def probe_fraction(self) -> float | None:
        """Loss the probes measured (the leading probe's; 0 when they saw none or only scattered stray losses)."""
        if self.probe is None:
            return None
        return 0.0 if self.probe.scattered else self.probe.fraction

    @property
    def probe_detection_limit(self) -> float | None:
        probes = [s for s in self.sources if s.is_probe]
        return min(s.detection_limit for s in probes) if probes else None

    @property
    def tcp_fraction(self) -> float | None:
        s = self.source_named(RETRANSMITS)
        return s.fraction if s else None

    def describe(self) -> str:
        if not self.sources:
            return "no loss measurement in this period"
        parts = []
        for s in self.sources:
            part = s.describe()
            if s is self.leader and len(self.sources) > 1:
                part += f", leads ({self.leader.sent:,.0f} {'segments' if s.source == RETRANSMITS else 'packets'})"
            parts.append(part)
        return "; ".join(parts)

    def evidence(self) -> list[dict]:
        """Every source with its counts and interval, the leader marked (a finding's ``loss_sources``)."""
        return [s.as_evidence(self.leader) for s in self.sources]


def _leading_probe(probes: Sequence[LossSource]) -> LossSource | None:
    """The probe source whose figure stands: the most precise (narrowest interval), unless a less precise one saw a
    loss its interval cannot share, in several runs of its own (``LossSource.overrides``). owamp's single losses
    scattered over sessions are below a session's detection limit: they bound the loss and never lead."""
    if not probes:
        return None
    measuring = [s for s in probes if not s.scattered]
    if not measuring:
        return min(probes, key=lambda s: s.width)
    leader = min(measuring, key=lambda s: s.width)
    above = [s for s in measuring if s is not leader and s.overrides(leader)]
    return max(above, key=lambda s: s.fraction) if above else leader


def lead_loss(sources: Sequence[LossSource]) -> LossEstimate:
    """The loss estimate from per-source counts (see ``LossEstimate``); the one estimator of a path's loss."""
    sources = tuple(sources)
    if not sources:
        return LossEstimate(None, None, None, ())
    probe = _leading_probe([s for s in sources if s.is_probe])
    tcp = next((s for s in sources if s.source == RETRANSMITS), None)
    if probe is not None and probe.lost > 0 and not probe.scattered:
        return LossEstimate(probe.fraction, probe.source, None, sources, probe, probe)
    if tcp is not None and tcp.lost > 0:
        return LossEstimate(tcp.fraction, tcp.source, None, sources, tcp, probe)
    limit = min(s.detection_limit for s in sources)
    return LossEstimate(0.0, None, limit, sources, None, probe)


_USABLE: dict[int, tuple[tuple[OwampTest, ...], list[OwampTest]]] = {}


def usable_owamp(sessions: Iterable[OwampTest]) -> list[OwampTest]:
    """Sessions that measure loss (100 % loss is an outage, not a loss rate).

    A path's sessions (a tuple) are asked for by several rules in one evaluation: the answer is kept for the
    tuple last seen (a few hundred sessions of each of 132 paths, asked about nine times each).
    """
    if not isinstance(sessions, tuple):
        return [o for o in sessions if o.packets_sent > 0 and o.packets_lost < o.packets_sent]
    hit = _USABLE.get(id(sessions))
    if hit is None or hit[0] is not sessions:
        if len(_USABLE) > 4096:
            _USABLE.clear()
        hit = _USABLE[id(sessions)] = (
            sessions,
            [o for o in sessions if o.packets_sent > 0 and o.packets_lost < o.packets_sent],
        )
    return list(hit[1])


def usable_udp(tests: Iterable[ThroughputTest], capacity_bps: float | None) -> list[ThroughputTest]:
    """UDP tests that measure path loss: completed, not 100 % lost, not offered above the capacity."""
    out = []
    for t in tests:
        if t.protocol != UDP or t.error is not None or not t.packets_sent or t.packets_lost is None:
            continue
        if t.packets_lost >= t.packets_sent:
            continue
        if capacity_bps and t.offered_bps and t.offered_bps > capacity_bps:
            continue  # overload loss says nothing about the path
        out.append(t)
    return out


def owamp_source(lost: float, sent: float, sessions: int, visible_lost: float, visible_runs: int) -> LossSource:
    """owamp's source from its sums (``visible_*``: the sessions that lost at least OWAMP_MIN_LOST_PACKETS)."""
    return LossSource(OWAMP, lost, sent, sessions, visible_lost, visible_runs)


def udp_source(lost: float, sent: float, tests: int, visible_lost: float, visible_runs: int) -> LossSource:
    """UDP tests' source from their sums (``visible_*``: the tests that lost at least UDP_MIN_LOST_PACKETS)."""
    return LossSource(UDP, lost, sent, tests, visible_lost, visible_runs)


def retransmit_counts(t: ThroughputTest) -> tuple[float, float] | None:
    """Segments one TCP test retransmitted and sent (delivered + retransmitted); None when it did not say."""
    if t.protocol != TCP or t.error is not None:
        return None
    if t.retransmits is None or t.throughput_bps is None or not t.duration_s or not t.mss_bytes:
        return None
    delivered = t.throughput_bps * t.duration_s / 8.0 / t.mss_bytes
    return float(t.retransmits), delivered + t.retransmits


def estimate_loss(
    owamp_tests: Iterable[OwampTest],
    udp_tests: Iterable[ThroughputTest],
    tcp_tests: Iterable[ThroughputTest],
    capacity_bps: float | None = None,
) -> LossEstimate:
    """Combine owamp, UDP and TCP-retransmit loss over one period (see ``LossEstimate`` and ``lead_loss``)."""
    sources: list[LossSource] = []
    sessions = usable_owamp(owamp_tests)
    if sessions:
        # a bucket of the cycle that lost packets is one session (selectors/series.py): its count is the session's
        lossy = [o.packets_lost for o in sessions if o.packets_lost >= k.OWAMP_MIN_LOST_PACKETS]
        sources.append(
            owamp_source(
                sum(o.packets_lost for o in sessions),
                sum(o.packets_sent for o in sessions),
                sum(max(1, len(o.session_times)) for o in sessions),
                sum(lossy),
                len(lossy),
            )
        )
    udp = usable_udp(udp_tests, capacity_bps)
    if udp:
        lossy = [t.packets_lost or 0 for t in udp if (t.packets_lost or 0) >= k.UDP_MIN_LOST_PACKETS]
        sources.append(
            udp_source(
                sum(t.packets_lost or 0 for t in udp),
                sum(t.packets_sent or 0 for t in udp),
                len(udp),
                sum(lossy),
                len(lossy),
            )
        )
    lost = sent = 0.0
    n = 0
    for t in tcp_tests:
        counts = retransmit_counts(t)
        if counts is None:
            continue
        lost += counts[0]
        sent += counts[1]
        n += 1
    if n and sent > 0:
        sources.append(LossSource(RETRANSMITS, lost, sent, n))
    return lead_loss(sources)
