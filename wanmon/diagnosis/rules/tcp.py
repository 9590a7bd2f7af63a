"""TCP performance rules: WINDOW_LIMITED, LOSS_LIMITED, TCP_ONLY_DEGRADATION.

All three compare what a TCP test reached with what the physics of *this* path
allows: min(capacity, W*8/RTT, Mathis ceiling for the measured loss).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime

from wanmon.diagnosis import advice, codes, physics
from wanmon.diagnosis import constants as k
from wanmon.diagnosis.assessment import PathAssessment, TestFigures
from wanmon.diagnosis.context import RuleContext, path_finding
from wanmon.diagnosis.evidence import RuleFinding, ThroughputTest
from wanmon.diagnosis.host_matching import match_host
from wanmon.diagnosis.loss import RETRANSMITS, UDP, LossEstimate
from wanmon.diagnosis.path_elements import trunks_on_path
from wanmon.diagnosis.shared_elements import polled_ports_on_path
from wanmon.diagnosis.stats import median, quantile


def window_limited(ctx: RuleContext) -> list[RuleFinding]:
    """WINDOW_LIMITED: the TCP window, not the network, caps the path.

    Evidence: the path's TCP tests (window_bytes, rtt_ms, streams, throughput_bps;
    those of the window and the last one before it, its age in the evidence)
    and the hosts' buffer maxima, which silently cap a requested window
    (net.core.rmem_max/wmem_max) or autotuning (tcp_rmem/tcp_wmem max).

    Criterion: in at least WINDOW_MIN_TESTS tests, and in WINDOW_MIN_SHARE of all
    TCP tests, the throughput lies within [WINDOW_MATCH_MIN_RATIO,
    WINDOW_MATCH_MAX_RATIO] of streams * W * 8 / RTT, or from
    WINDOW_MATCH_MIN_RATIO_AUTOTUNED when the tests are steady (spread below
    WINDOW_AUTOTUNED_MAX_SPREAD: a reported window is a buffer, autotuning maximum
    or socket buffer, of which the kernel advertises 1/2 to 3/4, and a host-limited
    stream falling in that range by chance varies far more), the share counted
    from the first matching test, while that limit is below
    WINDOW_BINDING_MAX_FRACTION of the flow capacity.

    Why: one stream can never exceed W * 8 / RTT.  A stream that runs at that
    limit, on a path whose capacity is clearly higher, is held back by its window
    (4 MiB at 125 ms gives 268 Mb/s whatever the capacity).  The advice is a
    window of 2 * BDP computed from this path's RTT and capacity, and the
    sysctl values that allow it.  The onset is the first host report that showed the limiting setting
    (``_window_onset``), when it came before the first matching test.  One matching test suffices when it is
    the path's latest and the test before it ran faster than its limit allows (``_window_just_cut``): the window
    was cut between the two, and the first test since already runs at the new limit.
    """
    out: list[RuleFinding] = []
    for a in ctx.assessments():
        # the last test before the window counts too: at one test every 4-6 h the window holds one test or two,
        # and the finding would come and go with them
        tests = a.tcp_before_window + a.tcp
        matches = [f for f in tests if _at_window_limit(f)]
        # the share counts from the first matching test: a window cut mid-window (a host reconfigured) holds
        # every test since, not half of the window's
        since = [f for f in tests if matches and f.test.time >= matches[0].test.time]
        if len(matches) < k.WINDOW_MIN_TESTS or len(matches) < k.WINDOW_MIN_SHARE * len(since):
            if not _window_just_cut(tests, matches):
                continue
        if not _window_steady(matches):
            continue
        out.append(_window_finding(ctx, a, matches, _window_onset(ctx, a, tests, matches)))
    return out


def _window_just_cut(tests: Sequence[TestFigures], matches: Sequence[TestFigures]) -> bool:
    """The only matching test is the path's latest, and the test before it (same streams) ran above
    WINDOW_MATCH_MAX_RATIO x that test's window limit. No stream exceeds W * 8 / RTT, so the earlier test ran with
    a larger window: the window was cut between the two (a host reinstalled with smaller buffer maxima, a smaller
    window requested), and the first test since runs at the new limit. The second matching test that
    WINDOW_MIN_TESTS waits for guards against a host-limited stream falling near a limit it always had by chance
    (``_window_steady``); a limit that the path's previous test beat is new, and on a path tested every 3-6 hours
    waiting for that test only adds as many hours."""
    if len(matches) != 1 or not tests or tests[-1] is not matches[0]:
        return False
    first = matches[0]
    r_w = first.window_limited_rate_bps
    streams = first.test.streams or 1
    before = [
        f
        for f in tests
        if f.test.time < first.test.time and f.test.throughput_bps and (f.test.streams or 1) == streams
    ]
    return bool(r_w and before and before[-1].test.throughput_bps > k.WINDOW_MATCH_MAX_RATIO * r_w)


def _window_onset(
    ctx: RuleContext, a: PathAssessment, tests: Sequence[TestFigures], matches: Sequence[TestFigures]
) -> datetime:
    """When the window began to limit the path: the first host report that showed a buffer maximum as small as
    the tests' window (the receiver's rmem, the sender's wmem: socket buffers for a requested window, autotuning
    maxima without one), when it came before the first matching test -- hosts report every few hours and the
    evidence holds the last report before the window.  Bounded below by the last test before that one that did
    not match (a setting reported before a test that still ran at its path's rate did not limit it) and by a
    later report of a larger setting.  Else the first matching test."""
    first = matches[0]
    window = first.effective_window_bytes
    if not window:
        return first.test.time
    t = first.test
    sender = match_host(ctx.bundle, a.path.src, t.src_host, t.mss_bytes)
    receiver = match_host(ctx.bundle, a.path.dst, t.dst_host, t.mss_bytes)
    settings = ("rmem_max", "wmem_max") if t.window_bytes else ("tcp_rmem", "tcp_wmem")
    earlier = [f.test.time for f in tests if f.test.time < t.time and not _at_window_limit(f)]
    floor = max(earlier, default=None)
    onset = t.time
    for host, setting in zip((receiver, sender), settings, strict=True):
        if host is None:
            continue
        reports = sorted(
            (h.time, _buffer_max(h, setting))
            for h in ctx.bundle.hosts
            if (h.site, h.host) == (host.site, host.host) and h.time is not None and h.time < t.time
        )
        # the run of reports at the limiting setting up to the first slow test, after the last good test
        for when, value in reversed(reports):
            if value is None or value > window or (floor is not None and when <= floor):
                break
            onset = min(onset, when)
    return onset


def _buffer_max(h, setting: str) -> int | None:
    """A host report's buffer maximum: net.core.rmem_max/wmem_max, or the third value of tcp_rmem/tcp_wmem."""
    value = getattr(h, setting)
    return value[2] if isinstance(value, tuple) else value


def _window_steady(matches: Sequence[TestFigures]) -> bool:
    """With autotuning the match is loose (0.35-1.15 of max*8/RTT), and a CPU- or disk-limited host falls into it
    by chance; a stream held by its window is steady (same window, same RTT), a host-limited one varies 20-30 %
    run to run.  Autotuned matches must spread less than WINDOW_AUTOTUNED_MAX_SPREAD (MAD / median)."""
    if not any(_loose(f) for f in matches):
        return True
    rates = [f.test.throughput_bps for f in matches if f.test.throughput_bps]
    mid = median(rates)
    if not mid:
        return False
    mad = median(abs(r - mid) for r in rates) or 0.0
    return mad / mid <= k.WINDOW_AUTOTUNED_MAX_SPREAD


def _at_window_limit(f: TestFigures) -> bool:
    r_w = f.window_limited_rate_bps
    thr = f.test.throughput_bps
    if not r_w or not thr:
        return False
    if r_w >= k.WINDOW_BINDING_MAX_FRACTION * f.flow_capacity_bps:
        return False
    return k.WINDOW_MATCH_MIN_RATIO_AUTOTUNED <= thr / r_w <= k.WINDOW_MATCH_MAX_RATIO


def _loose(f: TestFigures) -> bool:
    """Below WINDOW_MATCH_MIN_RATIO of W*8/RTT: the reported window is a buffer (the autotuning maximum, or a
    socket buffer) of which the kernel advertises only a share (tcp_adv_win_scale: 1/2 to 3/4)."""
    r_w, thr = f.window_limited_rate_bps, f.test.throughput_bps
    return f.autotuned or not r_w or not thr or thr / r_w < k.WINDOW_MATCH_MIN_RATIO


def _window_finding(
    ctx: RuleContext, a: PathAssessment, matches: Sequence[TestFigures], start: datetime
) -> RuleFinding:
    path = a.path
    thr = median(f.test.throughput_bps for f in matches) or 0.0
    r_w = median(f.window_limited_rate_bps for f in matches) or 0.0
    window = median(f.effective_window_bytes for f in matches) or 0.0
    requested = median(f.test.window_bytes for f in matches if f.test.window_bytes)
    rtt = median(f.rtt_ms for f in matches if f.rtt_ms) or a.rtt_ms or 0.0
    streams = int(median(f.test.streams or 1 for f in matches) or 1)
    last = matches[-1].test
    sender = match_host(ctx.bundle, path.src, last.src_host, last.mss_bytes)
    receiver = match_host(ctx.bundle, path.dst, last.dst_host, last.mss_bytes)
    # one flow rides one member of a bundle: the window to fill is the flow's capacity, not the path's sum, and
    # never more than the slower NIC of the two hosts can send
    fill = advice.fill_rate(a.flow_capacity_bps, [sender, receiver])
    cap = fill.rate_bps
    bdp = physics.bdp_bytes(cap, rtt)
    need = physics.recommended_window_bytes(cap, rtt)
    target = k.TARGET_FRACTION_OF_CAPACITY * cap
    n_streams = advice.streams_needed(target, r_w / streams)
    # the window already carries what the NIC sends: the NIC, not the window, holds the stream
    nic_bound = fill.nic_host is not None and r_w >= k.WINDOW_BINDING_MAX_FRACTION * cap
    # Linux grants no socket more than 2^31-1 bytes: beyond it the advice is that window and parallel streams
    beyond_cap = need > k.LINUX_MAX_SOCKET_BUFFER_BYTES
    usable = min(need, k.LINUX_MAX_SOCKET_BUFFER_BYTES)
    cap_streams = math.ceil(need / usable) if usable else None  # sockets that hold 2 x BDP between them
    caps = sorted({f.window_cap_reason for f in matches if f.window_cap_reason})
    lines = advice.sysctl_lines(need, sender)
    # at Linux's cap no setting gives more window: the advice is parallel streams, and nothing is mistuned
    at_cap = window >= k.LINUX_MAX_SOCKET_BUFFER_BYTES - k.HOST_BUFFER_ROUND_BYTES
    facts = {
        "key": a.key,
        "src": path.src,
        "dst": path.dst,
        "matches": len(matches),
        "tests": len(a.tcp),
        "throughput_bps": thr,
        "window_limited_rate_bps": r_w,
        "window_bytes": window,
        "requested_window_bytes": requested,
        "window_caps": caps,
        "rtt_ms": rtt,
        "streams": streams,
        "capacity_bps": path.capacity_bps,
        "fill_rate_bps": cap,
        "nic_host": fill.nic_host.host if fill.nic_host else None,
        "bdp_bytes": bdp,
        "recommended_window_bytes": need,
        "target_bps": target,
        "streams_needed": n_streams,
        "nic_bound": nic_bound,
        "at_linux_cap": at_cap,
        "beyond_cap": beyond_cap,
        "usable_window_bytes": usable,
        "cap_streams": cap_streams,
        "window_setting_bytes": min(advice.round_up_bytes(usable), k.LINUX_MAX_SOCKET_BUFFER_BYTES),
        "sysctl": lines,
    }
    evidence = {
        "tests": [_test_ref(f) for f in matches],
        "throughput_median_bps": thr,
        "window_bytes": window,
        "requested_window_bytes": requested,
        "window_limited_rate_bps": r_w,
        "ratio_to_window_limit": thr / r_w if r_w else None,
        "rtt_ms": rtt,
        "streams": streams,
        "capacity_bps": path.capacity_bps,
        "fill_rate_bps": cap,
        "nic_limited_by": fill.nic_host.host if fill.nic_host else None,
        "bdp_bytes": bdp,
        "recommended_window_bytes": need,
        "window_caps": caps,
        "sysctl": lines,
        "oldest_test_age_s": (ctx.now - matches[0].test.time).total_seconds(),
    }
    return path_finding(
        a,
        codes.WINDOW_LIMITED,
        start=start,
        end=matches[-1].test.time,
        facts=facts,
        evidence={**evidence, "at_linux_cap": at_cap, "nic_bound": nic_bound},
        severity=codes.INFO if at_cap or nic_bound else None,
    )


def _test_ref(f: TestFigures) -> dict:
    return {
        "id": f.test.measurement_id,
        "time": f.test.time,
        "throughput_bps": f.test.throughput_bps,
        "window_bytes": f.test.window_bytes,
        "rtt_ms": f.rtt_ms,
        "retransmits": f.test.retransmits,
        "dst_host": f.test.dst_host,
    }


def _udp_rate(t: ThroughputTest) -> float | None:
    return t.offered_bps or t.throughput_bps


def _clean_comparable_udp(
    a: PathAssessment, udp: Sequence[ThroughputTest], tcp_bps: float
) -> tuple[list[ThroughputTest], list[ThroughputTest]]:
    """UDP tests at >= UDP_COMPARABLE_FACTOR x ``tcp_bps``, split into clean and lossy.

    Clean: no loss, or a loss whose conservative Mathis figure (C = 0.7) is still
    above UDP_COMPARABLE_FACTOR x ``tcp_bps`` (it cannot explain the TCP shortfall).
    """
    clean, lossy = [], []
    for t in udp:
        rate = _udp_rate(t)
        if t.error is not None or not t.packets_sent or t.packets_lost is None or not rate:
            continue
        if rate < k.UDP_COMPARABLE_FACTOR * tcp_bps:
            continue
        p = t.packets_lost / t.packets_sent
        ceiling = a.conservative_ceiling_bps(p)
        if p == 0 or (ceiling is not None and ceiling >= k.UDP_COMPARABLE_FACTOR * tcp_bps):
            clean.append(t)
        else:
            lossy.append(t)
    return clean, lossy


def loss_limited(ctx: RuleContext) -> list[RuleFinding]:
    """LOSS_LIMITED: packet loss, not the window, limits the TCP rate.

    Evidence: TCP tests (throughput, RTT, MSS, streams, retransmits), owamp
    sessions and UDP tests of the same period, the sender's congestion control.

    Criterion (each degradation episode, with the loss measured around it, else the
    whole window -- a chronic limit has no episode of its own): a loss p > 0 was
    measured (the leading probe's: the most precise source, not overridden by a
    less precise one whose interval it shares, nor by scattered single owamp
    losses; else the retransmit estimate: loss.lead_loss) from at least
    LOSS_MIN_EVENTS lost packets or retransmitted segments, and
      * its ceiling -- Reno Mathis rate (C = sqrt(3/2)) x streams, doubled for
        CUBIC or an unknown stack -- is below LOSS_BINDING_MAX_FRACTION of
        min(capacity, W*8/RTT): the loss is the binding limit;
      * the median throughput is below LOSS_LIMITED_MAX_FRACTION_OF_EXPECTED of
        min(capacity, W*8/RTT): the flow is clearly held back;
      * and it is "close to" the Mathis rate: at most LOSS_MATCH_MAX_RATIO x the
        stack's ceiling and at least LOSS_MATCH_MIN_RATIO x the conservative
        (C = 0.7) figure.
    Not when a quarter of the period's tests ran faster than LOSS_MATCH_MAX_RATIO x
    the stack's ceiling for that loss (not their limit), not for BBR (it ignores
    random loss), not when the only loss is TCP's own retransmits while UDP at
    comparable rates is clean (TCP_ONLY_DEGRADATION), and not from retransmits
    alone on a direction WINDOW_LIMITED found.  Retransmits alone (no probe saw
    the loss) need more: the flow cannot tell its own congestion losses from the
    path's, so it must not have filled the capacity the other traffic left it on
    a polled port of the path (``self_induced``), UDP datagrams of the period must
    not contradict the loss (their interval below it).  The median may run up to
    LOSS_MATCH_MAX_RATIO above the Reno figure (the Mathis constant is a model of
    periodic loss, and a Reno flow under random loss runs about a third above it:
    the lab's 0.1 % at 100 ms, 6.0 Mb/s against 4.5), or up to the stack's ceiling
    where that is higher; not the probe losses' LOSS_MATCH_MAX_RATIO above a doubled
    CUBIC ceiling (``_most_under_loss``).

    Why: a Reno-like stream cannot exceed C*MSS*8/(RTT*sqrt(p)); on a long path a
    loss invisible to ping caps it far below the capacity.  The advice quotes the
    loss the target rate needs, p = (C*MSS*8/(RTT*R))^2.
    """
    out: list[RuleFinding] = []
    for a in ctx.assessments():
        if not a.tcp or a.rtt_ms is None or a.cc_factor is None:
            continue
        # The loss and the throughput of the same period: a degradation's own figures come first, the whole
        # window (diluted by healthy hours if there are any) only when no episode matches.
        periods: list[tuple[datetime, datetime, list[TestFigures], LossEstimate]] = []
        for ep in a.episodes:
            tests = a.tcp_between(ep.start, ep.end)
            if tests:
                periods.append((ep.start, ep.end, tests, _episode_loss(a, ep.start, ep.end)))
        periods.append((a.tcp[0].test.time, a.tcp[-1].test.time, list(a.tcp), a.loss))
        window_limited = any(
            f.subject.get("src") == a.path.src and f.subject.get("dst") == a.path.dst
            for f in ctx.findings_with(codes.WINDOW_LIMITED)
        )
        for start, end, tests, loss in periods:
            if window_limited and loss.source == RETRANSMITS:
                # the window already holds the flow back, and TCP's own retransmits cannot tell path loss from
                # the losses a flow causes itself: with no probe that saw loss, say less
                continue
            finding = _loss_finding(ctx, a, start, end, tests, loss)
            if finding:
                out.append(finding)
                break
    return out


def _episode_loss(a: PathAssessment, start: datetime, end: datetime) -> LossEstimate:
    """Loss during [start, end]; widened by LOSS_NEIGHBOURHOOD_S / 2 only when no probe ran inside it
    (widening when probes exist would mix in the clean sessions before and after the degradation)."""
    loss = a.loss_between(start, end)
    if any(s.is_probe for s in loss.sources):
        return loss
    return a.loss_between(start, end, k.LOSS_NEIGHBOURHOOD_S / 2)


def self_induced(ctx: RuleContext, a: PathAssessment, tests: Sequence[TestFigures]) -> bool:
    """Most of the tests ran on a polled port of the path that carried at least LOSS_SELF_INDUCED_UTILISATION of
    its speed with the test in it (the other traffic at the time of each test on the path's tightest polled port,
    ``TestFigures.spare_bps``, plus the test; judged test by test: a diurnal link's load differs from one test to
    the next).  At such a link a loss-based sender's window overflows the port's queue: its retransmits measure its
    own congestion, not a loss of the path."""
    speeds = {p.name: p.speed_bps for p in polled_ports_on_path(a.path, ctx.bundle)}
    full = judged = 0
    for f in tests:
        thr, speed = f.test.throughput_bps, speeds.get(f.spare_port or "")
        if f.spare_bps is None or not thr or not speed:
            continue
        judged += 1
        full += (speed - f.spare_bps + thr) / speed >= k.LOSS_SELF_INDUCED_UTILISATION
    return judged > 0 and full > judged / 2


def tests_spare_bps(tests: Sequence[TestFigures]) -> float | None:
    """The capacity the other traffic left ``tests`` on their path's tightest polled port (the median over the
    tests that a poll covered, ``TestFigures.spare_bps``); None when no polled port of the path saw them."""
    return median(f.spare_bps for f in tests if f.spare_bps is not None)


def _most_under_loss(source: str | None, ceiling: float, reno_bps: float) -> float:
    """The fastest median that loss ``source`` can still be said to hold back.

    A probe's loss is the path's: up to LOSS_MATCH_MAX_RATIO x the stack's ceiling.  Retransmits alone may be the
    flow's own congestion, so they get only the random-loss tolerance, and on the Reno figure it was measured on:
    a Reno flow under random loss runs about a third above Mathis, and the doubled CUBIC ceiling already holds that
    margin (at 10 ms CUBIC's response is Reno's).  A CUBIC flow far above twice its Reno figure is not limited by
    the retransmits it counts.
    """
    if source == RETRANSMITS:
        return max(ceiling, k.LOSS_MATCH_MAX_RATIO * reno_bps)
    return k.LOSS_MATCH_MAX_RATIO * ceiling


def _loss_finding(
    ctx: RuleContext,
    a: PathAssessment,
    start: datetime,
    end: datetime,
    tests: Sequence[TestFigures],
    loss: LossEstimate,
) -> RuleFinding | None:
    p = loss.fraction
    if not p or len(tests) < 1:
        return None
    used = loss.source_named(loss.source) if loss.source else None
    if used is None or used.lost < k.LOSS_MIN_EVENTS:
        return None  # one or two lost packets are not a loss rate
    thr = median(f.test.throughput_bps for f in tests) or 0.0
    expected = median(f.expected_bps for f in tests) or a.expected_bps
    if loss.source == RETRANSMITS:
        clean, lossy = _clean_comparable_udp(a, [t for t in a.udp if start <= t.time <= end] or list(a.udp), thr)
        if clean and not lossy:
            return None
        udp = loss.source_named(UDP)
        if udp is not None and udp.interval[1] < p:
            return None  # UDP datagrams of TCP's size crossed the path in the period and lost less than that
    streams = int(median(f.test.streams or 1 for f in tests) or 1)
    ceiling = a.mathis_ceiling_bps(p, streams)
    rtt = a.rtt_ms or 0.0
    conservative = physics.mathis_rate_bps(a.mss_bytes, rtt, p) * streams
    reno = physics.mathis_rate_bps(a.mss_bytes, rtt, p, c=k.MATHIS_C_RENO) * streams
    if ceiling is None or ceiling >= k.LOSS_BINDING_MAX_FRACTION * expected:
        return None
    if thr > k.LOSS_LIMITED_MAX_FRACTION_OF_EXPECTED * expected:
        return None
    most = _most_under_loss(loss.source, ceiling, reno)
    if not (k.LOSS_MATCH_MIN_RATIO * conservative <= thr <= most):
        return None
    upper = quantile([f.test.throughput_bps for f in tests if f.test.throughput_bps], k.SELF_REFERENCE_QUANTILE)
    if upper is not None and upper > most:
        # a quarter of the period's tests ran faster than this loss allows, even with the match's tolerance: it is
        # not what limits them (the self-induced retransmits of fast tests pooled with slow ones)
        return None
    if loss.source == RETRANSMITS and self_induced(ctx, a, tests):
        return None
    path = a.path
    target = k.TARGET_FRACTION_OF_CAPACITY * min(a.flow_capacity_bps, expected)
    p_needed = physics.loss_for_rate(target / streams, a.mss_bytes, rtt)
    severity = codes.CRITICAL if thr < 0.1 * path.capacity_bps else codes.WARNING
    # The ceilings the wording explains and the evidence keeps, in the evidence's order.
    ceilings = {
        "mathis_conservative_bps": conservative,
        "mathis_reno_bps": reno,
        "stack_ceiling_bps": ceiling,
        "congestion_control": a.congestion_control,
        "target_bps": target,
        "loss_needed_for_target": p_needed,
    }
    facts = {
        "key": a.key,
        "hops": path.hops,
        "throughput_bps": thr,
        "tests": len(tests),
        "expected_bps": expected,
        "loss_fraction": p,
        "loss_source": loss.source,
        "loss_described": loss.describe(),
        "streams": streams,
        **ceilings,
        "rtt_ms": rtt,
        "mss_bytes": a.mss_bytes,
        "jumbo_mss_bytes": physics.mss_from_mtu(9000, timestamps=True),
    }
    evidence = {
        "tests": [_test_ref(f) for f in tests],
        "throughput_median_bps": thr,
        "expected_bps": expected,
        "loss_fraction": p,
        "loss_source": loss.source,
        # which source led and how many packets stand behind it (the most precise leads: loss.py)
        "loss_packets": used.sent,
        "loss_lost": used.lost,
        "loss_interval": list(used.interval),
        "loss_sources": loss.evidence(),
        **ceilings,
    }
    return path_finding(
        a,
        codes.LOSS_LIMITED,
        start=start,
        end=end,
        facts=facts,
        evidence=evidence,
        severity=severity,
        loss=loss,
    )


def tcp_only_degradation(ctx: RuleContext) -> list[RuleFinding]:
    """TCP_ONLY_DEGRADATION: TCP far below prediction while UDP at comparable rates is clean.

    Evidence: TCP and UDP tests of the path (rates, losses, destination hosts),
    owamp loss, window and capacity.

    Criterion: at least TCP_ONLY_MIN_TESTS TCP tests below TCP_ONLY_MAX_FRACTION of
    their prediction min(flow capacity, W*8/RTT, conservative Mathis figure of the
    probe loss, and -- when the results are bimodal -- the faster half's median),
    where the probe-loss figure is dropped when the upper quartile of the path's TCP
    tests exceeds the stack's Mathis ceiling for that loss (a few stray owamp losses
    that TCP demonstrably does not suffer are not its limit),
    and UDP tests that carried at least UDP_COMPARABLE_FACTOR x what those
    TCP tests reached were clean (no loss that could explain the shortfall):
    the window's, or without any the last one before it if it ran after the
    slow run began. The finding starts with that run, before the window if
    the day before it (``earlier_tcp_results``) was slow already.

    Why: if the network carries UDP at that rate without loss, neither capacity
    nor random loss explains the TCP result: what remains is TCP-specific --
    a duplex mismatch (collisions need traffic both ways, which one-way UDP does
    not create), per-flow hashing on a trunk, a middlebox or reordering.
    """
    out: list[RuleFinding] = []
    for a in ctx.assessments():
        if not a.tcp or not (a.udp or a.path.udp_before):
            continue
        probe = a.loss.probe_fraction
        ceiling = a.conservative_ceiling_bps(probe) if probe else None
        if ceiling is not None and a.tcp_beats_loss(probe):
            ceiling = None  # TCP on this path beats that loss's ceiling: the probes' loss does not bind TCP
        demonstrated = _demonstrated_rate(a)
        slow = []
        for f in a.tcp:
            predicted = min(f.expected_bps, ceiling) if ceiling else f.expected_bps
            if demonstrated:
                predicted = min(predicted, demonstrated)
            if (f.test.throughput_bps or 0) < k.TCP_ONLY_MAX_FRACTION * predicted:
                slow.append((f, predicted))
        if len(slow) < k.TCP_ONLY_MIN_TESTS:
            continue
        slow_bps = median(f.test.throughput_bps for f, _ in slow) or 0.0
        since = _slow_since(a, slow[0][0].test.time, _slow_bound_bps(a, _fast(a, slow), slow_bps, slow))
        udp_tests = _udp_beside(a, since)
        hosts = {f.test.dst_host for f, _ in slow if f.test.dst_host}
        udp = [t for t in udp_tests if t.dst_host in hosts] if hosts else []
        clean, lossy = _clean_comparable_udp(a, udp, slow_bps)
        if not clean:
            clean, lossy = _clean_comparable_udp(a, udp_tests, slow_bps)
        if not clean or len(clean) < 0.8 * (len(clean) + len(lossy)):
            continue
        out.append(_tcp_only_finding(ctx, a, slow, clean, lossy, slow_bps, since))
    return out


def _udp_beside(a: PathAssessment, since: datetime) -> list[ThroughputTest]:
    """The UDP tests that say what UDP got while TCP was slow: the window's; without any, the last one before the
    window if it ran after the slow run began (``since``). UDP tests come every 6-12 h: without the one before the
    window, the finding would resolve when it left the window and open again at the next one. One from before the
    slow run began says nothing of it (a loss that began with the run would be called TCP-only)."""
    if a.udp:
        return list(a.udp)
    before = a.path.udp_before
    return [before] if before is not None and before.time >= since else []


def _fast(a: PathAssessment, slow) -> list[TestFigures]:
    """The TCP tests of the window that are not among the ``slow`` ones."""
    return [f for f in a.tcp if all(f is not s for s, _ in slow)]


def _demonstrated_rate(a: PathAssessment) -> float | None:
    """What the path demonstrably carries per test when its TCP results are bimodal: the faster half's median.

    Physics may over-predict (a LAG member caps one flow at the member speed);
    when half of the tests run at least twice as fast as the other half, the
    slow half is measured against what the fast half shows is possible.
    """
    rates = sorted(f.test.throughput_bps for f in a.tcp if f.test.throughput_bps)
    if len(rates) < 2 * k.TCP_ONLY_MIN_TESTS:
        return None
    half = len(rates) // 2
    low, high = median(rates[:half]), median(rates[-half:])
    if low and high and high >= 2 * low:
        return high
    return None


def _slow_since(a: PathAssessment, first: datetime, below_bps: float) -> datetime:
    """When the run of slow TCP results that ``first`` (the window's first slow test) belongs to began: back from it
    through the earlier results (those of the window, then the day before it, ``PathEvidence.earlier_tcp_results``)
    while they stay below ``below_bps``. The rule needs clean UDP beside the slow TCP, and UDP tests come every
    6-12 h: by the time one is in the window, the first slow tests may have left it, and the episode starts where
    it started, not at the window's edge."""
    results = {t: r for t, r in a.path.earlier_tcp_results}
    results.update((f.test.time, f.test.throughput_bps or 0.0) for f in a.tcp)
    start = first
    for t, rate in sorted(results.items(), reverse=True):
        if t >= first:
            continue
        if rate >= below_bps:
            break
        start = t
    return start


def _slow_bound_bps(a: PathAssessment, fast, slow_bps: float, slow) -> float:
    """The rate below which an earlier TCP result belongs to the slow run: below the rule's fraction of the
    prediction and nearer (by ratio) the slow tests' median than the path's usual rate (its baseline's median, else
    the window's other tests). The prediction alone would not do: a host-limited path (BBR at 1500 bytes on 100G)
    runs far below it every day, and its ordinary results would be counted as the start of the episode."""
    bound = k.TCP_ONLY_MAX_FRACTION * (median(p for _, p in slow) or 0.0)
    usual = a.path.baseline.tcp_throughput_median_bps if a.path.baseline is not None else None
    if not usual:
        usual = median(f.test.throughput_bps or 0.0 for f in fast) if fast else None
    if usual and usual > slow_bps > 0:
        bound = min(bound, math.sqrt(slow_bps * usual))
    return bound


def _tcp_only_finding(ctx, a: PathAssessment, slow, clean, lossy, slow_bps: float, since: datetime) -> RuleFinding:
    predicted = median(p for _, p in slow) or 0.0
    udp_rate = median(_udp_rate(t) for t in clean) or 0.0
    fast = _fast(a, slow)
    slow_hosts = sorted({f.test.dst_host for f, _ in slow if f.test.dst_host})
    fast_hosts = sorted({f.test.dst_host for f in fast if f.test.dst_host} - set(slow_hosts))
    trunks = [t.name for t in trunks_on_path(ctx.bundle, a.path)]
    facts = {
        "key": a.key,
        "slow_tests": len(slow),
        "tests": len(a.tcp),
        "slow_throughput_median_bps": slow_bps,
        "predicted_bps": predicted,
        "udp_rate_bps": udp_rate,
        "udp_clean_tests": len(clean),
        "loss_described": a.loss.describe(),
        "slow_hosts": slow_hosts,
        "normal_hosts": fast_hosts,
        "trunks": trunks,
    }
    evidence = {
        "slow_tests": [_test_ref(f) for f, _ in slow],
        "predicted_bps": predicted,
        "slow_throughput_median_bps": slow_bps,
        "udp_clean_tests": [
            {
                "id": t.measurement_id,
                "time": t.time,
                "rate_bps": _udp_rate(t),
                "lost": t.packets_lost,
                "sent": t.packets_sent,
                "dst_host": t.dst_host,
                "before_window": t is a.path.udp_before,
            }
            for t in clean
        ],
        "udp_lossy_tests": len(lossy),
        "slow_hosts": slow_hosts,
        "normal_hosts": fast_hosts,
        "trunks": trunks,
    }
    return path_finding(
        a,
        codes.TCP_ONLY_DEGRADATION,
        start=since,
        end=slow[-1][0].test.time,
        facts=facts,
        evidence=evidence,
    )
