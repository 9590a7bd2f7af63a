"""Small robust statistics the diagnosis shares: one median, quantiles, the spread of results below a level, the
cadence of a series."""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

from wanmon.diagnosis import constants as k

MAD_TO_SIGMA = 1.4826  # robust standard deviation of a normal sample from its median absolute deviation


def median(values: Iterable[float]) -> float | None:
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


def quantile(values: Sequence[float], q: float) -> float | None:
    vals = sorted(v for v in values if v is not None)
    if not vals:
        return None
    pos = q * (len(vals) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(vals) - 1)
    return vals[lo] + (vals[hi] - vals[lo]) * (pos - lo)


def cadence_s(times: Sequence[datetime]) -> float | None:
    """Median spacing of sorted times (the measurement interval), None with fewer than two."""
    ts = sorted(times)
    gaps = [(b - a).total_seconds() for a, b in zip(ts, ts[1:], strict=False) if b > a]
    return statistics.median(gaps) if gaps else None


def seconds(td: timedelta) -> float:
    return td.total_seconds()


def robust_sigma(values: Sequence[float]) -> float | None:
    """1.4826 x the median absolute deviation around the median (None without values)."""
    mid = median(values)
    if mid is None:
        return None
    return statistics.median(abs(v - mid) for v in values if v is not None) * MAD_TO_SIGMA


def spread_below(values: Sequence[float]) -> float | None:
    """Spread of single results *below* a series' level, one that survives a ceiling.

    The robust sigma (MAD) of the series; when the results pile up against a ceiling (their lower side
    PILEUP_ASYMMETRY times wider than their upper side, from SELF_REFERENCE_MIN_STAT_TESTS results on), the wider
    robust sigma of the results below the pile (further below the median than PILEUP_ASYMMETRY upper sides): the
    MAD of the pile says how tight the pile is, not how far healthy results fall below it. A second level that is
    itself tight (an afternoon dip, a lasting drop) keeps its small spread, so it is still seen.
    """
    vals = [v for v in values if v is not None]
    sigma = robust_sigma(vals)
    if sigma is None or len(vals) < k.SELF_REFERENCE_MIN_STAT_TESTS:
        return sigma
    mid = statistics.median(vals)
    low, high = quantile(vals, k.LOWER_TAIL_QUANTILE), quantile(vals, 1 - k.LOWER_TAIL_QUANTILE)
    upper = high - mid
    if mid - low <= k.PILEUP_ASYMMETRY * upper:
        return sigma
    tail = [v for v in vals if v < mid - k.PILEUP_ASYMMETRY * upper]
    if len(tail) < k.MIN_REFERENCE_TESTS:
        return sigma
    return max(sigma, robust_sigma(tail) or 0.0)
