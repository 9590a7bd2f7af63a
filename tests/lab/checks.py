"""The lab's honesty checks, asserted by every lab test before anything about the diagnosis (docs/lab.md)."""

from __future__ import annotations

from tests.lab.scenarios import Scenario

RETRANS_SLACK = 30  # retransmissions a sender may add without a drop: tail-loss probes, a spurious RTO


def assert_honest(outcome) -> None:
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
