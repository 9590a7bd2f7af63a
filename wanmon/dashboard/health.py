"""Health of a path direction for the overview grid and the map (pure; thresholds in constants.py).

A cell's status is the worst of what its own measurements say (latest TCP test against capacity,
recent probe loss, a failed test) and of the open findings about the path, except that a running
maintenance on an element of the path turns it blue: degradation is expected there and is shown,
not alarmed (MAINTENANCE_EXPLAINED).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from wanmon.dashboard import constants as k
from wanmon.dashboard.formatting import format_bps, format_fraction, format_percent


@dataclass(frozen=True)
class PathObservation:
    """What the grid knows about one path direction at one instant."""

    src: str
    dst: str
    at: datetime
    capacity_bps: float | None = None
    latest_time: datetime | None = None
    latest_bps: float | None = None
    latest_error: str | None = None
    loss_fraction: float | None = None
    loss_packets: int | None = None
    finding_severities: tuple[str, ...] = ()
    maintenance: tuple[str, ...] = ()  # references of windows running on an element of the path

    @property
    def utilisation(self) -> float | None:
        """Latest throughput as a fraction of the capacity."""
        if self.latest_bps is None or not self.capacity_bps:
            return None
        return self.latest_bps / self.capacity_bps


@dataclass(frozen=True)
class Health:
    """Status (a key of constants.STATUS_STYLE) and the reasons for it, worst first."""

    status: str
    reasons: tuple[str, ...] = field(default_factory=tuple)

    @property
    def colour(self) -> str:
        return k.STATUS_STYLE[self.status][0]


def worst(levels: Iterable[str]) -> str:
    """The worst of ok/info/warning/critical levels (ok when empty)."""
    result = k.OK
    for level in levels:
        if k.SEVERITY_RANK.get(level, 0) > k.SEVERITY_RANK[result]:
            result = level if level != "info" else k.OK
    return result


def path_health(obs: PathObservation) -> Health:
    """Status and reasons of one grid cell; see the module docstring for the order of the rules."""
    reasons: list[tuple[int, str]] = []
    levels: list[str] = []

    def note(level: str, text: str) -> None:
        levels.append(level)
        reasons.append((k.SEVERITY_RANK.get(level, 0), text))

    if obs.finding_severities:
        top = worst(obs.finding_severities)
        count = len(obs.finding_severities)
        note(top, f"{count} open finding{'s' if count != 1 else ''} (worst: {max(obs.finding_severities, key=_rank)})")
    has_test = obs.latest_time is not None
    stale = has_test and obs.at - obs.latest_time > k.STALE_AFTER
    if has_test and not stale:
        if obs.latest_error:
            note(k.CRITICAL, f"last test failed: {obs.latest_error}")
        elif obs.utilisation is not None:
            share = obs.utilisation
            text = f"{format_bps(obs.latest_bps)} = {format_percent(share)} of {format_bps(obs.capacity_bps)}"
            if share < k.THROUGHPUT_CRITICAL_FRACTION:
                note(k.CRITICAL, text)
            elif share < k.THROUGHPUT_WARNING_FRACTION:
                note(k.WARNING, text)
            else:
                note(k.OK, text)
        elif obs.latest_bps is not None:
            note(k.OK, f"{format_bps(obs.latest_bps)} (capacity unknown)")
    if obs.loss_fraction is not None:
        text = f"probe loss {format_fraction(obs.loss_fraction)}"
        if obs.loss_fraction >= k.LOSS_CRITICAL_FRACTION:
            note(k.CRITICAL, text)
        elif obs.loss_fraction >= k.LOSS_WARNING_FRACTION:
            note(k.WARNING, text)
        else:
            note(k.OK, text)
    ordered = tuple(text for _, text in sorted(reasons, key=lambda r: -r[0]))

    if obs.maintenance:
        return Health(k.MAINTENANCE, (f"maintenance running: {', '.join(obs.maintenance)}", *ordered))
    level = worst(levels)
    if level != k.OK:
        return Health(level, ordered)
    if not has_test and obs.loss_fraction is None:
        return Health(k.NODATA, ("no test in the last 2 days",))
    if stale:
        return Health(k.STALE, (f"latest test at {obs.latest_time:%Y-%m-%d %H:%M} UTC", *ordered))
    return Health(k.OK, ordered)


def _rank(severity: str) -> int:
    return k.SEVERITY_RANK.get(severity, 0)
