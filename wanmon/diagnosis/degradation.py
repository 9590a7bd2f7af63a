"""How the results of one path direction are judged: the reference throughput they are compared with (the
path's baseline, or without one its own healthy tests), the state of every result (ok, degraded or down, and
why), and which runs of bad results make a degradation episode."""

from __future__ import annotations

import statistics
from collections import deque
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from wanmon.diagnosis import constants as k
from wanmon.diagnosis import physics, text
from wanmon.diagnosis.episodes import (
    DEGRADED,
    DOWN,
    OK,
    Episode,
    Observation,
    build_runs,
    merge_runs,
    unconfirmed_downs,
)
from wanmon.diagnosis.evidence import PathEvidence
from wanmon.diagnosis.loss import OWAMP, TCP, UDP
from wanmon.diagnosis.room import room_model
from wanmon.diagnosis.stats import MAD_TO_SIGMA, cadence_s, seconds, spread_below

if TYPE_CHECKING:
    from wanmon.diagnosis.assessment import PathAssessment, TestFigures

BASELINE_REFERENCE = "baseline median"


def reference_of(
    path: PathEvidence, figures: Sequence[TestFigures]
) -> tuple[float | None, float | None, str, float | None]:
    """The path's reference throughput, its spread, where it comes from, and the spread single tests are judged
    with: the baseline median, or without a baseline the median of the window's healthy tests."""
    ref, sigma, ref_source = _reference(path, figures)
    if ref_source != BASELINE_REFERENCE:
        _, healthy = _self_references(figures)
        if len(healthy) >= k.MIN_REFERENCE_TESTS:
            ref = statistics.median(healthy)
            sigma = spread_below(healthy)
            ref_source = "median of the window's healthy tests (no baseline)"
    test_sigma = _test_sigma(path, figures, ref, sigma) if ref_source == BASELINE_REFERENCE else sigma
    return ref, sigma, ref_source, test_sigma


def judged(partial: PathAssessment) -> PathAssessment:
    """The assessment with every result judged (``observations``) and its degradation ``episodes``."""
    room = _room_shortfall(partial)
    lasting = {**_lasting_drop(partial), **room}
    shifted = {**_level_shift(partial), **{i: why for i, (why, _) in lasting.items()}}
    short_of_room: set[datetime] = set()
    observations = tuple(
        sorted(_observations(partial, shifted, short_of_room, set(room)), key=lambda o: o.time)
    )
    noise = unconfirmed_downs(observations)
    significant = [o for i, o in enumerate(observations) if i not in noise]
    since = {partial.tcp[i].test.time: t for i, (_, t) in lasting.items()}
    # a result that ends half a day below the level is persistent on its own (the span says it lasted)
    runs = [
        r
        for r in build_runs(significant, frozenset({DEGRADED, DOWN}), 1)
        if len(r) >= k.MIN_EPISODE_OBSERVATIONS or all(o.time in since for o in r)
    ]
    settled = not little_history(partial.path)
    runs = [r for r in runs if _persistent(r, runs, set(since), settled, short_of_room)]
    episodes = tuple(_since(ep, since) for ep in merge_runs(runs))
    return replace(partial, observations=observations, episodes=episodes)


def _since(ep: Episode, since: dict[datetime, datetime]) -> Episode:
    """The episode from the first result below the level of a lasting drop it holds (before the window, if so)."""
    starts = [since[o.time] for o in ep.observations if o.time in since]
    return replace(ep, start=min(starts)) if starts and min(starts) < ep.start else ep


def history_of(path: PathEvidence) -> dict:
    """The age and size of the history a path's relative judgements rest on (every relative finding carries it):
    the span from the oldest to the newest TCP result of its baseline (``span_s``, ``first``, ``last``), how many
    there are (``results``; a summary built without a learned level counts its tests over its period) and whether
    that is ``little`` (HISTORY_MIN_SPAN_S, HISTORY_MIN_RESULTS)."""
    b = path.baseline
    level = b.tcp_level if b is not None else None
    if b is None:
        span, results, first, last = 0.0, 0, None, None
    elif level is not None and level.first_at is not None:
        span, results, first, last = level.span_s, level.results, level.first_at, level.last_at
    else:
        span = (b.end - b.start).total_seconds() if b.start and b.end else 0.0
        results, first, last = b.tcp_tests + b.tcp_excluded_tests, b.start, b.end
    little = span < k.HISTORY_MIN_SPAN_S or results < k.HISTORY_MIN_RESULTS
    return {"span_s": span, "results": results, "first": first, "last": last, "little": little}


