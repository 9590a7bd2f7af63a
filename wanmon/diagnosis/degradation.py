"""How the results of one path direction are judged: the reference throughput they are compared with (the
path's baseline, or without one its own healthy tests), the state of every result (ok, degraded or down, and
why), and which runs of bad results make a degradation episode."""

from __future__ import annotations

import statistics
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
    Observation,
    build_runs,
    merge_runs,
    unconfirmed_downs,
)
from wanmon.diagnosis.evidence import PathEvidence
from wanmon.diagnosis.loss import OWAMP, TCP, UDP
from wanmon.diagnosis.stats import MAD_TO_SIGMA, seconds, spread_below

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
    observations = tuple(sorted(_observations(partial), key=lambda o: o.time))
    noise = unconfirmed_downs(observations)
    significant = [o for i, o in enumerate(observations) if i not in noise]
    runs = build_runs(significant, frozenset({DEGRADED, DOWN}), k.MIN_EPISODE_OBSERVATIONS)
    runs = [r for r in runs if _persistent(r, runs)]
    episodes = tuple(merge_runs(runs))
    return replace(partial, observations=observations, episodes=episodes)


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


def _tcp_state(
    a: PathAssessment, f: TestFigures, ref: float | None = None, sigma: float | None = None
) -> tuple[str, str]:
    thr = f.test.throughput_bps or 0.0
    if a.reference_source == BASELINE_REFERENCE:
        ref, sigma = baseline_reference_at(a, f.test.time), a.test_sigma_bps
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


def _level_shift(a: PathAssessment) -> dict[int, str]:
    """TCP tests (by index) that end a day whose median lies clearly below the baseline.

    One test varies with the hour (diurnal load) and the host; the median of a day of tests does not, and its
    standard error is about 1.25 sigma / sqrt(n).  A lasting 20 % loss of rate that no single test shows beyond
    4 sigma is plain in it.  Only with a baseline (the path's own level); a test above the baseline is never
    marked.
    """
    ref, sigma = a.reference_bps, a.reference_sigma_bps
    if a.reference_source != BASELINE_REFERENCE or not ref or not sigma:
        return {}
    out: dict[int, str] = {}
    window = timedelta(seconds=k.LEVEL_SHIFT_WINDOW_S)
    for i, f in enumerate(a.tcp):
        thr = f.test.throughput_bps or 0.0
        if thr >= ref:
            continue
        day = [g.test.throughput_bps or 0.0 for g in a.tcp[: i + 1] if f.test.time - g.test.time < window]
        if len(day) < k.LEVEL_SHIFT_MIN_TESTS:
            continue
        med = statistics.median(day)
        se = k.MEDIAN_STANDARD_ERROR_FACTOR * sigma / len(day) ** 0.5
        if med < (1 - k.DEGRADED_STAT_MIN_DROP) * ref and med < ref - k.DEGRADED_STAT_SIGMAS * se:
            out[i] = (
                f"the median of the last {len(day)} tests ({text.duration(k.LEVEL_SHIFT_WINDOW_S)}), "
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


def _persistent(run: Sequence[Observation], runs: Sequence[Sequence[Observation]]) -> bool:
    """A run of bad TCP results is a degradation when it is severe, long, or confirmed by another kind.

    A bad run of another measurement kind overlapping it (owamp loss, UDP loss) confirms any run.  Otherwise: a
    collapse (below SEVERE_DROP_FRACTION) counts at once; a busy test host gives isolated results at 30-60 % of
    the usual rate, now and then two in a row, so a run of such drops needs MIN_MODERATE_EPISODE_OBSERVATIONS
    results; a slight drop (every result above SLIGHT_DROP_FRACTION of the reference) must last
    SLIGHT_DROP_MIN_SPAN_S, longer than a daytime dip.  Probe runs (owamp, UDP) are judged by their own loss criteria.
    """
    slack = timedelta(seconds=k.EPISODE_MERGE_SLACK_S)
    if any(
        r[0].kind != run[0].kind and r[0].time <= run[-1].time + slack and run[0].time <= r[-1].time + slack
        for r in runs
    ):
        return True  # confirmed by another kind of measurement
    if any(_severe(o) for o in run):
        return True
    slight = all(
        o.kind == TCP and o.reference and o.value is not None and o.value >= k.SLIGHT_DROP_FRACTION * o.reference
        for o in run
    )
    if slight:
        # only the spread criterion saw it (15-25 % less): the daytime dip of a shared link looks the same for
        # a few hours every day; a fault of that size is a lasting level change
        return seconds(run[-1].time - run[0].time) >= k.SLIGHT_DROP_MIN_SPAN_S
    return len(run) >= k.MIN_MODERATE_EPISODE_OBSERVATIONS


def _beats(a: PathAssessment, throughput_bps: float, loss_fraction: float | None) -> bool:
    """True when one test ran faster than the stack's Mathis ceiling for ``loss_fraction``."""
    ceiling = a.mathis_ceiling_bps(loss_fraction)
    return ceiling is not None and throughput_bps > ceiling


def _observations(a: PathAssessment) -> list[Observation]:
    out: list[Observation] = []
    refs = _self_references(a.tcp)[0] if a.reference_source != BASELINE_REFERENCE else [(None, None)] * len(a.tcp)
    shifted = _level_shift(a)
    for i, (f, (ref, sigma)) in enumerate(zip(a.tcp, refs, strict=True)):
        state, why = _tcp_state(a, f, ref, sigma)
        if state == OK and i in shifted:
            state, why = DEGRADED, shifted[i]
        used = baseline_reference_at(a, f.test.time) if a.reference_source == BASELINE_REFERENCE else ref
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
