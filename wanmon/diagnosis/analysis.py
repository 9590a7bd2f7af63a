"""Per-path assessment shared by the rules.

For one path direction this works out, from the path's own measurements: its
RTT, MSS, effective window, congestion control, the loss it suffers (combining
owamp, UDP tests and TCP retransmits, with detection limits), the reference
throughput it is compared with, and the *episodes* in which it was degraded or
down.  Rules read these figures instead of recomputing them differently.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from wanmon.diagnosis import constants as k
from wanmon.diagnosis import physics, text

# the shared pieces live in their own modules; rules import them from here too
from wanmon.diagnosis.episodes import (  # noqa: F401
    DEGRADED,
    DOWN,
    OK,
    Episode,
    Observation,
    build_runs,
    consecutive_down_runs,
    merge_runs,
    other_kinds_near,
    unconfirmed_downs,
)
from wanmon.diagnosis.evidence import (
    DerivedFigures,
    EvidenceBundle,
    OwampTest,
    PathEvidence,
    ThroughputTest,
    split_element,
)
from wanmon.diagnosis.host_matching import (  # noqa: F401
    RENO_LIKE,
    host_name_for,
    latest_hosts,
    loss_tolerance_factor,
    match_host,
)
from wanmon.diagnosis.loss import (  # noqa: F401
    OWAMP,
    TCP,
    UDP,
    LossEstimate,
    LossSource,
    estimate_loss,
    usable_owamp,
    usable_udp,
)
from wanmon.diagnosis.stats import MAD_TO_SIGMA, cadence_s, median, quantile, seconds  # noqa: F401
from wanmon.inventory.membership import ALL_PORTS, Bundle, Element, element_on_path, hops_from_labels

BASELINE_REFERENCE = "baseline median"


# --------------------------------------------------------------------------- assessment
@dataclass(frozen=True)
class TestFigures:
    """A TCP test with the physics of its own parameters."""

    test: ThroughputTest
    rtt_ms: float | None
    effective_window_bytes: float | None
    window_cap_reason: str | None
    window_limited_rate_bps: float | None  # all streams
    flow_capacity_bps: float
    expected_bps: float  # min(flow capacity, window limit)

    @property
    def autotuned(self) -> bool:
        """The window is the hosts' autotuning maximum (no explicit window was requested)."""
        return self.test.window_bytes is None and self.effective_window_bytes is not None

    @property
    def efficiency(self) -> float | None:
        if self.test.throughput_bps is None or not self.expected_bps:
            return None
        return self.test.throughput_bps / self.expected_bps


