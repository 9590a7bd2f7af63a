"""Loss of a path direction: owamp, UDP tests and TCP retransmits combined, with detection limits."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from wanmon.diagnosis import constants as k
from wanmon.diagnosis import text
from wanmon.diagnosis.evidence import OwampTest, ThroughputTest

TCP, UDP, OWAMP = "tcp", "udp", "owamp"  # measurement kinds


@dataclass(frozen=True)
class LossSource:
    """Packets lost and sent according to one kind of measurement."""

    source: str  # "owamp" | "udp" | "tcp_retransmits"
    lost: float
    sent: float
    samples: int

    @property
    def fraction(self) -> float:
        return self.lost / self.sent if self.sent > 0 else 0.0

    @property
    def detection_limit(self) -> float:
        """Smallest loss fraction this many packets can reveal (95 %, rule of three)."""
        return k.ZERO_LOSS_UPPER_BOUND_EVENTS / self.sent if self.sent > 0 else 1.0

    @property
    def is_probe(self) -> bool:
        return self.source in (OWAMP, UDP)

    def describe(self) -> str:
        unit = "segments" if self.source == "tcp_retransmits" else "packets"
        label = {"owamp": "owamp", "udp": "UDP tests", "tcp_retransmits": "TCP retransmits"}[self.source]
        if self.lost == 0:
            return (
                f"{label}: 0 of {self.sent:,.0f} {unit} lost in {self.samples} run(s), so loss is below "
                f"{self.detection_limit:.1e} (the detection limit of that sample)"
            )
        return f"{label}: {self.lost:,.0f} of {self.sent:,.0f} {unit} ({text.loss(self.fraction)})"


@dataclass(frozen=True)
class LossEstimate:
    """Loss of a path direction over a period, combining every source.

    ``fraction`` is the best estimate: the largest loss any direct probe (owamp,
    UDP) actually observed (the source that sees loss is the more sensitive one
    for the traffic that matters); otherwise the TCP retransmit estimate;
    otherwise 0 with ``detection_limit`` saying how small a loss could have
    gone unseen; ``None`` when nothing measured loss at all.
    """

    fraction: float | None
    source: str | None
    detection_limit: float | None
    sources: tuple[LossSource, ...]

    def source_named(self, name: str) -> LossSource | None:
        for s in self.sources:
            if s.source == name:
                return s
        return None

    @property
    def probe_fraction(self) -> float | None:
        probes = [s for s in self.sources if s.is_probe]
        if not probes:
            return None
        return max(s.fraction for s in probes)

    @property
    def probe_detection_limit(self) -> float | None:
        probes = [s for s in self.sources if s.is_probe]
        return min(s.detection_limit for s in probes) if probes else None

    @property
    def tcp_fraction(self) -> float | None:
        s = self.source_named("tcp_retransmits")
        return s.fraction if s else None

    def describe(self) -> str:
        if not self.sources:
            return "no loss measurement in this period"
        return "; ".join(s.describe() for s in self.sources)


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


def estimate_loss(
    owamp_tests: Iterable[OwampTest],
    udp_tests: Iterable[ThroughputTest],
    tcp_tests: Iterable[ThroughputTest],
    capacity_bps: float | None = None,
) -> LossEstimate:
    """Combine owamp, UDP and TCP-retransmit loss over one period (see ``LossEstimate``)."""
    sources: list[LossSource] = []
    sessions = usable_owamp(owamp_tests)
    if sessions:
        sources.append(
            LossSource(
                OWAMP, sum(o.packets_lost for o in sessions), sum(o.packets_sent for o in sessions), len(sessions)
            )
        )
    udp = usable_udp(udp_tests, capacity_bps)
    if udp:
        sources.append(
            LossSource(UDP, sum(t.packets_lost or 0 for t in udp), sum(t.packets_sent or 0 for t in udp), len(udp))
        )
    lost = sent = 0.0
    n = 0
    for t in tcp_tests:
        if t.protocol != TCP or t.error is not None:
            continue
        if t.retransmits is None or t.throughput_bps is None or not t.duration_s or not t.mss_bytes:
            continue
        delivered = t.throughput_bps * t.duration_s / 8.0 / t.mss_bytes
        lost += t.retransmits
        sent += delivered + t.retransmits
        n += 1
    if n and sent > 0:
        sources.append(LossSource("tcp_retransmits", lost, sent, n))

    if not sources:
        return LossEstimate(None, None, None, ())
    lossy_probes = [s for s in sources if s.is_probe and s.lost > 0]
    tcp = next((s for s in sources if s.source == "tcp_retransmits"), None)
    if lossy_probes:
        best = max(lossy_probes, key=lambda s: s.fraction)
        return LossEstimate(best.fraction, best.source, None, tuple(sources))
    if tcp is not None and tcp.lost > 0:
        return LossEstimate(tcp.fraction, tcp.source, None, tuple(sources))
    limit = min(s.detection_limit for s in sources)
    return LossEstimate(0.0, None, limit, tuple(sources))
