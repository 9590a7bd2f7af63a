"""What a path's TCP tests get of the room the other traffic leaves them, learned from its history (pure).

A test on a shared link gets the smaller of what its hosts reach and its share of the room the load left it on the
tightest polled port of its path (speed less load).  That share is a property of the path, not a constant: where
the other traffic is elastic (TCP flows that yield), a test takes more than the room the 5-minute load average
says (a steady 105-110 % on a busy afternoon); a stack that yields takes less.  With the share learned from the
path's own past (``RoomModel``), every test has an expected rate that the load of its minute has already been
accounted for in: ``expected_bps``.  A fault that takes a fifth of every test (an inline device at 80 % of line
rate) then shows as tests at 80 % of what their room allowed, all day, where the single-test judgement "it got
most of what the load left it" (LOAD_SPARE_MATCH_FRACTION) and a day's median of raw rates (the diurnal load's
spread) both let it pass.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from wanmon.diagnosis import constants as k
from wanmon.diagnosis.stats import quantile, robust_sigma


@dataclass(frozen=True)
class RoomModel:
    """A path's usual relation between its tests and their room: ``reach_bps``, what its hosts carry when the room
    allows (the ROOM_REACH_QUANTILE of its results); ``share``, the median of rate / room over the tests whose room
    was below that reach (the load, not the hosts, set their ceiling); and the spread of the history's tests
    against the expectation the two give (``usual_ratio``, its median, and ``sigma``, its robust sigma: the
    expectation takes the hosts' ceiling out, so the ratios do not pile up against one, and a lasting drop that
    is in the history already widens a spread of the lower tail but hardly the MAD)."""

    reach_bps: float
    share: float
    usual_ratio: float
    sigma: float
    tests: int

    def expected_bps(self, room_bps: float) -> float:
        """What a test with ``room_bps`` of room usually gets: its share of the room, at most its hosts' reach."""
        return min(self.reach_bps, self.share * room_bps)

    def ratio(self, throughput_bps: float, room_bps: float) -> float | None:
        """A test's rate against what its room and hosts usually allow it (None without room)."""
        expected = self.expected_bps(room_bps)
        return throughput_bps / expected if expected > 0 else None


def room_model(history: Sequence[tuple[datetime, float, float]]) -> RoomModel | None:
    """The path's ``RoomModel`` from (time, throughput_bps, room_bps) of its past tests; None with fewer than
    ROOM_MODEL_MIN_TESTS of them, or fewer than MIN_REFERENCE_TESTS whose room bound them: a path whose hosts
    always set its ceiling is judged on its rates alone (degradation._level_shift), the room adds nothing."""
    if len(history) < k.ROOM_MODEL_MIN_TESTS:
        return None
    reach = quantile([r for _, r, _ in history], k.ROOM_REACH_QUANTILE)
    if not reach:
        return None
    bound = [r / room for _, r, room in history if 0 < room < reach]
    if len(bound) < k.MIN_REFERENCE_TESTS:
        return None
    shape = RoomModel(reach, statistics.median(bound), 1.0, 0.0, 0)
    ratios = [x for x in (shape.ratio(r, room) for _, r, room in history) if x is not None]
    sigma = robust_sigma(ratios)
    if len(ratios) < k.ROOM_MODEL_MIN_TESTS or not sigma:
        return None
    return RoomModel(reach, shape.share, statistics.median(ratios), sigma, len(ratios))
