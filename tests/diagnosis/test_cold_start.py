"""Short histories: a baseline's days are whole diurnal cycles, a slight drop is judged on half a day of results
(longer than the window), and a path with little history is judged only on absolute evidence, its history's age
and size in the evidence."""

from __future__ import annotations

import random
from datetime import timedelta

from tests.diagnosis.builders import EU_HOPS, T0, at, bundle, every, tcp
from wanmon.diagnosis import codes
from wanmon.diagnosis.assessment import assess_path
from wanmon.diagnosis.baseline import history_days, learn_level
from wanmon.diagnosis.engine import diagnose
from wanmon.diagnosis.evidence import PathEvidence, summarise_path

HOUR = 60


def test_a_night_fragment_does_not_set_the_level_of_a_short_history():
    # given a history that starts at 22:00 (two night hours at 9.4 Gb/s) and then one whole day whose 16 daytime
    # hours run at 7 Gb/s (a shared 10G link's diurnal load), a result every 30 min
    start = T0.replace(hour=22)  # 22:00, two hours before midnight
    results = []
    for half_hours in range(52):
        t = start + timedelta(minutes=30 * half_hours)
        results.append((t, 7.0e9 if 6 <= t.hour < 22 else 9.4e9))
    level = learn_level(results, end=start + timedelta(hours=26))
    # then the level is that of the whole day with its afternoon, not the night fragment's (calendar days made
    # the fragment the "good day" and left the whole day out as degraded)
    assert level.excluded == 0
    assert level.median_bps == 7.0e9


def test_the_days_of_a_history_are_24_hours_counted_back_from_its_end():
    end = T0
    times = [end - timedelta(hours=h) for h in (1, 23, 25, 47, 49, 60)]
    # 0-24 h before the end is day 0, 24-48 h day 1, and the partial day beyond joins day 1
    assert history_days(times, end) == [0, 0, 1, 1, 1, 1]
    # a history shorter than a day is one day
    assert history_days([end - timedelta(hours=h) for h in (1, 10, 20)], end) == [0, 0, 0]


def _host_limited(minute: float, level: float, rng: random.Random):
    """A host-limited single stream: uniform in 72-100 % of the host's level (docs: 20-30 % run to run)."""
    return tcp(minute, level * rng.uniform(0.72, 1.0), retransmits=None)


def _path_with_history(rates_at, now_min: float, history_h: float = 48, seed: int = 1) -> tuple[PathEvidence, object]:
    """A path with hourly results from ``history_h`` hours before T0 to ``now_min``, ``rates_at(minute)`` the host
    level; as production sees it at ``now_min``: the 6 h window, the day before it, the baseline before that."""
    rng = random.Random(seed)
    tests = [_host_limited(m, rates_at(m), rng) for m in range(-int(history_h * HOUR), int(now_min) + 1, HOUR)]
    now, window_start = at(now_min), at(now_min - 6 * HOUR)
    baseline = summarise_path(tests, start=window_start - timedelta(days=21), end=window_start)
    earlier = tuple((t.time, t.throughput_bps) for t in tests if now - timedelta(days=1) <= t.time < window_start)
    window = tuple(t for t in tests if window_start <= t.time <= now)
    p = PathEvidence("PIC", "FZK", 100e9, EU_HOPS, window, baseline=baseline, earlier_tcp_results=earlier)
    return p, bundle(p, window_start=window_start)


def test_a_slight_drop_is_a_degradation_once_it_has_lasted_half_a_day():
    # given a host-limited path at 35 Gb/s (+-14 % run to run) that carries 20 % less from T0 on
    def rate(m):
        return 35e9 * (0.8 if m >= 0 else 1.0)

    # when production looks 6 h and 14 h into the drop (its window is 6 h long; hourly tests)
    early_p, early_b = _path_with_history(rate, 6 * HOUR)
    late_p, late_b = _path_with_history(rate, 14 * HOUR)
    # then after 6 h it is not yet a degradation (a daytime dip looks the same), within two test intervals of
    # the half day the drop must last (SLIGHT_DROP_MIN_SPAN_S) it is, and the episode starts before the window
    # (8 h into the drop), where the results began to lie low
    assert not assess_path(early_p, early_b, at(6 * HOUR)).episodes
    [ep] = assess_path(late_p, late_b, at(14 * HOUR)).episodes
    assert ep.start < at(8 * HOUR)
    assert any("in both halves" in o.reason for o in ep.observations)


def test_a_dip_of_a_few_hours_is_not_a_lasting_drop():
    # given the same path 30 % slower for five hours only, 12 hours ago to 7 hours ago
    def rate(m):
        return 35e9 * (0.7 if 0 <= m < 5 * HOUR else 1.0)

    p, b = _path_with_history(rate, 12 * HOUR)
    # then nothing lasting is found in its window
    assert not assess_path(p, b, at(12 * HOUR)).episodes


def _new_path(window_rates, history_rates=(9.0e9, 9.2e9, 9.1e9, 9.3e9, 8.9e9, 9.2e9)) -> PathEvidence:
    """A path whose whole history is six results of the last hours before the window (a new path)."""
    history = [tcp(-60 * (len(history_rates) - i), r) for i, r in enumerate(history_rates)]
    window = every(30, lambda m: tcp(m, window_rates(m)), end=360)
    baseline = summarise_path(history, start=at(-24 * 60), end=T0)
    return PathEvidence("CERN", "FZK", 10e9, EU_HOPS, tuple(window), baseline=baseline)


def test_a_path_with_little_history_is_not_judged_against_it():
    # given a new path (six results of history) whose tests then run 35 % lower for three hours
    p = _new_path(lambda m: 5.9e9 if m >= 180 else 9.1e9)
    found = diagnose(bundle(p), at(360))
    # then nothing relative to its short past is reported above info
    assert not [f for f in found if f.severity != codes.INFO], [f.summary for f in found]


def test_a_collapse_on_a_path_with_little_history_is_still_found_with_the_history_in_its_evidence():
    # given the same new path collapsing to 0.5 Gb/s (below a quarter of anything it ever did)
    p = _new_path(lambda m: 0.5e9 if m >= 180 else 9.1e9)
    found = diagnose(bundle(p), at(360))
    # then the collapse is reported, and the evidence says how little history it was judged against
    [f] = [f for f in found if f.code == codes.UNEXPLAINED_DEGRADATION]
    assert f.severity != codes.INFO
    history = f.evidence["history"]
    assert history["results"] == 6 and history["little"] is True
    assert history["span_s"] == 5 * 3600
    assert "learned from 6 results over 5 h" in f.explanation


def test_a_throughput_asymmetry_between_new_paths_needs_a_collapse():
    # given two new directions, no history yet, whose hosts differ (the reverse host is four times faster)
    def direction(src, dst, hops, rate):
        return PathEvidence(src, dst, 10e9, hops, tuple(every(30, lambda m: tcp(m, rate), end=360)))

    back = direction("FZK", "CERN", tuple(reversed(EU_HOPS)), 9.1e9)
    found = diagnose(bundle(direction("CERN", "FZK", EU_HOPS, 2.2e9), back), at(360))
    # then no asymmetry is claimed: 24 % is what two different hosts give, not a fault
    assert codes.ASYMMETRIC_PATH not in {f.code for f in found}
    # while a direction at 4 % of the other is one even without history
    found = diagnose(bundle(direction("CERN", "FZK", EU_HOPS, 0.4e9), back), at(360))
    assert {"src": "CERN", "dst": "FZK"} in [dict(f.subject) for f in found if f.code == codes.ASYMMETRIC_PATH]