def little_history(path: PathEvidence) -> bool:
    """True when the path's history is too little to judge it against its own past: its baseline spans less than
    HISTORY_MIN_SPAN_S or holds fewer than HISTORY_MIN_RESULTS TCP results (a new path, site or deployment)."""
    return history_of(path)["little"]


def _reference(path: PathEvidence, figures: Sequence[TestFigures]) -> tuple[float | None, float | None, str]:
    """Throughput the path normally reaches: its baseline median (see ``_self_references`` without one)."""
    b = path.baseline
    if b and b.tcp_tests >= k.MIN_REFERENCE_TESTS and b.tcp_throughput_median_bps:
        sigma = b.tcp_throughput_mad_bps * MAD_TO_SIGMA if b.tcp_throughput_mad_bps is not None else None
        return b.tcp_throughput_median_bps, sigma, BASELINE_REFERENCE
    return None, None, "none (too few tests)"


def _test_sigma(
    path: PathEvidence, figures: Sequence[TestFigures], ref: float | None, sigma: float | None
) -> float | None:
    """Spread of single tests judged against a baseline: the baseline's, or the window's own when that is wider.

    The MAD of a short baseline (a dozen tests) is below the path's true run-to-run spread often enough (the
    first days of a host-limited path happened to be steady) to make every ordinary slower result "4 sigma
    below".  With SELF_REFERENCE_MIN_STAT_TESTS tests in the window their spread (clear drops left out) is
    the better estimate when it is wider.  Both are spreads *below* the level (``stats.spread_below``): results
    piled up against a ceiling (line rate, a host limit) are judged with the spread of the tail below it, not
    with the MAD of the pile.  Lasting drops do not depend on it: they are judged on a day's median against the
    baseline's own spread (``_level_shift``), and collapses on DEGRADED_FRACTION.
    """
    level = path.baseline.tcp_level if path.baseline is not None else None
    if level is not None and level.spread_below_bps is not None and sigma is not None:
        sigma = max(sigma, level.spread_below_bps)
    if not ref:
        return sigma
    rates = [f.test.throughput_bps for f in figures if f.test.throughput_bps]
    rates = [r for r in rates if r >= k.DEGRADED_FRACTION * ref]
    if len(rates) < k.SELF_REFERENCE_MIN_STAT_TESTS:
        return sigma
    own = spread_below(rates) or 0.0
    return max(sigma or 0.0, own)


def baseline_reference_at(a: PathAssessment, t: datetime) -> float | None:
    """The baseline level for a result at ``t``: the hour's level where the history shows diurnal or weekly
    load, else the baseline median (wanmon/diagnosis/baseline.py)."""
    b = a.path.baseline
    return (b.tcp_reference_at(t) if b is not None else None) or a.reference_bps


def _reference_state(thr: float, ref: float | None, sigma: float | None) -> tuple[str, str]:
    """Judge one rate against a reference level: clearly below it in proportion, or far outside its spread."""
    if not ref:
        return OK, "as expected"
    if thr < k.DEGRADED_FRACTION * ref:
        return DEGRADED, f"{text.rate(thr)} is below {k.DEGRADED_FRACTION:.0%} of the reference {text.rate(ref)}"
    if sigma is not None and thr < (1 - k.DEGRADED_STAT_MIN_DROP) * ref and thr < ref - k.DEGRADED_STAT_SIGMAS * sigma:
        return DEGRADED, (
            f"{text.rate(thr)} is {text.pct(1 - thr / ref)} below the reference {text.rate(ref)}, "
            f"more than {k.DEGRADED_STAT_SIGMAS:g} standard deviations ({text.rate(sigma)})"
        )
    return OK, "as expected"


