"""A path direction's normal level, learned from its history (pure).

The reference a test is judged against is what the path's own hosts achieve, not the link capacity, and it is
learned from weeks of history (BASELINE_HISTORY_DAYS, as the WLCG alarm work on perfSONAR data does):

- periods that were not normal are left out: maintenance windows and other excluded periods the caller knows
  of, days whose median lies clearly below the level of the path's good days (a degradation), and single
  results below DEGRADED_FRACTION of that level (a collapse, a busy host). A fault that lasted a week is then
  not the new normal: the good days of the history still say what the path reaches. A "day" is 24 hours
  counted back from the newest result, not a calendar date: every day then holds a whole diurnal cycle, and
  a fragment of one (the night hours before the first midnight of a short history) never sets the level the
  full days are judged against;
- the level depends on the time of day or week only where the data shows it: the median of an hour-of-week
  slot (tests of at least PROFILE_MIN_PERIODS different weeks) or else of an hour-of-day slot (as many
  different days) replaces the overall median only when it differs from it by more than PROFILE_SIGNIFICANCE
  standard errors of that slot's median. A handful of noisy tests never makes a profile.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property

from wanmon.diagnosis import constants as k
from wanmon.diagnosis.stats import MAD_TO_SIGMA, spread_below

HOUR_S = 3600
DAY_S = 86400
WEEK_H = 168


@dataclass(frozen=True)
class LearnedLevel:
    """The healthy results of a history and the time-of-day/week profile they show."""

    rates_bps: tuple[float, ...]  # healthy results (time order)
    excluded: int  # results left out (excluded periods, degraded days, clear drops)
    by_hour_of_week: tuple[tuple[int, float], ...] = ()  # slot (0 = Monday 00 UTC) -> median, significant only
    by_hour_of_day: tuple[tuple[int, float], ...] = ()
    first_at: datetime | None = None  # the oldest and newest result of the history (its age), left-out ones too
    last_at: datetime | None = None

    @property
    def results(self) -> int:
        """Results the history holds, left-out ones included (its size)."""
        return len(self.rates_bps) + self.excluded

    @property
    def span_s(self) -> float:
        """Seconds from the oldest result of the history to its newest (its age); 0 without results."""
        return (self.last_at - self.first_at).total_seconds() if self.first_at and self.last_at else 0.0

    @cached_property
    def median_bps(self) -> float | None:
        return statistics.median(self.rates_bps) if self.rates_bps else None

    @cached_property
    def weekly(self) -> dict[int, float]:
        return dict(self.by_hour_of_week)

    @cached_property
    def daily(self) -> dict[int, float]:
        return dict(self.by_hour_of_day)

    @cached_property
    def mad_bps(self) -> float | None:
        mid = self.median_bps
        return statistics.median(abs(r - mid) for r in self.rates_bps) if mid is not None else None

    @cached_property
    def spread_below_bps(self) -> float | None:
        """Spread of healthy results below the level, surviving a ceiling they pile up against (stats.spread_below)."""
        return spread_below(self.rates_bps)


def hour_of_week(t: datetime) -> int:
    return t.weekday() * 24 + t.hour


def _inside(t: datetime, periods: Sequence[tuple[datetime, datetime]]) -> bool:
    return any(s <= t <= e for s, e in periods)


def history_days(times: Sequence[datetime], end: datetime | None = None) -> list[int]:
    """The day of each result: 0 for the 24 hours up to the end of the history (``end``, else its newest result),
    1 for the 24 before, and so on. The oldest, partial day joins the one after it, so that every day spans at
    least 24 hours (a whole diurnal cycle); a history shorter than that is one day."""
    if not times:
        return []
    newest, oldest = max(max(times), end or max(times)), min(times)
    full = max(1, int((newest - oldest).total_seconds() // DAY_S))
    return [min(int((newest - t).total_seconds() // DAY_S), full - 1) for t in times]


def healthy_results(
    results: Iterable[tuple[datetime, float]],
    excluded: Sequence[tuple[datetime, datetime]] = (),
    end: datetime | None = None,
) -> tuple[list[tuple[datetime, float]], int]:
    """The results of a history that describe the path's normal state, and how many were left out.

    The level of the good days is the upper quartile of the day medians (days of ``history_days``, with at least
    MIN_REFERENCE_TESTS results): as long as a quarter of the history was healthy, a degradation that filled
    the rest does not lower it. Days whose median is clearly below that level (as a day of the window is judged
    by degradation._level_shift), and single results below DEGRADED_FRACTION of it, are left out.
    """
    all_results = sorted(results)
    kept = [(t, r) for t, r in all_results if not _inside(t, excluded)]
    day_of = dict(zip((t for t, _ in kept), history_days([t for t, _ in kept], end), strict=True))
    days: dict[int, list[float]] = defaultdict(list)
    for t, r in kept:
        days[day_of[t]].append(r)
    medians = sorted(statistics.median(v) for v in days.values() if len(v) >= k.MIN_REFERENCE_TESTS)
    if medians:
        good = medians[int(k.SELF_REFERENCE_QUANTILE * (len(medians) - 1) + 0.5)]
    elif kept:
        good = statistics.median(r for _, r in kept)
    else:
        return [], len(all_results)
    # a day is degraded as a day of the evaluated window is (degradation._level_shift): its median below the good
    # level by DEGRADED_STAT_MIN_DROP and by DEGRADED_STAT_SIGMAS standard errors of a median of that many
    # results (sigma from the days that are not candidates): six noisy Reno results a day wander by 20 %
    low = (1 - k.DEGRADED_STAT_MIN_DROP) * good
    candidates = {d for d, v in days.items() if len(v) >= k.MIN_REFERENCE_TESTS and statistics.median(v) < low}
    normal = [r for t, r in kept if day_of[t] not in candidates]
    sigma = 0.0
    if len(normal) >= k.MIN_REFERENCE_TESTS:
        mid = statistics.median(normal)
        sigma = statistics.median(abs(r - mid) for r in normal) * MAD_TO_SIGMA
    bad_days = {
        d
        for d in candidates
        if good - statistics.median(days[d])
        > k.DEGRADED_STAT_SIGMAS * k.MEDIAN_STANDARD_ERROR_FACTOR * sigma / len(days[d]) ** 0.5
    }
    healthy = [(t, r) for t, r in kept if day_of[t] not in bad_days and r >= k.DEGRADED_FRACTION * good]
    return healthy, len(all_results) - len(healthy)


def _profile(
    results: Sequence[tuple[datetime, float]], slot_of, period_of, overall: float, sigma: float
) -> tuple[tuple[int, float], ...]:
    slots: dict[int, list[tuple[object, float]]] = defaultdict(list)
    for t, r in results:
        slots[slot_of(t)].append((period_of(t), r))
    out = []
    for slot, values in sorted(slots.items()):
        if len({p for p, _ in values}) < k.PROFILE_MIN_PERIODS:
            continue
        mid = statistics.median(r for _, r in values)
        se = k.MEDIAN_STANDARD_ERROR_FACTOR * sigma / len(values) ** 0.5
        if abs(mid - overall) > k.PROFILE_SIGNIFICANCE * se:
            out.append((slot, mid))
    return tuple(out)


def learn_level(
    results: Iterable[tuple[datetime, float]],
    excluded: Sequence[tuple[datetime, datetime]] = (),
    end: datetime | None = None,
) -> LearnedLevel:
    """Learn a path direction's level from its history of (time, rate) results up to ``end`` (see the module
    docstring)."""
    results = list(results)
    first = min((t for t, _ in results), default=None)
    last = max((t for t, _ in results), default=None)
    healthy, dropped = healthy_results(results, excluded, end)
    rates = tuple(r for _, r in healthy)
    if len(rates) < k.MIN_REFERENCE_TESTS:
        return LearnedLevel(rates, dropped, first_at=first, last_at=last)
    overall = statistics.median(rates)
    sigma = statistics.median(abs(r - overall) for r in rates) * MAD_TO_SIGMA
    if sigma <= 0:
        return LearnedLevel(rates, dropped, first_at=first, last_at=last)
    weekly = _profile(healthy, hour_of_week, lambda t: t.isocalendar()[:2], overall, sigma)
    daily = _profile(healthy, lambda t: t.hour, lambda t: t.date(), overall, sigma)
    return LearnedLevel(rates, dropped, weekly, daily, first_at=first, last_at=last)


def level_at(level: LearnedLevel, t: datetime) -> float | None:
    """The reference for a result at ``t``: its hour-of-week slot's, else its hour-of-day slot's, else the median
    (a slot is listed only when it differs significantly from the median)."""
    if level.by_hour_of_week:
        mid = level.weekly.get(hour_of_week(t))
        if mid is not None:
            return mid
    if level.by_hour_of_day:
        mid = level.daily.get(t.hour)
        if mid is not None:
            return mid
    return level.median_bps
