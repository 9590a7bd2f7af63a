"""CLOCK_UNSYNC: one-way delay data of a site pair cannot be trusted (NTP problem).

One-way delay needs both clocks to agree.  An offset d adds +d to one
direction and -d to the other, so the *sum* of the two minimum delays still
equals the RTT while the individual values lie; a drift or an unsynchronised
clock breaks even the sum.  Every one-way-delay rule (DELAY_LEVEL_SHIFT, the
delay part of UNEXPLAINED_DEGRADATION, ROUTE_CHANGE's delay note) skips the
directions returned by ``untrusted_pairs``.
"""

from __future__ import annotations

import bisect
import statistics
from collections.abc import Sequence
from datetime import datetime

from wanmon.diagnosis import codes
from wanmon.diagnosis import constants as k
from wanmon.diagnosis.context import RuleContext, finding, path_finding
from wanmon.diagnosis.evidence import OwampTest, PathEvidence, RuleFinding
from wanmon.diagnosis.loss import usable_owamp
from wanmon.diagnosis.stats import median, robust_sigma


def _sessions(ctx: RuleContext, path: PathEvidence) -> list[OwampTest]:
    start = ctx.bundle.window_start
    return sorted(
        (o for o in usable_owamp(path.owamp_tests) if (start is None or o.time >= start) and o.time <= ctx.now),
        key=lambda o: o.time,
    )


def _rtt_ms(ctx: RuleContext, fwd: PathEvidence, rev: PathEvidence | None) -> float | None:
    rtts = [t.rtt_ms for p in (fwd, rev) if p for t in p.throughput_tests if t.rtt_ms and t.error is None]
    if rtts:
        return statistics.median(rtts)
    for p in (fwd, rev):
        if p and p.baseline and p.baseline.rtt_ms:
            return p.baseline.rtt_ms
    return None


def _rtt_tests(ctx: RuleContext, fwd: PathEvidence, rev: PathEvidence | None) -> list[tuple[datetime, float]]:
    """(time, RTT) of the window's TCP tests of both directions."""
    start = ctx.bundle.window_start
    return [
        (t.time, t.rtt_ms)
        for p in (fwd, rev)
        if p
        for t in p.throughput_tests
        if t.rtt_ms and t.error is None and (start is None or t.time >= start) and t.time <= ctx.now
    ]


def _rtts(ctx: RuleContext, fwd: PathEvidence, rev: PathEvidence | None) -> list[float]:
    return [rtt for _, rtt in _rtt_tests(ctx, fwd, rev)]


def _delay_at(obs: Sequence[OwampTest]):
    """A function of time giving this direction's minimum one-way delay in the session nearest in time.

    The minimum moves with the route's length (a clock offset moves it too, but then every session and every
    RTT test sees the same offset): an RTT and a one-way delay are only compared when the minima at their times
    agree, i.e. on the same route.  None when the direction has no session.
    """
    ordered = [o for o in obs if o.delay_min_ms is not None]
    times = [o.time for o in ordered]

    def at(t: datetime) -> float | None:
        i = bisect.bisect_left(times, t)
        near = [j for j in (i - 1, i) if 0 <= j < len(times)]
        if not near:
            return None
        return ordered[min(near, key=lambda j: abs((times[j] - t).total_seconds()))].delay_min_ms

    return at


def error_threshold_ms(one_way_ms: float | None) -> float:
    """Clock error above which one-way delays of this magnitude are meaningless."""
    rel = k.CLOCK_ERROR_DELAY_FRACTION * abs(one_way_ms) if one_way_ms else k.CLOCK_ERROR_MAX_MS
    return max(k.CLOCK_ERROR_FLOOR_MS, min(k.CLOCK_ERROR_MAX_MS, rel))


def _pairs(fwd: Sequence[OwampTest], rev: Sequence[OwampTest]) -> list[tuple[OwampTest, OwampTest]]:
    """Each forward session with the reverse session nearest in time (within the skew limit).

    Binary search over the reverse sessions sorted by time: a day of 5-minute sessions on 132
    directions stays linear-logarithmic instead of quadratic.
    """
    near = sorted((r for r in rev if r.delay_min_ms is not None), key=lambda r: r.time)
    if not near:
        return []
    times = [r.time for r in near]
    out = []
    for o in fwd:
        if o.delay_min_ms is None:
            continue
        i = bisect.bisect_left(times, o.time)
        candidates = [near[j] for j in (i - 1, i) if 0 <= j < len(near)]
        r = min(candidates, key=lambda r: abs((r.time - o.time).total_seconds()))
        if abs((r.time - o.time).total_seconds()) <= k.CLOCK_PAIR_MAX_SKEW_S:
            out.append((o, r))
    return out