def _self_references(figures: Sequence[TestFigures]) -> tuple[list[tuple[float | None, float | None]], list[float]]:
    """Without a baseline, each test is judged against the tests *before* it that were healthy.

    The reference of a test is the median of the earlier healthy tests (at least MIN_REFERENCE_TESTS of
    them; the first tests are not judged), its spread the MAD of those (only from SELF_REFERENCE_MIN_STAT_TESTS
    on: the MAD of three or four noisy tests can be near zero by chance).  Being causal, a path that improves
    never makes its earlier tests look degraded; excluding degraded tests from the history, a collapse stays
    measured against the level before it (only clear drops, below DEGRADED_FRACTION, leave the history).
    Returns the (reference, sigma) of each test and the healthy rates.
    """
    healthy: list[float] = []
    refs: list[tuple[float | None, float | None]] = []
    for f in figures:
        thr = f.test.throughput_bps or 0.0
        ref = sigma = None
        if len(healthy) >= k.MIN_REFERENCE_TESTS:
            ref = statistics.median(healthy)
            if len(healthy) >= k.SELF_REFERENCE_MIN_STAT_TESTS:
                sigma = spread_below(healthy)
        refs.append((ref, sigma))
        # only a clear drop leaves the history: excluding the tests the spread criterion flags would narrow the
        # history to its upper half, shrink its spread and flag ever more ordinary tests
        if not ref or thr >= k.DEGRADED_FRACTION * ref:
            healthy.append(thr)
    return refs, healthy


def got_the_spare(f: TestFigures) -> bool:
    """True when the test got (nearly: LOAD_SPARE_MATCH_FRACTION) all the capacity the other traffic left it on
    the tightest polled port of its path: a busy shared link, what the load predicts, never a degradation."""
    thr = f.test.throughput_bps or 0.0
    return f.spare_bps is not None and thr >= k.LOAD_SPARE_MATCH_FRACTION * f.spare_bps


def room_binds(f: TestFigures, level_bps: float | None, reached_bps: float = 0.0) -> bool:
    """True when the other traffic left the test less room on its path's tightest polled port than the path's
    level or than the rate its tests reached in the last day (``reached_before``): the load, not the path's
    hosts, set that test's ceiling, and the room is what it is judged against."""
    return f.spare_bps is not None and f.spare_bps < max(level_bps or 0.0, reached_bps)


def reached_before(a: PathAssessment) -> dict[datetime, float]:
    """For each of the window's TCP tests (by time), the highest rate the path's TCP tests reached in the
    LEVEL_SHIFT_WINDOW_S before it (0: none).

    What its hosts and stacks have shown they can carry: room below it is what limits a test, not the hosts.
    On a busy shared link the level (a median over the day) lies below what the night's tests reach: the
    night's room is above the level and still the test's ceiling.  One pass over the results in time order
    (a sliding maximum), not one scan per test."""
    window = timedelta(seconds=k.LEVEL_SHIFT_WINDOW_S)
    results = sorted(_tcp_results(a))
    out: dict[datetime, float] = {}
    best: deque[tuple[datetime, float]] = deque()  # rates falling from the front, times rising
    j = 0
    for t in sorted({f.test.time for f in a.tcp}):
        while j < len(results) and results[j][0] < t:
            while best and best[-1][1] <= results[j][1]:
                best.pop()
            best.append(results[j])
            j += 1
        while best and t - best[0][0] >= window:
            best.popleft()
        out[t] = best[0][1] if best else 0.0
    return out


