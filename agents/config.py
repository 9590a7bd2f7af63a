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

[[snmp]]   equipment, host, port, version ("2c" | "3"), community | user, auth_protocol, auth_key,
           priv_protocol, priv_key; interval_s; selection: interfaces | include, exclude, if_types,
           admin_status, require_octet_counters; if_index_names; optional tuning: timeout_s, retries,
           deadline_s, context_name, max_repetitions, max_parallel_requests  (SnmpDeviceConfig)
[[nuttcp]] dst, host, interval_s, protocol, rate_bps, window_bytes, duration_s, reverse, ... (NuttcpConfig)
[[owamp]]  dst, host, interval_s, packets, ... (OwampConfig)
[[traceroute]] dst, host, interval_s, tool, ... (TracerouteConfig)     optional
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
"""

from __future__ import annotations

import dataclasses
import difflib
import ipaddress
import json
import logging
import math
import os
import re
import socket
import stat
import tomllib
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from agents.replay_collector import ReplayTarget
from collectors.nuttcp import NuttcpConfig
from collectors.owamp import OwampConfig
from collectors.records import SITE_CODE_PATTERN
from collectors.snmp_config import VERSIONS as SNMP_CONFIG_VERSIONS
from collectors.snmp_config import SnmpDeviceConfig
from collectors.traceroute import TracerouteConfig

__all__ = [
    "DEFAULT_INTERVALS_S",
    "EXIT_CONFIG_ERROR",
    "INGEST_PATH",
    "AgentConfig",
    "AgentSettings",
    "CentralSettings",
    "ConfigError",
    "HostTcpTarget",
    "ReplayTarget",
    "SnmpTarget",
    "TwampTarget",
    "load_config",
    "parse_config",
    "read_token",
]

EXIT_CONFIG_ERROR = 2
INGEST_PATH = "/api/v1/ingest"

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


_SITE_CODE = re.compile(SITE_CODE_PATTERN)
_PRINTABLE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@:+-]*\Z")  # goes into the User-Agent header

logger = logging.getLogger(__name__)


class ConfigError(Exception):
    """The configuration is unusable. ``errors`` holds one line per problem, each naming file and key."""

    def __init__(self, errors: list[str]) -> None:
        self.errors = errors
        super().__init__("\n".join(errors))


def _meta(*, ge: float | None = None, le: float | None = None, gt: float | None = None, secret: bool = False):
    """Field metadata read by the validator: numeric bounds, and whether the value may be echoed."""
    return {"ge": ge, "le": le, "gt": gt, "secret": secret}


def _hostname() -> str:
    return socket.gethostname().split(".")[0] or "wanmon-agent"


@dataclass(frozen=True)
class CentralSettings:
    """``[central]``: where and how to upload."""

    url: str
    token_file: Path
    ca_file: Path | None = None
    timeout_s: float = field(default=30.0, metadata=_meta(gt=0, le=600))
    # Plain HTTP sends the token in clear: allowed to loopback (tests, a local TLS proxy) or on request.
    allow_insecure_http: bool = False
    # A batch answered 500 this many times in a row is halved, so that one record the centre fails on
    # does not hold back everything collected after it (agents.uploader).
    split_after_server_errors: int = field(default=3, metadata=_meta(ge=1, le=1000))

    @property
    def ingest_url(self) -> str:
        """The full ``POST /api/v1/ingest`` URL (``url`` may be the base or the endpoint itself)."""
        base = self.url.rstrip("/")
        return base if base.endswith(INGEST_PATH) else base + INGEST_PATH


@dataclass(frozen=True)
class AgentSettings:
    """``[agent]``: identity, spool and pacing."""

    site: str
    spool_dir: Path
    name: str = field(default_factory=_hostname)
    upload_interval_s: float = field(default=60.0, metadata=_meta(ge=1, le=86400))
    # Upload this long after a collector spooled new records (0: only every upload_interval_s). The few seconds
    # let collectors that finish together share one batch; the data reaches the centre within a poll, not a tick.
    upload_after_collect_s: float = field(default=5.0, metadata=_meta(ge=0, le=86400))
    batch_max_records: int = field(default=1000, metadata=_meta(ge=1, le=SERVER_MAX_RECORDS))
    spool_max_bytes: int = field(default=1024**3, metadata=_meta(ge=1024 * 1024, le=2**50))
    start_jitter_s: float = field(default=60.0, metadata=_meta(ge=0, le=MAX_INTERVAL_S))
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = "INFO"
    shutdown_grace_s: float = field(default=10.0, metadata=_meta(ge=0, le=600))


SnmpTarget = SnmpDeviceConfig
"""One ``[[snmp]]`` table: ``collectors.snmp_config.SnmpDeviceConfig`` is its only definition (keys, defaults,
bounds, cross-field rules); ``interval_s`` absent from the table is set to ``DEFAULT_INTERVALS_S["snmp"]``."""


@dataclass(frozen=True)
class HostTcpTarget:
    """One ``[[host_tcp]]`` table: report this host's TCP settings (roots injectable for containers)."""

    interval_s: float = field(default=DEFAULT_INTERVALS_S["host_tcp"], metadata=_meta(ge=1, le=MAX_INTERVAL_S))
    host: str | None = None  # default: the short host name, as in the inventory's hosts[].name
    interface: str | None = None  # whose MTU; default: the default-route interface
    proc_root: Path = Path("/proc")
    sys_root: Path = Path("/sys")


