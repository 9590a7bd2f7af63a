"""Baselines learned from a path's history: degraded and maintenance periods left out, a time-of-day level only
where the data shows one."""

from __future__ import annotations

import random
from datetime import timedelta

from tests.diagnosis.builders import T0, at, bundle, every, path, tcp
from wanmon.diagnosis.assessment import assess_path
from wanmon.diagnosis.baseline import learn_level, level_at
from wanmon.diagnosis.evidence import summarise_path

HOPS = ("cern-border", "geant-gva", "pic-border")
DAY_MIN = 1440


def history(days: int, rate_at, step_min: int = 240, seed: int = 1):
    """Host-limited results every ``step_min`` over ``days`` days before T0: +-12 % run to run."""
    rng = random.Random(seed)
    return [tcp(m, rate_at(m) * rng.uniform(0.88, 1.12)) for m in range(-days * DAY_MIN, 0, step_min)]


def test_a_fault_that_lasted_a_week_does_not_become_the_new_normal():
    # given 21 days of history at 8 Gb/s of which the last 7 ran 20 % lower (a lasting fault nobody fixed)
    tests = history(21, lambda m: 8e9 if m < -7 * DAY_MIN else 6.4e9)
    baseline = summarise_path(tests, start=T0 - timedelta(days=21), end=T0)
    # then the level is still what the path reaches when healthy, and most of the fault's week is left out (a
    # day whose six results happen to sit high is not told from a healthy one)
    assert abs(baseline.tcp_throughput_median_bps - 8e9) < 0.03 * 8e9
    assert baseline.tcp_excluded_tests >= 0.6 * 7 * 6
    # and the path still at 6.4 Gb/s today is a degradation against it
    p = path("PIC", "FZK", 10e9, HOPS, every(60, lambda m: tcp(m, 6.4e9), end=2 * DAY_MIN), baseline=baseline)
    assert assess_path(p, bundle(p), at(2 * DAY_MIN)).episodes


def test_the_same_week_as_the_whole_history_would_have_been_the_normal():
    # the contrast: a baseline of only that week learns the fault's level (why the history is three weeks)
    tests = history(7, lambda m: 6.4e9)
    baseline = summarise_path(tests, start=T0 - timedelta(days=7), end=T0)
    assert abs(baseline.tcp_throughput_median_bps - 6.4e9) < 0.03 * 6.4e9


def test_maintenance_periods_are_left_out_of_the_baseline():
    # given a history with an 8-hour window of work during which the path ran at 1 Gb/s
    work = (T0 - timedelta(days=3), T0 - timedelta(days=3) + timedelta(hours=8))
    tests = history(10, lambda m: 1e9 if work[0] <= at(m) <= work[1] else 8e9, step_min=60)
    learned = learn_level(((t.time, t.throughput_bps) for t in tests), excluded=(work,))
    inside = sum(1 for t in tests if work[0] <= t.time <= work[1])
    # then none of the work's results is in the level, and the level is the path's own
    assert inside >= 8 and learned.excluded == inside
    assert min(learned.rates_bps) > 0.85 * 8e9


def test_a_diurnal_level_is_learned_where_the_history_shows_it():
    # given a shared path that runs 35 % slower from 12 to 18 UTC every day (diurnal load), tested hourly
    def rate(m):
        return 5.2e9 if 12 <= at(m).hour < 18 else 8e9

    tests = history(21, rate, step_min=60)
    baseline = summarise_path(tests, start=T0 - timedelta(days=21), end=T0)
    afternoon = T0.replace(hour=15) + timedelta(days=1)
    night = T0.replace(hour=3) + timedelta(days=1)
    # then an afternoon result is judged against the afternoon level, a night one against the median
    assert abs(baseline.tcp_reference_at(afternoon) - 5.2e9) < 0.06 * 5.2e9
    assert baseline.tcp_reference_at(night) == baseline.tcp_throughput_median_bps
    # and a day of ordinary afternoons and nights is no degradation
    p = path("CERN", "PIC", 10e9, HOPS, every(60, lambda m: tcp(m, rate(m)), end=DAY_MIN), baseline=baseline)
    assert assess_path(p, bundle(p), at(DAY_MIN)).episodes == ()


def test_noise_alone_makes_no_time_of_day_level():
    # given 21 days of +-12 % noise around a flat 8 Gb/s
    tests = history(21, lambda m: 8e9, step_min=60, seed=3)
    learned = learn_level((t.time, t.throughput_bps) for t in tests)
    # then no hour differs significantly from the median (the chance spread of 21 results per hour does not)
    assert learned.by_hour_of_day == ()
    assert level_at(learned, T0) == learned.median_bps