def _spare_state(f: TestFigures, ref: float | None, reached_bps: float = 0.0) -> tuple[str, str] | None:
    """Judge a test by the capacity the load left it where a port of its path is polled (None: not judged so).

    A test on a shared link gets what the other traffic leaves it: one that got most of it
    (LOAD_SPARE_MATCH_FRACTION) is as expected, however far below the path's level (an afternoon at 85 % load
    leaves a 10G path 1.5 Gb/s).  When that room was below the path's level, or below the rate its tests
    reached in the last day (``reached_bps``: its hosts carry that much, a night's room above a diurnal
    path's median level is still what its test could get), the load and not the path set the test's ceiling,
    and a test that got clearly less than the room is degraded against it: what stopped it is not the other
    traffic.  With room above both the usual judgement against the level holds (its hosts, not the load, limit
    it).
    """
    spare = f.spare_bps
    if spare is None:
        return None
    thr = f.test.throughput_bps or 0.0
    if got_the_spare(f):
        return OK, f"{text.rate(thr)} is what the other traffic left on {f.spare_port} ({text.rate(spare)})"
    if ref and room_binds(f, ref, reached_bps):
        above = f"the level {text.rate(ref)}" if spare < ref else f"{text.rate(reached_bps)} reached in the last day"
        return DEGRADED, (
            f"{text.rate(thr)} is below {k.LOAD_SPARE_MATCH_FRACTION:.0%} of the {text.rate(spare)} the other "
            f"traffic left on {f.spare_port} ({above})"
        )
    return None


def _tcp_state(
    a: PathAssessment, f: TestFigures, ref: float | None = None, sigma: float | None = None, reached_bps: float = 0.0
) -> tuple[str, str]:
    thr = f.test.throughput_bps or 0.0
    if a.reference_source == BASELINE_REFERENCE:
        ref, sigma = baseline_reference_at(a, f.test.time), a.test_sigma_bps
    by_load = _spare_state(f, ref, reached_bps)
    if by_load is not None:
        return by_load
    state, why = _reference_state(thr, ref, sigma)
    if state != OK:
        return state, why
    if a.reference_source == BASELINE_REFERENCE:
        # The path's own history says what its hosts reach: a host-limited 100G path at 30 Gb/s is healthy,
        # and the absolute test below would call it degraded for every stray retransmit.
        return OK, "as expected"
    if thr < k.UNDERPERFORMANCE_FRACTION * f.expected_bps:
        near = a.loss_between(f.test.time, f.test.time, k.LOSS_NEIGHBOURHOOD_S)
        probe_events = sum(s.lost for s in near.sources if s.is_probe)
        own = physics.retransmit_loss_fraction(
            f.test.retransmits, f.test.throughput_bps, f.test.duration_s, f.test.mss_bytes
        )
        for p, what, events, beaten in (
            (near.probe_fraction, "probe loss", probe_events, a.tcp_beats_loss(near.probe_fraction)),
            (own, "retransmit loss", f.test.retransmits or 0, _beats(a, thr, own)),
        ):
            # a loss rate needs a few events behind it, and a loss the flow already runs faster than its
            # Mathis ceiling is not what limits it (self-induced retransmits of CUBIC/BBR at tens of Gb/s)
            if events < k.LOSS_MIN_EVENTS or beaten:
                continue
            if a.loss_is_significant(p, f.expected_bps):
                return DEGRADED, (
                    f"{text.rate(thr)} is below {k.UNDERPERFORMANCE_FRACTION:.0%} of the expected "
                    f"{text.rate(f.expected_bps)} with {what} {text.loss(p)}"
                )
    return OK, "as expected"


def _tcp_results(a: PathAssessment) -> list[tuple[datetime, float]]:
    """(time, rate) of the path's completed TCP tests: those of the day before the window, then the window's."""
    start = a.window_start
    earlier = [(t, r) for t, r in a.path.earlier_tcp_results if start is None or t < start]
    return sorted(earlier) + [(f.test.time, f.test.throughput_bps or 0.0) for f in a.tcp]