@dataclass(frozen=True)
class PathAssessment:
    """Figures of one path direction over the look-back window (see module docstring)."""

    path: PathEvidence
    window_start: datetime | None
    now: datetime
    tcp: tuple[TestFigures, ...]  # completed TCP tests
    tcp_failed: tuple[ThroughputTest, ...]
    udp: tuple[ThroughputTest, ...]  # all UDP tests (completed or not)
    owamp: tuple[OwampTest, ...]
    rtt_ms: float | None
    rtt_source: str
    mss_bytes: int
    mss_source: str
    streams: int
    congestion_control: str | None
    cc_factor: float | None
    flow_capacity_bps: float
    expected_bps: float
    loss: LossEstimate
    reference_bps: float | None
    reference_sigma_bps: float | None
    reference_source: str
    observations: tuple[Observation, ...]
    episodes: tuple[Episode, ...]
    #: spread of single tests against a baseline: the baseline's, or the window's own when that is wider
    test_sigma_bps: float | None = None

    @property
    def key(self) -> str:
        return self.path.key

    @property
    def median_tcp_bps(self) -> float | None:
        return median(f.test.throughput_bps for f in self.tcp)

    @property
    def window_bytes(self) -> float | None:
        return median(f.effective_window_bytes for f in self.tcp if f.effective_window_bytes)

    @property
    def window_limited_rate_bps(self) -> float | None:
        return median(f.window_limited_rate_bps for f in self.tcp if f.window_limited_rate_bps)

    @property
    def last_time(self) -> datetime | None:
        times = [o.time for o in self.observations]
        return max(times) if times else None

    @property
    def first_time(self) -> datetime | None:
        times = [o.time for o in self.observations]
        return min(times) if times else None

    def tcp_between(self, start: datetime, end: datetime, slack_s: float = 0.0) -> list[TestFigures]:
        s, e = start - timedelta(seconds=slack_s), end + timedelta(seconds=slack_s)
        return [f for f in self.tcp if s <= f.test.time <= e]

    def loss_between(self, start: datetime, end: datetime, slack_s: float = 0.0) -> LossEstimate:
        s, e = start - timedelta(seconds=slack_s), end + timedelta(seconds=slack_s)
        return estimate_loss(
            [o for o in self.owamp if s <= o.time <= e],
            [t for t in self.udp if s <= t.time <= e],
            [f.test for f in self.tcp if s <= f.test.time <= e],
            self.path.capacity_bps,
        )

    def mathis_ceiling_bps(self, loss_fraction: float | None, streams: int | None = None) -> float | None:
        """Ceiling for this path's stack: Reno Mathis rate times the CUBIC factor times the streams.

        ``None`` for loss-insensitive stacks (BBR) or unknown RTT; infinite for zero loss.
        """
        if loss_fraction is None or self.rtt_ms is None or self.cc_factor is None:
            return None
        per_stream = physics.mathis_rate_bps(self.mss_bytes, self.rtt_ms, loss_fraction, c=k.MATHIS_C_RENO)
        return per_stream * self.cc_factor * (streams or self.streams)

    def conservative_ceiling_bps(self, loss_fraction: float | None, streams: int | None = None) -> float | None:
        """The conservative Mathis figure (C = 0.7) times the streams: the least a Reno-like flow should reach."""
        if loss_fraction is None or self.rtt_ms is None:
            return None
        return physics.mathis_rate_bps(self.mss_bytes, self.rtt_ms, loss_fraction) * (streams or self.streams)

    def tcp_beats_loss(self, loss_fraction: float | None, tests: Sequence[TestFigures] | None = None) -> bool:
        """True when TCP on this path runs above the stack's Mathis ceiling for ``loss_fraction``.

        The upper quartile of the TCP tests (``tests``, default all) is compared with the ceiling.  A ceiling
        that the path's own TCP flows exceed is not their limit: the probes' loss (a few stray single-packet
        losses, or loss of packets unlike TCP's) is not what TCP suffers.
        """
        ceiling = self.mathis_ceiling_bps(loss_fraction)
        rates = [f.test.throughput_bps for f in (self.tcp if tests is None else tests) if f.test.throughput_bps]
        upper = quantile(rates, k.SELF_REFERENCE_QUANTILE)
        return ceiling is not None and upper is not None and upper > ceiling

    def loss_is_significant(self, loss_fraction: float | None, expected_bps: float | None = None) -> bool:
        """True when the loss alone caps the flow below UNDERPERFORMANCE_FRACTION of what it should reach."""
        return loss_is_significant(self, loss_fraction, expected_bps)

    def derived(self, loss: LossEstimate | None = None) -> DerivedFigures:
        """Derived figures for a finding (loss of the finding's period when given)."""
        loss = loss or self.loss
        rtt = self.rtt_ms
        cap = self.path.capacity_bps
        p = loss.fraction
        mathis = reno = None
        if rtt and p:
            mathis = physics.mathis_rate_bps(self.mss_bytes, rtt, p)
            reno = physics.mathis_rate_bps(self.mss_bytes, rtt, p, c=k.MATHIS_C_RENO)
        return DerivedFigures(
            rtt_ms=rtt,
            capacity_bps=cap,
            mss_bytes=self.mss_bytes,
            bdp_bytes=physics.bdp_bytes(cap, rtt) if rtt else None,
            required_window_bytes=physics.recommended_window_bytes(cap, rtt) if rtt else None,
            window_bytes=self.window_bytes,
            window_limited_rate_bps=self.window_limited_rate_bps,
            loss_fraction=p,
            loss_source=loss.source,
            loss_detection_limit=loss.detection_limit,
            mathis_ceiling_bps=mathis,
            mathis_reno_bps=reno,
            responsiveness_s=physics.reno_responsiveness_s(cap, rtt, self.mss_bytes) if rtt else None,
            congestion_control=self.congestion_control,
        )

    def physics_sentence(self, loss: LossEstimate | None = None) -> str:
        """One sentence quoting the derived figures, appended to every path explanation."""
        d = self.derived(loss)
        parts = [f"Path figures for {self.key}: capacity {text.rate(d.capacity_bps)}"]
        if d.rtt_ms:
            parts.append(f"RTT {text.ms(d.rtt_ms)} ({self.rtt_source})")
            parts.append(f"BDP {text.size(d.bdp_bytes)}")
            parts.append(f"required window (2 x BDP) {text.size(d.required_window_bytes)}")
        else:
            parts.append("RTT unknown, so BDP and window figures cannot be computed")
        parts.append(f"MSS {self.mss_bytes} B ({self.mss_source})")
        if d.window_bytes:
            parts.append(f"window {text.size(d.window_bytes)} -> at most {text.rate(d.window_limited_rate_bps)}")
        if d.loss_fraction:
            parts.append(
                f"loss {text.loss(d.loss_fraction)} from {d.loss_source} -> Mathis ceiling "
                f"{text.rate(d.mathis_ceiling_bps)} per stream (C=0.7; {text.rate(d.mathis_reno_bps)} with C=1.22)"
            )
        elif d.loss_fraction == 0:
            parts.append(f"no loss seen (below {d.loss_detection_limit:.1e})")
        else:
            parts.append("loss unknown")
        if d.responsiveness_s:
            parts.append(f"Reno needs {text.duration(d.responsiveness_s)} to recover from one loss at full rate")
        return "; ".join(parts) + "."