def _clock_step(pairs: Sequence[tuple[OwampTest, OwampTest]]) -> dict | None:
    """The offset (fwd - rev) jumps while the sum (~RTT) stays: a clock step, not a reroute."""
    if len(pairs) < 2 * k.DELAY_LEVEL_MIN_SAMPLES:
        return None
    diffs = [f.delay_min_ms - r.delay_min_ms for f, r in pairs]
    sums = [f.delay_min_ms + r.delay_min_ms for f, r in pairs]

    # Prefix sums give each split's sum of squared errors in O(1): SSE = sum(x^2) - (sum x)^2 / n.
    n = len(diffs)
    s1 = [0.0]
    s2 = [0.0]
    for x in diffs:
        s1.append(s1[-1] + x)
        s2.append(s2[-1] + x * x)

    def sse(lo: int, hi: int) -> float:
        count = hi - lo
        total = s1[hi] - s1[lo]
        return (s2[hi] - s2[lo]) - total * total / count

    best = None
    for i in range(k.DELAY_LEVEL_MIN_SAMPLES, len(pairs) - k.DELAY_LEVEL_MIN_SAMPLES + 1):
        cost = sse(0, i) + sse(i, n)  # the change point splits the offset into two flat segments
        if best is None or cost < best[0]:
            best = (cost, i)
    if best is None:
        return None
    i = best[1]
    d = statistics.median(diffs[i:]) - statistics.median(diffs[:i])
    s = statistics.median(sums[i:]) - statistics.median(sums[:i])
    spread = max(
        max(diffs[:i]) - min(diffs[:i]),
        max(diffs[i:]) - min(diffs[i:]),
    )
    min_step = max(2 * k.DELAY_LEVEL_MIN_STEP_MS, k.CLOCK_ERROR_FLOOR_MS)
    if abs(d) >= min_step and abs(d) >= k.DELAY_LEVEL_SPREAD_FACTOR * spread and abs(s) < 0.25 * abs(d):
        return {"time": pairs[i][0].time, "offset_change_ms": d / 2, "sum_change_ms": s}
    return None


def _same_route_rtt(delay_ms: float, rtt_ms: float, rtt_levels, tol_ms: float) -> float | None:
    """The highest RTT measured while the one-way minimum was within ``tol_ms`` of ``delay_ms`` (same route).

    ``rtt_levels``: (RTT, one-way minimum nearest that test).  Without TCP tests in the window, the baseline's
    ``rtt_ms`` (no route to tell it by); None when every test ran on a route of another length.
    """
    if not rtt_levels:
        return rtt_ms
    same = [r for r, at in rtt_levels if at is not None and abs(at - delay_ms) <= tol_ms]
    return max(same, default=None)


