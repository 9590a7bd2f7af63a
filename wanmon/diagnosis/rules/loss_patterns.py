"""Loss-pattern rules from probes: PERIODIC_LOSS and REORDERING."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import datetime

from wanmon.diagnosis import codes
from wanmon.diagnosis import constants as k
from wanmon.diagnosis.assessment import PathAssessment
from wanmon.diagnosis.context import RuleContext, finding, path_finding
from wanmon.diagnosis.evidence import RuleFinding
from wanmon.diagnosis.host_matching import host_name_for, latest_hosts
from wanmon.diagnosis.loss import usable_owamp
from wanmon.diagnosis.stats import cadence_s, median


def _binomial_tail(n: int, successes: int, q: float) -> float:
    """P(X >= successes) for X ~ Binomial(n, q)."""
    if successes <= 0:
        return 1.0
    if q <= 0.0:
        return 0.0
    if q >= 1.0:
        return 1.0
    total = 0.0
    for i in range(successes, n + 1):
        log_choose = math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1)
        total += math.exp(log_choose + i * math.log(q) + (n - i) * math.log1p(-q))
    return min(1.0, total)


def _chance_fit_share(
    fits: Callable[[float], bool],
    period_s: float,
    tol_s: float,
    events: int,
    cad_s: float | None,
    samples: int | None,
    span_s: float,
) -> float:
    """Share of the gaps that memoryless (Poisson) loss at the same rate would make fit the period.

    On a sampling grid (sessions every ``cad_s``) each session is lossy with probability r = events / samples,
    independently, so gaps are k sampling intervals with P(k) = r (1 - r)^(k - 1); the share is the mass of
    the k whose gap ``fits``.  Without a grid (per-packet loss times) gaps are exponential with the events'
    rate and the share is the mass within ``tol_s`` of a multiple of the period.
    """
    if cad_s and samples:
        r = min(1.0, events / samples)
        k_max = max(1, round(span_s / cad_s))
        mass = fit = 0.0
        for kk in range(1, k_max + 1):
            pk = r * (1 - r) ** (kk - 1)
            mass += pk
            if fits(kk * cad_s):
                fit += pk
        return fit / mass if mass > 0 else 1.0
    if tol_s >= period_s / 2 or span_s <= 0:
        return 1.0
    lam = (events - 1) / span_s
    share = 0.0
    m = 1
    while (m - 1) * period_s <= span_s:
        lo, hi = max(0.0, m * period_s - tol_s), m * period_s + tol_s
        share += math.exp(-lam * lo) - math.exp(-lam * hi)
        m += 1
    return min(1.0, share / (1 - math.exp(-lam * span_s)))


def find_period(event_times: Sequence[datetime], sample_times: Sequence[datetime] | None = None) -> dict | None:
    """Stable period of loss events, or None.

    ``sample_times`` are the times of every observation that could have seen a
    loss (sessions with and without loss); their spacing is the time resolution.
    Criterion: at least PERIODIC_MIN_EVENTS events; at most PERIODIC_MAX_EVENT_SHARE
    of the observations lossy (otherwise the loss is continuous); the period at
    least PERIODIC_MIN_PERIOD_SAMPLES sampling intervals (otherwise it is the
    sampling itself); and PERIODIC_MIN_REGULAR_SHARE of the intervals within
    max(PERIODIC_PERIOD_TOLERANCE x T, half a sampling interval) of a multiple of
    T, PERIODIC_MIN_SINGLE_SHARE of them exactly one period (an event can go unseen);
    and that fit must be unlikely for random loss: memoryless loss at the same rate on
    the same sampling grid fits as many of the gaps (not counting the one or two that
    set the median T) as tightly with a probability of at most PERIODIC_MAX_CHANCE_PROBABILITY.
    """
    events = sorted(set(event_times))
    if len(events) < k.PERIODIC_MIN_EVENTS:
        return None
    cad = cadence_s(sample_times) if sample_times else None
    if sample_times and len(events) > k.PERIODIC_MAX_EVENT_SHARE * len(sample_times):
        return None
    gaps = [(b - a).total_seconds() for a, b in zip(events, events[1:], strict=False)]
    t0 = median(gaps) or 0.0
    if t0 <= 0 or (cad and t0 < k.PERIODIC_MIN_PERIOD_SAMPLES * cad):
        return None
    tol = max(k.PERIODIC_PERIOD_TOLERANCE * t0, 0.51 * cad if cad else 0.0)

    def fits(g: float) -> bool:
        return abs(g - max(1, round(g / t0)) * t0) <= tol

    multiples = [max(1, round(g / t0)) for g in gaps]
    ok = [fits(g) for g in gaps]
    if sum(ok) < k.PERIODIC_MIN_REGULAR_SHARE * len(gaps):
        return None
    single = sum(1 for g, m, good in zip(gaps, multiples, ok, strict=True) if good and m == 1)
    if single < k.PERIODIC_MIN_SINGLE_SHARE * len(gaps):
        return None
    # Would random loss at this rate fit as tightly?  Random gaps are credited with the tolerance the fitting
    # gaps actually needed (at least the time resolution), and the gaps that set the median T, which fit it
    # by construction, are not counted as evidence.
    resolution = 0.51 * cad if cad else 0.0
    needed = max([abs(g - m * t0) for g, m, good in zip(gaps, multiples, ok, strict=True) if good] + [resolution])
    tight = min(tol, needed)

    def fits_tightly(g: float) -> bool:
        return abs(g - max(1, round(g / t0)) * t0) <= tight

    if sample_times:
        span = (max(sample_times) - min(sample_times)).total_seconds()
    else:
        span = (events[-1] - events[0]).total_seconds()
    q = _chance_fit_share(fits_tightly, t0, tight, len(events), cad, len(sample_times) if sample_times else None, span)
    median_gaps = 1 if len(gaps) % 2 else 2
    n_free = len(gaps) - median_gaps
    ok_free = sum(ok) - min(median_gaps, sum(ok))
    chance = _binomial_tail(n_free, ok_free, q) if n_free > 0 else 1.0
    if chance > k.PERIODIC_MAX_CHANCE_PROBABILITY:
        return None
    period = sum(g for g, good in zip(gaps, ok, strict=True) if good) / sum(
        m for m, good in zip(multiples, ok, strict=True) if good
    )
    # the pattern is made of the events at either end of a regular interval; a stray loss before the
    # periodic process started (or between its events) is not part of it
    fitting = sorted({e for i, good in enumerate(ok) if good for e in (events[i], events[i + 1])})
    return {
        "period_s": period,
        "events": len(fitting),
        "stray_events": len(events) - len(fitting),
        "intervals": len(gaps),
        "regular_share": sum(ok) / len(gaps),
        "chance_share": q,
        "chance_probability": chance,
        "sampling_interval_s": cad,
        "first": fitting[0],
        "last": fitting[-1],
        "event_times": fitting,
    }


def _merge_loss_times(times: Sequence[datetime]) -> list[datetime]:
    out: list[datetime] = []
    for t in sorted(times):
        if not out or (t - out[-1]).total_seconds() > k.LOSS_EVENT_MERGE_S:
            out.append(t)
    return out


def _poll_intervals(ctx: RuleContext, site: str) -> list[tuple[str, float]]:
    """Known poll intervals of the site's agent: declared schedules, and the spacing of its host_tcp reports."""
    out = [
        (f"{s.collector} every {s.interval_s:g} s", s.interval_s) for s in ctx.bundle.agent_schedules if s.site == site
    ]
    by_host: dict[str, list[datetime]] = {}
    for h in ctx.bundle.hosts:
        if h.site == site and h.time:
            by_host.setdefault(h.host, []).append(h.time)
    for host, times in by_host.items():
        cad = cadence_s(times)
        if cad and len(times) >= 3:
            out.append((f"host_tcp reports of {host} every {cad:g} s", cad))
    return out


