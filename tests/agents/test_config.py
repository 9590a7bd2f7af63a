"""The agent's TOML configuration (docs/agent.md): the contract example loads, every mistake is named."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.cli import main
from agents.config import AgentConfig, ConfigError, load_config, parse_config, read_token
from tests.agents.conftest import CONFIG_HEAD

CONTRACT_EXAMPLE = CONFIG_HEAD + """
[[snmp]]
equipment = "ral-border"
host = "192.0.2.1"
port = 161
version = "2c"
community = "public"
interval_s = 60

[[nuttcp]]
dst = "FZK"
host = "fzk-dt01.example.org"
interval_s = 1800
protocol = "tcp"
window_bytes = 8388608
duration_s = 10
reverse = true

[[owamp]]
dst = "FZK"
host = "fzk-owamp.example.org"
interval_s = 300
packets = 600
"""

SNMP_OK = '[[snmp]]\nequipment = "ral-border"\nhost = "192.0.2.1"\ncommunity = "public"\n'


def errors_of(text: str) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_config(text, source="agent.toml")
    return caught.value.errors


def test_the_contract_example_loads_with_its_values():
    config = parse_config(CONTRACT_EXAMPLE, source="agent.toml")

    assert isinstance(config, AgentConfig)
    assert config.central.ingest_url == "https://wanmon.example.org/api/v1/ingest"
    assert config.central.ca_file is None
    assert (config.agent.site, str(config.agent.spool_dir)) == ("RAL", "/var/lib/wanmon-agent")
    (snmp,) = config.snmp
    assert (snmp.equipment, snmp.host, snmp.port, snmp.version, snmp.community, snmp.interval_s) == (
        "ral-border",
        "192.0.2.1",
        161,
        "2c",
        "public",
        60.0,
    )
    (nuttcp,) = config.nuttcp
    assert (nuttcp.dst, nuttcp.protocol, nuttcp.window_bytes, nuttcp.duration_s, nuttcp.reverse) == (
        "FZK",
        "tcp",
        8388608,
        10.0,
        True,
    )
    assert nuttcp.interval_s == 1800.0
    (owamp,) = config.owamp
    assert (owamp.packets, owamp.interval_s) == (600, 300.0)
    # defaults of the optional [agent] keys
    assert (config.agent.upload_interval_s, config.agent.batch_max_records, config.agent.log_level) == (
        60.0,
        1000,
        "INFO",
    )


def test_intervals_default_per_collector_kind_and_optional_tables_load():
    config = parse_config(
        CONFIG_HEAD
        + """
