"""Derived figures of a path reproduce the worked examples of docs/diagnosis.md#the-physics."""

import math

import pytest

from wanmon.dashboard.derived import PathInputs, path_derived_figures


def test_window_limited_transatlantic_example():
    # 4 MiB window, 125 ms RTT -> ~268 Mb/s; 10 Gb/s at 125 ms wants 2 x BDP = 312 MB.
    figures = path_derived_figures(PathInputs(capacity_bps=10e9, test_rtts_ms=[125, 125, 126, 124, 125],
                                              test_windows_bytes=[4 * 1024 * 1024] * 5))
    assert figures.rtt_ms == 125
    assert figures.rtt_source == "median of the TCP tests"
    assert figures.window_limited_rate_bps == pytest.approx(268.4e6, rel=1e-3)
    assert figures.bdp_bytes == pytest.approx(156.25e6)
    assert figures.required_window_bytes == pytest.approx(312.5e6)
    assert figures.single_stream_ceiling_bps == pytest.approx(268.4e6, rel=1e-3)
    assert figures.mss_bytes == 1448 and figures.mss_source.startswith("assumed")


def test_loss_limited_example_case_6():
    # MSS 8948, RTT 72 ms, 5 of 78110 packets lost -> Mathis ~87 Mb/s (C = 0.7).
    figures = path_derived_figures(PathInputs(capacity_bps=622e6, test_rtts_ms=[72], test_mss_bytes=[8948],
                                              loss_packets_lost=5, loss_packets_sent=78110))
    assert figures.loss_fraction == pytest.approx(6.4e-5, rel=1e-2)
    assert figures.mathis_ceiling_bps == pytest.approx(87e6, rel=0.02)
    assert figures.mathis_reno_bps == pytest.approx(figures.mathis_ceiling_bps * math.sqrt(1.5) / 0.7)
    assert figures.single_stream_ceiling_bps == figures.mathis_ceiling_bps


def test_no_loss_seen_is_not_limiting_and_reports_the_detection_limit():
    figures = path_derived_figures(PathInputs(capacity_bps=1e9, test_rtts_ms=[11.6], loss_packets_sent=43800))
    assert figures.loss_fraction == 0
    assert math.isinf(figures.mathis_ceiling_bps)
    assert figures.loss_detection_limit == pytest.approx(3 / 43800)
    assert figures.single_stream_ceiling_bps == 1e9
    rows = {label: value for label, _, value, _ in figures.rows()}
    assert math.isinf(rows["Mathis ceiling (C=0.7)"])


def test_rtt_falls_back_to_one_way_delays_then_to_the_nominal_value():
    both_ways = path_derived_figures(PathInputs(capacity_bps=1e9, owamp_min_delays_ms=[4.9, 5.0, 5.1],
                                                reverse_owamp_min_delays_ms=[5.2]))
    assert both_ways.rtt_ms == pytest.approx(10.2)
    assert both_ways.rtt_source == "sum of the one-way minimum delays"
    nominal = path_derived_figures(PathInputs(capacity_bps=1e9, nominal_rtt_ms=20.0))
    assert nominal.rtt_ms == 20.0 and nominal.rtt_source == "nominal (inventory)"
    unknown = path_derived_figures(PathInputs(capacity_bps=1e9))
    assert unknown.rtt_ms is None and unknown.bdp_bytes is None and unknown.rtt_source == "unknown"


def test_reno_responsiveness_example():
    # 10 Gb/s, 120 ms, MTU 1500 (MSS 1460): C x RTT^2 / (2 x MSS x 8) = 6164 s, "about 1.5 h" in the table.
    figures = path_derived_figures(PathInputs(capacity_bps=10e9, test_rtts_ms=[120], test_mss_bytes=[1460]))
    assert figures.responsiveness_s == pytest.approx(10e9 * 0.12**2 / (2 * 1460 * 8))
    assert 1.4 < figures.responsiveness_s / 3600 < 1.8
