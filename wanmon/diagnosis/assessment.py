"""Per-path assessment shared by the rules.

For one path direction this works out, from the path's own measurements: its RTT, MSS, effective window,
congestion control (``path_figures``), the loss it suffers (combining owamp, UDP tests and TCP retransmits, with
detection limits: ``loss``), the reference throughput it is compared with and the *episodes* in which it was
degraded or down (``degradation``).  Rules read these figures instead of recomputing them differently.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from wanmon.diagnosis import constants as k
from wanmon.diagnosis import path_figures, physics
from wanmon.diagnosis.degradation import judged, reference_of
from wanmon.diagnosis.episodes import Episode, Observation
from wanmon.diagnosis.evidence import DerivedFigures, EvidenceBundle, OwampTest, PathEvidence, ThroughputTest
from wanmon.diagnosis.host_matching import loss_tolerance_factor
from wanmon.diagnosis.loss import TCP, UDP, LossEstimate, estimate_loss
from wanmon.diagnosis.shared_elements import load_pending, polled_ports_on_path, tightest_spare
from wanmon.diagnosis.stats import median, quantile


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
    #: the capacity the other traffic left the test on the tightest polled port of the path, and that port
    #: (None: no port of the path polled at the time): a test on a shared link gets no more than that
    spare_bps: float | None = None
    spare_port: str | None = None

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
    #: the last completed TCP test before the window (tests can be slower than the window), with its figures:
    #: for the rules that judge a level over several tests (WINDOW_LIMITED), never a degradation episode
    tcp_before_window: tuple[TestFigures, ...] = ()

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
            loss_packets=loss.packets,
        )


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

    rtt, rtt_source = path_figures.path_rtt(bundle, path, tcp_ok, owamp)
    mss, mss_source = path_figures.path_mss(bundle, path, tcp_ok)
    streams = int(median(t.streams or 1 for t in tcp_ok) or 1)
    cc = path_figures.sender_cc(bundle, path, tcp_ok)
    cc_factor = loss_tolerance_factor(cc)
    flow_cap = path_figures.flow_capacity(bundle, path, streams)

    caps = {streams: flow_cap}
    # the polled ports matter only to a TCP test (the room it had): most directions have none in the window
    ports = functools.cache(lambda: polled_ports_on_path(path, bundle))

    def figures_of(t: ThroughputTest) -> TestFigures:
        t_rtt = t.rtt_ms or rtt
        window, why = path_figures.effective_window(bundle, path, t)
        n = max(1, t.streams or 1)
        r_w = physics.window_limited_rate_bps(window, t_rtt) * n if (window and t_rtt) else None
        if n not in caps:
            caps[n] = path_figures.flow_capacity(bundle, path, n)
        cap = caps[n]
        expected = min(cap, r_w) if r_w else cap
        spare = tightest_spare(ports(), t) if ports() else None
        return TestFigures(t, t_rtt, window, why, r_w, cap, expected, *(spare if spare is not None else (None, None)))

    # a test whose room is not measured yet, its poll due, waits for it (``load_pending``)
    figures = [f for f in map(figures_of, tcp_ok) if f.spare_bps is not None or not load_pending(ports(), f.test, now)]
    earlier = [
        t
        for t in path.throughput_tests
        if start is not None and t.time < start and t.protocol == TCP and t.error is None and t.throughput_bps
    ]
    before_window = (figures_of(max(earlier, key=lambda t: t.time)),) if earlier else ()
    expected_path = median(f.expected_bps for f in figures) or flow_cap

    loss = estimate_loss(owamp, udp, [f.test for f in figures], path.capacity_bps)
    ref, sigma, ref_source, test_sigma = reference_of(path, figures)

    return judged(
        PathAssessment(
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
            tcp_before_window=before_window,
        )
    )
