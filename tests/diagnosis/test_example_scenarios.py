"""The example scenarios of scenarios/examples/ (``EXAMPLES``) meet their `expect` blocks on production's road.

Each file is replayed by `manage.py replay --json --check` (the periodic cycle over its timeline at its own test
interval); the details an engineer reads on the finding come from the same JSON.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.replays import corpus_replay

EXAMPLES = Path(__file__).resolve().parents[3] / "shared" / "scenarios" / "examples"
FILES = sorted(EXAMPLES.glob("*.yaml"))

pytestmark = [
    pytest.mark.skipif(not FILES, reason=f"no example scenarios under {EXAMPLES}"),
    pytest.mark.django_db,
]


def replayed(name: str) -> list[dict]:
    code, out, err = corpus_replay(EXAMPLES / f"{name}.yaml")
    assert code == 0 and "check passed" in err, f"{err}\n{out}"
    return json.loads(out)["findings"]


def find(findings: list[dict], code: str, **subject) -> list[dict]:
    return [f for f in findings if f["code"] == code and all(f["subject"].get(k) == v for k, v in subject.items())]


@pytest.mark.parametrize("name", [f.stem for f in FILES])
def test_expectations_hold(name):
    assert replayed(name)


def test_reverse_path_loss_details():
    findings = replayed("reverse-path-loss-fzk")
    (asym,) = find(findings, "ASYMMETRIC_PATH", src="FZK", dst="CERN")
    assert asym["severity"] == "critical"
    ratio = asym["evidence"]["throughput_bps"] / asym["evidence"]["reverse_throughput_bps"]
    assert 0.02 < ratio < 0.04  # ~25 Mb/s against ~886 Mb/s
    # the good direction's retransmits are recognised as ACK loss on the bad one, not as its own problem
    assert "spurious retransmissions" in asym["explanation"]
    assert not find(findings, "ASYMMETRIC_PATH", src="CERN", dst="FZK")
    assert not find(findings, "LOSS_LIMITED", src="CERN", dst="FZK")
    # IN2P3 is healthy and clears geant-gva / cern-border, which it crosses in the same direction
    suspects = {f["subject"]["equipment"]: f for f in find(findings, "SHARED_EQUIPMENT_SUSPECT")}
    assert suspects["geant-fra"]["rank"] == 1
    assert "IN2P3->CERN" in suspects["geant-gva"]["evidence"]["healthy_same_direction"]
    assert not find(findings, "UNEXPLAINED_DEGRADATION")
    for f in findings:
        if "src" in f["subject"]:
            assert f["evidence"]["derived"]["bdp_bytes"]
            assert "BDP" in f["explanation"]


def test_window_limited_details():
    findings = replayed("window-limited-asgc")
    (w,) = find(findings, "WINDOW_LIMITED", src="CERN", dst="ASGC")
    assert w["evidence"]["window_limited_rate_bps"] == pytest.approx(4 * 2**20 * 8 / 0.298, rel=1e-3)
    assert w["evidence"]["recommended_window_bytes"] == pytest.approx(2 * 1e9 * 0.298 / 8)
    assert "net.core.rmem_max = 75497472" in w["evidence"]["sysctl"]
    (tuning,) = find(findings, "HOST_TCP_TUNING", site="ASGC")
    assert "net.ipv4.tcp_wmem = 4096 65536 75497472" in tuning["evidence"]["sysctl"]
    assert "WINDOW_LIMITED on" in tuning["explanation"]
    assert not find(findings, "WINDOW_LIMITED", src="CERN", dst="FZK")
