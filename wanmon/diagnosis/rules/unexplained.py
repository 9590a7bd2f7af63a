"""UNEXPLAINED_DEGRADATION: worse than the path's own baseline and no other rule explains it."""

from __future__ import annotations

from datetime import datetime, timedelta

from wanmon.diagnosis import codes, text
from wanmon.diagnosis import constants as k
from wanmon.diagnosis.assessment import PathAssessment
from wanmon.diagnosis.context import RuleContext, path_finding
from wanmon.diagnosis.evidence import PathSummary, RuleFinding
from wanmon.diagnosis.loss import usable_owamp
from wanmon.diagnosis.path_elements import interface_on_path, path_elements
from wanmon.diagnosis.rules.delay import delay_levels
from wanmon.diagnosis.stats import median

#: Path-subject findings that explain a throughput/loss degradation of their path.
PATH_EXPLANATIONS = (
    codes.WINDOW_LIMITED,
    codes.LOSS_LIMITED,
    codes.ASYMMETRIC_PATH,
    codes.TCP_ONLY_DEGRADATION,
    codes.PERIODIC_LOSS,
    codes.MTU_MISMATCH,
    codes.REORDERING,
    codes.PATH_DOWN,
    codes.ROUTE_CHANGE,
    codes.DELAY_LEVEL_SHIFT,
)
#: Element findings that explain a degradation of the paths crossing the element.
ELEMENT_EXPLANATIONS = (
    codes.INTERFACE_ERRORS,
    codes.LINK_CONGESTION,
    codes.SHARED_EQUIPMENT_SUSPECT,
    codes.TRUNK_IMBALANCE,
    codes.COUNTER_DISCONTINUITY,
    codes.MAINTENANCE_EXPLAINED,
)
#: For a delay-only degradation, the findings that explain delay.
DELAY_EXPLANATIONS = (
    codes.DELAY_LEVEL_SHIFT,
    codes.ROUTE_CHANGE,
    codes.LINK_CONGESTION,
    codes.MAINTENANCE_EXPLAINED,
    codes.CLOCK_UNSYNC,
    codes.SHARED_EQUIPMENT_SUSPECT,
)


def _overlaps(f: RuleFinding, start: datetime, end: datetime) -> bool:
    slack = timedelta(seconds=k.CORRELATION_SLACK_S)
    return f.start <= end + slack and start <= f.end + slack


def explaining_findings(
    ctx: RuleContext, a: PathAssessment, start: datetime, end: datetime, allowed: tuple[str, ...]
) -> list[RuleFinding]:
    """Findings of the allowed codes about this path, or an element on it, overlapping [start, end]."""
    elements = path_elements(a.path, ctx.bundle)
    out = []
    for f in ctx.findings:
        if f.code not in allowed or not _overlaps(f, start, end):
            continue
        s = f.subject
        if f.code == codes.ASYMMETRIC_PATH and not f.evidence.get("loss_asymmetric"):
            continue  # it says where (this direction only), not why: the degradation stays unexplained
        if s.get("src") == a.path.src and s.get("dst") == a.path.dst:
            out.append(f)
        elif f.code == codes.SHARED_EQUIPMENT_SUSPECT and a.key in (
            f.evidence.get("degraded_paths", []) or [f.evidence.get("degraded_path")]
        ):
            out.append(f)
        elif "trunk" in s and s["trunk"] in elements:
            out.append(f)
        elif "equipment" in s and f.code != codes.SHARED_EQUIPMENT_SUSPECT:
            if s.get("interface"):
                # the port must be on the path; another port of a router it crosses is someone else's link
                # (at a hop naming the router without a port the port is unknown, and may be this one)
                if interface_on_path(f"{s['equipment']}:{s['interface']}", a.path, ctx.bundle):
                    out.append(f)
            elif s["equipment"] in elements:
                out.append(f)
    return out


#: Findings that locate or describe but never explain a throughput or loss degradation by themselves: an ECMP
#: route change, a delay level shift, a counter reset (an SNMP agent restart moves no packet).
NOT_THROUGHPUT_EXPLANATIONS = frozenset({codes.ROUTE_CHANGE, codes.DELAY_LEVEL_SHIFT, codes.COUNTER_DISCONTINUITY})


