"""ASYMMETRIC_PATH: one direction of a site pair is much worse than the other."""

from __future__ import annotations

from datetime import datetime

from wanmon.diagnosis import codes
from wanmon.diagnosis import constants as k
from wanmon.diagnosis.assessment import PathAssessment
from wanmon.diagnosis.context import RuleContext, path_finding
from wanmon.diagnosis.degradation import BASELINE_REFERENCE, little_history
from wanmon.diagnosis.episodes import OK
from wanmon.diagnosis.evidence import RuleFinding
from wanmon.diagnosis.loss import OWAMP, RETRANSMITS, retransmit_counts, wilson_interval
from wanmon.diagnosis.path_elements import trunks_on_path
from wanmon.diagnosis.rules.loss_patterns import periodic_pattern
from wanmon.diagnosis.rules.tcp import tests_spare_bps
from wanmon.diagnosis.rules.trunk import host_bimodality
from wanmon.diagnosis.shared_elements import load_verdict
from wanmon.diagnosis.stats import median


def asymmetric_path(ctx: RuleContext) -> list[RuleFinding]:
    """ASYMMETRIC_PATH on the bad direction of a site pair.

    Evidence: TCP tests and probe loss (owamp, UDP) of both directions over the
    same period (the whole window, and each degradation episode of the
    direction under test) -- each test compared with the reverse test nearest in
    time (within CORRELATION_SLACK_S), probe loss over the same period; when the
    reverse direction is not in the bundle, the path's ``reverse`` summary.

    Criterion: either
      * throughput: the direction's share of its own baseline is below
        ASYMMETRY_MAX_RATIO of the reverse direction's share of its baseline
        (hosts differ: each direction's level is its own); without baselines, its
        TCP efficiency (throughput / min(capacity, W*8/RTT), so that different
        windows or capacities do not count) against the reverse's; or
      * loss: the direction's probe loss is significant for the path (its Mathis
        ceiling is below half the expected rate), not contradicted by the
        direction's own TCP tests (they do not run above that ceiling), and at least
        ASYMMETRY_LOSS_FACTOR x the reverse's loss or detection limit.
    A throughput asymmetry not explained by the direction's own loss needs MIN_EPISODE_OBSERVATIONS of its tests
    (one slow test, and the one before it: ``_earlier_test_agrees``).
    Critical below ASYMMETRY_CRITICAL_RATIO.  When either direction has little history
    (``degradation.little_history``: a new path), a throughput asymmetry counts only below
    ASYMMETRY_CRITICAL_RATIO, unless the direction's own loss (probes or retransmits, these judged test by test:
    ``_held_by_own_loss``) caps it, by the physics, at what it reaches: the hosts of two directions differ
    (20-40 Gb/s one way, a busy host the other gives 15 %), which only each direction's settled past or an
    absolute cause can tell from a fault.  A loss-only asymmetry whose losses are periodic is left to
    PERIODIC_LOSS (a receiving host or a periodic event), and a direction crossing a trunk whose TCP results
    split by host address to TRUNK_IMBALANCE; a throughput-only asymmetry of a direction WINDOW_LIMITED or
    TCP_ONLY_DEGRADATION found is that finding's, and one whose slow tests got the capacity the load on a polled
    port of the path left them (``_load_explained``) is the load's.  An episode that shows the asymmetry as
    strongly as the whole window (``_as_strong``) gives the finding its period and onset.

    Why: something lies on one direction's route only (a dirty fibre of a pair,
    a bad patch panel, an asymmetric route).  A bad return path also hurts the
    good direction: its ACKs travel on the bad one and lost ACKs cause spurious
    retransmissions.
    """
    out: list[RuleFinding] = []
    for a in ctx.assessments():
        if trunks_on_path(ctx.bundle, a.path) and host_bimodality(ctx, a) is not None:
            continue  # results split by host address behind a trunk: TRUNK_IMBALANCE / TCP_ONLY_DEGRADATION say it
        r = ctx.assessment_of(a.path.dst, a.path.src)
        best = None
        for ep in a.episodes:
            result = _compare(a, r, ep.start, ep.end, episode=True)
            if result and (best is None or result["ratio"] < best["ratio"]):
                best = result
        whole = _compare(a, r, a.first_time, a.last_time) if a.first_time and a.last_time else None
        if whole and (best is None or not _as_strong(best, whole)):
            best = {**whole, "start": _bad_since(a) or whole["start"]}
        if best and not best["loss_asymmetric"] and _tcp_explained(ctx, a):
            continue  # a throughput-only asymmetry the direction's own TCP finding already explains
        if best and not best["loss_asymmetric"] and _load_explained(ctx, a, best):
            continue  # the slow direction's tests got what the other traffic left them: a busy uplink, not the path
        if best:
            out.append(_finding(a, r, best))
    return out


