"""Diagnosis-driven tests, pure: which test each finding asks for, and each verdict confirmed and refuted from the
numbers a test brings back (wanmon/ondemand/probes.py)."""

from __future__ import annotations

import pytest

from wanmon.diagnosis import physics
from wanmon.ondemand.probes import Verdict, probe_requests, probe_verdict

PATH = {"src": "CERN", "dst": "FZK"}
DERIVED = {"rtt_ms": 20.0, "mss_bytes": 1448}

TCP_ONLY = {"slow_throughput_median_bps": 4.4e6, "predicted_bps": 100e6, "derived": DERIVED}
WINDOW = {"throughput_median_bps": 5.2e6, "window_limited_rate_bps": 5.24e6, "streams": 1, "rtt_ms": 100.0,
          "capacity_bps": 100e6}  # fmt: skip
MTU = {"endpoint_mtu": 9000, "path_mtu_bytes": 1500}
ASYM = {"throughput_bps": 0.285e6, "reverse_throughput_bps": 12e6}
TRUNK = {"host_splits": [{"path": "CERN->RAL", "address_field": "dst_host", "slow_hosts": ["10.0.0.3"],
                          "fast_hosts": ["10.0.0.2"]}]}  # fmt: skip


def _udp(sent: int, lost: int, rate: float = 8.8e6) -> dict:
    return {"type": "throughput", "protocol": "udp", "offered_bps": rate, "throughput_bps": rate,
            "packets_sent": sent, "packets_lost": lost}  # fmt: skip


def test_each_code_asks_for_the_test_that_separates_its_explanations():
    (udp,) = probe_requests("TCP_ONLY_DEGRADATION", PATH, TCP_ONLY, duration_s=5)
    # UDP in the same direction at twice what TCP reached (the rule's own comparable rate)
    assert (udp.kind, udp.protocol, udp.src, udp.dst, udp.rate_bps, udp.duration_s) == (
        "throughput", "udp", "CERN", "FZK", 8_800_000, 5,
    )  # fmt: skip
    (par,) = probe_requests("WINDOW_LIMITED", PATH, WINDOW)
    assert (par.kind, par.protocol, par.streams, par.key) == ("throughput", "tcp", 4, "parallel_streams")
    (trace,) = probe_requests("MTU_MISMATCH", PATH, MTU)
    assert (trace.kind, trace.src, trace.dst) == ("tracepath", "CERN", "FZK")
    (rev,) = probe_requests("ASYMMETRIC_PATH", PATH, ASYM)
    assert (rev.kind, rev.src, rev.dst) == ("throughput", "FZK", "CERN")  # the reverse of the finding's direction
    per_host = probe_requests("TRUNK_IMBALANCE", {"trunk": "cern-ral-lag"}, TRUNK)
    assert [(p.src, p.dst, p.host, p.key) for p in per_host] == [
        ("CERN", "RAL", "10.0.0.2", "per_address:CERN->RAL:10.0.0.2"),
        ("CERN", "RAL", "10.0.0.3", "per_address:CERN->RAL:10.0.0.3"),
    ]
    # nothing for other codes, nor when the window is Linux's cap (the advice is already parallel streams)
    assert probe_requests("LOSS_LIMITED", PATH, {}) == []
    assert probe_requests("WINDOW_LIMITED", PATH, {**WINDOW, "at_linux_cap": True}) == []


def test_tcp_only_confirmed_by_clean_udp_at_the_tcp_rate():
    v = probe_verdict("TCP_ONLY_DEGRADATION", TCP_ONLY, [_udp(7333, 0)])
    assert v.verdict == Verdict.CONFIRMED
    # the loss that would hold TCP to 4.4 Mb/s at 20 ms is 0.85 %: 7333 packets would have lost ~62
    assert v.figures["loss_that_explains_tcp"] == pytest.approx(physics.loss_for_rate(4.4e6, 1448, 20.0))
    assert v.figures["loss_that_explains_tcp"] == pytest.approx(0.00849, rel=0.01)
    assert v.line == "UDP at 8.8 Mb/s clean -> TCP-only confirmed"


