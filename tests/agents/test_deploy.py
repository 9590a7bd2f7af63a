"""deploy/agent: the systemd unit and the sample configuration a site installs.

The sample must validate with the agent's own loader (and build every collector), and the unit
must run ``wanmon-agent run --config /etc/wanmon-agent/agent.toml`` as an unprivileged user with
the spool as its only writable place, stop gracefully within a timeout longer than the agent's
own shutdown budget, and restart on failure. When systemd's tools are installed the unit is also
checked by ``systemd-analyze verify`` and its exposure score by ``systemd-analyze security``.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agents.adapters import build_collectors
from agents.config import load_config, parse_config
from tests.agents.conftest import ROOT

DEPLOY = ROOT / "deploy" / "agent"
UNIT = DEPLOY / "wanmon-agent.service"
SAMPLE = DEPLOY / "agent.toml.example"


def parse_unit(text: str) -> dict[str, dict[str, list[str]]]:
    """systemd's unit syntax: [Section], Key=value (a key may repeat), # and ; comments."""
    sections: dict[str, dict[str, list[str]]] = {}
    current = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], {})
            continue
        assert current is not None, f"setting outside a section: {raw!r}"
        key, sep, value = line.partition("=")
        assert sep, f"not a Key=value line: {raw!r}"
        current.setdefault(key.strip(), []).append(value.strip())
    return sections


def seconds(value: str) -> float:
    """A systemd time span ("60s", "1min 30s", "90")."""
    units = {"": 1, "s": 1, "sec": 1, "min": 60, "m": 60, "h": 3600, "ms": 0.001}
    total = 0.0
    for number, unit in re.findall(r"(\d+(?:\.\d+)?)\s*([a-z]*)", value):
        total += float(number) * units[unit]
    return total


@pytest.fixture(scope="module")
def unit() -> dict[str, dict[str, list[str]]]:
    return parse_unit(UNIT.read_text())


def one(unit, section: str, key: str) -> str:
    values = unit[section].get(key)
    assert values is not None, f"[{section}] {key}= is not set"
    return values[-1]


def test_the_sample_config_validates_and_builds_every_collector():
    config = load_config(SAMPLE)

    assert config.central.url.startswith("https://")
    assert str(config.central.token_file) == "/etc/wanmon-agent/token"
    assert config.agent.spool_dir == Path("/var/lib/wanmon-agent")
    assert [t.version for t in config.snmp] == ["2c", "3"]
    assert config.snmp[1].priv_key and config.snmp[1].auth_key  # the v3 example is authPriv
    assert config.nuttcp and config.owamp and config.twamp and config.traceroute and config.host_tcp
    names = [c.name for c in build_collectors(config)]
    assert len(names) == 7 and len(set(names)) == 7


def test_the_sample_config_with_ca_file_uncommented_validates(tmp_path):
    ca_file = tmp_path / "ca.pem"
    ca_file.write_text("-----BEGIN CERTIFICATE-----\n")
    text = SAMPLE.read_text()
    assert '# ca_file = "/etc/wanmon-agent/ca.pem"' in text
    config = parse_config(text.replace('# ca_file = "/etc/wanmon-agent/ca.pem"', f'ca_file = "{ca_file}"'))
    assert config.central.ca_file == ca_file


def test_the_unit_runs_the_daemon_with_the_sample_config_path(unit):
    argv = shlex.split(one(unit, "Service", "ExecStart"))
    assert Path(argv[0]).is_absolute() and Path(argv[0]).name == "wanmon-agent"
    assert argv[1:] == ["run", "--config", "/etc/wanmon-agent/agent.toml"]
    assert one(unit, "Install", "WantedBy") == "multi-user.target"
    assert "network-online.target" in one(unit, "Unit", "Wants")


def test_the_unit_is_hardened_and_writes_only_its_spool(unit):
    service = {key: values[-1] for key, values in unit["Service"].items()}
    assert service["User"] == "wanmon-agent" and service["Group"] == "wanmon-agent"
    assert service["StateDirectory"] == "wanmon-agent"  # /var/lib/wanmon-agent, owned by the user
    sample = load_config(SAMPLE)
    assert unit["Service"]["ReadWritePaths"] == [str(sample.agent.spool_dir)]
    for key, value in {
        "NoNewPrivileges": "yes",
        "ProtectSystem": "strict",
        "ProtectHome": "yes",
        "PrivateTmp": "yes",
        "PrivateDevices": "yes",
        "ProtectKernelTunables": "yes",
        "ProtectControlGroups": "yes",
        "RestrictSUIDSGID": "yes",
        "UMask": "0077",
    }.items():
        assert service[key] == value, key
    # no raw sockets needed (tracepath/traceroute UDP probes): no capability at all
    assert service["CapabilityBoundingSet"] == "" and service["AmbientCapabilities"] == ""
    assert "AF_PACKET" not in service["RestrictAddressFamilies"]


def test_the_unit_stops_gracefully_and_restarts_on_failure(unit):
    sample = load_config(SAMPLE)
    assert one(unit, "Service", "KillSignal") == "SIGTERM"
    assert one(unit, "Service", "KillMode") == "mixed"  # the agent, not its test tools, gets SIGTERM
    stop_s = seconds(one(unit, "Service", "TimeoutStopSec"))
    # SIGTERM: tests get shutdown_grace_s while the upload in flight gets up to timeout_s
    assert stop_s > sample.agent.shutdown_grace_s and stop_s > sample.central.timeout_s
    assert one(unit, "Service", "Restart") == "on-failure"
    assert one(unit, "Service", "RestartPreventExitStatus") == "2"  # agents.config.EXIT_CONFIG_ERROR
    assert seconds(one(unit, "Service", "RestartSec")) >= 1


def test_sysusers_creates_the_service_user(unit):
    (line,) = [
        line for line in (DEPLOY / "wanmon-agent.sysusers.conf").read_text().splitlines() if line.startswith("u ")
    ]
    fields = shlex.split(line)
    assert fields[1] == one(unit, "Service", "User") and fields[4] == "/var/lib/wanmon-agent"


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_systemd_accepts_the_unit(tmp_path):
    # verify needs an executable ExecStart: point it at this venv's wanmon-agent
    script = Path(sys.executable).with_name("wanmon-agent")
    if not script.exists():
        pytest.skip("the wanmon-agent console script is not installed in this environment")
    copy = tmp_path / UNIT.name
    copy.write_text(UNIT.read_text().replace("/opt/wanmon-agent/bin/wanmon-agent", str(script)))

    verify = subprocess.run(
        ["systemd-analyze", "verify", "--man=no", str(copy)], capture_output=True, text=True, timeout=60
    )
    assert verify.returncode == 0 and UNIT.name not in verify.stderr, verify.stderr

    security = subprocess.run(
        ["systemd-analyze", "security", "--offline=yes", "--no-pager", str(copy)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if security.returncode != 0 and "offline" in security.stderr:
        pytest.skip(f"this systemd-analyze has no offline security check: {security.stderr.strip()}")
    match = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", security.stdout)
    assert match, security.stdout + security.stderr
    assert float(match.group(1)) <= 2.0  # systemd rates <= 2.0 as "OK"; an unhardened unit scores 9.6
