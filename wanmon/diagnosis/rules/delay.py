"""Delay and route rules: DELAY_LEVEL_SHIFT and ROUTE_CHANGE."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from wanmon.diagnosis import codes, physics
from wanmon.diagnosis import constants as k
from wanmon.diagnosis.assessment import PathAssessment
from wanmon.diagnosis.context import RuleContext, path_finding
from wanmon.diagnosis.evidence import RuleFinding, TracerouteObservation
from wanmon.diagnosis.loss import usable_owamp
from wanmon.diagnosis.path_elements import base_equipment
from wanmon.diagnosis.stats import median

SILENT_HOPS = frozenset({"", "*", "???"})


def _silent(h: str | None) -> bool:
    return h is None or h.strip() in SILENT_HOPS


def normalise_hops(hops: Sequence[str | None]) -> tuple[str, ...]:
    """Equipment names of the responding hops (silent hops and interface suffixes dropped)."""
    return tuple(base_equipment(h) for h in hops if not _silent(h))


def same_route(a: Sequence[str | None], b: Sequence[str | None]) -> bool:
    """Same hop list at equipment level; a silent hop ('*') matches whatever answers at that position, and a
    traceroute whose last hops did not answer matches the full one."""
    if len(a) == len(b):
        return all(
            _silent(x) or _silent(y) or base_equipment(x) == base_equipment(y) for x, y in zip(a, b, strict=True)
        )
    na, nb = normalise_hops(a), normalise_hops(b)
    # a traceroute cut short (the last hops did not answer, and the tool stopped listing them) is a prefix of
    # the full one: the same route, not a change
    shorter, longer = sorted((na, nb), key=len)
    return longer[: len(shorter)] == shorter


@dataclass(frozen=True)
class Level:
    """A cluster of minimum one-way delays."""

    low_ms: float
    high_ms: float
    median_ms: float
    samples: int

    @property
    def spread_ms(self) -> float:
        return self.high_ms - self.low_ms


def delay_levels(values: Sequence[float]) -> list[Level]:
    """Distinct levels of minimum delay: gaps >= DELAY_LEVEL_MIN_STEP_MS and >= DELAY_LEVEL_SPREAD_FACTOR x spread.

    Clusters of fewer than DELAY_LEVEL_MIN_SAMPLES values are outliers and left
    out.  Returns one level when the values do not split.
    """
    vals = sorted(values)
    if not vals:
        return []
    clusters: list[list[float]] = [[vals[0]]]
    for v in vals[1:]:
        if v - clusters[-1][-1] >= k.DELAY_LEVEL_MIN_STEP_MS:
            clusters.append([v])
        else:
            clusters[-1].append(v)
    clusters = [c for c in clusters if len(c) >= k.DELAY_LEVEL_MIN_SAMPLES] or [vals]
    levels = [Level(c[0], c[-1], median(c) or c[0], len(c)) for c in clusters]
    merged = [levels[0]]
    spreads = [_robust_spread(c) for c in clusters]
    merged_spread = [spreads[0]]
    for lv, spread in zip(levels[1:], spreads[1:], strict=True):
        prev = merged[-1]
        gap = lv.low_ms - prev.high_ms
        if gap < k.DELAY_LEVEL_SPREAD_FACTOR * max(merged_spread[-1], spread):
            vals_m = [v for v in vals if prev.low_ms <= v <= lv.high_ms]
            merged[-1] = Level(prev.low_ms, lv.high_ms, median(vals_m) or prev.median_ms, prev.samples + lv.samples)
            merged_spread[-1] = _robust_spread(vals_m)
        else:
            merged.append(lv)
            merged_spread.append(spread)
    return merged


def _robust_spread(values: Sequence[float]) -> float:
    """Spread inside a level: the 10-90 % range.  The full range of a week of sessions holds its two most extreme
    minima, and grows with the number of sessions until it swallows the step between two levels."""
    vals = sorted(values)
    if len(vals) < 2:
        return 0.0
    lo = vals[int(0.1 * (len(vals) - 1))]
    hi = vals[int(round(0.9 * (len(vals) - 1)))]
    return hi - lo


def _level_of(levels: Sequence[Level], v: float) -> int | None:
    for i, lv in enumerate(levels):
        if lv.low_ms <= v <= lv.high_ms:
            return i
    return None


def _queueing_not_propagation(levels: Sequence[Level], sessions) -> bool:
    """True when the higher levels come with much more queueing (median - min): a standing queue, not a longer path.

    A protection switch moves minimum and median together; congestion raises
    the median far more than the minimum.
    """
    spreads = []
    for lv in levels:
        qs = [
            o.delay_median_ms - o.delay_min_ms
            for o in sessions
            if o.delay_median_ms is not None and lv.low_ms <= o.delay_min_ms <= lv.high_ms
        ]
        spreads.append(median(qs))
    if any(q is None for q in spreads):
        return False
    lowest = spreads[0]
    return all(q > 2 * lowest + k.DELAY_LEVEL_MIN_STEP_MS for q in spreads[1:])


def last_before_window(a: PathAssessment) -> TracerouteObservation | None:
    """The last traceroute before the window (the evidence carries it: traceroutes are slower than the window)."""
    earlier = [t for t in a.path.traceroutes if a.window_start is not None and t.time < a.window_start]
    return max(earlier, key=lambda t: t.time) if earlier else None


def _age_s(a: PathAssessment, t: TracerouteObservation | None) -> float | None:
    return (a.now - t.time).total_seconds() if t is not None else None


def _routes(a: PathAssessment) -> list[tuple[datetime | None, tuple[str | None, ...]]]:
    """The route before the window (time None: the last traceroute before it, else the baseline's last), then
    the window's traceroutes in time order; traceroutes with no responding hop say nothing and are left out."""
    start = a.window_start
    out: list[tuple[datetime | None, tuple[str | None, ...]]] = []
    b = a.path.baseline
    prior = last_before_window(a)
    if prior is not None and normalise_hops(prior.hops):
        out.append((None, tuple(prior.hops)))
    elif b and b.traceroute_hops and normalise_hops(b.traceroute_hops):
        out.append((None, tuple(b.traceroute_hops)))
    trs: list[TracerouteObservation] = sorted(
        (t for t in a.path.traceroutes if (start is None or t.time >= start) and t.time <= a.now), key=lambda t: t.time
    )
    out += [(t.time, tuple(t.hops)) for t in trs if normalise_hops(t.hops)]
    return out


def route_changes(a: PathAssessment) -> list[dict]:
    """Consecutive traceroutes (the last one before the window first) whose hop lists differ."""
    routes = _routes(a)
    out = []
    for (_, before_raw), (t, after_raw) in zip(routes, routes[1:], strict=False):
        if t is None or same_route(before_raw, after_raw):
            continue
        before, after = normalise_hops(before_raw), normalise_hops(after_raw)
        out.append(
            {
                "time": t,
                "before": list(before),
                "after": list(after),
                "added": [h for h in after if h not in before],
                "removed": [h for h in before if h not in after],
            }
        )
    return out


def _route_at(routes, t: datetime, after: bool) -> tuple[str | None, ...] | None:
    if after:
        later = [r for rt, r in routes if rt is not None and rt >= t]
        return later[0] if later else None
    earlier = [r for rt, r in routes if rt is None or rt <= t]
    return earlier[-1] if earlier else None


def delay_level_shift(ctx: RuleContext) -> list[RuleFinding]:
    """DELAY_LEVEL_SHIFT: minimum one-way delay jumps between distinct levels with no route change.

    Evidence: owamp minimum one-way delay per session (only for directions whose
    clocks are trusted, see CLOCK_UNSYNC), the window's and the last
    DELAY_LEVEL_MIN_SAMPLES before it (``PathEvidence.owamp_before``), and the
    traceroutes of the path.

    Criterion: the minima form at least two levels at least
    DELAY_LEVEL_MIN_STEP_MS apart and DELAY_LEVEL_SPREAD_FACTOR x their internal
    spread, each level holding DELAY_LEVEL_MIN_SAMPLES sessions, and at least one
    jump between them is not matched by a change of the traceroute hop list
    around it.

    Why: the minimum delay is propagation plus fixed processing; it moves only
    when the light travels a different distance (0.3 ms ~ 60 km of fibre).  If
    IP routing did not change, the change happened below IP: a SONET/SDH
    protection switch or an optical restoration onto a longer span.
    """
    out: list[RuleFinding] = []
    untrusted = ctx.untrusted_delay_pairs()
    for a in ctx.assessments():
        if (a.path.src, a.path.dst) in untrusted:
            continue
        # the sessions just before the window too: the level the window's first ones left
        sessions = [
            o for o in (*usable_owamp(a.path.owamp_before), *usable_owamp(a.owamp)) if o.delay_min_ms is not None
        ]
        levels = delay_levels([o.delay_min_ms for o in sessions])
        if len(levels) < 2:
            continue
        seq = [(o.time, _level_of(levels, o.delay_min_ms), o.delay_min_ms) for o in sessions]
        seq = [s for s in seq if s[1] is not None]
        transitions = [(prev, cur) for prev, cur in zip(seq, seq[1:], strict=False) if prev[1] != cur[1]]
        if not transitions or _queueing_not_propagation(levels, sessions):
            continue
        routes = _routes(a)
        unexplained, explained = [], []
        for prev, cur in transitions:
            before, after = _route_at(routes, prev[0], after=False), _route_at(routes, cur[0], after=True)
            if before is not None and after is not None and not same_route(before, after):
                explained.append((prev, cur))
            else:
                unexplained.append((prev, cur, before is not None and after is not None))
        if not unexplained:
            continue
        n_routes = len([r for r in routes if r[0] is not None])
        if n_routes and not any(conf for _, _, conf in unexplained):
            continue  # every jump traceroutes bracket is a route change; the others are most likely the same
        step = max(abs(levels[c[1]].median_ms - levels[p[1]].median_ms) for p, c, _ in unexplained)
        confirmed = all(conf for _, _, conf in unexplained)
        out.append(
            path_finding(
                a,
                codes.DELAY_LEVEL_SHIFT,
                start=unexplained[0][0][0],
                end=unexplained[-1][1][0],
                facts={
                    "key": a.key,
                    "levels": [(lv.median_ms, lv.samples) for lv in levels],
                    "jumps": len(transitions),
                    "unexplained_jumps": len(unexplained),
                    "jump_times": [c[0] for _, c, _ in unexplained],
                    "step_ms": step,
                    "extra_fibre_km": physics.fibre_km_for_delay_ms(step),
                    "traceroute_confirmed": confirmed,
                    "traceroutes": n_routes,
                },
                evidence={
                    "levels": [lv.__dict__ for lv in levels],
                    "transitions": [
                        {
                            "before_time": p[0],
                            "after_time": c[0],
                            "from_ms": p[2],
                            "to_ms": c[2],
                            "traceroute_confirmed": conf,
                        }
                        for p, c, conf in unexplained
                    ],
                    "explained_by_route_change": [{"before_time": p[0], "after_time": c[0]} for p, c in explained],
                    "traceroutes": n_routes,
                    "route_before_window_age_s": _age_s(a, last_before_window(a)),
                    "step_ms": step,
                    "extra_fibre_km": physics.fibre_km_for_delay_ms(step),
                },
                severity=codes.INFO if len(unexplained) <= 2 else codes.WARNING,
            )
        )
    return out


def known_route(hops: Sequence[str | None], known: Sequence[Sequence[str | None]]) -> bool:
    """True when ``hops`` is one of the ``known`` routes (``same_route``: silent hops match anything)."""
    return any(same_route(hops, r) for r in known)


def first_new_route(a: PathAssessment, changes: Sequence[dict]) -> datetime | None:
    """The time of the first change of the window onto a route the path had not taken before (neither in its
    baseline period nor earlier in the window); None when every change led onto a known route. ECMP hashing
    flows onto equal routes looks like the latter, and so does a path that keeps returning to its usual routes;
    a route never seen before is a new route, whatever its length."""
    b = a.path.baseline
    seen: list[tuple[str | None, ...]] = list(b.traceroute_routes) if b else []
    at_change = {c["time"] for c in changes}
    for t, hops in _routes(a):
        if t in at_change and not known_route(hops, seen):
            return t
        seen.append(hops)
    return None


def _delay_step_ms(sessions, changes: Sequence[dict]) -> float | None:
    """The largest move of the median minimum one-way delay across the route changes: the sessions between two
    changes against those between the next two (None: fewer than DELAY_LEVEL_MIN_SAMPLES sessions on either
    side of every change)."""
    bounds = [c["time"] for c in changes]
    spans = list(zip([None, *bounds], [*bounds, None], strict=True))
    medians = []
    for lo, hi in spans:
        values = [o.delay_min_ms for o in sessions if (lo is None or o.time >= lo) and (hi is None or o.time < hi)]
        medians.append(median(values) if len(values) >= k.DELAY_LEVEL_MIN_SAMPLES else None)
    steps = [abs(y - x) for x, y in zip(medians, medians[1:], strict=False) if x is not None and y is not None]
    return max(steps) if steps else None


def delay_moved_at(a: PathAssessment, sessions, t: datetime) -> datetime | None:
    """When the route that traceroute saw first at ``t`` began, from the minimum one-way delay: the earliest
    session since the traceroute before (else the window's start) from which every session sits nearer the delay
    after ``t`` than the one before, when the two are DELAY_LEVEL_MIN_STEP_MS apart or more (None otherwise).

    Traceroutes run every 30 min to 6 h and owamp every few minutes: the minimum delay moves only when the light
    travels another distance, so the session where it moved dates the change the later traceroute only shows."""
    routes = [rt for rt, _ in _routes(a) if rt is not None and rt < t]
    prev = max(routes) if routes else a.window_start
    if prev is None:
        return None
    before = median(o.delay_min_ms for o in sessions if o.time <= prev)
    after = median(o.delay_min_ms for o in sessions if o.time >= t)
    between = sorted((o for o in sessions if prev < o.time < t), key=lambda o: o.time)
    if before is None and between:
        # the traceroute before lies before the window (traceroutes every 6 h, a window of hours): the window's
        # first session is the earliest witness of the route before
        before = between[0].delay_min_ms
    if after is None and between:
        # the cycle right after the traceroute that saw the route (hourly owamp): no session since it yet, and
        # the episode keeps the onset of its first cycle; the latest session is the best witness of the route
        after = between[-1].delay_min_ms
    if before is None or after is None or abs(after - before) < k.DELAY_LEVEL_MIN_STEP_MS:
        return None
    moved = None
    for o in sorted((o for o in sessions if prev < o.time < t), key=lambda o: o.time, reverse=True):
        if abs(o.delay_min_ms - after) >= abs(o.delay_min_ms - before):
            break
        moved = o.time
    return moved


def route_change(ctx: RuleContext) -> list[RuleFinding]:
    """ROUTE_CHANGE: the traceroute hop list of a path direction changed.

    Evidence: the traceroutes of the window (and the last one before it), the
    routes the baseline period saw, owamp minimum delays (trusted clocks only)
    before and after each change, and the path's degradation episodes.

    Criterion: two consecutive traceroutes (the last one before the window
    first, else the baseline's last) whose responding hops (equipment
    names; silent hops ignored) differ.  Warning when the path degrades within
    CORRELATION_SLACK_S after the change, info otherwise; info too when the
    path only alternates between routes it took before (in the baseline or
    earlier in the window) and the minimum delay did not move by
    DELAY_LEVEL_MIN_STEP_MS across the changes (unknown counts as not moved);
    such an alternation is reported only beside a degradation (to say the
    route is not its cause), not on its own.

    Why: a new route explains delay changes and links the path to equipment it
    did not cross before, which correlation must take into account.  ECMP
    alternation between equal routes is normal (docs/diagnosis.md, "What the
    rules tolerate"): it moves no delay and explains no degradation, so a
    degradation that happens to follow it is not the route's doing.
    """
    out: list[RuleFinding] = []
    untrusted = ctx.untrusted_delay_pairs()
    for a in ctx.assessments():
        changes = route_changes(a)
        if not changes:
            continue
        first = changes[0]["time"]
        before = after = km = step = None
        sessions = []
        if (a.path.src, a.path.dst) not in untrusted:
            sessions = [o for o in usable_owamp(a.owamp) if o.delay_min_ms is not None]
            before = median(o.delay_min_ms for o in sessions if o.time < first)
            after = median(o.delay_min_ms for o in sessions if o.time >= first)
            if before is not None and after is not None:
                km = physics.fibre_km_for_delay_ms(abs(after - before))
            around_first = abs(after - before) if before is not None and after is not None else None
            moves = [m for m in (_delay_step_ms(sessions, changes), around_first) if m is not None]
            step = max(moves) if moves else None
        degraded_after = [
            ep
            for ep in a.episodes
            if abs((ep.start - first).total_seconds()) <= k.CORRELATION_SLACK_S or ep.start <= first <= ep.end
        ]
        new_at = first_new_route(a, changes)
        ecmp = new_at is None and (step is None or step < k.DELAY_LEVEL_MIN_STEP_MS)
        if ecmp and not degraded_after:
            # the path's ordinary state: reported, it would stay open for good on an ECMP path and hide the day
            # it takes a route it never took (that finding would be this one, opened long before)
            continue
        # among alternates the change that matters is the one onto a new route: the episode starts there, or at
        # the session whose minimum delay moved to that route's before the traceroute saw it
        seen_at = new_at or first
        start = delay_moved_at(a, sessions, seen_at) or seen_at
        original, final = changes[0]["before"], changes[-1]["after"]
        new = [h for h in final if h not in original]  # on the route now, not on the one before the first change
        back = not new and normalise_hops(original) == normalise_hops(final)
        out.append(
            path_finding(
                a,
                codes.ROUTE_CHANGE,
                start=start,
                end=changes[-1]["time"],
                facts={
                    "key": a.key,
                    "changes": changes,
                    "new_hops": new,
                    "back": back,
                    "degraded_after": bool(degraded_after),
                    "delay_before_ms": before,
                    "delay_after_ms": after,
                    "fibre_km": km,
                    "alternation": ecmp,
                },
                evidence={
                    "changes": changes,
                    "degraded_after": bool(degraded_after),
                    "alternation": ecmp,
                    "delay_step_ms": step,
                    "known_routes": len(a.path.baseline.traceroute_routes) if a.path.baseline else 0,
                    "route_before_window_age_s": _age_s(a, last_before_window(a)),
                },
                severity=codes.WARNING if degraded_after and not ecmp else codes.INFO,
            )
        )
    return out