def predicted_bps(f: RuleFinding) -> float | None:
    """The rate a finding says the flow is held to (window limit, Mathis ceiling, TCP-only prediction), if any."""
    if f.code == codes.WINDOW_LIMITED:
        return f.evidence.get("window_limited_rate_bps")
    if f.code == codes.LOSS_LIMITED:
        # the conservative Mathis figure (C = 0.7): LOSS_LIMITED matched the flow against it, and the stack's
        # ceiling (CUBIC's, twice Reno's at C = 1.22) is 3.5 times higher, so that a flow at its Mathis rate
        # read as "far below what the loss allows" and stayed unexplained
        return f.evidence.get("mathis_conservative_bps") or f.evidence.get("stack_ceiling_bps")
    return None


def onset_bounds(a: PathAssessment, ep) -> datetime | None:
    """The last healthy observation, of a kind the episode is degraded in, before the episode: the degradation
    began after it (None: it was there already).  Another kind proves nothing (owamp cannot see 1e-5 loss)."""
    kinds = set(ep.kinds)
    before = [o.time for o in a.observations if o.time < ep.start and o.state == "ok" and o.kind in kinds]
    return max(before) if before else None


def explains_episode(f: RuleFinding, a: PathAssessment, ep) -> bool:
    """Whether finding ``f`` explains degradation episode ``ep`` of path ``a``.

    A path finding must start with it: its onset no earlier than the last healthy observation (of the episode's
    kinds) before the episode (less CORRELATION_SLACK_S), so that a long-standing condition (a window limit of
    months) does not hide a new drop; an element finding must be active during it (errors, load);
    and when it predicts a rate (window limit, Mathis ceiling), the episode's throughput must not be below
    EXPLANATION_MIN_FRACTION of it: a ceiling of 255 Mb/s does not explain 60 Mb/s.  Route changes, delay
    level shifts and counter resets explain no throughput drop by themselves.
    """
    if f.code in NOT_THROUGHPUT_EXPLANATIONS:
        return False
    healthy_before = onset_bounds(a, ep)
    if (
        f.code not in ELEMENT_EXPLANATIONS
        and f.code != codes.PERIODIC_LOSS  # intermittent by nature: healthy sessions lie between its losses
        and healthy_before is not None
        and f.start < healthy_before - timedelta(seconds=k.CORRELATION_SLACK_S)
    ):
        # a standing condition of the path: an element finding instead is active during the episode (its
        # errors or load may grow until they hurt), which the time overlap already required
        return False
    predicted = predicted_bps(f)
    thr = median(o.value for o in ep.observations if o.kind == "tcp" and o.state == "degraded" and o.value is not None)
    if predicted and thr is not None and thr < k.EXPLANATION_MIN_FRACTION * predicted:
        return False
    return True


def _ruled_out(ctx: RuleContext, a: PathAssessment, start: datetime, end: datetime) -> dict[str, str]:
    """Why each rule does not explain this degradation, with numbers where there are some."""
    tests = a.tcp_between(start, end)
    thr = median(f.test.throughput_bps for f in tests)
    r_w = median(f.window_limited_rate_bps for f in tests if f.window_limited_rate_bps)
    loss = a.loss_between(start, end, k.LOSS_NEIGHBOURHOOD_S / 2)
    out: dict[str, str] = {}
    if thr and r_w:
        out[codes.WINDOW_LIMITED] = f"{text.rate(thr)} is {text.pct(thr / r_w)} of the window limit {text.rate(r_w)}"
    else:
        out[codes.WINDOW_LIMITED] = "window or RTT unknown, or no TCP test in the period"
    if loss.fraction:
        ceiling = a.mathis_ceiling_bps(loss.fraction)
        out[codes.LOSS_LIMITED] = (
            f"loss {text.loss(loss.fraction)} allows {text.rate(ceiling)}, measured {text.rate(thr)}"
            if ceiling
            else f"loss {text.loss(loss.fraction)} but the stack ignores random loss"
        )
    else:
        limit = f" (below {loss.detection_limit:.1e})" if loss.detection_limit else ""
        out[codes.LOSS_LIMITED] = f"no loss measured{limit}"
    out[codes.PATH_DOWN] = "tests completed and probes got through"
    r = ctx.assessment_of(a.path.dst, a.path.src)
    asym = [
        f
        for f in ctx.findings
        if f.code == codes.ASYMMETRIC_PATH and f.subject.get("src") == a.path.src and f.subject.get("dst") == a.path.dst
    ]
    if asym:
        out[codes.ASYMMETRIC_PATH] = (
            f"only this direction is worse ({asym[0].summary}), but no loss or other cause shows"
        )
    else:
        out[codes.ASYMMETRIC_PATH] = (
            "the reverse direction is not measured" if r is None else "the reverse direction is comparable"
        )
    out[codes.TCP_ONLY_DEGRADATION] = "no clean UDP test at a comparable rate" if not a.udp else "UDP is not clean"
    for code in (codes.INTERFACE_ERRORS, codes.LINK_CONGESTION, codes.TRUNK_IMBALANCE, codes.COUNTER_DISCONTINUITY):
        out[code] = "no such finding on the elements of the path in this period"
    out[codes.SHARED_EQUIPMENT_SUSPECT] = (
        "no other site pair degraded at the same time, no load rise on shared elements"
    )
    for code in (
        codes.PERIODIC_LOSS,
        codes.REORDERING,
        codes.MTU_MISMATCH,
        codes.ROUTE_CHANGE,
        codes.DELAY_LEVEL_SHIFT,
    ):
        out[code] = "not observed"
    notes = ctx.maintenance_matches().notes_for(a.path.src, a.path.dst)
    out[codes.MAINTENANCE_EXPLAINED] = (
        "; ".join(notes) if notes else (f"no maintenance window on {', '.join(a.path.hops)} in this period")
    )
    return out


