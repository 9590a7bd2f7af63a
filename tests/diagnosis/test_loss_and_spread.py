"""The loss estimate follows the precision of its sources, and the spread of results survives a ceiling (pure).

docs/diagnosis.md#the-physics (detection limits) and #baselines-persistence-and-hysteresis (spread of single tests).
"""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from tests.diagnosis.builders import T0, at, bundle, every, find, owamp, path, run, tcp, udp
from wanmon.dashboard.derived import PathInputs, path_derived_figures
from wanmon.diagnosis import codes
from wanmon.diagnosis.assessment import assess_path
from wanmon.diagnosis.evidence import summarise_path
from wanmon.diagnosis.loss import estimate_loss, wilson_interval
from wanmon.diagnosis.stats import robust_sigma, spread_below

TA_HOPS = ("cern-border", "geant-gva", "geant-ams", "esnet-nyc", "esnet-chi", "fnal-border")


def _stray_owamp(sessions: int, lost_in: int, sent: int = 600, every_min: float = 0.0) -> list:
    """``sessions`` owamp sessions of which the first ``lost_in`` lost a single packet each (spread over them)."""
    step = max(1, sessions // max(lost_in, 1))
    return [
        owamp(i * every_min, 49.0, lost=1 if (i % step == 0 and i // step < lost_in) else 0, sent=sent)
        for i in range(sessions)
    ]


# --------------------------------------------------------------------------- the estimator
def test_wilson_interval_of_rare_losses():
    # no loss in N packets: the upper end is about z^2 / N, the rule of three's neighbour
    low, high = wilson_interval(0, 3600)
    assert low == 0 and high == pytest.approx(3.84 / 3600, rel=0.02)
    # 363 of 33 M: 1.1e-5 known to about 10 %
    low, high = wilson_interval(363, 33e6)
    assert low < 1.1e-5 < high and (high - low) / 1.1e-5 < 0.25
    # 32 of 343 200 owamp packets: an interval far above the UDP figure
    assert wilson_interval(32, 343_200)[0] > 6e-5


def test_the_most_precise_source_leads_over_owamps_stray_losses():
    # given owamp's 572 sessions of 600 packets losing 32 single packets, and UDP tests losing 363 of 33 M datagrams
    sessions = _stray_owamp(572, 32, every_min=0.6)
    tests = [udp(i * 30, 5e9, 2_750_000, 30 + (1 if i < 3 else 0)) for i in range(12)]
    # when the loss is estimated
    est = estimate_loss(sessions, tests, ())
    # then UDP leads with its 1.1e-5 and its packet count; owamp's stray losses only bound the loss
    assert est.source == "udp"
    assert est.fraction == pytest.approx(1.1e-5, rel=0.01)
    assert est.packets == 33_000_000
    assert "leads (33,000,000 packets)" in est.describe()
    [owamp_source] = [s for s in est.evidence() if s["source"] == "owamp"]
    assert owamp_source["scattered"] and not owamp_source["leads"] and owamp_source["consistent_with_leader"] is False


def test_a_less_precise_source_whose_interval_agrees_does_not_override():
    # owamp (long sessions) losing 15 of 1 M packets in five sessions of three: 1.5e-5, within reach of UDP's 1.1e-5
    sessions = [owamp(i * 60, 49.0, lost=3, sent=200_000) for i in range(5)]
    tests = [udp(i * 30, 5e9, 2_750_000, 30 + (1 if i < 3 else 0)) for i in range(12)]
    est = estimate_loss(sessions, tests, ())
    assert est.source == "udp" and est.fraction == pytest.approx(1.1e-5, rel=0.01)
    assert est.evidence()[0]["consistent_with_leader"] is True


def test_a_loss_the_leader_cannot_share_seen_in_several_sessions_overrides_it():
    # a clean UDP test before the fault, then 1 % loss in six owamp sessions: the loss changed, owamp says so
    tests = [udp(0, 2e9, 2_800_000, 0)]
    sessions = [owamp(60 + 5 * i, 49.0, lost=6) for i in range(6)]
    est = estimate_loss(sessions, tests, ())
    assert est.source == "owamp" and est.fraction == pytest.approx(0.01)
    # but one burst in one session does not
    one_burst = [owamp(60 + 5 * i, 49.0, lost=4 if i == 0 else 0) for i in range(6)]
    assert estimate_loss(one_burst, tests, ()).source is None


def test_scattered_single_owamp_losses_are_below_owamps_detection_limit():
    # three sessions of six each lost one packet: 3 of 3600 would be 8.3e-4, but a session cannot see below ~2e-3
    sessions = _stray_owamp(6, 3, every_min=60)
    est = estimate_loss(sessions, (), [tcp(m, 9e9, retransmits=0) for m in (30, 90, 150)])
    assert est.fraction == 0.0 and est.probe_fraction == 0.0
    assert est.probe_detection_limit == pytest.approx(wilson_interval(3, 3600)[1])
    assert "scattered" in est.describe()


# --------------------------------------------------------------------------- the rules and the path page
def _long_path(tests, sessions) -> object:
    return path("CERN", "FNAL", 10e9, TA_HOPS, tests, sessions)


def test_three_stray_owamp_losses_in_six_hours_do_not_make_a_healthy_long_path_loss_limited():
    # given a 98 ms path whose hosts reach 250 Mb/s without a retransmit, and owamp every 5 min losing 3 single
    # packets in 6 h (6.9e-5: a Mathis ceiling near the TCP rate)
    tests = every(30, lambda m: tcp(m, 2.5e8, rtt_ms=98.0, window_bytes=None))
    p = _long_path(tests, _stray_owamp(73, 3, every_min=5))
    # then no LOSS_LIMITED
    assert not find(run(bundle(p)), codes.LOSS_LIMITED)


def test_a_case_6_like_loss_measured_by_udp_is_loss_limited_despite_owamps_stray_losses():
    # given CUBIC at ~550 Mb/s on a 98 ms 10G path, UDP tests every 30 min losing ~15 of 1.4 M datagrams (1.1e-5)
    # and owamp every 5 min losing single packets in a third of the sessions (~4e-4: a ceiling far below TCP)
    tests = every(30, lambda m: tcp(m, 5.5e8, rtt_ms=98.0, window_bytes=None, retransmits=8))
    tests += every(30, lambda m: udp(m + 10, 5e9, 1_400_000, 15))
    p = _long_path(tests, _stray_owamp(73, 24, every_min=5))
    # then LOSS_LIMITED, its loss from UDP with the packets behind it
    [f] = find(run(bundle(p)), codes.LOSS_LIMITED)
    assert f.evidence["loss_source"] == "udp" and f.evidence["loss_packets"] == 12 * 1_400_000
    assert f.evidence["loss_fraction"] == pytest.approx(1.07e-5, rel=0.01)
    assert f.derived.loss_packets == 12 * 1_400_000
    assert "udp (16,800,000 packets)" in f.explanation


def test_the_path_page_uses_the_same_estimator():
    # owamp's 32 stray single losses in 343 200 packets beside UDP's 363 of 33 M: the page quotes UDP's loss
    figures = path_derived_figures(PathInputs(
        capacity_bps=10e9, test_rtts_ms=[98], test_mss_bytes=[8948],
        loss_packets_lost=32, loss_packets_sent=343_200, loss_owamp_sessions=572, loss_owamp_visible_lost=0,
        udp_packets_lost=363, udp_packets_sent=33_000_000, udp_tests=12, udp_visible_lost=363, udp_visible_tests=12,
    ))
    assert figures.loss_fraction == pytest.approx(1.1e-5)
    assert "UDP tests" in dict((label, note) for label, _, _, note in figures.rows())["Probe loss"]


# --------------------------------------------------------------------------- spread that survives a ceiling
def _capped(rng: random.Random, n: int, cap: float = 9.7e9) -> list[float]:
    """Results piled up at a cap (97-100 % of it) with a fifth of them in a tail 4-30 % below."""
    return [cap * (rng.uniform(0.70, 0.96) if rng.random() < 0.2 else rng.uniform(0.97, 1.0)) for _ in range(n)]


def test_the_spread_below_a_pile_is_the_tails_and_symmetric_noise_keeps_its_mad():
    rng = random.Random(5)
    capped = _capped(rng, 300)
    assert robust_sigma(capped) < 0.3e9  # the pile's
    assert spread_below(capped) > 0.55e9  # the tail's: results 4-30 % below a 9.7 Gb/s cap
    noisy = [30e9 * rng.uniform(0.72, 1.0) for _ in range(300)]  # host-limited, symmetric
    assert spread_below(noisy) == robust_sigma(noisy)
    # a tight second level (an afternoon dip, a lasting drop) is not a tail: its results are still seen
    dip = [9.5e9 * rng.uniform(0.98, 1.02) for _ in range(36)] + [8.0e9 * rng.uniform(0.98, 1.02) for _ in range(12)]
    assert spread_below(dip) < 0.3e9


def _capped_path(window_rates: list[float]):
    """10G CERN->NDGF (30 ms): a week of hourly history piled up at 9.7 Gb/s, then the window's tests."""
    rng = random.Random(8)
    history = [
        tcp(m, r, rtt_ms=30.0, window_bytes=None)
        for m, r in zip(range(-7 * 1440, 0, 60), _capped(rng, 7 * 24), strict=False)
    ]
    baseline = summarise_path(history, (), (), T0 - timedelta(days=7), T0)
    assert not baseline.tcp_level.by_hour_of_day  # judged against the median: no chance hour level in the way
    tests = [tcp(30 * (i + 1), r, rtt_ms=30.0, window_bytes=None) for i, r in enumerate(window_rates)]
    sessions = every(10, lambda m: owamp(m, 15.0))
    return path("CERN", "NDGF", 10e9, ("cern-border", "geant-gva", "nordunet-cph", "ndgf-border"), tests, sessions,
                baseline=baseline)


def test_three_tail_results_in_a_row_below_a_capped_baseline_are_not_a_degradation():
    # given the path's usual pile at ~9.6 Gb/s and, in the window, three results 22-27 % below it in a row
    rates = [9.6e9, 9.55e9, 9.65e9, 7.32e9, 7.0e9, 7.45e9, 9.6e9, 9.62e9, 9.58e9]
    p = _capped_path(rates)
    b = bundle(p)
    # then no degradation episode and no warning
    assert assess_path(p, b, at(300)).episodes == ()
    assert not [f for f in run(b, at(300)) if f.severity != codes.INFO]


def test_a_lasting_drop_or_a_collapse_below_a_capped_baseline_is_still_found():
    # 30 % less from the third test on, for the rest of the window (results inside the healthy tail's range, so
    # no single one is conclusive): the median of the window's tests says so
    p = _capped_path([9.6e9, 9.55e9] + [6.7e9 * (1 + 0.01 * (i % 3)) for i in range(10)])
    [ep] = assess_path(p, bundle(p), at(360)).episodes
    # from the window's sixth test (LEVEL_SHIFT_MIN_TESTS: the fourth low one), where the spread of the pile found
    # it from the first: the price of not reading ordinary tail results as faults
    assert (ep.start, ep.end) == (at(180), at(360))
    # a collapse is found from its first results
    p = _capped_path([9.6e9, 9.55e9, 9.65e9] + [1.5e9] * 4)
    [ep] = assess_path(p, bundle(p), at(210)).episodes
    assert ep.start == at(120)