@dataclass(frozen=True)
class TwampTarget:
    """One ``[[twamp]]`` table: a TWAMP-light session to a reflector (``collectors.twamp``)."""

    dst: str
    host: str
    port: int = field(default=862, metadata=_meta(ge=1, le=65535))  # RFC 8545 TWAMP-Test port
    interval_s: float = field(default=DEFAULT_INTERVALS_S["twamp"], metadata=_meta(ge=1, le=MAX_INTERVAL_S))
    packets: int = field(default=100, metadata=_meta(ge=1, le=1_000_000))
    packet_interval_s: float = field(default=0.1, metadata=_meta(ge=0, le=60))
    timeout_s: float = field(default=2.0, metadata=_meta(gt=0, le=600))  # a reply later than this is a loss
    padding_bytes: int | None = field(default=None, metadata=_meta(ge=0, le=9000))


@dataclass(frozen=True)
class AgentConfig:
    """The whole validated file. ``source`` is the file name as given (used in later error messages)."""

    source: str
    central: CentralSettings
    agent: AgentSettings
    snmp: tuple[SnmpTarget, ...] = ()
    nuttcp: tuple[NuttcpConfig, ...] = ()
    owamp: tuple[OwampConfig, ...] = ()
    traceroute: tuple[TracerouteConfig, ...] = ()
    host_tcp: tuple[HostTcpTarget, ...] = ()
    twamp: tuple[TwampTarget, ...] = ()
    replay: tuple[ReplayTarget, ...] = ()
    # Problems of the file that do not stop the agent (config_file_warnings); logged once logging is set up.
    file_warnings: tuple[str, ...] = ()


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
    v = _Validator(source)
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


# --- validation --------------------------------------------------------------------------------

_TOP_LEVEL_TABLES = ("central", "agent")
_ARRAY_TABLES = ("snmp", "nuttcp", "owamp", "traceroute", "host_tcp", "twamp", "replay")

# Bounds for keys of the collectors' own config dataclasses (they check relations, not ranges).
_EXTERNAL_BOUNDS: Mapping[str, Mapping[str, float]] = {
    "interval_s": {"ge": 1, "le": MAX_INTERVAL_S},
    "duration_s": {"gt": 0, "le": 3600},
    "window_bytes": {"ge": 1024, "le": 2**40},
    "rate_bps": {"gt": 0, "le": 1e13},
    "streams": {"ge": 1, "le": 128},
    "packets": {"ge": 1, "le": 1_000_000},
    "max_hops": {"ge": 1, "le": 255},
    "control_port": {"ge": 1, "le": 65535},
    "data_port": {"ge": 1, "le": 65535},
    "timeout_s": {"gt": 0, "le": 86400},
    "timeout_margin_s": {"ge": 0, "le": 3600},
}
_MISSING = object()