def loss_is_significant(a: PathAssessment, loss_fraction: float | None, expected_bps: float | None = None) -> bool:
    """Physics test of a loss rate: does it alone cap the flow below half of what the path should give?"""
    if not loss_fraction or loss_fraction <= 0:
        return False
    if a.cc_factor is None:  # loss-insensitive stack (BBR)
        return loss_fraction >= k.BBR_LOSS_SENSITIVITY_FRACTION
    expected = expected_bps or a.expected_bps
    ceiling = a.mathis_ceiling_bps(loss_fraction)
    if ceiling is None:  # RTT unknown: any measured loss counts
        return True
    return ceiling < k.UNDERPERFORMANCE_FRACTION * expected


def bundles_of(bundle: EvidenceBundle) -> tuple[Bundle, ...]:
    """The evidence's trunks as membership bundles (member ports by equipment and interface name)."""
    return tuple(Bundle(t.name, tuple((m.equipment, m.interface) for m in t.members)) for t in bundle.trunks)


def trunks_on_path(bundle: EvidenceBundle, path: PathEvidence):
    """Trunks the path crosses (rules of ``wanmon.inventory.membership``).

    A trunk is on the path when a hop names it or leaves by one of its members. When a hop names a
    member's equipment without a port, the trunk is counted only if the path's capacity is the trunk's
    aggregate speed (the path is provisioned over the bundle): here the trunk sets the per-stream
    ceiling, and a wrong guess would halve the throughput expected of the path.
    """
    hops = hops_from_labels(path.hops)
    bundles = bundles_of(bundle)
    out = []
    for t in bundle.trunks:
        m = element_on_path(Element(bundle=t.name), hops, bundles)
        if m is None:
            continue
        aggregate = t.aggregate_bps
        if m.port_known or (aggregate and abs(aggregate - path.capacity_bps) <= 0.05 * path.capacity_bps):
            out.append(t)
    return out


def _flow_capacity(bundle: EvidenceBundle, path: PathEvidence, streams: int) -> float:
    """A flow hashes onto one member of each LAG: the per-stream ceiling is the member speed."""
    cap = path.capacity_bps
    for t in trunks_on_path(bundle, path):
        speeds = [m.speed_bps for m in t.members if m.speed_bps]
        if speeds:
            cap = min(cap, max(1, streams) * min(speeds))
    return cap


def _effective_window(bundle: EvidenceBundle, path: PathEvidence, t: ThroughputTest) -> tuple[float | None, str | None]:
    """The window a test could really use: the requested one capped by the hosts' buffer maxima.

    Linux silently caps SO_SNDBUF/SO_RCVBUF at net.core.wmem_max/rmem_max, and
    autotuning (no explicit window) at the third value of tcp_wmem/tcp_rmem.
    """
    sender = match_host(bundle, path.src, t.src_host, t.mss_bytes)
    receiver = match_host(bundle, path.dst, t.dst_host, t.mss_bytes)
    caps: list[tuple[float, str]] = []
    if t.window_bytes:
        if receiver and receiver.rmem_max:
            caps.append((receiver.rmem_max, f"net.core.rmem_max of {receiver.host}"))
        if sender and sender.wmem_max:
            caps.append((sender.wmem_max, f"net.core.wmem_max of {sender.host}"))
        window = float(t.window_bytes)
        for cap, why in caps:
            if cap < window:
                return float(cap), why
        return window, None
    if receiver and receiver.tcp_rmem:
        caps.append((receiver.tcp_rmem[2], f"net.ipv4.tcp_rmem max of {receiver.host}"))
    if sender and sender.tcp_wmem:
        caps.append((sender.tcp_wmem[2], f"net.ipv4.tcp_wmem max of {sender.host}"))
    if caps:
        cap, why = min(caps)
        return float(cap), why
    return None, None