def _bad_since(a: PathAssessment) -> datetime | None:
    """Where the direction's results turned bad: per kind of measurement with bad results (degraded or down), the
    split of its results in time that best separates good ones before from bad ones after (each result on the
    wrong side of it counts against it; the earliest of equal splits), the earliest over the kinds (the window's
    first result when a kind is bad from it on).

    The whole window's comparison holds the results from before the change too, and its start is only the
    window's edge: a loss that began at 04:00 was dated 01:20, the window's first session, two hours and a half
    early (no degradation episode dates it on a path with two days of history). A loss of a fraction of a per
    cent leaves some sessions clean after it began: the split does not need every result after it bad."""
    since: list[datetime] = []
    for kind in {o.kind for o in a.observations if o.state != OK}:
        seq = [(o.time, o.state != OK) for o in a.observations if o.kind == kind]
        # score of splitting before result i: good results before it, bad ones from it on, less the others
        score = best = sum(1 if bad else -1 for _, bad in seq)
        split = 0
        for i, (_, bad) in enumerate(seq):
            score += -2 if bad else 2
            if score > best:
                best, split = score, i + 1
        if split < len(seq):
            since.append(_lossy_before(a, seq[split][0]) if kind == OWAMP else seq[split][0])
    return min(since, default=None)


def _lossy_before(a: PathAssessment, t: datetime) -> datetime:
    """``t``, or the first of the owamp sessions right before it whose loss lies above the path's usual: below the
    rule of a bad session (a 1 % loss loses 2 of a session's 600 packets now and then), the session where it
    began is still clearly off a path that lost nothing in its baseline (the lower end of the session's Wilson
    interval above the upper end of the baseline's)."""
    b = a.path.baseline
    if b is None or not b.probe_packets:
        return t
    usual = wilson_interval((b.probe_loss_fraction or 0.0) * b.probe_packets, b.probe_packets)[1]
    start = t
    for o in sorted((o for o in a.owamp if o.time < t), key=lambda o: o.time, reverse=True):
        if not o.packets_sent or wilson_interval(o.packets_lost, o.packets_sent)[0] <= usual:
            break
        start = o.time
    return start


def _load_explained(ctx: RuleContext, a: PathAssessment, c: dict) -> bool:
    """The direction's tests of the period got (nearly) all the capacity the other traffic left them on a polled
    port of the path (``shared_elements.load_verdict`` 'spare'): the load at the time predicts their rate, and
    the reverse direction, whose ports were less loaded, carried more -- a busy link, not an asymmetric path."""
    spare = tests_spare_bps(a.tcp_between(c["start"], c["end"]))
    return c["my_thr"] is not None and load_verdict(c["my_thr"], c["my_thr"], spare) == "spare"


def _tcp_explained(ctx: RuleContext, a: PathAssessment) -> bool:
    """Whether a rule run before this one explains this direction's TCP rate on its own: WINDOW_LIMITED (its hosts'
    window caps it at W*8/RTT whatever the reverse direction's hosts reach) or TCP_ONLY_DEGRADATION (UDP at the TCP
    rate is clean)."""
    subject = {"src": a.path.src, "dst": a.path.dst}
    return any(
        dict(f.subject) == subject
        for code in (codes.WINDOW_LIMITED, codes.TCP_ONLY_DEGRADATION)
        for f in ctx.findings_with(code)
    )