def test_tcp_only_refuted_by_udp_loss_and_the_loss_is_recorded():
    v = probe_verdict("TCP_ONLY_DEGRADATION", TCP_ONLY, [_udp(7333, 147)])  # 2 % loss
    assert v.verdict == Verdict.REFUTED
    assert v.figures["loss_fraction"] == pytest.approx(147 / 7333)
    assert "lost 147 of 7333 packets (2.00%)" in v.reason and "it is loss" in v.reason
    assert v.line == "UDP at 8.8 Mb/s lost 2.00% -> loss, TCP-only refuted"


def test_tcp_only_inconclusive_when_too_few_packets_to_see_the_loss():
    slow = {**TCP_ONLY, "slow_throughput_median_bps": 400e6, "derived": {"rtt_ms": 2.0, "mss_bytes": 1448}}
    v = probe_verdict("TCP_ONLY_DEGRADATION", slow, [_udp(500, 0, rate=800e6)])
    assert v.verdict == Verdict.INCONCLUSIVE and "too few" in v.reason


def test_window_limited_confirmed_by_n_fold_streams_and_refuted_by_no_gain():
    four = {"type": "throughput", "protocol": "tcp", "streams": 4, "throughput_bps": 20.1e6}
    v = probe_verdict("WINDOW_LIMITED", WINDOW, [four])
    assert v.verdict == Verdict.CONFIRMED
    assert v.figures["window_limit_bps"] == pytest.approx(4 * 5.24e6)
    assert v.figures["gain"] == pytest.approx(20.1 / 5.2)
    flat = probe_verdict("WINDOW_LIMITED", WINDOW, [{**four, "throughput_bps": 6.0e6}])
    assert flat.verdict == Verdict.REFUTED and "no gain" in flat.line
    # more than one stream but far from N x W*8/RTT: window and something else
    partly = probe_verdict("WINDOW_LIMITED", WINDOW, [{**four, "throughput_bps": 11e6}])
    assert partly.verdict == Verdict.INCONCLUSIVE


def test_mtu_confirmed_and_refuted_by_the_path_mtu_tracepath_reports():
    assert probe_verdict("MTU_MISMATCH", MTU, [{"type": "traceroute", "pmtu_bytes": 1500}]).verdict == Verdict.CONFIRMED
    v = probe_verdict("MTU_MISMATCH", MTU, [{"type": "traceroute", "pmtu_bytes": 9000}])
    assert v.verdict == Verdict.REFUTED and v.figures == {"path_mtu_bytes": 9000, "endpoint_mtu_bytes": 9000}
    assert probe_verdict("MTU_MISMATCH", MTU, [{"type": "traceroute", "hops": []}]).verdict == Verdict.INCONCLUSIVE


def test_asymmetry_confirmed_by_a_fast_reverse_and_refuted_by_a_slow_one():
    fast = probe_verdict("ASYMMETRIC_PATH", ASYM, [{"throughput_bps": 11.5e6}])
    assert fast.verdict == Verdict.CONFIRMED and fast.figures["ratio"] == pytest.approx(0.285 / 11.5)
    slow = probe_verdict("ASYMMETRIC_PATH", ASYM, [{"throughput_bps": 0.3e6}])
    assert slow.verdict == Verdict.REFUTED and "both directions" in slow.reason


def test_trunk_confirmed_by_a_split_by_address_and_refuted_without_one():
    split = [{"dst_host": "10.0.0.2", "throughput_bps": 900e6}, {"dst_host": "10.0.0.3", "throughput_bps": 120e6}]
    v = probe_verdict("TRUNK_IMBALANCE", TRUNK, split)
    assert v.verdict == Verdict.CONFIRMED and v.figures["odd_bps"] == 120e6 and v.figures["even_bps"] == 900e6
    even = [{"dst_host": "10.0.0.2", "throughput_bps": 900e6}, {"dst_host": "10.0.0.3", "throughput_bps": 850e6}]
    assert probe_verdict("TRUNK_IMBALANCE", TRUNK, even).verdict == Verdict.REFUTED
    assert probe_verdict("TRUNK_IMBALANCE", TRUNK, split[:1]).verdict == Verdict.INCONCLUSIVE


def test_a_failed_test_is_inconclusive_with_its_error():
    v = probe_verdict("WINDOW_LIMITED", WINDOW, [{"error": "nuttcp: connection refused"}])
    assert (v.verdict, v.reason) == (Verdict.INCONCLUSIVE, "the test failed: nuttcp: connection refused")