def _aligned_with_host_reads(ctx: RuleContext, site: str, events: Sequence[datetime], tol_s: float) -> float | None:
    reads = [h.time for h in ctx.bundle.hosts if h.site == site and h.time]
    if len(reads) < 3 or not events:
        return None
    hits = sum(1 for e in events if min(abs((e - r).total_seconds()) for r in reads) <= tol_s)
    return hits / len(events)


def _receiving_host(ctx: RuleContext, a: PathAssessment) -> str | None:
    addrs = Counter(t.dst_host for t in a.path.throughput_tests if t.dst_host)
    if addrs:
        return host_name_for(ctx.bundle, a.path.dst, addrs.most_common(1)[0][0])
    hosts = [h.host for h in latest_hosts(ctx.bundle) if h.site == a.path.dst]
    return hosts[0] if len(hosts) == 1 else None


def periodic_pattern(a: PathAssessment) -> dict | None:
    """The periodic loss pattern of a path direction, from per-packet loss times, owamp sessions or UDP tests."""
    sessions = usable_owamp(a.owamp)
    lost_at = [t for o in sessions for t in o.lost_at]
    if lost_at:
        found = find_period(_merge_loss_times(lost_at))
        if found:
            return {**found, "source": "owamp per-packet loss times"}
    if sessions:
        events = [o.time for o in sessions if o.packets_lost > 0]
        found = find_period(events, [t for o in sessions for t in (o.session_times or (o.time,))])
        if found:
            lossy = [o for o in sessions if o.packets_lost > 0]
            found["loss_per_event"] = median(o.packets_lost / o.packets_sent for o in lossy)
            return {**found, "source": "owamp sessions"}
    udp = [t for t in a.udp if t.error is None and t.packets_sent and t.packets_lost is not None]
    if udp:
        found = find_period([t.time for t in udp if t.packets_lost > 0], [t.time for t in udp])
        if found:
            return {**found, "source": "UDP tests"}
    return None


