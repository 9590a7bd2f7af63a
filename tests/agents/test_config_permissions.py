"""A configuration holding SNMP communities or v3 keys that every user of the host may read is reported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agents.config import load_config
from tests.agents.conftest import CONFIG_HEAD

V2C = (
    CONFIG_HEAD
    + """
[[snmp]]
equipment = "ral-border"
host = "192.0.2.1"
version = "2c"
community = "s3cret-community"
"""
)
V3 = (
    CONFIG_HEAD
    + """
[[snmp]]
equipment = "ral-border"
host = "192.0.2.1"
version = "3"
user = "wanmon"
auth_protocol = "SHA"
auth_key = "auth-key-12345678"
priv_protocol = "AES"
priv_key = "priv-key-12345678"
"""
)
NO_SECRETS = (
    CONFIG_HEAD
    + """
[[nuttcp]]
dst = "FZK"
host = "fzk-dt01.example.org"
"""
)


def _load(tmp_path: Path, text: str, mode: int) -> list[str]:
    path = tmp_path / "agent.toml"
    path.write_text(text)
    path.chmod(mode)
    return list(load_config(path).file_warnings)


@pytest.mark.parametrize(("text", "secrets"), [(V2C, "community"), (V3, "auth_key, priv_key")])
def test_world_readable_secrets_are_reported_naming_them_never_showing_them(tmp_path, text, secrets):
    (message,) = _load(tmp_path, text, 0o644)
    assert f"holds SNMP secrets ({secrets})" in message
    assert "readable by every user" in message and "chmod" in message
    assert "s3cret" not in message and "key-1234" not in message


def test_world_writable_is_reported_too(tmp_path):
    (message,) = _load(tmp_path, V2C, 0o662)
    assert "writable by every user" in message


@pytest.mark.parametrize("mode", [0o640, 0o600, 0o400])
def test_a_file_closed_to_others_is_quiet(tmp_path, mode):
    assert _load(tmp_path, V2C, mode) == []


def test_a_world_readable_file_without_secrets_is_quiet(tmp_path):
    assert _load(tmp_path, NO_SECRETS, 0o644) == []


def test_the_agent_logs_the_warning_as_a_json_line_at_start(tmp_path):
    path = tmp_path / "agent.toml"
    path.write_text(V2C.replace("/var/lib/wanmon-agent", str(tmp_path / "spool")))
    path.chmod(0o644)
    result = subprocess.run(
        [sys.executable, "-m", "agents.cli", "once", "--config", str(path), "--dry-run"],
        cwd=Path(__file__).resolve().parents[2], capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    logs = [json.loads(line) for line in result.stderr.splitlines()]  # every line JSON: logged after set-up
    (warning,) = [log for log in logs if "holds SNMP secrets" in log["message"]]
    assert warning["level"] == "warning" and warning["config"] == str(path)