def _lasting_drop(a: PathAssessment) -> dict[int, tuple[str, datetime]]:
    """TCP tests (by index) that end SLIGHT_DROP_MIN_SPAN_S of results lying below the baseline: their median
    below it by DEGRADED_STAT_MIN_DROP and by LASTING_DROP_SIGMAS standard errors, and the median of each half of
    them below it by LASTING_DROP_HALF_MIN_DROP; with why, and the first of the results at their end that lie
    LASTING_DROP_HALF_MIN_DROP below (the drop's onset).

    A slight drop (15-25 %) hides in the run-to-run spread of single tests; the median of the results since it
    began does not.  Both halves low means the low level held from the first hours of the span to the last: a
    daytime dip of a few hours lowers one half at most.  The span reaches before the window (the results of
    the day before it, ``PathEvidence.earlier_tcp_results``): the window (6 h) is shorter than the drop must
    last.  Only with a baseline; a test above the baseline is never marked.
    """
    ref, sigma = a.reference_bps, a.reference_sigma_bps
    if a.reference_source != BASELINE_REFERENCE or not ref or not sigma:
        return {}
    results = _tcp_results(a)
    cadence = cadence_s([t for t, _ in results]) or 0.0
    span = timedelta(seconds=k.SLIGHT_DROP_MIN_SPAN_S)
    half_low = (1 - k.LASTING_DROP_HALF_MIN_DROP) * ref
    offset = len(results) - len(a.tcp)
    out: dict[int, tuple[str, datetime]] = {}
    for i, f in enumerate(a.tcp):
        t = f.test.time
        timed = [(u, r) for u, r in results[: offset + i + 1] if t - u <= span]
        stretch = [r for _, r in timed]
        first = timed[0][0]
        if len(stretch) < k.LEVEL_SHIFT_MIN_TESTS or seconds(t - first) < k.SLIGHT_DROP_MIN_SPAN_S - cadence:
            continue  # not yet half a day of results
        if (f.test.throughput_bps or 0.0) >= ref:
            continue
        lying = _lies_low(stretch, ref, sigma, k.LASTING_DROP_SIGMAS)
        if lying is not None:
            med, se = lying
            out[i] = (
                f"the median of the last {len(stretch)} tests ({text.duration(seconds(t - first))}), "
                f"{text.rate(med)}, is {text.pct(1 - med / ref)} below the baseline {text.rate(ref)} "
                f"(more than {k.LASTING_DROP_SIGMAS:g} standard errors of {text.rate(se)}), in both halves",
                _run_start(timed, half_low),
            )
    return out


def _room_shortfall(a: PathAssessment) -> dict[int, tuple[str, datetime]]:
    """TCP tests (by index) that end a day in which the path's tests got clearly less than the load and its hosts
    usually allow them (``room.RoomModel``), with why and the first of the low results at the day's end (the
    drop's onset).

    Each test of the day (the history's, ``PathEvidence.room_history``, then the window's with a measured room)
    is a ratio to its expected rate, the load of its minute accounted for: the day's median below the usual
    ratio by DEGRADED_STAT_MIN_DROP and DEGRADED_STAT_SIGMAS standard errors, over half a day at least, and both
    halves LASTING_DROP_HALF_MIN_DROP below, as ``_lasting_drop`` judges rates.  A test that "got most of the room
    the load left it" (``got_the_spare``) is still marked: the load is in the expectation, and the test fell short
    of its usual share of it.  A test at or above its usual ratio is never marked.
    """
    start = a.window_start
    # the day judged is not in its own reference: the model is learned from the history before it
    judged_from = start - timedelta(seconds=k.LEVEL_SHIFT_WINDOW_S) if start is not None else None
    model = room_model([h for h in a.path.room_history if judged_from is None or h[0] < judged_from])
    if model is None:
        return {}
    past = [(t, model.ratio(r, room)) for t, r, room in a.path.room_history if start is None or t < start]
    window = [(f.test.time, model.ratio(f.test.throughput_bps or 0.0, f.spare_bps)) for f in a.tcp if f.spare_bps]
    ratios = sorted((t, x) for t, x in past + window if x is not None)
    cadence = cadence_s([t for t, _ in ratios]) or 0.0
    usual = model.usual_ratio
    half_low = (1 - k.LASTING_DROP_HALF_MIN_DROP) * usual
    day = timedelta(seconds=k.LEVEL_SHIFT_WINDOW_S)
    at = {t: x for t, x in ratios}
    out: dict[int, tuple[str, datetime]] = {}
    for i, f in enumerate(a.tcp):
        t = f.test.time
        if t not in at or at[t] >= usual:
            continue
        timed = [(u, x) for u, x in ratios if u <= t and t - u < day]
        if len(timed) < k.LEVEL_SHIFT_MIN_TESTS or seconds(t - timed[0][0]) < k.SLIGHT_DROP_MIN_SPAN_S - cadence:
            continue
        values = [x for _, x in timed]
        lying = _lies_low(values, usual, model.sigma, k.DEGRADED_STAT_SIGMAS)
        if lying is not None:
            med = lying[0]
            out[i] = (
                f"the last {len(values)} tests ({text.duration(seconds(t - timed[0][0]))}) got a median "
                f"{text.pct(med / usual)} of what the load and its hosts usually let this path's tests get "
                f"({text.pct(model.share)} of the room the other traffic leaves, at most {text.rate(model.reach_bps)}; "
                f"{model.tests} tests before, spread {text.pct(model.sigma / usual)}), in both halves",
                _run_start(timed, half_low),
            )
    return out