class _Validator:
    """Collects every error of one file instead of stopping at the first."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.errors: list[str] = []

    def error(self, path: str, message: str) -> None:
        self.errors.append(f"{self.source}: {path}: {message}" if path else f"{self.source}: {message}")

    # -- the file ---------------------------------------------------------------------------

    def config(self, data: dict[str, Any]) -> AgentConfig | None:
        for key in data:
            if key not in _TOP_LEVEL_TABLES and key not in _ARRAY_TABLES:
                self.error(key, "unknown table" + _suggest(key, (*_TOP_LEVEL_TABLES, *_ARRAY_TABLES)))
        central = self.section(data, "central", CentralSettings)
        agent_table = data.get("agent")
        if isinstance(agent_table, dict) and isinstance(agent_table.get("log_level"), str):
            agent_table = {**agent_table, "log_level": agent_table["log_level"].upper()}  # "info" is fine too
        agent = self.section({"agent": agent_table} if agent_table is not None else {}, "agent", AgentSettings)
        if central is not None:
            self.check_central(central)
        if agent is not None:
            self.site_code(agent.site, "agent.site")
            if not _PRINTABLE_NAME.match(agent.name):
                self.error("agent.name", f"{_show(agent.name)}: letters, digits and _ . @ : + - only")
        site = agent.site if agent is not None else None

        snmp = self.each(data, "snmp", lambda table, where: self.snmp(table, where))
        nuttcp = self.each(data, "nuttcp", lambda table, where: self.test(table, where, NuttcpConfig, site))
        owamp = self.each(data, "owamp", lambda table, where: self.test(table, where, OwampConfig, site))
        traceroute = self.each(data, "traceroute", lambda table, where: self.test(table, where, TracerouteConfig, site))
        host_tcp = self.each(data, "host_tcp", lambda table, where: self.build(HostTcpTarget, table, where))
        twamp = self.each(data, "twamp", lambda table, where: self.twamp(table, where, site))
        replay = self.each(data, "replay", lambda table, where: self.build(ReplayTarget, table, where))
        for i, config in enumerate(nuttcp):
            cycle_s = config.duration_s * len(config.directions())
            if config.interval_s is not None and config.interval_s < cycle_s:
                self.error(
                    f"nuttcp[{i}].interval_s",
                    f"{config.interval_s:g} s is shorter than one test cycle ({cycle_s:g} s of testing)",
                )
        if central is None or agent is None:
            return None
        return AgentConfig(
            source=self.source,
            central=central,
            agent=agent,
            snmp=snmp,
            nuttcp=nuttcp,
            owamp=owamp,
            traceroute=traceroute,
            host_tcp=host_tcp,
            twamp=twamp,
            replay=replay,
        )

    def section(self, data: Mapping[str, Any], name: str, cls: type) -> Any:
        table = data.get(name, _MISSING)
        if table is _MISSING:
            self.error(name, f"required table [{name}] is missing")
            return None
        if not isinstance(table, dict):
            self.error(name, f"must be a table [{name}], not a value")
            return None
        return self.build(cls, table, name)

    def each(self, data: Mapping[str, Any], name: str, build: typing.Callable[[dict[str, Any], str], Any]) -> tuple:
        """Validate every table of the array ``[[name]]``; the valid ones, in file order."""
        tables = data.get(name, [])
        if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
            self.error(name, f"must be an array of tables, written [[{name}]]")
            return ()
        built = (build(table, f"{name}[{index}]") for index, table in enumerate(tables))
        return tuple(item for item in built if item is not None)

    # -- one table into one dataclass -------------------------------------------------------

    def build(
        self,
        cls: type,
        table: Mapping[str, Any],
        where: str,
        *,
        bounds: Mapping[str, Any] | None = None,
        construct: bool = True,
    ):
        """``cls(**table)`` with every key type- and range-checked; None (and errors) when invalid.

        ``construct=False`` checks the keys only (cross-field rules need a valid table).
        """
        hints = typing.get_type_hints(cls)
        fields_by_name = {f.name: f for f in dataclasses.fields(cls)}
        ok = True
        for key in table:
            if key not in fields_by_name:
                self.error(f"{where}.{key}", "unknown key" + _suggest(key, fields_by_name))
                ok = False
        kwargs: dict[str, Any] = {}
        for name, spec in fields_by_name.items():
            path = f"{where}.{name}"
            if name not in table:
                if spec.default is dataclasses.MISSING and spec.default_factory is dataclasses.MISSING:
                    self.error(path, "required key is missing")
                    ok = False
                continue
            value, problem = _convert(table[name], hints[name])
            if problem is None:
                limits = {k: v for k, v in spec.metadata.items() if k in ("ge", "le", "gt") and v is not None}
                limits = limits or (bounds or _EXTERNAL_BOUNDS).get(name, {})
                problem = _range_problem(value, limits)
            if problem is not None:
                shown = "" if spec.metadata.get("secret") else f", got {_show(table[name])}"
                self.error(path, problem + (shown if "must be" in problem and "got" not in problem else ""))
                ok = False
                continue
            kwargs[name] = value
        if not ok or not construct:
            return None
        try:
            return cls(**kwargs)
        except (ValueError, TypeError) as exc:  # the dataclass's own cross-field checks
            keyed = getattr(exc, "problems", None)  # (key, message) pairs, e.g. SnmpConfigError
            if keyed:
                for key, message in keyed:
                    self.error(f"{where}.{key}" if key else where, message)
            else:
                self.error(where, str(exc))
            return None

    # -- per-table rules --------------------------------------------------------------------

    def check_central(self, central: CentralSettings) -> None:
        parts = urlsplit(central.url)
        if parts.scheme not in ("https", "http") or not parts.hostname:
            self.error("central.url", f"must be an https:// URL, got {_show(central.url)}")
        elif parts.scheme == "http" and not central.allow_insecure_http and not _is_loopback(parts.hostname):
            self.error(
                "central.url",
                "plain http would send the agent token in clear over the network: use https:// "
                "(or set allow_insecure_http = true, e.g. behind a local TLS proxy)",
            )
        if central.ca_file is not None and not central.ca_file.is_file():
            self.error("central.ca_file", f"{central.ca_file}: no such file")

    def site_code(self, value: Any, path: str) -> None:
        if isinstance(value, str) and not (len(value) <= 32 and _SITE_CODE.match(value)):
            self.error(path, f"{_show(value)} is not a site code (letters, digits, '_', '.', '-'; at most 32)")

    def test(self, table: dict[str, Any], where: str, cls: type, site: str | None) -> Any:
        """A path test table (nuttcp/owamp/traceroute): the collector's own config dataclass."""
        self.site_code(table.get("dst"), f"{where}.dst")
        if site is not None and table.get("dst") == site:
            self.error(f"{where}.dst", f"is this agent's own site ({site}); a test needs another site")
            return None
        config = self.build(cls, table, where)
        if config is not None and config.interval_s is None:
            kind = where.split("[")[0]
            config = dataclasses.replace(config, interval_s=DEFAULT_INTERVALS_S[kind])
        return config

    def snmp(self, table: dict[str, Any], where: str) -> SnmpDeviceConfig | None:
        """An ``[[snmp]]`` table: collectors.snmp_config.SnmpDeviceConfig, plus checks of what the table spells out."""
        table = {k: v.upper() if k.endswith("_protocol") and isinstance(v, str) else v for k, v in table.items()}
        if "version" in table and table["version"] not in SNMP_CONFIG_VERSIONS:
            # Checked first: `version = 2` (a number) is the classic mistake; say what is meant.
            self.error(f"{where}.version", 'must be "2c" or "3"')
            table = {k: v for k, v in table.items() if k != "version"}
            self.build(SnmpDeviceConfig, table, where, construct=False)  # the other keys' types
            return None
        # Keys that are written but cannot apply: the dataclass has defaults for them, so only the table shows it.
        problems: list[tuple[str, str]] = []
        if table.get("version", "2c") == "2c":
            for key in ("user", "auth_protocol", "auth_key", "priv_protocol", "priv_key", "context_name"):
                if key in table:
                    problems.append((key, 'is a version "3" key; set version = "3" or remove it'))
        else:
            if "community" in table:
                problems.append(("community", 'is not used with version "3" (user-based security)'))
            # A key without its protocol takes the default (SHA, AES); the reverse is a mistake.
            if "auth_protocol" in table and "auth_key" not in table:
                problems.append(("auth_key", "required when auth_protocol is set"))
            if "priv_protocol" in table and "priv_key" not in table:
                problems.append(("priv_key", "required when priv_protocol is set"))
        target = self.build(SnmpDeviceConfig, table, where)
        for key, message in problems:
            self.error(f"{where}.{key}", message)
        if target is None or problems:
            return None
        if target.interval_s is None:
            target = dataclasses.replace(target, interval_s=DEFAULT_INTERVALS_S["snmp"])
        return target

    def twamp(self, table: dict[str, Any], where: str, site: str | None) -> TwampTarget | None:
        self.site_code(table.get("dst"), f"{where}.dst")
        if site is not None and table.get("dst") == site:
            self.error(f"{where}.dst", f"is this agent's own site ({site}); a test needs another site")
            return None
        target = self.build(TwampTarget, table, where)
        if target is not None:
            session_s = (target.packets - 1) * target.packet_interval_s + target.timeout_s
            if session_s > target.interval_s:
                self.error(
                    f"{where}.interval_s", f"{target.interval_s:g} s is shorter than one session ({session_s:g} s)"
                )
                return None
        return target