def _own_levels(
    a: PathAssessment, r: PathAssessment | None, my_thr: float | None, rev_thr: float | None
) -> float | None:
    """(my rate / my baseline) / (reverse rate / its baseline), when both directions have a baseline."""
    if r is None or not my_thr or not rev_thr:
        return None
    if a.reference_source != BASELINE_REFERENCE or r.reference_source != BASELINE_REFERENCE:
        return None
    if not a.reference_bps or not r.reference_bps:
        return None
    return (my_thr / a.reference_bps) / (rev_thr / r.reference_bps)


def _compare(
    a: PathAssessment, r: PathAssessment | None, start: datetime, end: datetime, *, episode: bool = False
) -> dict | None:
    slack = k.CORRELATION_SLACK_S
    mine = a.tcp_between(start, end)
    my_thr = median(f.test.throughput_bps for f in mine)
    my_eff = median(f.efficiency for f in mine)
    my_loss = a.loss_between(start, end)
    if r is not None:
        theirs = _contemporaneous(r, mine, start, end, slack)
        rev_thr = median(f.test.throughput_bps for f in theirs)
        rev_eff = median(f.efficiency for f in theirs)
        rev_loss = r.loss_between(start, end)
        if not any(s.is_probe for s in rev_loss.sources):
            rev_loss = r.loss_between(start, end, slack)
        rev_probe = rev_loss.probe_fraction
        rev_limit = rev_loss.probe_detection_limit
        if episode and rev_probe == 0:
            rev_probe, rev_limit = _reverse_floor(r, rev_limit)
    else:
        ref = a.path.reverse
        if ref is None:
            return None
        rev_thr = ref.tcp_throughput_median_bps
        rev_eff = None
        rev_probe = ref.probe_loss_fraction
        rev_limit = (k.ZERO_LOSS_UPPER_BOUND_EVENTS / ref.probe_packets) if ref.probe_packets else None
        rev_loss = None

    ratio = None
    reason = None
    own = _own_levels(a, r, my_thr, rev_thr)
    if own is not None:
        # both directions have a learned level: each is judged against its own (a 35 Gb/s DTN one way and an
        # 8 Gb/s test host back are both healthy); the ratio is that of their shares of their own levels
        ratio = own
        reason = "throughput"
    elif len(mine) >= 1 and my_eff is not None and rev_eff:
        ratio = my_eff / rev_eff
        reason = "throughput"
    elif len(mine) >= 1 and my_thr is not None and rev_thr:
        ratio = my_thr / rev_thr
        reason = "throughput"
    limit = k.ASYMMETRY_MAX_RATIO
    lossy = a.loss_is_significant(my_loss.fraction) and not a.tcp_beats_loss(my_loss.fraction, mine)
    if not lossy and my_loss.source == RETRANSMITS:
        lossy = _held_by_own_loss(a, mine)
    if not lossy and (little_history(a.path) or (r is not None and little_history(r.path))):
        limit = k.ASYMMETRY_CRITICAL_RATIO  # hosts' rates without their own past: only a collapse says enough
    thr_asym = ratio is not None and ratio < limit
    if thr_asym and not lossy and len(mine) < k.MIN_EPISODE_OBSERVATIONS:
        # one slow test is no asymmetry (a busy host, a stream at a fifth of its usual rate now and then): the
        # direction's test before it must have been as far below the reverse's
        thr_asym = _earlier_test_agrees(a, start, my_thr, ratio, limit)

    my_probe = my_loss.probe_fraction
    floor = max(v for v in (rev_probe, rev_limit, 0.0) if v is not None)
    loss_asym = bool(
        my_probe
        and a.loss_is_significant(my_probe)
        and not a.tcp_beats_loss(my_probe, mine)
        and (rev_probe is not None or rev_limit is not None)
        and my_probe >= k.ASYMMETRY_LOSS_FACTOR * floor
    )
    if not (thr_asym or loss_asym):
        return None
    if not thr_asym and periodic_pattern(a) is not None:
        return None  # periodic loss in one direction points at a host or a periodic event: PERIODIC_LOSS says it
    if not thr_asym:
        reason = "loss"
        ratio = ratio if ratio is not None else 1.0
    return {
        "start": start,
        "end": end,
        "ratio": ratio if thr_asym else 1.0,
        "throughput_ratio": ratio,
        "reason": reason,
        "loss_asymmetric": loss_asym,
        "my_thr": my_thr,
        "rev_thr": rev_thr,
        "my_eff": my_eff,
        "rev_eff": rev_eff,
        "my_loss": my_loss,
        "rev_loss": rev_loss,
        "my_probe": my_probe,
        "rev_probe": rev_probe,
        "rev_limit": rev_limit,
        "tests": len(mine),
    }