def _lies_low(values: Sequence[float], level: float, sigma: float, sigmas: float) -> tuple[float, float] | None:
    """(median, its standard error) of a stretch of results (in time order) that lies below ``level``: its median
    below it by DEGRADED_STAT_MIN_DROP and by ``sigmas`` standard errors (MEDIAN_STANDARD_ERROR_FACTOR x ``sigma``
    / sqrt(n)), and the median of each half below it by LASTING_DROP_HALF_MIN_DROP (the low level held from its
    first results to its last); None when it does not."""
    half = len(values) // 2
    med = statistics.median(values)
    se = k.MEDIAN_STANDARD_ERROR_FACTOR * sigma / len(values) ** 0.5
    halves = (statistics.median(values[:half]), statistics.median(values[half:]))
    low = med < (1 - k.DEGRADED_STAT_MIN_DROP) * level and med < level - sigmas * se
    if low and max(halves) < (1 - k.LASTING_DROP_HALF_MIN_DROP) * level:
        return med, se
    return None


def _run_start(timed: Sequence[tuple[datetime, float]], below: float) -> datetime:
    """The first of the results at the end of ``timed`` that all lie below ``below`` (the last result's time if
    it does not): where a drop that holds them down began."""
    start = timed[-1][0]
    for t, r in reversed(timed):
        if r >= below:
            break
        start = t
    return start


def _level_shift(a: PathAssessment) -> dict[int, str]:
    """TCP tests (by index) that end a day whose median lies clearly below the baseline.

    One test varies with the hour (diurnal load) and the host; the median of a day of tests does not, and its
    standard error is about 1.25 sigma / sqrt(n).  A lasting 20 % loss of rate that no single test shows beyond
    4 sigma is plain in it.  The day is longer than the window: the results of the day before it
    (``PathEvidence.earlier_tcp_results``) count too.  Only with a baseline (the path's own level); a test above
    the baseline is never marked.
    """
    ref, sigma = a.reference_bps, a.reference_sigma_bps
    if a.reference_source != BASELINE_REFERENCE or not ref or not sigma:
        return {}
    out: dict[int, str] = {}
    window = timedelta(seconds=k.LEVEL_SHIFT_WINDOW_S)
    results = _tcp_results(a)
    offset = len(results) - len(a.tcp)
    for i, f in enumerate(a.tcp):
        thr = f.test.throughput_bps or 0.0
        if thr >= ref:
            continue
        day = [(t, r) for t, r in results[: offset + i + 1] if f.test.time - t < window]
        if len(day) < k.LEVEL_SHIFT_MIN_TESTS:
            continue
        med = statistics.median(r for _, r in day)
        se = k.MEDIAN_STANDARD_ERROR_FACTOR * sigma / len(day) ** 0.5
        if med < (1 - k.DEGRADED_STAT_MIN_DROP) * ref and med < ref - k.DEGRADED_STAT_SIGMAS * se:
            span_s = seconds(f.test.time - min(t for t, _ in day))
            out[i] = (
                f"the median of the last {len(day)} tests ({text.duration(span_s)}), "
                f"{text.rate(med)}, is {text.pct(1 - med / ref)} below the baseline {text.rate(ref)} "
                f"(more than {k.DEGRADED_STAT_SIGMAS:g} standard errors of {text.rate(se)})"
            )
    return out


