"""Persistence and hysteresis of the engine over successive evaluations (the production shape: every
evaluation judges the last 6 hours against the path's baseline).

A finding opens after several consecutive bad results, or one corroborated by another measurement kind; it
stays while its evidence is in the look-back and closes once good results have followed; a path that flaps
between good and bad keeps one finding open instead of opening and closing it with every result.
"""

from __future__ import annotations

from datetime import timedelta

from tests.diagnosis.builders import EU_HOPS, at, bundle, every, failed, owamp, path, tcp
from wanmon.diagnosis import codes
from wanmon.diagnosis.engine import diagnose
from wanmon.diagnosis.evidence import summarise_path

LOOK_BACK = timedelta(hours=6)
LEVEL_BPS = 9.2e8
RTT_MS = 9.8


def steady(m):
    return tcp(m, LEVEL_BPS * (1 + 0.02 * ((m // 30) % 3 - 1)), window_bytes=2_450_000, rtt_ms=RTT_MS)


BASELINE = summarise_path(every(30, lambda m: steady(m), start=-1440, end=-30), start=at(-1440), end=at(-30))


def alarms_over_time(tests, sessions=(), hours: int = 24, step_min: int = 30) -> list[set[tuple]]:
    """Warning/critical findings of each evaluation, every ``step_min`` over ``hours``, each over the last 6 h."""
    out = []
    for minute in range(360, hours * 60 + 1, step_min):
        now = at(minute)
        start = now - LOOK_BACK
        p = path(
            "CERN",
            "FZK",
            1e9,
            EU_HOPS,
            [t for t in tests if start <= t.time <= now],
            [o for o in sessions if start <= o.time <= now],
            baseline=BASELINE,
        )
        found = diagnose(bundle(p, window_start=start), now)
        out.append({(f.code, tuple(sorted(f.subject.items()))) for f in found if f.severity != codes.INFO})
    return out


def openings(states: list[set[tuple]]) -> int:
    """How many times a stored finding would be opened (absent in one evaluation, present in the next)."""
    previous: set[tuple] = set()
    count = 0
    for s in states:
        count += len(s - previous)
        previous = s
    return count


def with_results(bad: dict[int, float]):
    """TCP every 30 min for a day, ``bad`` minutes carrying the given share of the level."""
    return every(
        30,
        lambda m: tcp(m, LEVEL_BPS * bad[m], window_bytes=2_450_000, rtt_ms=RTT_MS) if m in bad else steady(m),
        end=1440,
    )


def test_one_bad_result_opens_nothing_three_in_a_row_do():
    # a busy test host: one result at half the level (seen by every evaluation for 6 hours)
    assert openings(alarms_over_time(with_results({600: 0.5}))) == 0
    # three consecutive results at half the level: a degradation
    states = alarms_over_time(with_results({600: 0.5, 630: 0.5, 660: 0.5}))
    assert openings(states) == 1
    # it is open from the evaluation that saw the third result, not before
    first = next(i for i, s in enumerate(states) if s)
    assert at(360 + 30 * first) >= at(660)


def test_one_failed_test_is_noise_unless_another_measurement_confirms_it():
    tests = every(30, lambda m: failed(m) if m == 600 else steady(m), end=1440)
    clean = every(10, lambda m: owamp(m, 4.9), end=1440)
    assert openings(alarms_over_time(tests, clean)) == 0
    # the owamp sessions around it lost every packet: the path was down
    dark = every(10, lambda m: owamp(m, 4.9, lost=600 if 590 <= m <= 620 else 0), end=1440)
    states = alarms_over_time(tests, dark)
    assert any((codes.PATH_DOWN, (("dst", "FZK"), ("src", "CERN"))) in s for s in states)


def test_a_finding_closes_after_good_results_and_the_look_back_has_passed():
    states = alarms_over_time(with_results({m: 0.3 for m in range(600, 721, 30)}))
    open_at = [i for i, s in enumerate(states) if s]
    # one opening, kept while the bad results are in the look-back, closed by the evaluations after
    assert openings(states) == 1
    last_bad, closed = at(720), at(360 + 30 * (open_at[-1] + 1))
    assert closed - last_bad >= LOOK_BACK - timedelta(minutes=30)
    assert not any(states[open_at[-1] + 1 :])


def test_a_flapping_path_keeps_one_finding_open():
    # every other result at a third of the level for 10 hours: bad, good, bad, good ...
    bad = {m: 0.3 for m in range(480, 1081, 60)}
    states = alarms_over_time(with_results(bad))
    # one finding, open from the start of the flapping to 6 h after its end, never closed and reopened
    assert openings(states) == 1
    open_at = [i for i, s in enumerate(states) if s]
    assert open_at == list(range(open_at[0], open_at[-1] + 1))


def outage(until_min: int, now_min: int):
    """CERN->FZK down from 10:00 to ``until_min`` (TCP fails, owamp loses everything), evaluated at ``now_min``."""
    tests = every(30, lambda m: failed(m) if 240 <= m <= until_min else steady(m), end=now_min)
    sessions = every(10, lambda m: owamp(m, 4.9, lost=600 if 240 <= m <= until_min else 0), end=now_min)
    p = path("CERN", "FZK", 1e9, EU_HOPS, tests, sessions, baseline=BASELINE)
    found = diagnose(bundle(p, window_start=at(now_min - 360)), at(now_min))
    return [f for f in found if f.code == codes.PATH_DOWN]


def test_critical_only_while_traffic_is_hurt():
    # still down at the evaluation: critical
    [down] = outage(until_min=360, now_min=360)
    assert down.severity == codes.CRITICAL
    # down for two hours, healthy results of every kind since: a warning that says so
    [over] = outage(until_min=330, now_min=420)
    assert over.severity == codes.WARNING
    assert "healthy results since" in over.evidence["recovered"]


def test_path_findings_carry_their_confidence():
    [down] = outage(until_min=360, now_min=360)
    c = down.evidence["confidence"]
    # 5 failed tests and 13 dark owamp sessions of 10:00-12:00: two kinds agree
    assert c["level"] == "high"
    assert c["bad_kinds"] == ["owamp", "tcp"]
    assert c["bad_observations"] == 5 + 13
    assert c["observations"] >= c["bad_observations"]