def _sender_cc(bundle: EvidenceBundle, path: PathEvidence, tests: Sequence[ThroughputTest]) -> str | None:
    ccs = []
    for t in tests:
        h = match_host(bundle, path.src, t.src_host, t.mss_bytes)
        if h and h.congestion_control:
            ccs.append(h.congestion_control.lower())
    if ccs:
        return max(set(ccs), key=ccs.count)
    site_ccs = {
        h.congestion_control.lower() for h in latest_hosts(bundle) if h.site == path.src and h.congestion_control
    }
    return site_ccs.pop() if len(site_ccs) == 1 else None


def _path_rtt(
    bundle: EvidenceBundle, path: PathEvidence, tcp: Sequence[ThroughputTest], owamp
) -> tuple[float | None, str]:
    rtts = [t.rtt_ms for t in tcp if t.rtt_ms]
    if rtts:
        return statistics.median(rtts), "median of the TCP tests"
    rev = bundle.path(path.dst, path.src)
    fwd_min = min((o.delay_min_ms for o in owamp if o.delay_min_ms is not None and o.delay_min_ms > 0), default=None)
    if rev is not None and fwd_min is not None:
        rev_min = min(
            (o.delay_min_ms for o in rev.owamp_tests if o.delay_min_ms is not None and o.delay_min_ms > 0), default=None
        )
        if rev_min is not None:
            return fwd_min + rev_min, "sum of the one-way minimum delays"
    if path.baseline and path.baseline.rtt_ms:
        return path.baseline.rtt_ms, "baseline"
    if fwd_min is not None:
        return 2 * fwd_min, "twice the one-way minimum delay"
    return None, "unknown"


def _path_mss(bundle: EvidenceBundle, path: PathEvidence, tcp: Sequence[ThroughputTest]) -> tuple[int, str]:
    msss = [t.mss_bytes for t in tcp if t.mss_bytes]
    if msss:
        return int(statistics.median(msss)), "TCP tests"
    if path.baseline and path.baseline.mss_bytes:
        return path.baseline.mss_bytes, "baseline"
    mtus = [h.mtu for h in latest_hosts(bundle) if h.site in (path.src, path.dst) and h.mtu]
    if mtus:
        return physics.mss_from_mtu(min(mtus), timestamps=True), "host MTU"
    return k.DEFAULT_MSS_BYTES, "assumed (MTU 1500)"


def _in_window(t: datetime, start: datetime | None, now: datetime) -> bool:
    return (start is None or t >= start) and t <= now


def assess_path(path: PathEvidence, bundle: EvidenceBundle, now: datetime) -> PathAssessment:
    """Work out the figures, the reference and the degradation episodes of one path direction."""
    start = bundle.window_start
    tests = sorted((t for t in path.throughput_tests if _in_window(t.time, start, now)), key=lambda t: t.time)
    owamp = tuple(sorted((o for o in path.owamp_tests if _in_window(o.time, start, now)), key=lambda o: o.time))
    tcp_ok = [t for t in tests if t.protocol == TCP and t.error is None and t.throughput_bps]
    # a test that reports an error, or no data at all, did not transfer anything
    tcp_failed = tuple(t for t in tests if t.protocol == TCP and (t.error is not None or not t.throughput_bps))
    udp = tuple(t for t in tests if t.protocol == UDP)

    rtt, rtt_source = _path_rtt(bundle, path, tcp_ok, owamp)
    mss, mss_source = _path_mss(bundle, path, tcp_ok)
    streams = int(median(t.streams or 1 for t in tcp_ok) or 1)
    cc = _sender_cc(bundle, path, tcp_ok)
    cc_factor = loss_tolerance_factor(cc)
    flow_cap = _flow_capacity(bundle, path, streams)

    figures = []
    caps = {streams: flow_cap}
    for t in tcp_ok:
        t_rtt = t.rtt_ms or rtt
        window, why = _effective_window(bundle, path, t)
        n = max(1, t.streams or 1)
        r_w = physics.window_limited_rate_bps(window, t_rtt) * n if (window and t_rtt) else None
        if n not in caps:
            caps[n] = _flow_capacity(bundle, path, n)
        cap = caps[n]
        expected = min(cap, r_w) if r_w else cap
        figures.append(TestFigures(t, t_rtt, window, why, r_w, cap, expected))
    expected_path = median(f.expected_bps for f in figures) or flow_cap

    loss = estimate_loss(owamp, udp, [f.test for f in figures], path.capacity_bps)
    ref, sigma, ref_source = _reference(path, figures)
    if ref_source != BASELINE_REFERENCE:
        _, healthy = _self_references(figures)
        if len(healthy) >= k.MIN_REFERENCE_TESTS:
            ref = statistics.median(healthy)
            sigma = statistics.median(abs(r - ref) for r in healthy) * MAD_TO_SIGMA
            ref_source = "median of the window's healthy tests (no baseline)"
    test_sigma = _test_sigma(figures, ref, sigma) if ref_source == BASELINE_REFERENCE else sigma

    partial = PathAssessment(
        path=path,
        window_start=start,
        now=now,
        tcp=tuple(figures),
        tcp_failed=tcp_failed,
        udp=udp,
        owamp=owamp,
        rtt_ms=rtt,
        rtt_source=rtt_source,
        mss_bytes=mss,
        mss_source=mss_source,
        streams=streams,
        congestion_control=cc,
        cc_factor=cc_factor,
        flow_capacity_bps=flow_cap,
        expected_bps=expected_path,
        loss=loss,
        reference_bps=ref,
        reference_sigma_bps=sigma,
        reference_source=ref_source,
        observations=(),
        episodes=(),
        test_sigma_bps=test_sigma,
    )
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