def check_direction_pair(ctx: RuleContext, fwd: PathEvidence, rev: PathEvidence | None) -> dict[str, list[dict]]:
    """Problems per direction key ('SRC->DST') of one site pair."""
    problems: dict[str, list[dict]] = {fwd.key: []}
    if rev is not None:
        problems[rev.key] = []
    rtt_tests = _rtt_tests(ctx, fwd, rev)
    rtt = max((r for _, r in rtt_tests), default=None) or _rtt_ms(ctx, fwd, rev)
    sessions = {fwd.key: _sessions(ctx, fwd)}
    if rev is not None:
        sessions[rev.key] = _sessions(ctx, rev)
    for key, obs in sessions.items():
        neg = [o for o in obs if o.delay_min_ms is not None and o.delay_min_ms < 0]
        if neg:
            problems[key].append(
                {
                    "kind": "negative_delay",
                    "sessions": len(neg),
                    "min_ms": min(o.delay_min_ms for o in neg),
                    "times": [o.time for o in neg],
                }
            )
        typical = median(o.delay_min_ms for o in obs if o.delay_min_ms is not None and o.delay_min_ms > 0)
        limit = error_threshold_ms(typical)
        big = [o for o in obs if o.clock_error_ms is not None and o.clock_error_ms > limit]
        if len(big) >= k.CLOCK_MIN_ERROR_SESSIONS:
            problems[key].append(
                {
                    "kind": "clock_error",
                    "sessions": len(big),
                    "max_error_ms": max(o.clock_error_ms for o in big),
                    "threshold_ms": limit,
                    "times": [o.time for o in big],
                }
            )
        if rtt:
            # After a route change the one-way delay of the new route must not be held to the RTT of the old
            # one (a 5 ms detour put the one-way delay above the RTT of the TCP tests run before it): each
            # session is compared with the RTTs measured while this direction's minimum was at its level.
            tol = max(k.CLOCK_RTT_TOLERANCE_MS, k.CLOCK_RTT_TOLERANCE_FRACTION * rtt)
            delay_at = _delay_at(obs)
            rtt_levels = [(r, delay_at(t)) for t, r in rtt_tests]
            above = [
                o
                for o in obs
                if o.delay_min_ms is not None
                and (same := _same_route_rtt(o.delay_min_ms, rtt, rtt_levels, tol)) is not None
                and o.delay_min_ms > same + tol
            ]
            if above:
                problems[key].append(
                    {
                        "kind": "one_way_above_rtt",
                        "sessions": len(above),
                        "max_ms": max(o.delay_min_ms for o in above),
                        "rtt_ms": rtt,
                        "times": [o.time for o in above],
                    }
                )
    if rev is not None:
        pairs = _pairs(sessions[fwd.key], sessions[rev.key])
        rtts = _rtts(ctx, fwd, rev)
        if rtts and pairs:
            # Whole-window extremes: a reroute during part of the window moves some sums but not the lowest
            # one; only a clock problem puts *every* sum beyond every RTT measured (or all far below).
            sums = [f.delay_min_ms + r.delay_min_ms for f, r in pairs]
            tol = max(k.CLOCK_RTT_TOLERANCE_MS, k.CLOCK_RTT_TOLERANCE_FRACTION * max(rtts))
            high = min(sums) > max(rtts) + tol
            low = max(sums) < min(rtts) - tol
            if high or low:
                item = {
                    "kind": "sum_vs_rtt",
                    "sessions": len(pairs),
                    "sum_median_ms": statistics.median(sums),
                    "rtt_ms": statistics.median(rtts),
                    "tolerance_ms": tol,
                    "times": [f.time for f, _ in pairs],
                }
                problems[fwd.key].append(item)
                problems[rev.key].append(item)
        step = _clock_step(pairs)
        if step:
            item = {"kind": "clock_step", **step}
            problems[fwd.key].append(item)
            problems[rev.key].append(item)
        flagged = _times(problems[fwd.key] + problems[rev.key])
        drift = _offset_departure(pairs, min(flagged)) if flagged else None
        if drift:
            item = {"kind": "offset_drift", **drift}
            problems[fwd.key].append(item)
            problems[rev.key].append(item)
    return problems