[[nuttcp]]
dst = "FZK"
host = "h"
[[traceroute]]
dst = "CERN"
host = "cern-dt01"
[[host_tcp]]
[[twamp]]
dst = "FZK"
host = "fzk-twamp"
packets = 50
"""
    )
    assert config.nuttcp[0].interval_s == 1800.0
    assert config.traceroute[0].interval_s == 3600.0
    assert config.host_tcp[0].interval_s == 3600.0
    assert (config.twamp[0].packets, config.twamp[0].port, config.twamp[0].interval_s) == (50, 862, 300.0)


@pytest.mark.parametrize(
    ("tables", "expected"),
    [
        pytest.param(
            SNMP_OK + '[[snmp]]\nequipment = "x"\nhost = "h"\nversion = 2\n',
            'agent.toml: snmp[1].version: must be "2c" or "3"',
            id="snmp-version-number",
        ),
        pytest.param(
            '[[snmp]]\nequipment = "x"\nhost = "h"\nversion = "1"\ncommunity = "c"\n',
            'agent.toml: snmp[0].version: must be "2c" or "3"',
            id="snmp-version-1",
        ),
        pytest.param(
            SNMP_OK.replace('community = "public"', 'community = "public"\nport = "161"'),
            'agent.toml: snmp[0].port: must be an integer, got "161"',
            id="port-as-string",
        ),
        pytest.param(
            SNMP_OK + "port = 70000\n", "agent.toml: snmp[0].port: must be <= 65535, got 70000", id="port-range"
        ),
        pytest.param(
            '[[snmp]]\nequipment = "x"\nhost = "h"\n',
            'agent.toml: snmp[0].community: required with version "2c"',
            id="v2c-without-community",
        ),
        pytest.param(
            '[[snmp]]\nequipment = "x"\nhost = "h"\nversion = "3"\n',
            'agent.toml: snmp[0].user: required with version "3"',
            id="v3-without-user",
        ),
        pytest.param(
            '[[snmp]]\nequipment = "x"\nhost = "h"\nversion = "3"\nuser = "u"\nauth_protocol = "SHA"\n'
            'auth_key = "short"\n',
            "agent.toml: snmp[0].auth_key: must be at least 8 characters (RFC 3414)",
            id="v3-short-key",
        ),
        pytest.param(
            '[[snmp]]\nequipment = "x"\nhost = "h"\nversion = "3"\nuser = "u"\npriv_protocol = "AES"\n'
            'priv_key = "longenough"\n',
            "agent.toml: snmp[0].priv_key: privacy (encryption) needs authentication: set auth_key",
            id="v3-priv-without-auth",
        ),
        pytest.param(
            '[[snmp]]\nequipment = "x"\nhost = "h"\nversion = "3"\nuser = "u"\nauth_protocol = "SHA1"\n'
            'auth_key = "longenough"\n',
            'agent.toml: snmp[0].auth_protocol: must be "MD5", "SHA", "SHA224", "SHA256", "SHA384" or '
            '"SHA512", got "SHA1"',
            id="v3-bad-auth-protocol",
        ),
        pytest.param(
            '[[nuttcp]]\ndst = "FZK"\nhost = "h"\nwindw_bytes = 8388608\n',
            'agent.toml: nuttcp[0].windw_bytes: unknown key (did you mean "window_bytes"?)',
            id="typo-suggestion",
        ),
        pytest.param(
            '[[nuttcp]]\ndst = "FZK"\nhost = "h"\nprotocol = "udp"\n',
            "agent.toml: nuttcp[0]: nuttcp UDP tests need rate_bps (nuttcp's default rate is only 1 Mbit/s)",
            id="udp-without-rate",
        ),
        pytest.param(
            '[[nuttcp]]\ndst = "FZK"\nhost = "h"\nreverse = "yes"\n',
            'agent.toml: nuttcp[0].reverse: must be true or false, got "yes"',
            id="bool-as-string",
        ),
        pytest.param(
            '[[nuttcp]]\ndst = "FZK"\nhost = "h"\nduration_s = 10\nreverse = true\ninterval_s = 15\n',
            "agent.toml: nuttcp[0].interval_s: 15 s is shorter than one test cycle (20 s of testing)",
            id="interval-shorter-than-test",
        ),
        pytest.param(
            '[[owamp]]\ndst = "RAL"\nhost = "h"\n',
            "agent.toml: owamp[0].dst: is this agent's own site (RAL); a test needs another site",
            id="test-to-own-site",
        ),
        pytest.param(
            '[[owamp]]\ndst = "F ZK"\nhost = "h"\n',
            "agent.toml: owamp[0].dst: \"F ZK\" is not a site code (letters, digits, '_', '.', '-'; at most 32)",
            id="bad-site-code",
        ),
        pytest.param(
            '[[owamp]]\nhost = "h"\n', "agent.toml: owamp[0].dst: required key is missing", id="missing-required"
        ),
        pytest.param(
            "[[host_tcp]]\ninterval_s = 0\n",
            "agent.toml: host_tcp[0].interval_s: must be >= 1, got 0",
            id="interval-zero",
        ),
        pytest.param(
            '[[host_tcp]]\ninterval_s = "1h"\n',
            'agent.toml: host_tcp[0].interval_s: must be a number, got "1h"',
            id="interval-string",
        ),
        pytest.param(
            '[[twamp]]\ndst = "FZK"\nhost = "h"\npackets = 10000\npacket_interval_s = 1\n',
            "agent.toml: twamp[0].interval_s: 300 s is shorter than one session (10001 s)",
            id="twamp-session-longer-than-interval",
        ),
        pytest.param(
            '[snmp]\nequipment = "x"\n',
            "agent.toml: snmp: must be an array of tables, written [[snmp]]",
            id="table-instead-of-array",
        ),
        pytest.param("[[nutcp]]\n", 'agent.toml: nutcp: unknown table (did you mean "nuttcp"?)', id="unknown-table"),
    ],
)
def test_each_mistake_is_reported_with_file_and_key(tables, expected):
    assert expected in errors_of(CONFIG_HEAD + tables)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[agent]\nsite = "RAL"\nspool_dir = "/s"\n', "agent.toml: central: required table [central] is missing"),
        (
            '[central]\nurl = "https://x"\ntoken_file = "/t"\n[agent]\nsite = "R AL"\nspool_dir = "/s"\n',
            "agent.toml: agent.site: \"R AL\" is not a site code (letters, digits, '_', '.', '-'; at most 32)",
        ),
        (
            '[central]\nurl = "https://x"\n[agent]\nsite = "RAL"\nspool_dir = "/s"\n',
            "agent.toml: central.token_file: required key is missing",
        ),
        (
            '[central]\nurl = "http://wanmon.example.org"\ntoken_file = "/t"\n'
            '[agent]\nsite = "RAL"\nspool_dir = "/s"\n',
            "agent.toml: central.url: plain http would send the agent token in clear over the network: use https:// "
            "(or set allow_insecure_http = true, e.g. behind a local TLS proxy)",
        ),
        (
            '[central]\nurl = "wanmon.example.org"\ntoken_file = "/t"\n[agent]\nsite = "RAL"\nspool_dir = "/s"\n',
            'agent.toml: central.url: must be an https:// URL, got "wanmon.example.org"',
        ),
        (
            '[central]\nurl = "https://x"\ntoken_file = "/t"\nca_file = "/nonexistent/ca.pem"\n'
            '[agent]\nsite = "RAL"\nspool_dir = "/s"\n',
            "agent.toml: central.ca_file: /nonexistent/ca.pem: no such file",
        ),
        (CONFIG_HEAD + "batch_max_records = 0\n", "agent.toml: agent.batch_max_records: must be >= 1, got 0"),
        (
            CONFIG_HEAD + 'log_level = "LOUD"\n',
            'agent.toml: agent.log_level: must be "DEBUG", "INFO", "WARNING", "ERROR" or "CRITICAL", got "LOUD"',
        ),
        (
            "[central\nurl = 1\n",
            "agent.toml: invalid TOML: Expected ']' at the end of a table declaration (at line 1, column 9)",
        ),
    ],
)
def test_central_and_agent_mistakes(text, expected):
    assert expected in errors_of(text)


def test_every_problem_of_a_file_is_reported_at_once():
    errors = errors_of(
        CONFIG_HEAD + '[[snmp]]\nequipment = "x"\nhost = "h"\nversion = 2\n'
        '[[nuttcp]]\ndst = "FZK"\nhost = "h"\nwindw = 1\n[[owamp]]\nhost = "h"\n'
    )
    assert errors == [
        'agent.toml: snmp[0].version: must be "2c" or "3"',
        "agent.toml: nuttcp[0].windw: unknown key",
        "agent.toml: owamp[0].dst: required key is missing",
    ]


def test_secrets_are_never_echoed_in_errors_or_repr():
    errors = errors_of(CONFIG_HEAD + '[[snmp]]\nequipment = "x"\nhost = "h"\ncommunity = 123456789\n')
    assert errors == ["agent.toml: snmp[0].community: must be a string"]
    config = parse_config(CONFIG_HEAD + SNMP_OK.replace('"public"', '"s3cret-community"'))
    assert "s3cret-community" not in repr(config)
    assert config.snmp[0].community == "s3cret-community"


def test_log_level_and_snmp_protocols_are_case_insensitive():
    config = parse_config(
        CONFIG_HEAD + 'log_level = "debug"\n' + '[[snmp]]\nequipment = "x"\nhost = "h"\nversion = "3"\n'
        'user = "u"\nauth_protocol = "sha256"\nauth_key = "longenough"\n'
    )
    assert config.agent.log_level == "DEBUG"
    assert config.snmp[0].auth_protocol == "SHA256"


def test_plain_http_is_allowed_to_loopback_only_unless_asked():
    loopback = parse_config(CONFIG_HEAD.replace("https://wanmon.example.org", "http://127.0.0.1:8000"))
    assert loopback.central.ingest_url == "http://127.0.0.1:8000/api/v1/ingest"
    proxied = parse_config(
        CONFIG_HEAD.replace("https://wanmon.example.org", "http://wanmon.example.org/api/v1/ingest").replace(
            "[agent]", "allow_insecure_http = true\n[agent]"
        )
    )
    assert proxied.central.ingest_url == "http://wanmon.example.org/api/v1/ingest"  # an endpoint URL is kept


def test_token_is_read_stripped_and_its_problems_name_the_key(tmp_path: Path):
    token_file = tmp_path / "token"
    token_file.write_text("  tok-123  \n")
    token_file.chmod(0o600)
    config = parse_config(CONFIG_HEAD.replace("/etc/wanmon-agent/token", str(token_file)), source="site.toml")
    assert read_token(config) == "tok-123"

    token_file.write_text("\n")
    with pytest.raises(ConfigError) as empty:
        read_token(config)
    assert empty.value.errors == [f"site.toml: central.token_file: {token_file} is empty"]

    token_file.unlink()
    with pytest.raises(ConfigError) as missing:
        read_token(config)
    assert missing.value.errors == [
        f"site.toml: central.token_file: cannot read {token_file}: No such file or directory"
    ]


def test_load_config_names_an_unreadable_file(tmp_path: Path):
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path / "missing.toml")
    assert caught.value.errors == [
        f"{tmp_path / 'missing.toml'}: cannot read the configuration file: No such file or directory"
    ]


def test_cli_exits_2_and_prints_each_error_on_stderr(tmp_path: Path, capsys):
    path = tmp_path / "agent.toml"
    path.write_text(CONFIG_HEAD + '[[snmp]]\nequipment = "x"\nhost = "h"\nversion = 2\n[[owamp]]\nhost = "h"\n')

    status = main(["once", "--config", str(path), "--dry-run"])

    assert status == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        f'{path}: snmp[0].version: must be "2c" or "3"',
        f"{path}: owamp[0].dst: required key is missing",
    ]


def test_cli_exits_2_when_the_token_file_is_missing(tmp_path: Path, capsys, monkeypatch):
    monkeypatch.setattr("agents.cli.setup_logging", lambda level: None)  # keep pytest's own log handlers
    path = tmp_path / "agent.toml"
    path.write_text(
        CONFIG_HEAD.replace("/etc/wanmon-agent/token", str(tmp_path / "nope")).replace(
            "/var/lib/wanmon-agent", str(tmp_path / "spool")
        )
    )
    assert main(["once", "--config", str(path)]) == 2
    assert f"{path}: central.token_file: cannot read {tmp_path / 'nope'}" in capsys.readouterr().err
    assert not (tmp_path / "spool").exists()  # nothing was collected or spooled


def test_snmp_interface_selection_keys_load_into_the_collectors_own_config_class():
    from collectors.snmp_config import SnmpDeviceConfig

    config = parse_config(
        CONFIG_HEAD + SNMP_OK + 'include = ["xe-*", "ae*"]\nexclude = ["*.32767"]\n'
        'if_types = ["ethernetCsmacd", "ieee8023adLag", 53]\nadmin_status = ["up"]\nrequire_octet_counters = false\n'
    )

    (snmp,) = config.snmp
    assert type(snmp) is SnmpDeviceConfig  # one definition of the [[snmp]] table
    assert (snmp.include, snmp.exclude, snmp.if_types, snmp.admin_status) == (
        ("xe-*", "ae*"),
        ("*.32767",),
        (6, 161, 53),
        ("up",),
    )
    assert snmp.require_octet_counters is False
    assert parse_config(CONFIG_HEAD + SNMP_OK).snmp[0].require_octet_counters is True  # the default
    assert parse_config(CONFIG_HEAD + SNMP_OK).snmp[0].interval_s == 60.0


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        (
            'if_types = ["ethernetCsmcd"]\n',
            "agent.toml: snmp[0].if_types: unknown ifType 'ethernetCsmcd' (did you mean \"ethernetCsmacd\"?)",
        ),
        ("if_types = [true]\n", "agent.toml: snmp[0].if_types: must be a list of names or numbers"),
        ('admin_status = ["upp"]\n', 'agent.toml: snmp[0].admin_status: must be a list of "up", "down" or "testing"'),
        ('include = "xe-*"\n', "agent.toml: snmp[0].include: must be a list of strings"),
        ('exclude = [""]\n', "agent.toml: snmp[0].exclude: must be a list of strings"),
        ('require_octet_counters = "yes"\n', "agent.toml: snmp[0].require_octet_counters: must be true or false"),
        (
            'interfaces = ["ae0"]\ninclude = ["xe-*"]\n',
            "agent.toml: snmp[0].interfaces: lists the interfaces exactly and cannot be combined with include "
            "(use either the list or the filters)",
        ),
        (
            'if_index_names = {"501" = "uplink", "502" = "uplink"}\n',
            "agent.toml: snmp[0].if_index_names: ifIndex 501 and 502 are both named 'uplink'; names must be unique",
        ),
        (
            "timeout_s = 5\nretries = 3\ndeadline_s = 10\n",
            "agent.toml: snmp[0].deadline_s: 10.0 is shorter than one request with its retries "
            "(timeout_s 5.0 x 4 = 20.0 s)",
        ),
        ('if_index_names = {"x" = "a"}\n', "agent.toml: snmp[0].if_index_names: keys must be ifIndex numbers"),
    ],
)
def test_snmp_selection_mistakes_are_named_by_key(keys, expected):
    errors = errors_of(CONFIG_HEAD + SNMP_OK + keys)

    assert [e for e in errors if e.startswith(expected)] == [errors[0]], errors