def unexplained_degradation(ctx: RuleContext) -> list[RuleFinding]:
    """UNEXPLAINED_DEGRADATION: say so instead of staying silent.

    Evidence: the degradation episodes of each path (TCP throughput against the
    path's baseline or its own recent level, probe loss, failures), the
    path's owamp delays against its baseline, the maintenance matches and every
    finding made before.

    Criterion: a degradation episode of at least UNEXPLAINED_MIN_EPISODE_S (not explained by maintenance) with no
    finding of PATH_EXPLANATIONS about the path or of ELEMENT_EXPLANATIONS about
    an element on it overlapping in time (an ASYMMETRIC_PATH without asymmetric
    loss says where, not why, and does not count); or a median one-way delay (trusted
    clocks) above the baseline's by more than max(DELAY_DEGRADED_MIN_MS,
    DELAY_DEGRADED_FRACTION x the baseline minimum) with no delay explanation
    (``_delay_explained``: a route change or level shift explains the level it
    moved the path to for as long as the path stays on it) and not a steady
    longer path (``steady_longer_path``: the step that made it left the window).

    Why: an expert system that stays silent about what it cannot explain hides
    exactly the new problems.  The finding lists the evidence and, for each rule,
    why it does not apply.
    """
    out: list[RuleFinding] = []
    matches = ctx.maintenance_matches()
    for a in ctx.assessments():
        pending = []
        for ep in a.episodes:
            if matches.explained(a.path.src, a.path.dst, ep):
                continue
            if (ep.end - ep.start).total_seconds() < k.UNEXPLAINED_MIN_EPISODE_S:
                continue  # too young to say that no rule explains it
            candidates = explaining_findings(ctx, a, ep.start, ep.end, PATH_EXPLANATIONS + ELEMENT_EXPLANATIONS)
            if any(explains_episode(f, a, ep) for f in candidates):
                continue
            pending.append(ep)
        if pending:
            out.append(_episode_finding(ctx, a, pending))
            continue
        delay = _delay_degradation(ctx, a)
        if delay and not _delay_explained(ctx, a, delay):
            out.append(_delay_finding(ctx, a, delay))
    return out


def _episode_finding(ctx: RuleContext, a: PathAssessment, episodes) -> RuleFinding:
    start, end = episodes[0].start, episodes[-1].end
    obs = [o for ep in episodes for o in ep.observations]
    tests = a.tcp_between(start, end)
    thr = median(f.test.throughput_bps for f in tests)
    loss = a.loss_between(start, end, k.LOSS_NEIGHBOURHOOD_S / 2)
    ruled_out = _ruled_out(ctx, a, start, end)
    reasons = sorted({o.reason for o in obs})[:5]
    facts = {
        "key": a.key,
        "hops": a.path.hops,
        "ruled_out": ruled_out,
        "start": start,
        "end": end,
        "observations": len(obs),
        "reasons": reasons,
        "slow": any(o.kind == "tcp" for o in obs),
        "throughput_bps": thr,
        "reference_bps": a.reference_bps,
        "reference_source": a.reference_source,
        "loss_fraction": loss.fraction,
        "loss_described": loss.describe(),
    }
    return path_finding(
        a,
        codes.UNEXPLAINED_DEGRADATION,
        start=start,
        end=end,
        facts=facts,
        evidence={
            "observations": [
                {
                    "time": o.time,
                    "kind": o.kind,
                    "state": o.state,
                    "value": o.value,
                    "reason": o.reason,
                    "id": o.measurement_id,
                }
                for o in obs
            ],
            "throughput_median_bps": thr,
            "reference_bps": a.reference_bps,
            "reference_source": a.reference_source,
            "ruled_out": ruled_out,
        },
        loss=loss,
    )