def _offset_departure(pairs: Sequence[tuple[OwampTest, OwampTest]], first_bad: datetime) -> dict | None:
    """Where the clocks' offset began to move, when it moved steadily up to the first impossible session.

    A clock that drifts (NTP lost, 1 ppm: 3.6 ms an hour) gives impossible delays only once the offset exceeds
    the one-way delay, an hour or more after it lost its servers; the offset (forward minus reverse minimum)
    moved from the start. The first paired session before ``first_bad`` from which every one lies off the
    window's first level (the median of its first quarter of pairs, at least DELAY_LEVEL_MIN_SAMPLES) by more
    than max(DELAY_LEVEL_MIN_STEP_MS, four robust sigmas of that level), on the side the offset went: the
    finding's start. None when the window opens with the offset already off (the drift began before it) or
    the session just before the first impossible one is on the level (a step, not a drift).
    """
    diffs = [(f.time, f.delay_min_ms - r.delay_min_ms) for f, r in pairs if f.time < first_bad]
    n0 = max(k.DELAY_LEVEL_MIN_SAMPLES, len(pairs) // 4)
    if len(diffs) <= n0:
        return None
    early = [d for _, d in diffs[:n0]]
    level = statistics.median(early)
    tol = max(k.DELAY_LEVEL_MIN_STEP_MS, 4 * (robust_sigma(early) or 0.0))
    side = 1.0 if diffs[-1][1] >= level else -1.0
    start = None
    for t, d in reversed(diffs[n0:]):
        if side * (d - level) <= tol:
            break
        start = t
    if start is None:
        return None
    return {"time": start, "offset_change_ms": (diffs[-1][1] - level) / 2}


def _all_problems(ctx: RuleContext) -> dict[str, list[dict]]:
    # Two rules ask (CLOCK_UNSYNC itself and every one-way-delay rule through untrusted_pairs): compute once.
    cached = getattr(ctx, "_clock_problems", None)
    if cached is not None:
        return cached
    ctx._clock_problems = problems = _compute_all_problems(ctx)
    return problems


def _compute_all_problems(ctx: RuleContext) -> dict[str, list[dict]]:
    done: set[frozenset[str]] = set()
    problems: dict[str, list[dict]] = {}
    for p in ctx.bundle.paths:
        pair = frozenset((p.src, p.dst))
        if pair in done:
            continue
        done.add(pair)
        problems.update(check_direction_pair(ctx, p, ctx.path(p.dst, p.src)))
    return problems


def untrusted_pairs(ctx: RuleContext) -> set[tuple[str, str]]:
    """Path directions (src, dst) whose one-way delays must not be trusted."""
    out = set()
    for key, items in _all_problems(ctx).items():
        if items:
            src, dst = key.split("->")
            out.add((src, dst))
    return out


def _times(items: list[dict]) -> list[datetime]:
    out = []
    for i in items:
        out += i.get("times", [])
        if "time" in i:
            out.append(i["time"])
    return out


def clock_unsync(ctx: RuleContext) -> list[RuleFinding]:
    """CLOCK_UNSYNC on a path direction (and on a site when the culprit can be told).

    Evidence: owamp sessions of both directions of each site pair (minimum
    one-way delay, reported clock error) and the RTT of the TCP tests.

    Criterion: any of
      * a negative one-way delay (one session suffices: it is impossible);
      * a reported clock error above max(CLOCK_ERROR_FLOOR_MS, min(CLOCK_ERROR_MAX_MS,
        CLOCK_ERROR_DELAY_FRACTION x the one-way delay)) in CLOCK_MIN_ERROR_SESSIONS sessions;
      * a one-way minimum above the RTT (+ tolerance) measured on the same route (TCP tests while the
        direction's minimum was at that session's level): impossible;
      * forward + reverse minimum delay off the RTT by more than max(CLOCK_RTT_TOLERANCE_MS,
        CLOCK_RTT_TOLERANCE_FRACTION x RTT) in half of the paired sessions;
      * the offset (forward - reverse) jumping while the sum stays: a clock step.
    A site is named when it is in two flagged pairs, or its partner has a clean pair elsewhere.

    Why: with an offset d the forward delay reads D + d and the reverse D - d;
    only the sum is immune.  Delay levels, shifts and asymmetries computed from
    such data would be artefacts of NTP.
    """
    problems = _all_problems(ctx)
    out: list[RuleFinding] = []
    flagged_pairs: dict[frozenset[str], list[str]] = {}
    clean_pairs: set[frozenset[str]] = set()
    for key, items in problems.items():
        src, dst = key.split("->")
        pair = frozenset((src, dst))
        path = ctx.path(src, dst)
        if not items:
            if path is not None and _sessions(ctx, path):
                clean_pairs.add(pair)
            continue
        flagged_pairs.setdefault(pair, []).append(key)
        a = ctx.assessment(path)
        times = _times(items) or [ctx.now]
        out.append(
            path_finding(
                a,
                codes.CLOCK_UNSYNC,
                start=min(times),
                end=max(times),
                facts={"key": key, "src": src, "dst": dst, "problems": items},
                evidence={"problems": items},
            )
        )
    clean_pairs -= set(flagged_pairs)
    ok_sites = {s for pair in clean_pairs for s in pair}
    for site in sorted({s for pair in flagged_pairs for s in pair}):
        mine = [pair for pair in flagged_pairs if site in pair]
        partners = {s for pair in mine for s in pair if s != site}
        if site in ok_sites:
            continue
        if len(mine) >= 2 or any(p in ok_sites for p in partners):
            keys = [key for pair in mine for key in flagged_pairs[pair]]
            items = [i for key in keys for i in problems[key]]
            times = _times(items) or [ctx.now]
            out.append(
                finding(
                    codes.CLOCK_UNSYNC,
                    severity=codes.WARNING,
                    subject={"site": site},
                    start=min(times),
                    end=max(times),
                    facts={
                        "site": site,
                        "pairs": keys,
                        "partners": partners,
                        "good_partners": [p for p in partners if p in ok_sites],
                        "flagged_pairs": len(mine),
                    },
                    evidence={"pairs": sorted(keys), "problems": items},
                )
            )
    return out