def _reverse_floor(r: PathAssessment, period_limit: float | None) -> tuple[float, float | None]:
    """The reverse direction's loss, and the least loss its probes could have missed, beside an episode of loss
    of this direction during which the reverse's own probes saw none.

    An episode of two hourly sessions holds one or two of the reverse's: their rule-of-three limit (5e-3 for 600
    packets) keeps a 1 % loss from being ASYMMETRY_LOSS_FACTOR times it for hours, and one stray lost packet in
    the window's 3600 puts the window's limit at 1.6e-3.  The reverse's baseline (``PathSummary``: every probe
    packet of its history) says what its loss usually is; its sessions of the episode, clean, say it did not
    rise meanwhile: the same 1 % both ways would lose none of 1200 packets with a chance of 6e-6.  Its usual
    loss is the baseline's fraction, at least its rule-of-three limit, and any loss of the reverse's window
    counts on top."""
    window = r.loss.probe_fraction or 0.0
    b = r.path.baseline
    if b is None or not b.probe_packets:
        return window, period_limit
    usual = max(b.probe_loss_fraction or 0.0, k.ZERO_LOSS_UPPER_BOUND_EVENTS / b.probe_packets)
    limit = usual if period_limit is None else min(period_limit, usual)
    return window, limit


def _earlier_test_agrees(
    a: PathAssessment, start: datetime, my_thr: float | None, ratio: float | None, limit: float
) -> bool:
    """The direction's last test before ``start`` (in the window or the last one before it) ran as far below the
    reverse direction as the period's one test: its own rate in place of that test's gives a ratio below
    ``limit`` too.  None before: a single test, not yet an asymmetry."""
    earlier = [f for f in (*a.tcp_before_window, *a.tcp) if f.test.time < start and f.test.throughput_bps]
    if not earlier or not my_thr or ratio is None:
        return False
    return ratio * earlier[-1].test.throughput_bps / my_thr < limit


def _held_by_own_loss(a: PathAssessment, tests) -> bool:
    """Most of the tests ran at the stack's Mathis ceiling of their own retransmits (at most LOSS_MATCH_MAX_RATIO
    above it), a loss that alone caps the path below half of what it should give (``loss_is_significant``).

    A loss that grows over the period (a connector dirtier by the hour) holds each test at its own level; pooled
    over the period, the retransmits give the early, faster tests a ceiling they never had, and they seem to beat
    it (``tcp_beats_loss``).
    """
    held = judged = 0
    for f in tests:
        counts = retransmit_counts(f.test)
        if counts is None or not f.test.throughput_bps:
            continue
        judged += 1
        p = counts[0] / counts[1] if counts[1] > 0 else 0.0
        if counts[0] < k.LOSS_MIN_EVENTS or not a.loss_is_significant(p, f.expected_bps):
            continue
        ceiling = a.mathis_ceiling_bps(p, f.test.streams or 1)
        held += ceiling is not None and f.test.throughput_bps <= k.LOSS_MATCH_MAX_RATIO * ceiling
    return judged > 0 and held > judged / 2


