"""The example scenarios of scenarios/examples/, loaded straight from YAML, must meet their `expect` blocks."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.diagnosis.builders import find
from tests.diagnosis.scenario_loader import load_scenario
from wanmon.diagnosis import codes
from wanmon.diagnosis.engine import diagnose
from wanmon.diagnosis.replay import expect_check

EXAMPLES = Path(__file__).resolve().parents[3] / "shared" / "scenarios" / "examples"
FILES = sorted(EXAMPLES.glob("*.yaml"))

pytestmark = pytest.mark.skipif(not FILES, reason=f"no example scenarios under {EXAMPLES}")


@pytest.fixture(scope="module")
def results():
    out = {}
    for f in FILES:
        s = load_scenario(f)
        out[s.name] = (s, diagnose(s.bundle, s.now))
    return out


@pytest.mark.parametrize("name", [f.stem for f in FILES])
def test_expectations_hold(results, name):
    scenario, findings = results[name]
    assert scenario.expect, "example without an expect block"
    assert expect_check(findings, scenario.expect) == []


def test_reverse_path_loss_details(results):
    _, findings = results["reverse-path-loss-fzk"]
    asym = find(findings, codes.ASYMMETRIC_PATH, src="FZK", dst="CERN")[0]
    assert asym.severity == codes.CRITICAL
    ratio = asym.evidence["throughput_bps"] / asym.evidence["reverse_throughput_bps"]
    assert 0.02 < ratio < 0.04  # ~25 Mb/s against ~886 Mb/s
    # the good direction's retransmits are recognised as ACK loss on the bad one, not as its own problem
    assert "spurious retransmissions" in asym.explanation
    assert not find(findings, codes.ASYMMETRIC_PATH, src="CERN", dst="FZK")
    assert not find(findings, codes.LOSS_LIMITED, src="CERN", dst="FZK")
    # IN2P3 is healthy and clears geant-gva / cern-border, which it crosses in the same direction
    suspects = {f.subject["equipment"]: f for f in find(findings, codes.SHARED_EQUIPMENT_SUSPECT)}
    assert suspects["geant-fra"].rank == 1
    assert "IN2P3->CERN" in suspects["geant-gva"].evidence["healthy_same_direction"]
    assert codes.UNEXPLAINED_DEGRADATION not in {f.code for f in findings}
    for f in findings:
        if "src" in f.subject:
            assert f.derived is not None and f.derived.bdp_bytes
            assert "BDP" in f.explanation


def test_window_limited_details(results):
    _, findings = results["window-limited-asgc"]
    w = find(findings, codes.WINDOW_LIMITED, src="CERN", dst="ASGC")[0]
    assert w.evidence["window_limited_rate_bps"] == pytest.approx(4 * 2**20 * 8 / 0.298, rel=1e-3)
    assert w.evidence["recommended_window_bytes"] == pytest.approx(2 * 1e9 * 0.298 / 8)
    assert "net.core.rmem_max = 75497472" in w.evidence["sysctl"]
    tuning = find(findings, codes.HOST_TCP_TUNING, site="ASGC")[0]
    assert "net.ipv4.tcp_wmem = 4096 65536 75497472" in tuning.evidence["sysctl"]
    assert "WINDOW_LIMITED on" in tuning.explanation
    assert not find(findings, codes.WINDOW_LIMITED, src="CERN", dst="FZK")
