"""The site agent's configuration: one TOML file (docs/agent.md), validated into frozen dataclasses.

```toml
[central]
url = "https://wanmon.example.org"        # base URL; the agent posts to <url>/api/v1/ingest
token_file = "/etc/wanmon-agent/token"
ca_file = "/etc/wanmon-agent/ca.pem"      # optional: custom CA bundle (else the system CAs)
timeout_s = 30                            # optional: per request
allow_insecure_http = false               # optional: http:// is refused except to loopback
split_after_server_errors = 3             # optional: 500s in a row for one batch before it is halved

[agent]
site = "RAL"
spool_dir = "/var/lib/wanmon-agent"
name = "ral-agent-1"                      # optional, default: the host name (logs, User-Agent)
upload_interval_s = 60                    # optional
batch_max_records = 1000                  # optional
spool_max_bytes = 1073741824              # optional: the spool drops its OLDEST data beyond this
start_jitter_s = 60                       # optional: collectors start within [0, min(this, interval)]
log_level = "INFO"                        # optional
shutdown_grace_s = 10                     # optional: on SIGTERM, running collectors get this long

[jobs]                                    # optional: tests on demand (agents/jobs.py)
enabled = true                            # ask the centre for jobs (GET <url>/api/v1/agent/jobs)
poll_s = 2                                # while jobs are pending or running
idle_poll_max_s = 20                      # backing off (doubling) to this while there are none

[[snmp]]   equipment, host, port, version ("2c" | "3"), community | user, auth_protocol, auth_key,
           priv_protocol, priv_key; interval_s; selection: interfaces | include, exclude, if_types,
           admin_status, require_octet_counters; if_index_names; optional tuning: timeout_s, retries,
           deadline_s, context_name, max_repetitions, max_parallel_requests  (SnmpDeviceConfig)
[[nuttcp]] dst, host, interval_s, protocol, rate_bps, window_bytes, duration_s, reverse, ... (NuttcpConfig)
[[owamp]]  dst, host, interval_s, packets, ... (OwampConfig)
[[traceroute]] dst, host, interval_s, tool, ... (TracerouteConfig)     optional
               (a [[nuttcp]], [[owamp]] or [[traceroute]] table with interval_s = 0 is never scheduled: tests on
               demand towards its dst use its host and options)
[[host_tcp]]   interval_s, host, interface, proc_root, sys_root          optional
[[twamp]]      dst, host, port, interval_s, packets, packet_interval_s, timeout_s, padding_bytes
[[replay]]     file, speed, shift, loop, equipment, interval_s       (agents.replay_collector: a simulated site)
```

Every problem is reported, each naming the file and the key, with 0-based indexes for array
tables (``agent.toml: snmp[1].version: must be "2c" or "3"``); the CLI exits with status 2
(:data:`EXIT_CONFIG_ERROR`). Unknown keys are errors (a typo must not silently disable an
option), with a suggestion when a known key is close.

The token is not part of the configuration object: :func:`read_token` reads ``token_file``
when the agent is about to upload, so ``once --dry-run`` works without it, and no repr or log
of the configuration can ever contain it. SNMP secrets are ``repr=False`` for the same reason.

The dataclasses are in agents/config_types.py, the validation in agents/config_check.py; import them from here.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import stat
import tomllib
from pathlib import Path

from agents.config_check import ConfigValidator
from agents.config_types import (
    DEFAULT_INTERVALS_S,
    EXIT_CONFIG_ERROR,
    INGEST_PATH,
    AgentConfig,
    AgentSettings,
    CentralSettings,
    ConfigError,
    HostTcpTarget,
    JobsSettings,
    SnmpTarget,
    TwampTarget,
)
from agents.replay_collector import ReplayTarget

__all__ = [
    "DEFAULT_INTERVALS_S",
    "EXIT_CONFIG_ERROR",
    "INGEST_PATH",
    "AgentConfig",
    "AgentSettings",
    "CentralSettings",
    "ConfigError",
    "HostTcpTarget",
    "JobsSettings",
    "ReplayTarget",
    "SnmpTarget",
    "TwampTarget",
    "load_config",
    "parse_config",
    "read_token",
]

logger = logging.getLogger(__name__)


# --- loading -----------------------------------------------------------------------------------


def load_config(path: str | os.PathLike[str]) -> AgentConfig:
    """Read and validate the TOML file at ``path``; raise ConfigError listing every problem."""
    source = os.fspath(path)
    try:
        raw = Path(source).read_bytes()
    except OSError as exc:
        raise ConfigError([f"{source}: cannot read the configuration file: {exc.strerror or exc}"]) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError([f"{source}: not UTF-8 text (byte {exc.start})"]) from None
    config = parse_config(text, source=source)
    return dataclasses.replace(config, file_warnings=tuple(config_file_warnings(config, os.stat(source).st_mode)))


def config_file_warnings(config: AgentConfig, mode: int) -> list[str]:
    """Problems of the file's permissions given what it holds (``mode`` from stat).

    SNMP communities and v3 keys are passwords of the routers: a configuration holding them that every user of
    the host may read is reported (a warning, not a refusal: the agent still measures; docs/agent.md tells how to
    fix it, ``install -m 640 -g wanmon-agent``). The token lives in its own file, checked by :func:`read_token`.
    """
    secrets = sorted(
        {
            name
            for target in config.snmp
            for name in ("community", "auth_key", "priv_key")
            if getattr(target, name, None) is not None
        }
    )
    if not secrets or not mode & (stat.S_IROTH | stat.S_IWOTH):
        return []
    what = "readable" if mode & stat.S_IROTH else "writable"
    if mode & stat.S_IROTH and mode & stat.S_IWOTH:
        what = "readable and writable"
    return [
        f"{config.source}: holds SNMP secrets ({', '.join(secrets)}) and is {what} by every user of this host; "
        f"chmod o-rwx it (e.g. chmod 640, group wanmon-agent)"
    ]


def parse_config(text: str, *, source: str = "agent.toml") -> AgentConfig:
    """Validate TOML ``text``; ``source`` names the file in error messages."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([f"{source}: invalid TOML: {exc}"]) from None
    v = ConfigValidator(source)
    config = v.config(data)
    if v.errors or config is None:
        raise ConfigError(v.errors)
    return config


def read_token(config: AgentConfig) -> str:
    """The agent's API token from ``central.token_file``, stripped. Raises ConfigError, never logs it."""
    path = config.central.token_file
    where = f"{config.source}: central.token_file"
    try:
        info = path.stat()
        token = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise ConfigError([f"{where}: cannot read {path}: {exc.strerror or exc}"]) from None
    except UnicodeDecodeError:
        raise ConfigError([f"{where}: {path} is not UTF-8 text"]) from None
    if not token:
        raise ConfigError([f"{where}: {path} is empty"])
    if any(ch.isspace() for ch in token) or len(token) > 200:
        # The centre refuses tokens over 200 characters; whitespace means the wrong file was given.
        raise ConfigError([f"{where}: {path} must hold one token (no spaces, at most 200 characters)"])
    if info.st_mode & stat.S_IROTH:
        logger.warning(
            "the token file is readable by every user of this host; chmod 600 it", extra={"token_file": str(path)}
        )
    return token