def _severe(o: Observation) -> bool:
    """A failure, or a TCP result below SEVERE_DROP_FRACTION of its reference: beyond what a busy host does."""
    if o.state == DOWN:
        return True
    return o.kind != TCP or (
        o.reference is not None and o.value is not None and o.value < k.SEVERE_DROP_FRACTION * o.reference
    )


def _persistent(
    run: Sequence[Observation],
    runs: Sequence[Sequence[Observation]],
    lasting: frozenset[datetime] | set[datetime] = frozenset(),
    settled: bool = True,
    short_of_room: frozenset[datetime] | set[datetime] = frozenset(),
) -> bool:
    """A run of bad TCP results is a degradation when it is severe, long, or confirmed by another kind.

    A bad run of another measurement kind overlapping it (owamp loss, UDP loss) confirms any run.  Otherwise: a
    collapse (below SEVERE_DROP_FRACTION) counts at once; with little history (``settled`` false:
    ``little_history``) only MIN_MODERATE_EPISODE_OBSERVATIONS clear drops in a row (below DEGRADED_FRACTION)
    count besides, for the spread the other criteria judge with needs a past the path does not have yet; a
    busy test host gives isolated results at 30-60 % of the usual rate, now and then two in a row, so a run of
    such drops needs MIN_MODERATE_EPISODE_OBSERVATIONS results; a slight drop (every result above
    SLIGHT_DROP_FRACTION of the reference) must last SLIGHT_DROP_MIN_SPAN_S, longer than a daytime dip: its
    results span that long, or every one of them ends that long a span of results lying below the level
    (``lasting``, the times of the results ``_lasting_drop`` marked).  A run of results that each got clearly
    less than the room the measured load left them (``short_of_room``, ``_spare_state``) needs
    MIN_MODERATE_EPISODE_OBSERVATIONS however slight: the daytime dip the half day guards against is the load's,
    and it is measured.  Probe runs (owamp, UDP) are judged by their own loss criteria.
    """
    slack = timedelta(seconds=k.EPISODE_MERGE_SLACK_S)
    if any(
        r[0].kind != run[0].kind and r[0].time <= run[-1].time + slack and run[0].time <= r[-1].time + slack
        for r in runs
    ):
        return True  # confirmed by another kind of measurement
    if any(_severe(o) for o in run):
        return True
    if not settled:
        # only the proportional criterion holds without a past: 40 % less is never noise (DEGRADED_FRACTION), the
        # spread criteria need a history; a busy host gives such a result now and then, not three in a row
        return len(run) >= k.MIN_MODERATE_EPISODE_OBSERVATIONS and all(
            o.kind == TCP and o.reference and o.value is not None and o.value < k.DEGRADED_FRACTION * o.reference
            for o in run
        )
    slight = all(
        o.kind == TCP and o.reference and o.value is not None and o.value >= k.SLIGHT_DROP_FRACTION * o.reference
        for o in run
    )
    if slight and not all(o.time in short_of_room for o in run):
        # only the spread criterion saw it (15-25 % less): the daytime dip of a shared link looks the same for
        # a few hours every day; a fault of that size is a lasting level change
        if all(o.time in lasting for o in run):
            return True
        return seconds(run[-1].time - run[0].time) >= k.SLIGHT_DROP_MIN_SPAN_S
    return len(run) >= k.MIN_MODERATE_EPISODE_OBSERVATIONS


def _beats(a: PathAssessment, throughput_bps: float, loss_fraction: float | None) -> bool:
    """True when one test ran faster than the stack's Mathis ceiling for ``loss_fraction``."""
    ceiling = a.mathis_ceiling_bps(loss_fraction)
    return ceiling is not None and throughput_bps > ceiling


