"""Small robust statistics the diagnosis shares: one median, quantiles, the cadence of a series."""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

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
