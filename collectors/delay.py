"""Delay statistics shared by the owamp, twping and TWAMP-light collectors: one median, one jitter, one set of
figures for a direction (:class:`OneWayStats`).

``jitter_ms`` of an ``owamp`` record (docs/scenario-format.md#measurement-records) is the packet delay
variation P95 - P50 of the packets' delays in that direction (RFC 5481 §4.2, the PDV form): what
owping and twping print as "jitter", what owamp's ``-M`` report calls ``PDV``, and what this
module computes from packets. It says how far above the typical delay the slow packets sit, which
is what a buffer must absorb; a constant clock offset between the two ends cancels out.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields, replace
from typing import Self, TypeVar

Number = TypeVar("Number", int, float)


def nearest_rank(sorted_values: Sequence[Number], fraction: float) -> Number:
    """Nearest-rank percentile: the value below which ``fraction`` of the (sorted, non-empty) sample lies."""
    return sorted_values[max(1, math.ceil(fraction * len(sorted_values))) - 1]


def median(sorted_values: Sequence[Number]) -> Number:
    """The nearest-rank median of a sorted, non-empty sample (a value of the sample, as owamp's)."""
    return nearest_rank(sorted_values, 0.5)


def jitter(sorted_values: Sequence[Number]) -> Number:
    """P95 - P50 of a sorted, non-empty sample of delays: the one definition of ``jitter_ms``."""
    return nearest_rank(sorted_values, 0.95) - nearest_rank(sorted_values, 0.5)


def round_ms(value: float) -> float:
    """Round a delay computed from NTP timestamps to 1 ns (6 decimals in ms).

    The 32-bit binary fraction would otherwise print as 0.03600004129111767; owamp's own clock
    error estimate (~2.3e-10 s per timestamp) is finer than 1 ns, so nothing real is lost.
    """
    return round(value, 6)


def histogram_jitter(bins: Sequence[tuple[float, int]]) -> float:
    """:func:`jitter` of the sample a histogram of ``(value, count)`` bins (sorted by value, counts > 0) stands for.

    A perfSONAR ``histogram-latency`` keeps the delays but not their order, which is all this jitter needs.
    """
    total = sum(count for _, count in bins)

    def rank_value(fraction: float) -> float:
        rank, seen = max(1, math.ceil(fraction * total)), 0
        for value, count in bins:
            seen += count
            if seen >= rank:
                return value
        return bins[-1][0]

    return rank_value(0.95) - rank_value(0.5)


@dataclass(frozen=True)
class DelaySummary:
    """min/median/max of one kind of delay (one-way, round trip) and its :func:`jitter`, ms; None without samples."""

    delay_min_ms: float | None = None
    delay_median_ms: float | None = None
    delay_max_ms: float | None = None
    jitter_ms: float | None = None

    def rounded(self) -> Self:
        """The same with each delay rounded to 1 ns (:func:`round_ms`)."""
        delays = {f.name: getattr(self, f.name) for f in fields(DelaySummary)}
        return replace(self, **{name: None if ms is None else round_ms(ms) for name, ms in delays.items()})


@dataclass(frozen=True, kw_only=True)
class OneWayStats(DelaySummary):
    """One direction of a session: what an ``owamp`` record reports (docs/scenario-format.md#measurement-records).

    owping's sessions and TWAMP-light's directions are both this; ``ttl_min``/``ttl_max`` are the TTLs the
    packets arrived with (None: not reported or not readable).
    """

    packets_sent: int
    packets_lost: int
    duplicates: int | None = None
    reordered: int | None = None
    ttl_min: int | None = None
    ttl_max: int | None = None

    def figures(self) -> dict[str, int | float | None]:
        """The measurement fields of an ``owamp`` record, in its order."""
        return {
            "packets_sent": self.packets_sent,
            "packets_lost": self.packets_lost,
            "duplicates": self.duplicates,
            "reordered": self.reordered,
            "delay_min_ms": self.delay_min_ms,
            "delay_median_ms": self.delay_median_ms,
            "delay_max_ms": self.delay_max_ms,
            "jitter_ms": self.jitter_ms,
        }

    @property
    def packets_received(self) -> int:
        """Distinct packets that arrived."""
        return self.packets_sent - self.packets_lost

    @property
    def loss_pct(self) -> float | None:
        """Lost packets in percent of the sent ones (None when nothing was sent)."""
        if not self.packets_sent:
            return None
        return 100.0 * self.packets_lost / self.packets_sent


def summary_fields(delays: Iterable[Number], to_ms: Callable[[Number], float] = round_ms) -> dict[str, float | None]:
    """The :class:`DelaySummary` fields of a sample of delays in any order, each converted by ``to_ms``
    (rounding to 1 ns by default; NTP units to ms for TWAMP-light); all None for an empty sample."""
    values = sorted(delays)
    if not values:
        return dict.fromkeys(f.name for f in fields(DelaySummary))
    return {
        "delay_min_ms": to_ms(values[0]),
        "delay_median_ms": to_ms(median(values)),
        "delay_max_ms": to_ms(values[-1]),
        "jitter_ms": to_ms(jitter(values)),
    }