def _contemporaneous(r: PathAssessment, mine, start: datetime, end: datetime, slack_s: float):
    """The reverse direction's TCP tests to compare with ``mine``: for each of mine the nearest reverse test
    within ``slack_s`` (tests of the two directions rarely run at the same second; a wider window would mix in
    reverse tests from before or after a change that hit both directions).  Without tests of mine, or when none
    of them has a reverse test that close: the reverse tests of the period widened by ``slack_s``."""
    if not mine:
        return r.tcp_between(start, end, slack_s)
    chosen = []
    for f in mine:
        near = r.tcp_between(f.test.time, f.test.time, slack_s)
        if near:
            best = min(near, key=lambda g: abs((g.test.time - f.test.time).total_seconds()))
            if all(best is not c for c in chosen):
                chosen.append(best)
    return chosen or r.tcp_between(start, end, slack_s)


def _as_strong(episode: dict, whole: dict) -> bool:
    """A degradation episode shows the asymmetry as the whole window does: as low a ratio, or the same kind
    (throughput or loss) at the same severity.  It then dates the finding: the whole window also holds the tests
    from before the change, and its start is only the window's edge."""
    if episode["ratio"] <= whole["ratio"]:
        return True
    same_kind = episode["reason"] == whole["reason"] and episode["loss_asymmetric"] == whole["loss_asymmetric"]
    return same_kind and _critical(episode) == _critical(whole)


def _critical(c: dict) -> bool:
    """A comparison's asymmetry is critical: throughput below ASYMMETRY_CRITICAL_RATIO of the reverse's, or an
    asymmetric probe loss of 1 % or more."""
    ratio = c["throughput_ratio"]
    return bool((ratio is not None and ratio < k.ASYMMETRY_CRITICAL_RATIO) or (
        c["loss_asymmetric"] and c["my_probe"] and c["my_probe"] >= 0.01
    ))


def _finding(a: PathAssessment, r: PathAssessment | None, c: dict) -> RuleFinding:
    rev_key = f"{a.path.dst}->{a.path.src}"
    critical = _critical(c)
    spurious = None
    if r is not None:
        rl = r.loss_between(c["start"], c["end"], k.CORRELATION_SLACK_S)
        if rl.tcp_fraction and (rl.probe_fraction or 0) == 0 and rl.tcp_fraction > (rl.probe_detection_limit or 0):
            spurious = rl.tcp_fraction  # ACKs lost on this direction make the reverse's TCP retransmit
    facts = {
        "key": a.key,
        "reverse_key": rev_key,
        "hops": a.path.hops,
        "throughput_bps": c["my_thr"],
        "reverse_throughput_bps": c["rev_thr"],
        "throughput_compared": bool(c["throughput_ratio"] is not None and c["my_thr"] is not None and c["rev_thr"]),
        "probe_loss_fraction": c["my_probe"],
        "reverse_probe_loss_fraction": c["rev_probe"],
        "reverse_detection_limit": c["rev_limit"],
        "efficiency": c["my_eff"],
        "reverse_efficiency": c["rev_eff"],
        "reverse_spurious_retransmits": spurious,
    }
    evidence = {
        "period_start": c["start"],
        "period_end": c["end"],
        "throughput_bps": c["my_thr"],
        "reverse_throughput_bps": c["rev_thr"],
        "efficiency": c["my_eff"],
        "reverse_efficiency": c["rev_eff"],
        "efficiency_ratio": c["throughput_ratio"],
        "probe_loss_fraction": c["my_probe"],
        "reverse_probe_loss_fraction": c["rev_probe"],
        "reverse_detection_limit": c["rev_limit"],
        "loss": c["my_loss"].describe(),
        "reverse_loss": c["rev_loss"].describe() if c["rev_loss"] else None,
        "reason": c["reason"],
        "loss_asymmetric": c["loss_asymmetric"],
    }
    return path_finding(
        a,
        codes.ASYMMETRIC_PATH,
        start=c["start"],
        end=c["end"],
        facts=facts,
        evidence=evidence,
        severity=codes.CRITICAL if critical else codes.WARNING,
        loss=c["my_loss"],
    )
