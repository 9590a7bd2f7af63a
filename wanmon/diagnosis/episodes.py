"""Observations judged ok, degraded or down, and the runs and episodes they form (persistence)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from wanmon.diagnosis import constants as k
from wanmon.diagnosis.stats import cadence_s, seconds

OK, DEGRADED, DOWN = "ok", "degraded", "down"


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
        obs = sorted((o for o in observations if o.kind == kind), key=lambda o: o.time)
        cad = cadence_s([o.time for o in obs])
        max_gap = k.EPISODE_MAX_GAP_FACTOR * cad if cad else k.EPISODE_DEFAULT_MAX_GAP_S
        cur: list[Observation] = []
        healthy = 0
        for o in obs:
            if o.state in states:
                if cur and seconds(o.time - cur[-1].time) > max_gap:
                    runs.append(cur)
                    cur = []
                cur.append(o)
                healthy = 0
            elif cur:
                healthy += 1
                if healthy >= k.EPISODE_BREAK_HEALTHY:
                    runs.append(cur)
                    cur, healthy = [], 0
        if cur:
            runs.append(cur)
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
        cur: list[Observation] = []
        for o in sorted((o for o in observations if o.kind == kind), key=lambda o: o.time):
            if o.state == DOWN:
                cur.append(o)
            elif cur:
                runs.append(cur)
                cur = []
        if cur:
            runs.append(cur)
    return runs


def _near(run: Sequence[Observation], o: Observation) -> bool:
    slack = timedelta(seconds=k.PATH_DOWN_CROSS_CHECK_S)
    return run[0].time - slack <= o.time <= run[-1].time + slack


def other_kinds_near(
    a, run: Sequence[Observation]
) -> tuple[list[Observation], list[Observation]]:
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