def _delay_degradation(ctx: RuleContext, a: PathAssessment) -> dict | None:
    b = a.path.baseline
    if b is None or b.delay_median_ms is None or (a.path.src, a.path.dst) in ctx.untrusted_delay_pairs():
        return None
    sessions = [o for o in usable_owamp(a.owamp) if o.delay_median_ms is not None]
    if len(sessions) < k.DELAY_LEVEL_MIN_SAMPLES:
        return None
    recent = sessions[-max(k.DELAY_LEVEL_MIN_SAMPLES, len(sessions) // 3) :]
    now_median = median(o.delay_median_ms for o in recent) or 0.0
    base_min = b.delay_min_ms or b.delay_median_ms
    limit = max(k.DELAY_DEGRADED_MIN_MS, k.DELAY_DEGRADED_FRACTION * base_min)
    if now_median - b.delay_median_ms <= limit:
        return None
    if steady_longer_path(sessions, b, limit):
        return None
    return {
        "start": recent[0].time,
        "end": recent[-1].time,
        "now_ms": now_median,
        "baseline_ms": b.delay_median_ms,
        "limit_ms": limit,
    }


#: Delay explanations that move the path onto a new level and leave it there: they explain the level for as long
#: as the path stays on it, not only while they overlap the period judged.
LEVEL_CHANGES = (codes.ROUTE_CHANGE, codes.DELAY_LEVEL_SHIFT)


def _delay_explained(ctx: RuleContext, a: PathAssessment, delay: dict) -> bool:
    """A finding of DELAY_EXPLANATIONS overlapping the delay's period explains it; a route change or level shift
    of the path before it too, when the minimum delays since its last jump form one level (the path stayed where
    the change put it). ECMP alternation (a ROUTE_CHANGE that moved no delay, rules/delay.py) explains no delay
    rise."""
    for f in explaining_findings(ctx, a, delay["start"], delay["end"], DELAY_EXPLANATIONS):
        if not (f.code == codes.ROUTE_CHANGE and f.evidence.get("alternation")):
            return True
    sessions = [o for o in usable_owamp(a.owamp) if o.delay_min_ms is not None]
    for f in ctx.findings:
        if f.code not in LEVEL_CHANGES or f.evidence.get("alternation") or f.end > delay["end"]:
            continue
        if f.subject.get("src") != a.path.src or f.subject.get("dst") != a.path.dst:
            continue
        since = [o.delay_min_ms for o in sessions if o.time >= f.end]
        if len(delay_levels(since)) <= 1:
            return True
    return False


def steady_longer_path(sessions, b: PathSummary, limit_ms: float) -> bool:
    """True when the window's delay is one steady level that is longer than the baseline's in propagation, not in
    queueing: its minimum one-way delays form a single level (``delay_levels``: no step inside the window) and the
    queueing on it (median less minimum) exceeds the baseline's by no more than ``limit_ms``.

    Why: the minimum delay moves only when the light travels another distance, and a step of it is a route change
    or a protection switch (ROUTE_CHANGE, DELAY_LEVEL_SHIFT), found while the step lies in the window. Once the
    step has slid out, the path sits on its new level: that level is explained by the same step for as long as
    the path stays on it (docs/diagnosis.md, "One road"), not a fresh degradation against the older baseline.
    A queue that builds up moves the median, not the minimum, and stays a delay degradation."""
    mins = [o.delay_min_ms for o in sessions if o.delay_min_ms is not None]
    if b.delay_min_ms is None or len(mins) < k.DELAY_LEVEL_MIN_SAMPLES or len(delay_levels(mins)) != 1:
        return False
    level_ms = median(mins) or 0.0
    queue_ms = (median(o.delay_median_ms for o in sessions) or 0.0) - level_ms
    base_queue_ms = (b.delay_median_ms or 0.0) - b.delay_min_ms
    return level_ms - b.delay_min_ms > limit_ms and queue_ms - base_queue_ms <= limit_ms


def _delay_finding(ctx: RuleContext, a: PathAssessment, d: dict) -> RuleFinding:
    ruled_out = _ruled_out(ctx, a, d["start"], d["end"])
    return path_finding(
        a,
        codes.UNEXPLAINED_DEGRADATION,
        start=d["start"],
        end=d["end"],
        facts={"key": a.key, "hops": a.path.hops, "ruled_out": ruled_out, "delay": d},
        evidence={"delay": d, "ruled_out": ruled_out},
    )
