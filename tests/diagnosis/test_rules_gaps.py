"""MEASUREMENT_GAP: the monitoring is blind (tests stopped, or failing while the path carries traffic)."""

from __future__ import annotations

from tests.diagnosis.builders import EU_HOPS, at, bundle, every, failed, healthy_eu, owamp, path, run, tcp
from wanmon.diagnosis import codes
from wanmon.diagnosis.evidence import PathSummary


def _tcp(m):
    return tcp(m, 9.2e8, window_bytes=2_450_000, rtt_ms=9.8)


def test_tests_refused_in_a_row_while_owamp_gets_through_are_a_measurement_gap_not_an_outage():
    tests = every(30, lambda m: failed(m, "server busy") if 240 <= m <= 300 else _tcp(m))
    findings = run(bundle(path("CERN", "FZK", 1e9, EU_HOPS, tests, every(5, lambda m: owamp(m, 4.9)))))
    assert codes.PATH_DOWN not in {f.code for f in findings}
    [g] = [f for f in findings if f.code == codes.MEASUREMENT_GAP]
    assert g.subject == {"src": "CERN", "dst": "FZK"} and g.severity == codes.WARNING
    assert (g.start, g.end) == (at(240), at(300))
    [fail] = g.evidence["failing"]
    assert (fail["failures"], fail["reasons"], fail["carried_by"]) == (3, ["server busy"], ["owamp"])


def test_tests_that_stopped_arriving_are_a_measurement_gap_since_the_last_one():
    tests = every(30, lambda m: _tcp(m) if m <= 180 else None)
    findings = run(bundle(path("CERN", "FZK", 1e9, EU_HOPS, tests, every(5, lambda m: owamp(m, 4.9)))))
    [g] = [f for f in findings if f.code == codes.MEASUREMENT_GAP]
    [stopped] = g.evidence["stopped"]
    assert (stopped["kind"], stopped["last"], stopped["interval_s"]) == ("tcp", at(180), 1800)
    assert g.evidence["still_measured_by"] == ["owamp"]
    assert "not the network" in g.explanation


def test_a_healthy_path_and_a_single_failure_have_no_gap():
    assert codes.MEASUREMENT_GAP not in {f.code for f in run(bundle(healthy_eu()))}
    tests = every(30, lambda m: failed(m) if m == 240 else _tcp(m))
    findings = run(bundle(path("CERN", "FZK", 1e9, EU_HOPS, tests, every(5, lambda m: owamp(m, 4.9)))))
    assert codes.MEASUREMENT_GAP not in {f.code for f in findings}


def test_an_hourly_kind_that_stopped_is_a_gap_when_the_baseline_period_measured_it():
    # owamp every hour until minute 120 of the 6-hour window: three results in it, fewer than GAP_MIN_HISTORY;
    # the baseline period's sessions (its minimum delay) say the kind ran regularly before
    sessions = every(60, lambda m: owamp(m, 4.9) if m <= 120 else None)
    tests = every(120, _tcp)
    base = PathSummary(start=at(-7 * 24 * 60), end=at(0), tcp_tests=84, probe_packets=100_000, delay_min_ms=4.88)
    p = path("CERN", "FZK", 1e9, EU_HOPS, tests, sessions, baseline=base)
    [g] = [f for f in run(bundle(p)) if f.code == codes.MEASUREMENT_GAP]
    [stopped] = g.evidence["stopped"]
    assert (stopped["kind"], stopped["last"]) == ("owamp", at(120))
    # without that history three sessions are no regular series: nothing to miss
    bare = path("CERN", "FZK", 1e9, EU_HOPS, tests, sessions)
    assert codes.MEASUREMENT_GAP not in {f.code for f in run(bundle(bare))}
