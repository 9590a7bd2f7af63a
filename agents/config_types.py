"""The site agent's configuration as frozen dataclasses (one per TOML table of docs/agent.md), its limits and
its error; agents/config.py reads the file into them."""

from __future__ import annotations

import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from agents.replay_collector import ReplayTarget
from collectors.nuttcp import NuttcpConfig
from collectors.owamp import OwampConfig
from collectors.records import SITE_CODE_PATTERN
from collectors.snmp_config import SnmpDeviceConfig
from collectors.table import field_meta
from collectors.traceroute import TracerouteConfig

EXIT_CONFIG_ERROR = 2
INGEST_PATH = "/api/v1/ingest"
JOBS_PATH = "/api/v1/agent/jobs"

# How often each kind of collector runs when the table has no interval_s. Throughput tests load
# the path, so they are rare; SNMP counters need a short period for useful rates.
DEFAULT_INTERVALS_S: Mapping[str, float] = {
    "snmp": 60.0,
    "nuttcp": 1800.0,
    "owamp": 300.0,
    "traceroute": 3600.0,
    "host_tcp": 3600.0,
    "twamp": 300.0,
}
MAX_INTERVAL_S = 7 * 86400.0  # the wire schema's bound on schedule_interval_s
SERVER_MAX_RECORDS = 20_000  # the centre's default per-batch limit (WANMON_INGEST_MAX_RECORDS)


SITE_CODE_RE = re.compile(SITE_CODE_PATTERN)
PRINTABLE_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@:+-]*\Z")  # goes into the User-Agent header


class ConfigError(Exception):
    """The configuration is unusable. ``errors`` holds one line per problem, each naming file and key."""

    def __init__(self, errors: list[str]) -> None:
        self.errors = errors
        super().__init__("\n".join(errors))


def _hostname() -> str:
    return socket.gethostname().split(".")[0] or "wanmon-agent"


@dataclass(frozen=True)
class CentralSettings:
    """``[central]``: where and how to upload."""

    url: str
    token_file: Path
    ca_file: Path | None = None
    timeout_s: float = field(default=30.0, metadata=field_meta(gt=0, le=600))
    # Plain HTTP sends the token in clear: allowed to loopback (tests, a local TLS proxy) or on request.
    allow_insecure_http: bool = False
    # A batch answered 500 this many times in a row is halved, so that one record the centre fails on
    # does not hold back everything collected after it (agents.uploader).
    split_after_server_errors: int = field(default=3, metadata=field_meta(ge=1, le=1000))

    @property
    def ingest_url(self) -> str:
        """The full ``POST /api/v1/ingest`` URL (``url`` may be the base or the endpoint itself)."""
        base = self.url.rstrip("/")
        return base if base.endswith(INGEST_PATH) else base + INGEST_PATH

    @property
    def jobs_url(self) -> str:
        """The full ``GET /api/v1/agent/jobs`` URL (tests on demand), beside the ingest."""
        return self.ingest_url.removesuffix(INGEST_PATH) + JOBS_PATH


@dataclass(frozen=True)
class AgentSettings:
    """``[agent]``: identity, spool and pacing."""

    site: str
    spool_dir: Path
    name: str = field(default_factory=_hostname)
    upload_interval_s: float = field(default=60.0, metadata=field_meta(ge=1, le=86400))
    # Upload this long after a collector spooled new records (0: only every upload_interval_s). The few seconds
    # let collectors that finish together share one batch; the data reaches the centre within a poll, not a tick.
    upload_after_collect_s: float = field(default=5.0, metadata=field_meta(ge=0, le=86400))
    batch_max_records: int = field(default=1000, metadata=field_meta(ge=1, le=SERVER_MAX_RECORDS))
    spool_max_bytes: int = field(default=1024**3, metadata=field_meta(ge=1024 * 1024, le=2**50))
    start_jitter_s: float = field(default=60.0, metadata=field_meta(ge=0, le=MAX_INTERVAL_S))
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = "INFO"
    shutdown_grace_s: float = field(default=10.0, metadata=field_meta(ge=0, le=600))


@dataclass(frozen=True)
class JobsSettings:
    """``[jobs]``: tests on demand (docs/agent.md#tests-on-demand). The agent asks the centre for work over its own
    connection and token (no inbound port): every ``poll_s`` while it has jobs, backing off (doubling) to
    ``idle_poll_max_s`` while it has none. ``enabled = false``: never asks."""

    enabled: bool = True
    poll_s: float = field(default=2.0, metadata=field_meta(ge=0.5, le=600))
    idle_poll_max_s: float = field(default=20.0, metadata=field_meta(ge=1, le=3600))


SnmpTarget = SnmpDeviceConfig
"""One ``[[snmp]]`` table: ``collectors.snmp_config.SnmpDeviceConfig`` is its only definition (keys, defaults,
bounds, cross-field rules); ``interval_s`` absent from the table is set to ``DEFAULT_INTERVALS_S["snmp"]``."""


@dataclass(frozen=True)
class HostTcpTarget:
    """One ``[[host_tcp]]`` table: report this host's TCP settings (roots injectable for containers)."""

    interval_s: float = field(default=DEFAULT_INTERVALS_S["host_tcp"], metadata=field_meta(ge=1, le=MAX_INTERVAL_S))
    host: str | None = None  # default: the short host name, as in the inventory's hosts[].name
    interface: str | None = None  # whose MTU and speed; default: the default-route interface
    proc_root: Path = Path("/proc")
    sys_root: Path = Path("/sys")


@dataclass(frozen=True)
class TwampTarget:
    """One ``[[twamp]]`` table: a TWAMP-light session to a reflector (``collectors.twamp``)."""

    dst: str
    host: str
    port: int = field(default=862, metadata=field_meta(ge=1, le=65535))  # RFC 8545 TWAMP-Test port
    interval_s: float = field(default=DEFAULT_INTERVALS_S["twamp"], metadata=field_meta(ge=1, le=MAX_INTERVAL_S))
    packets: int = field(default=100, metadata=field_meta(ge=1, le=1_000_000))
    packet_interval_s: float = field(default=0.1, metadata=field_meta(ge=0, le=60))
    timeout_s: float = field(default=2.0, metadata=field_meta(gt=0, le=600))  # a reply later than this is a loss
    padding_bytes: int | None = field(default=None, metadata=field_meta(ge=0, le=9000))


@dataclass(frozen=True)
class AgentConfig:
    """The whole validated file. ``source`` is the file name as given (used in later error messages)."""

    source: str
    central: CentralSettings
    agent: AgentSettings
    jobs: JobsSettings = JobsSettings()
    snmp: tuple[SnmpTarget, ...] = ()
    nuttcp: tuple[NuttcpConfig, ...] = ()
    owamp: tuple[OwampConfig, ...] = ()
    traceroute: tuple[TracerouteConfig, ...] = ()
    host_tcp: tuple[HostTcpTarget, ...] = ()
    twamp: tuple[TwampTarget, ...] = ()
    replay: tuple[ReplayTarget, ...] = ()
    # Problems of the file that do not stop the agent (config_file_warnings); logged once logging is set up.
    file_warnings: tuple[str, ...] = ()
