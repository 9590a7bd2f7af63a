"""MEASUREMENT_GAP: the monitoring is blind (tests stopped, or failing while the path carries traffic)."""

from __future__ import annotations

from tests.diagnosis.builders import EU_HOPS, at, bundle, every, failed, healthy_eu, owamp, path, run, tcp
from wanmon.diagnosis import codes


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
