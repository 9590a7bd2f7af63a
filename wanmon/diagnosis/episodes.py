"""Observations judged ok, degraded or down, and the runs and episodes they form (persistence)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TypeVar

from wanmon.diagnosis import constants as k
from wanmon.diagnosis.stats import cadence_s, seconds

OK, DEGRADED, DOWN = "ok", "degraded", "down"

T = TypeVar("T")


@dataclass(frozen=True)
class Observation:
    """One measurement judged ok, degraded or down."""

    time: datetime
    kind: str  # tcp | udp | owamp
    state: str  # ok | degraded | down
    value: float | None  # tcp: throughput_bps; udp/owamp: loss fraction
    expected: float | None  # tcp: expected rate; probes: None
    reason: str
    measurement_id: int | str | None = None
    reference: float | None = None  # tcp: the reference level the test was judged against


@dataclass(frozen=True)
class Episode:
    """A period in which a path direction was degraded (or down)."""

    start: datetime
    end: datetime
    observations: tuple[Observation, ...]  # the degraded / down ones

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(sorted({o.kind for o in self.observations}))

    @property
    def down_count(self) -> int:
        return sum(1 for o in self.observations if o.state == DOWN)

    @property
    def degraded_count(self) -> int:
        return sum(1 for o in self.observations if o.state == DEGRADED)

    def overlaps(self, start: datetime, end: datetime, slack_s: float = 0.0) -> bool:
        slack = timedelta(seconds=slack_s)
        return self.start <= end + slack and start <= self.end + slack


def run_max_gap_s(times: Sequence[datetime]) -> float:
    """The longest silence a run of a series survives: EPISODE_MAX_GAP_FACTOR of its measurement interval (its
    cadence), EPISODE_DEFAULT_MAX_GAP_S when the series is too short to tell."""
    cad = cadence_s(times)
    return k.EPISODE_MAX_GAP_FACTOR * cad if cad else k.EPISODE_DEFAULT_MAX_GAP_S


def consecutive_runs(
    items: Iterable[T], member: Callable[[T], bool], *, max_gap_s: float | None = None, break_after: int = 1
) -> list[list[T]]:
    """Runs of consecutive ``member`` items, in the order given: ``break_after`` consecutive other items end a
    run, and so does a gap of more than ``max_gap_s`` between two of its items (then items need a ``time``).
    Other items before a run starts are skipped."""
    runs: list[list[T]] = []
    cur: list[T] = []
    others = 0
    for item in items:
        if member(item):
            if cur and max_gap_s is not None and seconds(item.time - cur[-1].time) > max_gap_s:
                runs.append(cur)
                cur = []
            cur.append(item)
            others = 0
        elif cur:
            others += 1
            if others >= break_after:
                runs.append(cur)
                cur, others = [], 0
    if cur:
        runs.append(cur)
    return runs


def _of_kind(observations: Sequence[Observation], kind: str) -> list[Observation]:
    return sorted((o for o in observations if o.kind == kind), key=lambda o: o.time)


def build_runs(observations: Sequence[Observation], states: frozenset[str], min_count: int) -> list[list[Observation]]:
    """Runs of observations in ``states`` per measurement kind.

    A run ends after EPISODE_BREAK_HEALTHY consecutive other observations of the
    same kind, or after a gap of EPISODE_MAX_GAP_FACTOR measurement intervals.
    Kinds are handled separately because their cadences differ (owamp every few
    minutes, TCP every 30 min) and a clean owamp session does not contradict a
    TCP-only problem.
    """
    runs: list[list[Observation]] = []
    for kind in sorted({o.kind for o in observations}):
        obs = _of_kind(observations, kind)
        runs += consecutive_runs(
            obs,
            lambda o: o.state in states,
            max_gap_s=run_max_gap_s([o.time for o in obs]),
            break_after=k.EPISODE_BREAK_HEALTHY,
        )
    return [r for r in runs if len(r) >= min_count]


def merge_runs(runs: Sequence[Sequence[Observation]], slack_s: float = k.EPISODE_MERGE_SLACK_S) -> list[Episode]:
    """Merge runs of different kinds that overlap (within ``slack_s``) into episodes."""
    spans = sorted(((r[0].time, r[-1].time, list(r)) for r in runs), key=lambda s: s[0])
    episodes: list[Episode] = []
    for start, end, obs in spans:
        if episodes and start <= episodes[-1].end + timedelta(seconds=slack_s):
            last = episodes[-1]
            merged = sorted(list(last.observations) + obs, key=lambda o: o.time)
            episodes[-1] = Episode(last.start, max(last.end, end), tuple(merged))
        else:
            episodes.append(Episode(start, end, tuple(obs)))
    return episodes


def consecutive_down_runs(observations: Sequence[Observation]) -> list[list[Observation]]:
    """Runs of consecutive DOWN observations of one kind: any other observation of that kind ends a run
    (failed, ok, failed is two single failures, not a run of two)."""
    runs: list[list[Observation]] = []
    for kind in sorted({o.kind for o in observations}):
        runs += consecutive_runs(_of_kind(observations, kind), lambda o: o.state == DOWN)
    return runs


def _near(run: Sequence[Observation], o: Observation) -> bool:
    slack = timedelta(seconds=k.PATH_DOWN_CROSS_CHECK_S)
    return run[0].time - slack <= o.time <= run[-1].time + slack


def other_kinds_near(a, run: Sequence[Observation]) -> tuple[list[Observation], list[Observation]]:
    """Observations of the other measurement kinds around a run of failures: (those that got through, those that
    did not)."""
    observations = getattr(a, "observations", a)  # a PathAssessment or its observations
    others = [o for o in observations if o.kind != run[0].kind and _near(run, o)]
    return [o for o in others if o.state != DOWN], [o for o in others if o.state == DOWN]


def unconfirmed_downs(observations: Sequence[Observation]) -> set[int]:
    """Indexes of failed observations that are noise: a failure alone of its kind (no consecutive one) that no
    other measurement kind confirms (a test failing once between successes is a busy server)."""
    out: set[int] = set()
    index = {id(o): i for i, o in enumerate(observations)}
    for run in consecutive_down_runs(observations):
        if len(run) >= k.PATH_DOWN_MIN_OBSERVATIONS:
            continue
        _, failing = other_kinds_near(observations, run)
        if not failing:
            out |= {index[id(o)] for o in run}
    return out
