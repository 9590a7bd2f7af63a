"""Path rules: ASYMMETRIC_PATH, PATH_DOWN, MTU_MISMATCH, REORDERING, PERIODIC_LOSS, delay, route and clock."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import timedelta

import pytest

from wanmon.diagnosis import codes
from wanmon.diagnosis import constants as k
from wanmon.diagnosis.evidence import InterfaceStatus, PathSummary
from wanmon.diagnosis.registry import rule_context
from wanmon.diagnosis.rules.asymmetry import asymmetric_path
from wanmon.diagnosis.rules.clock import clock_unsync, untrusted_pairs
from wanmon.diagnosis.rules.delay import delay_level_shift, delay_levels, route_change
from wanmon.diagnosis.rules.loss_patterns import find_period, periodic_loss, reordering
from wanmon.diagnosis.rules.mtu import mtu_mismatch
from wanmon.diagnosis.rules.outage import path_down

from .builders import (
    EU_HOPS,
    EU_HOPS_BACK,
    NOW,
    T0,
    MiB,
    at,
    bundle,
    every,
    failed,
    find,
    healthy_eu,
    host,
    iface,
    owamp,
    path,
    rate_row,
    run,
    settled_baseline,
    tcp,
    trace,
)


def ctx(*paths, **kw):
    return rule_context(bundle(*paths, **kw), NOW)


# --------------------------------------------------------------------------- ASYMMETRIC_PATH
def test_asymmetric_throughput_names_the_bad_direction():
    bad = healthy_eu("FZK", "CERN", EU_HOPS_BACK, thr=4e7)
    [f] = asymmetric_path(ctx(healthy_eu(), bad))
    assert f.subject == {"src": "FZK", "dst": "CERN"}
    assert f.evidence["efficiency_ratio"] == pytest.approx(4e7 / 9.2e8, rel=0.05)
    assert f.severity == codes.CRITICAL  # below 10 %


def test_asymmetric_warning_between_10_and_30_percent():
    # both directions with a settled history at 920 Mb/s (between new paths only a collapse below 10 % counts:
    # test_cold_start.py), FZK->CERN now at 200 Mb/s
    settled = settled_baseline(healthy_eu().throughput_tests, (), (), 360)
    fwd, back = healthy_eu(baseline=settled), healthy_eu("FZK", "CERN", EU_HOPS_BACK, thr=2e8, baseline=settled)
    [f] = asymmetric_path(ctx(fwd, back))
    assert f.severity == codes.WARNING


def test_asymmetric_path_dates_from_the_degradation_episode_not_the_window_edge():
    # FZK->CERN ran at its settled 920 Mb/s until minute 180, then at 40 Mb/s: the episode since 180 shows the
    # asymmetry as strongly as the whole window, whose start is only its edge
    settled = settled_baseline(healthy_eu().throughput_tests, (), (), 360)
    tests = every(30, lambda m: tcp(m, 9.2e8 if m < 180 else 4e7, window_bytes=2_450_000, rtt_ms=9.8))
    back = path("FZK", "CERN", 1e9, EU_HOPS_BACK, tests, every(5, lambda m: owamp(m, 4.9)), baseline=settled)
    [f] = asymmetric_path(ctx(healthy_eu(baseline=settled), back))
    assert f.subject == {"src": "FZK", "dst": "CERN"} and f.severity == codes.CRITICAL
    assert f.start == at(180)


def test_a_direction_that_got_what_its_busy_uplink_left_is_no_asymmetric_path():
    # FZK->CERN at 200 Mb/s of its settled 920 Mb/s while FZK's uplink carried 780 Mb/s of other traffic out: the
    # tests got the 220 Mb/s the load left them, and the reverse, entering FZK by the other fibre, did not compete
    settled = settled_baseline(healthy_eu().throughput_tests, (), (), 360)
    hops = ("fzk-border:et-0/0/0", *EU_HOPS_BACK[1:])
    fwd, back = healthy_eu(baseline=settled), healthy_eu("FZK", "CERN", hops, thr=2e8, baseline=settled)

    def uplink(out_bps):
        return iface("fzk-border", "et-0/0/0", 1e9, [rate_row(m, in_bps=1e8, out_bps=out_bps) for m in range(-5, 366)])

    assert asymmetric_path(ctx(fwd, back, interfaces=(uplink(7.8e8),))) == []
    # with room on the uplink the slow direction is slow on its own: the asymmetry stands
    [f] = asymmetric_path(ctx(fwd, back, interfaces=(uplink(1e8),)))
    assert f.subject == {"src": "FZK", "dst": "CERN"}


def test_one_slow_test_is_no_asymmetric_path():
    # FZK->CERN tested every 6 hours: the window's one test at 200 Mb/s of its settled 920 Mb/s (a busy host)
    settled = settled_baseline(healthy_eu().throughput_tests, (), (), 360)
    fwd = healthy_eu(baseline=settled)

    def tested_every_6h(before_bps):
        tests = [tcp(-200, before_bps, window_bytes=2_450_000, rtt_ms=9.8), tcp(160, 2e8, window_bytes=2_450_000,
                                                                                rtt_ms=9.8)]
        return path("FZK", "CERN", 1e9, EU_HOPS_BACK, tests, every(5, lambda m: owamp(m, 4.9)), baseline=settled)

    assert asymmetric_path(ctx(fwd, tested_every_6h(9.2e8))) == []
    # the test before it as slow: two tests say it
    [f] = asymmetric_path(ctx(fwd, tested_every_6h(2.1e8)))
    assert f.subject == {"src": "FZK", "dst": "CERN"}


def test_symmetric_pair_is_quiet():
    assert asymmetric_path(ctx(healthy_eu(), healthy_eu("FZK", "CERN", EU_HOPS_BACK, thr=8e8))) == []


def test_different_windows_are_not_an_asymmetry():
    # FZK->CERN uses a 256 kB window: 210 Mb/s is what it allows at 9.8 ms, so it is as efficient as the reverse
    slow = path(
        "FZK",
        "CERN",
        1e9,
        EU_HOPS_BACK,
        every(30, lambda m: tcp(m, 2.0e8, window_bytes=256_000, rtt_ms=9.8)),
        every(5, lambda m: owamp(m, 4.9)),
    )
    assert asymmetric_path(ctx(healthy_eu(), slow)) == []


def test_asymmetric_loss_without_throughput_tests():
    lossy = path("FZK", "CERN", 1e9, EU_HOPS_BACK, (), every(5, lambda m: owamp(m, 4.9, lost=30)))
    clean = path("CERN", "FZK", 1e9, EU_HOPS, (), every(5, lambda m: owamp(m, 4.9)))
    [f] = asymmetric_path(ctx(clean, lossy))
    assert f.evidence["probe_loss_fraction"] == pytest.approx(0.05)
    assert f.evidence["reverse_detection_limit"] == pytest.approx(3 / (73 * 600))


def test_asymmetric_loss_found_after_two_hourly_sessions_against_the_reverses_usual_loss():
    # a dirty fibre one way: the last two hourly sessions of FZK->CERN lose 1 % (6 of 600), CERN->FZK's lose
    # nothing in them and one stray packet earlier in the window. Its one session of the episode bounds its loss at
    # 3/600 = 5e-3, the window's 1 of 3600 at ~1.6e-3: neither a tenth of 1 %. Its baseline, 100 800 packets
    # at 2e-5, says its usual loss is below 3/100 800 = 3.0e-5, and the episode's clean session that it held.
    lossy = path("FZK", "CERN", 1e9, EU_HOPS_BACK, (), every(60, lambda m: owamp(m, 4.9, lost=6 if m >= 300 else 0)))
    sessions = every(60, lambda m: owamp(m + 20, 4.9, lost=1 if m == 60 else 0), end=300)
    usual = PathSummary(T0 - timedelta(days=21), T0, probe_packets=100_800, probe_loss_fraction=2e-5)
    clean = path("CERN", "FZK", 1e9, EU_HOPS, (), sessions, baseline=usual)
    [f] = asymmetric_path(ctx(clean, lossy))
    assert f.subject == {"src": "FZK", "dst": "CERN"}
    assert f.start == at(300)
    assert f.evidence["probe_loss_fraction"] == pytest.approx(0.01)
    assert f.evidence["reverse_detection_limit"] == pytest.approx(3 / 100_800)
    assert f.severity == codes.CRITICAL
    # without the reverse's history its few clean sessions cannot say the loss is ten times theirs yet
    assert asymmetric_path(ctx(path("CERN", "FZK", 1e9, EU_HOPS, (), sessions), lossy)) == []
    # and the same loss both ways is no asymmetry
    both = every(60, lambda m: owamp(m + 20, 4.9, lost=6 if m >= 280 else 0), end=300)
    assert asymmetric_path(ctx(path("CERN", "FZK", 1e9, EU_HOPS, (), both, baseline=usual), lossy)) == []


def test_reverse_summary_used_when_the_reverse_path_is_not_in_the_bundle():
    ref = PathSummary(
        T0, NOW, tcp_tests=12, tcp_throughput_median_bps=9e8, probe_packets=43_800, probe_loss_fraction=0.0
    )
    bad = healthy_eu("FZK", "CERN", EU_HOPS_BACK, thr=3e7)
    bad = path(bad.src, bad.dst, bad.capacity_bps, bad.hops, bad.throughput_tests, bad.owamp_tests)
    bad = type(bad)(**{**bad.__dict__, "reverse": ref})
    [f] = asymmetric_path(ctx(bad))
    assert f.evidence["reverse_throughput_bps"] == 9e8


# --------------------------------------------------------------------------- PATH_DOWN
def test_one_failed_test_in_the_middle_is_not_an_outage():
    tests = every(30, lambda m: failed(m) if m == 120 else tcp(m, 9e8, window_bytes=2_450_000, rtt_ms=9.8))
    assert path_down(ctx(path("CERN", "FZK", 1e9, EU_HOPS, tests))) == []


def test_the_latest_failed_test_alone_is_not_an_outage_but_one_confirmed_by_owamp_is():
    # a test failing once is a busy server, even when it happens to be the latest one
    tests = every(30, lambda m: failed(m) if m == 360 else tcp(m, 9e8, window_bytes=2_450_000, rtt_ms=9.8))
    assert path_down(ctx(path("CERN", "FZK", 1e9, EU_HOPS, tests))) == []
    # owamp losing all 600 packets at the same time confirms it: the outage is going on
    sessions = every(5, lambda m: owamp(m, 4.9, lost=600 if m >= 355 else 0))
    [f] = path_down(ctx(path("CERN", "FZK", 1e9, EU_HOPS, tests, sessions)))
    assert f.start == at(355) and f.evidence["ongoing"]
    assert {o["kind"] for o in f.evidence["failed"]} == {"tcp", "owamp"}


def test_one_hourly_session_each_way_losing_everything_is_an_outage():
    # hourly sessions, the prefixes withdrawn at minute 300: CERN->FZK's session at 310 and FZK->CERN's at 340
    # lose all 600 packets. One session alone waits for the next one, an hour later; the other end's probes
    # losing everything too since a packet last got through is the pair cut off, found after one each.
    fwd = path("CERN", "FZK", 1e9, EU_HOPS, (), every(60, lambda m: owamp(m + 10, 4.9, lost=600 if m >= 300 else 0),
                                                      end=300))
    back = path("FZK", "CERN", 1e9, EU_HOPS_BACK, (), every(60, lambda m: owamp(m + 40, 4.9,
                                                                                 lost=600 if m >= 300 else 0), end=300))
    found = path_down(ctx(fwd, back))
    assert {(f.subject["src"], f.subject["dst"]) for f in found} == {("CERN", "FZK"), ("FZK", "CERN")}
    assert {f.start for f in found} == {at(310), at(340)}
    assert all(f.evidence["ongoing"] and f.severity == codes.CRITICAL for f in found)
    # a reverse that carried its packets, or that only lost everything before this direction's last success, is
    # no confirmation: one session is a sender or receiver problem until the next one
    clean_back = path("FZK", "CERN", 1e9, EU_HOPS_BACK, (), every(60, lambda m: owamp(m + 40, 4.9), end=300))
    assert path_down(ctx(fwd, clean_back)) == []
    early = path("FZK", "CERN", 1e9, EU_HOPS_BACK, (), every(60, lambda m: owamp(m + 40, 4.9,
                                                                                 lost=600 if m == 180 else 0), end=300))
    assert path_down(ctx(fwd, early)) == []


def test_failures_while_owamp_carries_packets_are_not_an_outage():
    # given three tests refused in a row while owamp gets every packet through
    tests = every(30, lambda m: failed(m) if 240 <= m <= 300 else tcp(m, 9e8, window_bytes=2_450_000, rtt_ms=9.8))
    sessions = every(5, lambda m: owamp(m, 4.9))
    assert path_down(ctx(path("CERN", "FZK", 1e9, EU_HOPS, tests, sessions))) == []
    # and failed, ok, failed is no run either
    tests = every(30, lambda m: failed(m) if m in (240, 300) else tcp(m, 9e8, window_bytes=2_450_000, rtt_ms=9.8))
    assert path_down(ctx(path("CERN", "FZK", 1e9, EU_HOPS, tests))) == []


def test_interface_hop_down_in_two_polls_is_an_outage():
    hops = ("cern-border", "geant-gva:xe-0/0/0", "fzk-border")
    p = healthy_eu(hops=hops)
    status = tuple(InterfaceStatus(at(m), "down" if 100 <= m <= 102 else "up") for m in range(0, 361))
    link = iface("geant-gva", "xe-0/0/0", 10e9, status=status)
    [f] = path_down(ctx(p, interfaces=(link,)))
    assert f.evidence["interfaces_down"][0]["samples"] == 3
    assert f.start == at(100) and f.end == at(102)


def test_interface_of_a_hop_equipment_down_is_not_enough():
    status = tuple(InterfaceStatus(at(m), "down") for m in range(0, 361))
    link = iface("geant-gva", "xe-9/9/9", 10e9, status=status)  # some other port of geant-gva
    assert path_down(ctx(healthy_eu(), interfaces=(link,))) == []


# --------------------------------------------------------------------------- MTU_MISMATCH
def jumbo_path(mss=8948, pmtu=None):
    tests = every(
        30,
        lambda m: tcp(
            m, 9e8, window_bytes=2_450_000, rtt_ms=9.8, mss_bytes=mss, src_host="192.0.2.10", dst_host="192.0.2.11"
        ),
    )
    traces = every(60, lambda m: trace(m, EU_HOPS, pmtu)) if pmtu else ()
    return path("CERN", "FZK", 1e9, EU_HOPS, tests, traces=traces)


JUMBO_HOSTS = (
    host("CERN", "cern-dt01", buf=64 * MiB, mtu=9000, address="192.0.2.10"),
    host("FZK", "fzk-dt01", buf=64 * MiB, mtu=9000, address="192.0.2.11"),
)


def test_path_mtu_1500_on_a_jumbo_path():
    [f] = mtu_mismatch(ctx(jumbo_path(pmtu=1500), hosts=JUMBO_HOSTS))
    assert f.evidence["path_mtu_bytes"] == 1500
    assert "traceroute path MTU 1500 B" in f.summary


def test_mtu_mismatch_starts_at_the_first_test_with_the_small_mss_not_at_the_window_edge():
    # given jumbo frames for the window's first two hours, then every test at MSS 1448 (the path MTU fell to 1500)
    tests = every(30, lambda m: tcp(m, 9e8, window_bytes=2_450_000, rtt_ms=9.8, mss_bytes=8948 if m < 120 else 1448,
                                    src_host="192.0.2.10", dst_host="192.0.2.11"))  # fmt: skip
    # when the rule runs: the tests' median MSS is the small one
    [f] = mtu_mismatch(ctx(path("CERN", "FZK", 1e9, EU_HOPS, tests), hosts=JUMBO_HOSTS))
    # then the finding starts with the first small-MSS test (the onset pages show), not with the window's first test
    assert f.start == at(120)


def test_mss_1448_between_jumbo_hosts():
    [f] = mtu_mismatch(ctx(jumbo_path(mss=1448), hosts=JUMBO_HOSTS))
    assert f.evidence["expected_mss_bytes"] == 8948
    assert "factor 6.2" in f.explanation


def test_consistent_jumbo_or_standard_frames_are_fine():
    assert mtu_mismatch(ctx(jumbo_path(pmtu=9000), hosts=JUMBO_HOSTS)) == []
    std = (
        host("CERN", "cern-dt01", mtu=1500, address="192.0.2.10"),
        host("FZK", "fzk-dt01", mtu=1500, address="192.0.2.11"),
    )
    assert mtu_mismatch(ctx(jumbo_path(mss=1448, pmtu=1500), hosts=std)) == []


# --------------------------------------------------------------------------- REORDERING
def test_reordering_above_threshold():
    p = path("CERN", "FZK", 1e9, EU_HOPS, (), every(5, lambda m: owamp(m, 4.9, reordered=3)))
    [f] = reordering(ctx(p))
    assert f.evidence["fraction"] == pytest.approx(0.005)


def test_single_reordered_packet_is_below_threshold():
    p = path("CERN", "FZK", 1e9, EU_HOPS, (), every(5, lambda m: owamp(m, 4.9, reordered=1 if m == 60 else 0)))
    assert reordering(ctx(p)) == []


# --------------------------------------------------------------------------- PERIODIC_LOSS
def test_find_period_regular_events():
    events = [at(m) for m in range(0, 361, 30)]
    samples = [at(m) for m in range(0, 361, 5)]
    found = find_period(events, samples)
    assert found["period_s"] == pytest.approx(1800)


def test_find_period_tolerates_a_missed_event():
    events = [at(m) for m in range(0, 361, 30) if m != 150]
    assert find_period(events, [at(m) for m in range(0, 361, 5)])["period_s"] == pytest.approx(1800)


def test_continuous_loss_is_not_periodic():
    samples = [at(m) for m in range(0, 361, 5)]
    assert find_period(samples, samples) is None


def test_random_loss_is_not_periodic():
    minutes = [5, 15, 80, 95, 100, 170, 260, 265, 330]
    assert find_period([at(m) for m in minutes], [at(m) for m in range(0, 361, 5)]) is None


def test_random_loss_on_a_coarse_sampling_grid_is_not_periodic(monkeypatch):
    # lossy 5-min sessions one or two sessions apart at random: the median gap is 1.5 sessions (7.5 min), and a
    # tolerance of half a session around its multiples admits every gap the grid can produce
    gaps = [1, 2, 1, 1, 3, 2, 1, 2, 2, 1, 1, 4, 1, 2, 1, 2, 1, 1, 2, 5, 1, 2, 2, 1, 1, 3, 1, 2, 2, 1]
    sessions = [sum(gaps[:i]) for i in range(len(gaps) + 1)]
    events = [at(5 * n) for n in sessions]
    samples = [at(m) for m in range(0, 361, 5)]
    assert find_period(events, samples) is None
    monkeypatch.setattr(k, "PERIODIC_MAX_CHANCE_PROBABILITY", 1.0)  # without the comparison with chance
    assert find_period(events, samples)["regular_share"] == 1.0


def test_poisson_loss_is_not_periodic():
    samples = [at(m) for m in range(0, 361, 5)]
    for seed in range(300):
        rng = random.Random(seed)
        lossy, t = set(), 0.0
        while (t := t + rng.expovariate(1 / 7.2)) < 360:  # one loss every 7.2 min on average
            lossy.add(int(t // 5))
        assert find_period([samples[n] for n in sorted(lossy)], samples) is None, seed


def test_stray_losses_on_ten_thousand_one_minute_paths_are_not_called_periodic():
    # A WLCG-sized mesh: 10 000 directed paths with a latencybg session a minute, each losing a stray packet now
    # and then (memoryless, one session in 97 or in 30).  Judged each cycle, a 1 % chance per path still called
    # 15 healthy paths periodic in one 6-hour window; the threshold is set for thousands of paths judged at once.
    minutes = [at(m) for m in range(360)]
    called = 0
    for rate in (1 / 97, 1 / 30):
        rng = random.Random(19)
        for _ in range(5_000):
            called += find_period([t for t in minutes if rng.random() < rate], minutes) is not None
    assert called <= 1


def test_a_clean_hourly_pattern_is_periodic():
    events = [at(m) for m in (2, 62, 121, 182, 241, 302)]
    found = find_period(events, [at(m) for m in range(0, 361)])
    assert found["period_s"] == pytest.approx(3600, rel=0.01)
    assert found["chance_probability"] < k.PERIODIC_MAX_CHANCE_PROBABILITY


def test_periodic_loss_on_a_path_without_schedule_says_so():
    p = path("FZK", "CERN", 1e9, EU_HOPS_BACK, (), every(5, lambda m: owamp(m, 4.9, lost=5 if m % 45 == 0 else 0)))
    [f] = [x for x in periodic_loss(ctx(p)) if "src" in x.subject]
    assert f.evidence["period_s"] == pytest.approx(2700)
    assert "not known" in f.explanation


# --------------------------------------------------------------------------- DELAY_LEVEL_SHIFT / ROUTE_CHANGE
def test_delay_levels_split_and_noise():
    assert len(delay_levels([4.90, 4.92, 4.95, 4.91, 6.40, 6.42, 6.41])) == 2
    assert len(delay_levels([4.90, 4.92, 4.95, 4.91, 4.93])) == 1
    assert len(delay_levels([4.9, 4.91, 4.92, 7.0])) == 1  # a single odd session is an outlier


def test_delay_level_shift_without_traceroutes_is_reported_unconfirmed():
    p = path("CERN", "FZK", 1e9, EU_HOPS, (), every(5, lambda m: owamp(m, 6.4 if 120 <= m < 240 else 4.9)))
    [f] = delay_level_shift(ctx(p))
    assert f.evidence["traceroutes"] == 0
    assert "cannot be excluded" in f.explanation


def test_a_level_the_window_holds_one_session_of_is_judged_with_the_sessions_before_it():
    # hourly owamp: 4.9 ms until minute 20, 5.7 ms (a protection switch onto 160 km more fibre) from minute 80; the
    # traceroute before the window and the one after the jump show the same route. The window holds one session of
    # the old level; the two before it are the rest of that level
    p = path(
        "CERN",
        "FZK",
        1e9,
        EU_HOPS,
        (),
        every(60, lambda m: owamp(m, 5.7 if m >= 80 else 4.9), start=20),
        [trace(-100, EU_HOPS), trace(300, EU_HOPS)],
    )
    assert delay_level_shift(ctx(p)) == []  # one session is no level
    [f] = delay_level_shift(ctx(replace(p, owamp_before=(owamp(-100, 4.9), owamp(-40, 4.9)))))
    assert f.start == at(20)
    assert f.evidence["transitions"][0]["traceroute_confirmed"]


def test_queueing_is_not_a_level_shift():
    def session(m):
        busy = 120 <= m < 240
        return owamp(m, 6.4 if busy else 4.9, delay_median_ms=(14.0 if busy else 5.2))

    p = path("CERN", "FZK", 1e9, EU_HOPS, (), every(5, session))
    assert delay_level_shift(ctx(p)) == []


def test_route_change_lists_new_elements_and_delay():
    alt = ("cern-border", "geant-gva", "geant-par", "geant-fra", "dfn-fra", "fzk-border")
    p = path(
        "CERN",
        "FZK",
        1e9,
        EU_HOPS,
        (),
        every(5, lambda m: owamp(m, 5.6 if m >= 180 else 4.9)),
        every(60, lambda m: trace(m, alt if m >= 180 else EU_HOPS)),
    )
    [f] = route_change(ctx(p))
    assert f.start == at(180)
    assert f.evidence["changes"][0]["added"] == ["geant-par"]
    assert "+0.70 ms" in f.explanation
    assert delay_level_shift(ctx(p)) == []


def test_silent_hops_and_interface_names_are_not_a_route_change():
    p = path(
        "CERN",
        "FZK",
        1e9,
        EU_HOPS,
        (),
        (),
        [
            trace(0, EU_HOPS),
            trace(60, ("cern-border", "*", "geant-fra:xe-1/0/0", "dfn-fra", "fzk-border")),
        ],
    )
    assert route_change(ctx(p)) == []


# --------------------------------------------------------------------------- CLOCK_UNSYNC
def pair(fwd_min, rev_min, fwd_err=0.2, rev_err=0.2, rtt=9.8, a="CERN", b="FZK"):
    tests = every(30, lambda m: tcp(m, 9e8, window_bytes=2_450_000, rtt_ms=rtt))
    fwd = path(a, b, 1e9, EU_HOPS, tests, every(5, lambda m: owamp(m, fwd_min, clock_error_ms=fwd_err)))
    rev = path(b, a, 1e9, EU_HOPS_BACK, tests, every(5, lambda m: owamp(m, rev_min, clock_error_ms=rev_err)))
    return fwd, rev


def test_negative_one_way_delay():
    c = ctx(*pair(25.0, -15.2))
    found = clock_unsync(c)
    assert {tuple(f.subject.items()) for f in found} >= {
        (("src", "CERN"), ("dst", "FZK")),
        (("src", "FZK"), ("dst", "CERN")),
    }
    assert untrusted_pairs(c) == {("CERN", "FZK"), ("FZK", "CERN")}


def test_large_reported_clock_error():
    found = clock_unsync(ctx(*pair(4.9, 4.9, fwd_err=40.0)))
    assert any(p["kind"] == "clock_error" for f in found for p in f.evidence.get("problems", []))


def test_sum_of_one_way_delays_far_above_rtt():
    found = clock_unsync(ctx(*pair(34.9, 4.9)))
    kinds = {p["kind"] for f in found for p in f.evidence["problems"]}
    assert "sum_vs_rtt" in kinds and "one_way_above_rtt" in kinds


def test_one_way_delay_of_a_new_route_is_not_held_to_the_old_routes_rtt():
    # A detour adds 6 ms to CERN->FZK at minute 180; the TCP tests (RTT 9.8 ms) all ran on the old route, so
    # the new 10.9 ms one-way delay above them says nothing about the clocks: the sum rose with it.
    tests = every(30, lambda m: tcp(m, 9e8, window_bytes=2_450_000, rtt_ms=9.8), end=150)
    fwd = path("CERN", "FZK", 1e9, EU_HOPS, tests, every(5, lambda m: owamp(m, 10.9 if m >= 180 else 4.9)))
    rev = path("FZK", "CERN", 1e9, EU_HOPS_BACK, tests, every(5, lambda m: owamp(m, 4.9)))
    assert clock_unsync(ctx(fwd, rev)) == []


def test_clock_step_changes_offset_not_sum():
    tests = every(30, lambda m: tcp(m, 9e8, window_bytes=2_450_000, rtt_ms=9.8))
    fwd = path("CERN", "FZK", 1e9, EU_HOPS, tests, every(5, lambda m: owamp(m, 4.9 + (2.0 if m >= 180 else 0))))
    rev = path("FZK", "CERN", 1e9, EU_HOPS_BACK, tests, every(5, lambda m: owamp(m, 4.9 - (2.0 if m >= 180 else 0))))
    c = ctx(fwd, rev)
    kinds = {p["kind"] for f in clock_unsync(c) for p in f.evidence["problems"]}
    assert kinds == {"clock_step"}
    # and the delay rule does not take it for a protection switch
    assert delay_level_shift(c) == []


def test_a_drifting_clock_is_dated_to_where_the_offset_began_to_move():
    # FZK's clock drifts at 1 ppm from minute 120 (3.6 ms an hour): its reverse delay turns negative only once
    # the offset exceeds the 4.9 ms one-way delay, 82 minutes later
    def drift_ms(m):
        return max(0.0, m - 120) / 60 * 3.6

    tests = every(30, lambda m: tcp(m, 9e8, window_bytes=2_450_000, rtt_ms=9.8))
    fwd = path("CERN", "FZK", 1e9, EU_HOPS, tests, every(5, lambda m: owamp(m, 4.9 + drift_ms(m))))
    rev = path("FZK", "CERN", 1e9, EU_HOPS_BACK, tests, every(5, lambda m: owamp(m, 4.9 - drift_ms(m))))
    found = clock_unsync(ctx(fwd, rev))
    assert found and all(f.start == at(125) for f in found)
    drift = next(p for p in found[0].evidence["problems"] if p["kind"] == "offset_drift")
    assert drift["time"] == at(125)
    assert "moved steadily since 08:05 UTC" in found[0].explanation


def test_site_blamed_when_its_partner_is_fine_elsewhere():
    bad_f, bad_r = pair(25.0, -15.2, a="CERN", b="FZK")
    ok_f, ok_r = pair(2.05, 2.05, rtt=4.1, a="CERN", b="IN2P3")
    found = clock_unsync(ctx(bad_f, bad_r, ok_f, ok_r))
    sites = [f.subject for f in found if "site" in f.subject]
    assert sites == [{"site": "FZK"}]


def test_synchronised_pair_is_quiet():
    assert clock_unsync(ctx(*pair(4.9, 4.9))) == []
    assert T0 + timedelta(hours=6) == NOW


def test_jumbo_mss_over_a_1500_path_mtu_without_host_reports():
    [f] = mtu_mismatch(ctx(jumbo_path(pmtu=1500)))
    assert f.evidence["endpoint_mtu"] == 9000
    assert f.evidence["endpoint_mtu_source"] == "the MSS the tests negotiated"


def test_a_test_without_any_throughput_counts_as_failed():
    from wanmon.diagnosis.evidence import ThroughputTest

    tests = every(30, lambda m: tcp(m, 9e8, window_bytes=2_450_000, rtt_ms=9.8)) + [
        ThroughputTest(time=at(m), protocol="tcp", throughput_bps=None) for m in (345, 355)
    ]
    [f] = path_down(ctx(path("CERN", "FZK", 1e9, EU_HOPS, tests)))
    assert f.start == at(345)


def test_a_traceroute_whose_last_hops_did_not_answer_is_not_a_route_change():
    p = path(
        "CERN",
        "FZK",
        1e9,
        EU_HOPS,
        (),
        every(5, lambda m: owamp(m, 4.9)),
        every(60, lambda m: trace(m, EU_HOPS[:-1] if m == 180 else EU_HOPS)),
    )
    assert route_change(ctx(p)) == []


def test_delay_levels_are_told_apart_by_their_robust_spread_not_their_extreme_minima():
    # a week of hourly minima 0.7 ms apart on two routes, each within +-0.03 ms but for two outliers at +-0.1 ms:
    # three times the full range of a level (0.2 ms) exceeds the 0.5 ms between them, its 10-90 % range does not
    import random as _random

    from wanmon.diagnosis.rules.delay import delay_levels

    rng = _random.Random(3)

    def level(base, n):
        return [base - 0.1, base + 0.1] + [base + rng.uniform(-0.03, 0.03) for _ in range(n - 2)]

    levels = delay_levels(level(5.365, 128) + level(6.065, 40))
    assert len(levels) == 2
    assert levels[1].median_ms - levels[0].median_ms == pytest.approx(0.7, abs=0.02)


# --------------------------------------------------------------------------- ECMP alternation, steady new levels
ECMP_HOPS = ("cern-border", "geant-gva", "geant-fra2", "dfn-fra", "fzk-border")  # the equal-cost twin at Frankfurt


def _ecmp_path(degraded: bool, dmin=lambda m: 4.9, routes=(EU_HOPS, ECMP_HOPS)):
    """CERN->FZK, traceroutes every 30 min alternating between ``routes`` (the baseline saw both) and a TCP drop
    from minute 60 when ``degraded``; owamp every 5 min at ``dmin``."""
    tests = every(30, lambda m: tcp(m, 3e8 if degraded and m >= 60 else 9.2e8, window_bytes=2_450_000, rtt_ms=9.8))
    base = PathSummary(
        start=T0 - timedelta(days=21),
        end=T0,
        tcp_tests=500,
        tcp_throughput_median_bps=9.2e8,
        tcp_throughput_mad_bps=1e7,
        delay_min_ms=4.88,
        delay_median_ms=5.2,
        traceroute_hops=EU_HOPS,
        traceroute_routes=(EU_HOPS, ECMP_HOPS),
    )
    traces = every(30, lambda m: trace(m, routes[int(m // 30) % len(routes)]), start=15)
    return path("CERN", "FZK", 1e9, EU_HOPS, tests, every(5, lambda m: owamp(m, dmin(m))), traces, baseline=base)


def test_ecmp_alternation_with_a_degradation_is_info_not_a_warning():
    # the case: equal-length alternates, the delay moved by 0.01 ms, a drop that ECMP did not cause
    [f] = route_change(ctx(_ecmp_path(True, dmin=lambda m: 4.9 + 0.01 * ((m // 30) % 2))))
    assert f.severity == codes.INFO
    assert f.evidence["alternation"] is True and f.evidence["degraded_after"] is True
    assert "equal-cost" in f.explanation


def test_ecmp_alternation_alone_is_no_finding():
    # the path's ordinary state: a finding for it would stay open for good and hide the day a new route comes
    assert route_change(ctx(_ecmp_path(False))) == []


def test_a_new_equal_length_route_among_alternates_is_a_route_change_from_its_first_traceroute():
    # equal-length alternates at Frankfurt, then Milan instead of Geneva: a router the path never crossed
    new = ("cern-border", "geant-mil", "geant-fra2", "dfn-fra", "fzk-border")
    routes = (EU_HOPS, ECMP_HOPS, EU_HOPS, ECMP_HOPS, new, ECMP_HOPS)
    p = _ecmp_path(False)
    p = replace(p, traceroutes=tuple(trace(15 + 30 * i, r) for i, r in enumerate(routes)))
    [f] = route_change(ctx(p))
    assert f.evidence["alternation"] is False
    assert f.start == at(135)  # the first traceroute through Milan, not the first ECMP flip


def test_a_new_route_with_a_delay_step_and_a_degradation_stays_a_warning():
    # Paris was never on this path and the minimum delay rises by 0.7 ms with it: a real route change
    alt = ("cern-border", "geant-gva", "geant-par", "geant-fra", "dfn-fra", "fzk-border")
    p = _ecmp_path(True, dmin=lambda m: 5.6 if m >= 75 else 4.9, routes=(EU_HOPS,))
    p = path(
        p.src,
        p.dst,
        1e9,
        EU_HOPS,
        p.throughput_tests,
        p.owamp_tests,
        [trace(m, alt if m >= 75 else EU_HOPS) for m in (15, 45, 75, 105, 135)],
        baseline=p.baseline,
    )
    [f] = route_change(ctx(p))
    assert f.severity == codes.WARNING
    assert f.evidence["alternation"] is False


def test_a_route_change_starts_where_the_minimum_delay_moved_before_the_traceroute_saw_it():
    # traceroutes 3 h apart; the minimum one-way delay rises by 0.7 ms at minute 100, the traceroute shows Paris
    # at minute 195: the light took the longer path from minute 100
    alt = ("cern-border", "geant-gva", "geant-par", "geant-fra", "dfn-fra", "fzk-border")
    p = _ecmp_path(False, dmin=lambda m: 5.6 if m >= 100 else 4.9, routes=(EU_HOPS,))
    p = replace(p, traceroutes=(trace(15, EU_HOPS), trace(195, alt)))
    [f] = route_change(ctx(p))
    assert f.start == at(100)


def test_a_route_change_starts_where_the_delay_moved_with_hourly_owamp_and_the_route_before_out_of_the_window():
    # traceroutes every 6 h: the one before lies before the window, the one at minute 320 shows Paris; owamp hourly,
    # so no session follows that traceroute yet in the cycle that first sees it. The minimum delay moved at 253.
    alt = ("cern-border", "geant-gva", "geant-par", "geant-fra", "dfn-fra", "fzk-border")
    p = _ecmp_path(False, routes=(EU_HOPS,))
    hourly = every(60, lambda m: owamp(m, 5.6 if m >= 240 else 4.9), start=13, end=320)
    p = replace(p, traceroutes=(trace(320, alt),), owamp_tests=tuple(hourly))
    [f] = route_change(ctx(p))
    assert f.start == at(253)


def test_alternation_onto_known_routes_with_a_delay_step_is_no_ecmp():
    # back and forth between two known routes, but 0.7 ms apart: not equal-cost, the change is reported as before
    [f] = route_change(ctx(_ecmp_path(True, dmin=lambda m: 5.6 if (m - 15) // 30 % 2 else 4.9)))
    assert f.severity == codes.WARNING and f.evidence["alternation"] is False


def test_a_route_never_seen_before_is_no_alternation_even_without_delay_data():
    p = _ecmp_path(True, dmin=lambda m: 4.9)
    p = path(
        p.src,
        p.dst,
        1e9,
        EU_HOPS,
        p.throughput_tests,
        (),
        [trace(15, EU_HOPS), trace(75, ECMP_HOPS)],
        baseline=replace(p.baseline, traceroute_routes=(EU_HOPS,)),
    )
    [f] = route_change(ctx(p))
    assert f.severity == codes.WARNING


def test_the_last_traceroute_before_the_window_is_the_route_before_it():
    # the window's first traceroute differs from the baseline's last, but the path was already on it before the
    # window: no change in the window (the change before it was reported while it was in the window)
    base = PathSummary(start=T0 - timedelta(days=21), end=T0, traceroute_hops=EU_HOPS)
    alt = ("cern-border", "geant-gva", "geant-par", "geant-fra", "dfn-fra", "fzk-border")
    p = path("CERN", "FZK", 1e9, EU_HOPS, (), (), [trace(-40, alt), trace(60, alt)], baseline=base)
    assert route_change(ctx(p)) == []
    [f] = route_change(ctx(path("CERN", "FZK", 1e9, EU_HOPS, (), (), [trace(60, alt)], baseline=base)))
    assert f.evidence["route_before_window_age_s"] is None


def test_mtu_from_the_last_traceroute_before_the_window_with_its_age():
    p = path("CERN", "FZK", 1e10, EU_HOPS, (), (), [trace(-120, EU_HOPS, pmtu=1500)])
    hosts = (host("CERN", "c1", mtu=9000), host("FZK", "f1", mtu=9000))
    [f] = mtu_mismatch(ctx(p, hosts=hosts))
    assert f.evidence["path_mtu_bytes"] == 1500
    assert f.evidence["path_mtu_age_s"] == pytest.approx((NOW - at(-120)).total_seconds())


def _long_path(dmin, dmedian):
    """FZK->FNAL-like path whose baseline sat at 145 ms minimum, 149 ms median, steady TCP; owamp every 5 min."""
    base = PathSummary(
        start=T0 - timedelta(days=21),
        end=T0,
        tcp_tests=500,
        tcp_throughput_median_bps=9.2e8,
        tcp_throughput_mad_bps=1e7,
        delay_min_ms=145.0,
        delay_median_ms=149.0,
        traceroute_hops=EU_HOPS,
    )
    tests = every(30, lambda m: tcp(m, 9.2e8, window_bytes=2_450_000, rtt_ms=2 * dmin(m)))
    sessions = every(5, lambda m: owamp(m, dmin(m), delay_median_ms=dmedian(m)))
    return path("FZK", "FNAL", 1e9, EU_HOPS, tests, sessions, [], baseline=base)


def test_a_steady_longer_path_after_its_route_change_left_the_window_is_no_fresh_degradation():
    # the case: 189 vs 149 ms, the route change that explained it now before the window; the path sits on
    # the new level all window long, its queueing unchanged
    findings = run(bundle(_long_path(lambda m: 185.0, lambda m: 189.0)))
    assert not find(findings, codes.UNEXPLAINED_DEGRADATION)


def test_queueing_on_the_old_path_is_still_an_unexplained_delay_degradation():
    # the minimum stays at 145 ms while the median climbs to 189 ms: a standing queue, not a longer path
    findings = run(bundle(_long_path(lambda m: 145.2, lambda m: 189.0)))
    [f] = find(findings, codes.UNEXPLAINED_DEGRADATION)
    assert f.evidence["delay"]["now_ms"] == pytest.approx(189.0)


def test_a_delay_step_inside_the_window_without_an_explanation_is_still_judged():
    # a step in the window is not a steady level: DELAY_LEVEL_SHIFT reports it (no traceroute) and explains it
    findings = run(bundle(_long_path(lambda m: 185.0 if m >= 120 else 145.2, lambda m: 189.0 if m >= 120 else 149)))
    assert find(findings, codes.DELAY_LEVEL_SHIFT)
    assert not find(findings, codes.UNEXPLAINED_DEGRADATION)