def periodic_loss(ctx: RuleContext) -> list[RuleFinding]:
    """PERIODIC_LOSS: loss events of a path direction recur with a stable period.

    Evidence: owamp sessions (or their per-packet loss times) and UDP tests of
    the path; the agent schedules and host_tcp report times of the receiving
    site; the reverse direction.

    Criterion: see ``find_period`` (at least PERIODIC_MIN_EVENTS regular events,
    lossy observations a minority, period well above the sampling interval).
    The period "matches" an agent poll interval within POLL_MATCH_TOLERANCE.
    A second finding names the receiving site/host when the period matches its
    agent's poll interval, the events coincide with its host reads, or the
    reverse direction shows no such pattern.

    Why: random loss is not periodic -- though on a coarse sampling grid it can look so, which is why the fit
    is compared with what random loss at the same rate would give.  A stable period points at a periodic
    process -- on a receiving Linux host even the monitoring itself: reading
    /proc/net/tcp (netstat) dropped 10-70 % of the packets of the following
    second on FZK->CERN -- or a periodic network event.  All streams losing at
    the same moment is the worst case for TCP recovery.
    """
    out: list[RuleFinding] = []
    for a in ctx.assessments():
        found = periodic_pattern(a)
        if not found:
            continue
        period = found["period_s"]
        dst = a.path.dst
        polls = _poll_intervals(ctx, dst)
        matches = [(what, p) for what, p in polls if abs(period - p) <= k.POLL_MATCH_TOLERANCE * p]
        tol = max(found["sampling_interval_s"] or 0.0, k.PERIODIC_PERIOD_TOLERANCE * period)
        aligned = _aligned_with_host_reads(ctx, dst, found["event_times"], tol)
        r = ctx.assessment_of(dst, a.path.src)
        reverse_clean = r is not None and bool(r.owamp or r.udp) and periodic_pattern(r) is None
        evidence = {
            **{key: v for key, v in found.items() if key != "event_times"},
            "event_times": found["event_times"],
            "poll_matches": [w for w, _ in matches],
            "known_polls": [w for w, _ in polls],
            "aligned_with_host_reads": aligned,
            "reverse_clean": reverse_clean,
        }
        facts = {"key": a.key, "src": a.path.src, "dst": dst, **evidence}
        out.append(
            path_finding(
                a,
                codes.PERIODIC_LOSS,
                start=found["first"],
                end=found["last"],
                facts=facts,
                evidence=evidence,
            )
        )
        if matches or (aligned is not None and aligned >= 0.8) or reverse_clean:
            host = _receiving_host(ctx, a)
            subject = {"site": dst, "host": host} if host else {"site": dst}
            out.append(
                finding(
                    codes.PERIODIC_LOSS,
                    severity=codes.WARNING,
                    subject=subject,
                    start=found["first"],
                    end=found["last"],
                    facts={**facts, "suspect": host or dst},
                    evidence={"path": a.key, **evidence},
                )
            )
    return out


def reordering(ctx: RuleContext) -> list[RuleFinding]:
    """REORDERING: owamp sees packets out of order above a small threshold.

    Evidence: owamp sessions of the path (reordered, duplicates, packets sent).

    Criterion: reordered packets at least REORDERING_MIN_FRACTION of the
    packets over the window, in at least REORDERING_MIN_SESSIONS sessions.

    Why: TCP takes three duplicate ACKs as a loss, so deep reordering costs like
    loss: at the same fraction it caps a stream at the Mathis rate.  Causes are
    parallel paths (per-packet load balancing) or equipment known to reorder.
    """
    out: list[RuleFinding] = []
    for a in ctx.assessments():
        sessions = usable_owamp(a.owamp)
        sent = sum(o.packets_sent for o in sessions)
        reordered = sum(o.reordered for o in sessions)
        with_reorder = [o for o in sessions if o.reordered > 0]
        if not sent or len(with_reorder) < k.REORDERING_MIN_SESSIONS:
            continue
        frac = reordered / sent
        if frac < k.REORDERING_MIN_FRACTION:
            continue
        ceiling = a.mathis_ceiling_bps(frac)
        dups = sum(o.duplicates for o in sessions)
        out.append(
            path_finding(
                a,
                codes.REORDERING,
                start=with_reorder[0].time,
                end=with_reorder[-1].time,
                facts={
                    "key": a.key,
                    "reordered": reordered,
                    "packets": sent,
                    "fraction": frac,
                    "sessions": len(with_reorder),
                    "all_sessions": len(sessions),
                    "duplicates": dups,
                    "ceiling_if_loss_bps": ceiling,
                },
                evidence={
                    "reordered": reordered,
                    "packets": sent,
                    "fraction": frac,
                    "sessions": len(with_reorder),
                    "duplicates": dups,
                    "ceiling_if_loss_bps": ceiling,
                },
            )
        )
    return out