def _test_sigma(figures: Sequence[TestFigures], ref: float | None, sigma: float | None) -> float | None:
    """Spread of single tests judged against a baseline: the baseline's, or the window's own when that is wider.

    The MAD of a short baseline (a dozen tests) is below the path's true run-to-run spread often enough (the
    first days of a host-limited path happened to be steady) to make every ordinary slower result "4 sigma
    below".  With SELF_REFERENCE_MIN_STAT_TESTS tests in the window their spread (clear drops left out) is
    the better estimate when it is wider.  Lasting drops do not depend on it: they are judged on a day's
    median against the baseline's own spread (``_level_shift``).
    """
    if not ref:
        return sigma
    rates = [f.test.throughput_bps for f in figures if f.test.throughput_bps]
    rates = [r for r in rates if r >= k.DEGRADED_FRACTION * ref]
    if len(rates) < k.SELF_REFERENCE_MIN_STAT_TESTS:
        return sigma
    mid = statistics.median(rates)
    own = statistics.median(abs(r - mid) for r in rates) * MAD_TO_SIGMA
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
                sigma = statistics.median(abs(r - ref) for r in healthy) * MAD_TO_SIGMA
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


# --------------------------------------------------------------------------- elements of a path
def base_equipment(name: str) -> str:
    return split_element(name)[0]


def path_elements(path: PathEvidence, bundle: EvidenceBundle) -> set[str]:
    """Every element name the path crosses: hops, the equipment of interface hops, trunk members."""
    names: set[str] = set()
    for hop in path.hops:
        names.add(hop)
        names.add(base_equipment(hop))
    for t in trunks_on_path(bundle, path):
        names.add(t.name)
        for m in t.members:
            names.add(m.name)
            names.add(m.equipment)
    return names


def interface_on_path(iface_name: str, path: PathEvidence, bundle: EvidenceBundle) -> str | None:
    """'exact' when the path leaves or arrives by the interface (or a trunk it belongs to is on the path),
    'equipment' when a hop names the interface's equipment without a port (the port is unknown, so it may
    be this one), else None: another port of a router the path crosses by a known port is not on the path.
    """
    if any(any(m.name == iface_name for m in t.members) for t in trunks_on_path(bundle, path)):
        return "exact"
    m = element_on_path(
        Element.from_label(iface_name), hops_from_labels(path.hops), bundles_of(bundle), unknown_ports=ALL_PORTS
    )
    if m is None:
        return None
    return "exact" if m.port_known else "equipment"


def interface_direction(iface_name: str, path: PathEvidence, bundle: EvidenceBundle) -> str | None:
    """'out' when the path leaves by the interface (its out counters carry the path), 'in' when it arrives by
    it, None when that is not known (a bundle or a hop without a port)."""
    m = element_on_path(
        Element.from_label(iface_name), hops_from_labels(path.hops), bundles_of(bundle), unknown_ports=ALL_PORTS
    )
    return m.direction if m is not None and m.direction in ("in", "out") else None
