"""The case studies on real packets: Linux TCP across an emulated WAN, real agents, the real centre, the diagnosis.

Per scenario (:mod:`tests.lab.scenarios`) two namespaces are joined by the user-space emulator
(:mod:`tests.lab.emulator`); the site agents run nuttcp and TWAMP-light across it and poll the emulated router over
SNMP, uploading over HTTPS to gunicorn on loopback (a Celery worker computes the rates); then the diagnosis runs
on what the centre stored. Every test first proves the lab honest -- the TUN devices dropped nothing, and the
senders' retransmissions match the emulator's own drops -- then checks the physics and the finding.

Runs as root with /dev/net/tun (``scripts/test`` includes it); skipped with the reason otherwise.
"""

from __future__ import annotations

import os
import statistics

import pytest

from tests.lab import netns
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
RETRANS_SLACK = 30  # retransmissions a sender may add without a drop: tail-loss probes, a spurious RTO


@pytest.fixture(scope="module")
def centre(django_db_setup, django_db_blocker, tmp_path_factory):
    """gunicorn over HTTPS and a Celery worker on the test database (the e2e harness' pieces)."""
    from tests.agents.conftest import issue_server_certificate, make_ca
    from tests.e2e.chain_harness import Centre, Worker, database_url_for_subprocesses, private_redis_url
    from tests.lab.harness import leftover_namespaces

    for leftover in leftover_namespaces():
        netns.delete(leftover)
    work = tmp_path_factory.mktemp("lab")
    os.chmod(work, 0o755)
    ca = make_ca("lab test CA")
    ca_file = ca.write(work / "ca.pem")
    certificate, key = issue_server_certificate(ca, work, stem="centre")
    started = []
    with django_db_blocker.unblock():
        env = {k: v for k, v in os.environ.items() if k not in ("CELERY_BROKER_URL", "CELERY_RESULT_BACKEND")}
        env.update(DATABASE_URL=database_url_for_subprocesses(), REDIS_URL=private_redis_url(12),
                   WANMON_LOG_LEVEL="WARNING")  # fmt: skip
        try:
            server = Centre(certificate=certificate, key=key, ca_file=ca_file, env=env, log_dir=work)
            started.append(server)
            worker = Worker(env=env, log_dir=work)
            started.append(worker)
            server.wait_ready()
            worker.wait_ready()
            yield {"url": server.url, "ca_file": ca_file, "work": work}
        finally:
            for part in reversed(started):
                part.stop()


def _run(centre, name: str):
    from tests.lab.runner import run_scenario

    s = SCENARIOS[name]
    outcome = run_scenario(s, centre["work"] / s.code.lower(), centre_url=centre["url"], ca_file=centre["ca_file"])
    print(f"\n{outcome.report()}")  # noqa: T201 - the figures the lab note quotes
    _assert_honest(outcome)
    return outcome


def _assert_honest(outcome) -> None:
    """The emulator, not the host, decided every drop; each dropped TCP segment shows as a retransmission."""
    from tests.lab.harness import RUN_PREFIX

    s: Scenario = outcome.scenario
    m = outcome.measured
    assert m.agent_errors == [], "\n".join(m.agent_errors[:5])
    assert m.tx_dropped and all(v == 0 for v in m.tx_dropped.values()), f"TUN devices dropped packets: {m.tx_dropped}"
    assert m.emulator["write_errors"] == 0 and m.emulator["snmp_errors"] == 0
    # UDP lost by a receiving host's socket buffer would pass for path loss
    assert all(v == 0 for v in m.udp_receive_errors.values()), f"hosts dropped UDP: {m.udp_receive_errors}"
    expected_cc = s.congestion_control
    assert set(m.congestion_control.values()) == {expected_cc}, m.congestion_control
    for key, sender in (("a_to_b", "a"), ("b_to_a", "b")):
        drops = m.emulator[key]["tcp_data_drops"]
        retrans = m.retrans[f"{RUN_PREFIX}{s.code.lower()}-{sender}"]
        assert drops <= retrans <= 2 * drops + RETRANS_SLACK, (
            f"{key}: the emulator dropped {drops} TCP segments with payload, the sender retransmitted {retrans}"
        )
    # nothing the scenario did not ask for: every drop has the cause the scenario configured
    for key, imp in (("a_to_b", s.a_to_b), ("b_to_a", s.b_to_a)):
        drops = m.emulator[key]["drops"]
        allowed = {
            "random": imp.loss > 0, "periodic": bool(imp.periodic_every_s), "burst": imp.burst_enter > 0,
            "queue": bool(imp.rate_bps), "errors": imp.error_rate > 0, "mtu": imp.mtu is not None,
        }  # fmt: skip
        assert {cause for cause, n in drops.items() if n} <= {c for c, ok in allowed.items() if ok}, (key, drops)
    assert all(not t.error for t in outcome.tests), [t.error for t in outcome.tests if t.error]


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