def _observations(
    a: PathAssessment,
    shifted: dict[int, str],
    short_of_room: set[datetime] | None = None,
    room_low: set[int] | frozenset[int] = frozenset(),
) -> list[Observation]:
    """Every result of the window judged; the times of the TCP results degraded against the room the measured
    load left them are added to ``short_of_room``. ``room_low``: the tests (by index, in ``shifted``) that end a
    day short of what the load usually lets them get (``_room_shortfall``): the load is accounted for there."""
    out: list[Observation] = []
    refs = _self_references(a.tcp)[0] if a.reference_source != BASELINE_REFERENCE else [(None, None)] * len(a.tcp)
    reached_at = reached_before(a) if any(f.spare_bps is not None for f in a.tcp) else {}
    for i, (f, (ref, sigma)) in enumerate(zip(a.tcp, refs, strict=True)):
        reached = reached_at[f.test.time] if f.spare_bps is not None else 0.0
        state, why = _tcp_state(a, f, ref, sigma, reached)
        used = baseline_reference_at(a, f.test.time) if a.reference_source == BASELINE_REFERENCE else ref
        # the level the medians are judged against (``_level_shift``, ``_lasting_drop``): the baseline median
        level = max(used or 0.0, a.reference_bps or 0.0)
        by_load = got_the_spare(f) or room_binds(f, level, reached)
        if state == OK and i in shifted and (i in room_low or not by_load):
            # a median of results says nothing of one the load is measured for: it got its room, or the room
            # was below the level and it was judged against that (``_spare_state``); a day of a busy link's
            # results lies low for twelve hours every day. A day short of its usual share of the room
            # (``room_low``) has the load in its expectation already.
            state, why = DEGRADED, shifted[i]
        if used and room_binds(f, used, reached):
            # the load left less than the level, or than the path reached: that room is what the test could get
            used = f.spare_bps
            if state == DEGRADED and short_of_room is not None and i not in room_low:
                # (a day short of its usual share of the room is judged as the lasting drop it is, not as one
                # test short of the room)
                short_of_room.add(f.test.time)
        out.append(
            Observation(
                f.test.time, TCP, state, f.test.throughput_bps, f.expected_bps, why, f.test.measurement_id, used
            )
        )
    for t in a.tcp_failed:
        out.append(Observation(t.time, TCP, DOWN, 0.0, None, t.error or "no data transferred", t.measurement_id))
    for t in a.udp:
        if t.error is not None:
            out.append(Observation(t.time, UDP, DOWN, None, None, t.error, t.measurement_id))
            continue
        if not t.packets_sent or t.packets_lost is None:
            continue
        p = t.packets_lost / t.packets_sent
        if t.packets_lost >= t.packets_sent:
            out.append(Observation(t.time, UDP, DOWN, 1.0, None, "100 % of UDP packets lost", t.measurement_id))
        elif a.path.capacity_bps and t.offered_bps and t.offered_bps > a.path.capacity_bps:
            continue
        elif t.packets_lost >= k.UDP_MIN_LOST_PACKETS and a.loss_is_significant(p):
            out.append(Observation(t.time, UDP, DEGRADED, p, None, f"UDP loss {text.loss(p)}", t.measurement_id))
        else:
            out.append(Observation(t.time, UDP, OK, p, None, "clean", t.measurement_id))
    for o in a.owamp:
        if not o.packets_sent:
            continue
        p = o.packets_lost / o.packets_sent
        if o.packets_lost >= o.packets_sent:
            out.append(Observation(o.time, OWAMP, DOWN, 1.0, None, "100 % of owamp packets lost", o.measurement_id))
        elif o.packets_lost >= k.OWAMP_MIN_LOST_PACKETS and a.loss_is_significant(p):
            out.append(
                Observation(
                    o.time,
                    OWAMP,
                    DEGRADED,
                    p,
                    None,
                    f"owamp loss {o.packets_lost}/{o.packets_sent}",
                    o.measurement_id,
                )
            )
        else:
            out.append(Observation(o.time, OWAMP, OK, p, None, "clean", o.measurement_id))
    return out