def _is_loopback(hostname: str) -> bool:
    if hostname == "localhost" or hostname.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(hostname).is_loopback
    except ValueError:
        return False


def _suggest(key: str, known: typing.Iterable[str]) -> str:
    close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    return f' (did you mean "{close[0]}"?)' if close else ""


def _show(value: Any) -> str:
    try:
        text = json.dumps(value, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _describe(hint: Any) -> str:
    if hint is bool:
        return "true or false"
    if hint is int:
        return "an integer"
    if hint is float:
        return "a number"
    if hint is str:
        return "a string"
    if hint is Path:
        return "a path (string)"
    origin = typing.get_origin(hint)
    if origin is Literal:
        return _choices(typing.get_args(hint))
    if origin in (tuple, list):
        return "a list of strings"
    return str(hint)


def _choices(values: tuple[Any, ...]) -> str:
    shown = [json.dumps(v) for v in values]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]


def _convert(value: Any, hint: Any) -> tuple[Any, str | None]:
    """(converted value, None) or (None, problem). TOML has no null, so ``X | None`` means X."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        problems = []
        for option in options:
            converted, problem = _convert(value, option)
            if problem is None:
                return converted, None
            problems.append(problem)
        return None, problems[0] if len(problems) == 1 else "must be " + " or ".join(_describe(o) for o in options)
    if origin is Literal:
        choices = typing.get_args(hint)
        return (value, None) if value in choices else (None, f"must be {_choices(choices)}")
    if hint is bool:
        return (value, None) if isinstance(value, bool) else (None, "must be true or false")
    if hint is int:
        return (value, None) if isinstance(value, int) and not isinstance(value, bool) else (None, "must be an integer")
    if hint is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            if not math.isfinite(value):
                return None, "must be a finite number"
            return float(value), None
        return None, "must be a number"
    if hint is str or hint is Path:
        if not isinstance(value, str):
            return None, f"must be {_describe(hint)}"
        if not value.strip():
            return None, "must not be empty"
        return (Path(value) if hint is Path else value), None
    if origin in (tuple, list):
        element = (typing.get_args(hint) or (str,))[0]
        if not isinstance(value, list):
            return None, _list_problem(element)
        items = []
        for item in value:
            converted, problem = _convert(item, element)
            if problem is not None:
                return None, _list_problem(element)
            items.append(converted)
        return tuple(items) if origin is tuple else items, None
    if origin in (dict, Mapping) or hint in (dict, Mapping):
        if isinstance(value, dict) and all(isinstance(v, str) and v for v in value.values()):
            return dict(value), None
        return None, "must be a table of strings"
    return None, f"unsupported option type {hint}"  # a collector config grew a type this file does not know


def _list_problem(element: Any) -> str:
    if element is str:
        return "must be a list of strings"
    if typing.get_origin(element) is Literal:
        return "must be a list of " + _choices(typing.get_args(element))
    return "must be a list of names or numbers"


def _range_problem(value: Any, limits: Mapping[str, float]) -> str | None:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    if "gt" in limits and not value > limits["gt"]:
        return f"must be > {limits['gt']:g}, got {value:g}"
    if "ge" in limits and not value >= limits["ge"]:
        return f"must be >= {limits['ge']:g}, got {value:g}"
    if "le" in limits and not value <= limits["le"]:
        return f"must be <= {limits['le']:g}, got {value:g}"
    return None
