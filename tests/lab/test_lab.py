"""The case studies on real packets: Linux TCP across an emulated WAN, real agents, the real centre, the diagnosis.

Per scenario (:mod:`tests.lab.scenarios`) two namespaces are joined by the user-space emulator
(:mod:`tests.lab.emulator`); the site agents run nuttcp and TWAMP-light across it and poll the emulated router over
SNMP, uploading over HTTPS to gunicorn on loopback (a Celery worker computes the rates); then the diagnosis runs
on what the centre stored. Every test first proves the lab honest -- the TUN devices dropped nothing, and the
senders' retransmissions match the emulator's own drops -- then checks the physics and the finding.

Runs as root with /dev/net/tun (``scripts/test`` includes it); skipped with the reason otherwise.
"""

from __future__ import annotations

import statistics

import pytest

from tests.lab import netns
from tests.lab.checks import assert_honest
from tests.lab.scenarios import MSS_BYTES, SCENARIOS, Scenario, predicted_bps
from tests.scenarios.noise import physics

pytest.importorskip("aiosmtpd", reason="the e2e harness (dev extra) is needed")
_UNAVAILABLE = netns.unavailable_reason()
if _UNAVAILABLE:
    pytest.skip(f"lab: {_UNAVAILABLE}", allow_module_level=True)

# transaction=True: the test body writes the inventory in autocommit, so gunicorn sees it; the tables are
# emptied after each test (the scenarios share nothing).
pytestmark = [pytest.mark.lab, pytest.mark.django_db(transaction=True), pytest.mark.timeout(600)]

WARNING_OR_WORSE = ("warning", "critical")


def _run(centre, name: str):
    from tests.lab.runner import run_scenario

    s = SCENARIOS[name]
    outcome = run_scenario(s, centre["work"] / s.code.lower(), centre_url=centre["url"], ca_file=centre["ca_file"])
    print(f"\n{outcome.report()}")  # noqa: T201 - the figures the lab note quotes
    assert_honest(outcome)
    return outcome


def _path(s: Scenario, direction: str) -> dict[str, str]:
    src, dst = (s.site_a, s.site_b) if direction == "A->B" else (s.site_b, s.site_a)
    return {"src": src, "dst": dst}


def _found_about(outcome, code: str, subject: dict):
    """The one finding of ``code``, which must be about ``subject`` (the report says what was found instead)."""
    found = outcome.findings_with(code)
    assert [dict(f.subject) for f in found] == [subject], outcome.report()
    return found[0]


def _severe(outcome) -> list:
    return [f for f in outcome.findings if f.severity in WARNING_OR_WORSE]


def test_window_limited(centre):
    outcome = _run(centre, "WINDOW_LIMITED")
    s = outcome.scenario
    rates = outcome.tcp_bps()
    assert len(rates) >= 2, outcome.tests
    limit = predicted_bps(s)
    assert abs(statistics.median(rates) / limit - 1) <= 0.2, f"{rates} vs W*8/RTT {limit}"
    _found_about(outcome, "WINDOW_LIMITED", _path(s, "A->B"))


def test_loss_limited(centre):
    outcome = _run(centre, "LOSS_LIMITED")
    s = outcome.scenario
    rates = outcome.tcp_bps()
    assert len(rates) >= 2, outcome.tests
    assert outcome.measured.emulator["a_to_b"]["drops"]["random"] > 0
    evidence = _found_about(outcome, "LOSS_LIMITED", _path(s, "A->B")).evidence
    # the stated band: between a quarter of the conservative figure (C=0.7) and 1.5 x Reno's (C=1.22)
    thr, p = evidence["throughput_median_bps"], evidence["loss_fraction"]
    assert 0.25 * evidence["mathis_conservative_bps"] <= thr <= 1.5 * evidence["mathis_reno_bps"], evidence
    # and the loss it measured is the one the emulator applied (within a factor of 2)
    assert 0.5 * s.a_to_b.loss <= p <= 2 * s.a_to_b.loss, p
    assert 0.25 * physics.mathis_bps(MSS_BYTES, s.rtt_ms, s.a_to_b.loss, "reno", c=0.7) <= statistics.median(rates)


def test_asymmetric_path(centre):
    outcome = _run(centre, "ASYMMETRIC_PATH")
    s = outcome.scenario
    back, forth = outcome.tcp_bps("B->A"), outcome.tcp_bps("A->B")
    assert back and forth, outcome.tests
    assert statistics.median(back) <= 1.2 * s.b_to_a.rate_bps  # the limit holds
    assert _found_about(outcome, "ASYMMETRIC_PATH", _path(s, "B->A")).severity in WARNING_OR_WORSE


def test_tcp_only_degradation(centre):
    outcome = _run(centre, "TCP_ONLY_DEGRADATION")
    s = outcome.scenario
    udp = [t for t in outcome.tests if t.protocol == "udp" and t.direction == "A->B"]
    assert udp and all(t.packets_lost == 0 for t in udp), udp
    assert outcome.measured.emulator["a_to_b"]["udp_drops"] == 0
    _found_about(outcome, "TCP_ONLY_DEGRADATION", _path(s, "A->B"))


def test_periodic_loss(centre):
    outcome = _run(centre, "PERIODIC_LOSS")
    s = outcome.scenario
    found = [f for f in outcome.findings_with("PERIODIC_LOSS") if "src" in f.subject]
    assert [dict(f.subject) for f in found] == [_path(s, "A->B")], outcome.report()
    period = found[0].evidence["period_s"]
    assert abs(period - s.extra["period_s"]) <= 0.1 * s.extra["period_s"], period


def test_interface_errors(centre):
    outcome = _run(centre, "INTERFACE_ERRORS")
    s = outcome.scenario
    injected = outcome.measured.emulator["a_to_b"]["drops"]["errors"]
    assert injected > 0
    _found_about(outcome, "INTERFACE_ERRORS", {"equipment": s.router, "interface": "to-a"})


def test_clean_path_has_no_warning(centre):
    outcome = _run(centre, "CLEAN")
    s = outcome.scenario
    rates = outcome.tcp_bps()
    assert rates, outcome.tests
    assert outcome.measured.emulator["a_to_b"]["dropped"] == 0
    assert _severe(outcome) == [], outcome.report()
    assert statistics.median(rates) >= 0.5 * s.capacity_mbps * 1e6
