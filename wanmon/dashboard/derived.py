"""The derived figures of a path (docs/diagnosis.md#the-physics), computed from what the page shows (pure).

Inputs are chosen in a fixed order and the source of each is reported, so an operator can tell a
measured RTT from the nominal one of the inventory.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from wanmon.diagnosis import constants as dk
from wanmon.diagnosis import physics
from wanmon.diagnosis.loss import OWAMP, lead_loss, owamp_source, udp_source


@dataclass(frozen=True)
class PathInputs:
    """Measured and inventory values for one path direction over the displayed range."""

    capacity_bps: float | None
    nominal_rtt_ms: float | None = None
    test_rtts_ms: Sequence[float] = ()
    test_mss_bytes: Sequence[int] = ()
    test_windows_bytes: Sequence[int] = ()
    owamp_min_delays_ms: Sequence[float] = ()
    reverse_owamp_min_delays_ms: Sequence[float] = ()
    loss_packets_lost: int = 0  # owamp
    loss_packets_sent: int = 0
    loss_owamp_sessions: int = 0
    loss_owamp_visible_lost: int | None = None  # lost in sessions a loss shows in (None: every loss counts)
    loss_owamp_visible_sessions: int = 0
    udp_packets_lost: int = 0
    udp_packets_sent: int = 0
    udp_tests: int = 0
    udp_visible_lost: int | None = None  # lost in tests that lost UDP_MIN_LOST_PACKETS or more
    udp_visible_tests: int = 0


@dataclass(frozen=True)
class DerivedFigures:
    """BDP, window and loss figures; a value is None when an input is missing."""

    capacity_bps: float | None
    rtt_ms: float | None
    rtt_source: str
    mss_bytes: int
    mss_source: str
    window_bytes: float | None
    loss_fraction: float | None
    loss_detection_limit: float | None
    bdp_bytes: float | None
    required_window_bytes: float | None
    window_limited_rate_bps: float | None
    mathis_ceiling_bps: float | None
    mathis_reno_bps: float | None
    loss_needed_for_capacity: float | None
    responsiveness_s: float | None
    single_stream_ceiling_bps: float | None
    loss_note: str = "no probes"  # which probe the loss figure comes from, with its packets

    def rows(self) -> list[tuple[str, str, object, str]]:
        """(label, unit name for formatting, value, note) rows, in the order the page shows them."""
        return [
            ("Capacity", "capacity_bps", self.capacity_bps, "inventory"),
            ("RTT", "rtt_ms", self.rtt_ms, self.rtt_source),
            ("MSS (bytes)", "mss", self.mss_bytes, self.mss_source),
            ("Bandwidth-delay product", "bdp_bytes", self.bdp_bytes, "C x RTT / 8"),
            ("Required window", "required_window_bytes", self.required_window_bytes, "2 x BDP"),
            ("Window in tests", "window_bytes", self.window_bytes, "median of the TCP tests"),
            ("Window-limited rate", "window_limited_rate_bps", self.window_limited_rate_bps, "W x 8 / RTT"),
            ("Probe loss", "loss_fraction", self.loss_fraction, self.loss_note),
            ("Mathis ceiling (C=0.7)", "mathis_ceiling_bps", self.mathis_ceiling_bps, "0.7 x MSS x 8 / (RTT x sqrt p)"),
            ("Mathis, classic Reno (C=1.22)", "mathis_reno_bps", self.mathis_reno_bps, "sqrt(3/2) instead of 0.7"),
            ("Loss allowed at full capacity", "loss_allowed_fraction", self.loss_needed_for_capacity,
             "(0.7 x MSS x 8 / (RTT x C))^2"),
            ("Reno responsiveness", "responsiveness_s", self.responsiveness_s, "C x RTT^2 / (2 x MSS x 8)"),
            ("Single-stream ceiling", "single_stream_ceiling_bps", self.single_stream_ceiling_bps,
             "min(capacity, window rate, Mathis)"),
        ]


def _median(values: Sequence[float]) -> float | None:
    clean = [v for v in values if v is not None and math.isfinite(v) and v > 0]
    return statistics.median(clean) if clean else None


def path_derived_figures(inputs: PathInputs) -> DerivedFigures:
    """Compute every figure the data allows; see DerivedFigures.rows for the formulas."""
    rtt = _median(inputs.test_rtts_ms)
    rtt_source = "median of the TCP tests"
    if rtt is None and inputs.owamp_min_delays_ms and inputs.reverse_owamp_min_delays_ms:
        forward, reverse = _median(inputs.owamp_min_delays_ms), _median(inputs.reverse_owamp_min_delays_ms)
        if forward and reverse:
            rtt, rtt_source = forward + reverse, "sum of the one-way minimum delays"
    if rtt is None and inputs.nominal_rtt_ms:
        rtt, rtt_source = inputs.nominal_rtt_ms, "nominal (inventory)"
    if rtt is None:
        rtt_source = "unknown"
    mss = _median(inputs.test_mss_bytes)
    mss_bytes, mss_source = (int(mss), "TCP tests") if mss else (dk.DEFAULT_MSS_BYTES, "assumed (MTU 1500)")
    window = _median(inputs.test_windows_bytes)
    capacity = inputs.capacity_bps or None

    loss, limit, loss_note = probe_loss(inputs)

    bdp = required = window_rate = mathis = reno = loss_needed = responsiveness = None
    if rtt:
        if capacity:
            bdp = physics.bdp_bytes(capacity, rtt)
            required = physics.recommended_window_bytes(capacity, rtt)
            loss_needed = physics.loss_for_rate(capacity, mss_bytes, rtt)
            responsiveness = physics.reno_responsiveness_s(capacity, rtt, mss_bytes)
        if window:
            window_rate = physics.window_limited_rate_bps(window, rtt)
        if loss is not None:  # no loss seen: infinite (not limiting), shown as "unlimited"
            mathis = physics.mathis_rate_bps(mss_bytes, rtt, loss)
            reno = physics.mathis_rate_bps(mss_bytes, rtt, loss, c=dk.MATHIS_C_RENO)
    ceilings = [v for v in (capacity, window_rate, mathis) if v and math.isfinite(v)]
    return DerivedFigures(
        capacity_bps=capacity,
        rtt_ms=rtt,
        rtt_source=rtt_source,
        mss_bytes=mss_bytes,
        mss_source=mss_source,
        window_bytes=window,
        loss_fraction=loss,
        loss_detection_limit=limit,
        bdp_bytes=bdp,
        required_window_bytes=required,
        window_limited_rate_bps=window_rate,
        mathis_ceiling_bps=mathis,
        mathis_reno_bps=reno,
        loss_needed_for_capacity=loss_needed,
        responsiveness_s=responsiveness,
        single_stream_ceiling_bps=min(ceilings) if ceilings else None,
        loss_note=loss_note,
    )


def probe_loss(inputs: PathInputs) -> tuple[float | None, float | None, str]:
    """The probes' loss over the range, its detection limit when none was seen, and a note saying where it comes
    from: the diagnosis's one estimator (wanmon/diagnosis/loss.py), so that the page's Mathis ceiling is the one
    the findings quote (the most precise probe leads; single owamp losses scattered over sessions only bound it)."""
    sources = []
    if inputs.loss_packets_sent > 0:
        visible = inputs.loss_owamp_visible_lost
        sessions = inputs.loss_owamp_sessions or 1
        sources.append(owamp_source(inputs.loss_packets_lost, inputs.loss_packets_sent, sessions,
                                    inputs.loss_packets_lost if visible is None else visible,
                                    sessions if visible is None else inputs.loss_owamp_visible_sessions))
    if inputs.udp_packets_sent > 0:
        tests, visible = inputs.udp_tests or 1, inputs.udp_visible_lost
        sources.append(udp_source(inputs.udp_packets_lost, inputs.udp_packets_sent, tests,
                                  inputs.udp_packets_lost if visible is None else visible,
                                  tests if visible is None else inputs.udp_visible_tests))
    estimate = lead_loss(sources)
    probe = estimate.probe
    if probe is None:
        return None, None, "no probes"
    label = "owamp" if probe.source == OWAMP else "UDP tests"
    loss = estimate.probe_fraction
    if loss:
        return loss, None, f"{label} over the range ({probe.sent:,.0f} packets)"
    limit = estimate.probe_detection_limit
    if probe.scattered:
        return loss, limit, f"owamp: {probe.lost:,.0f} single losses scattered over sessions, below {limit:.2g}"
    return loss, limit, f"none seen, below {limit:.2g}"
