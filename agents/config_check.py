"""Validation of the agent's TOML document: every key of every table checked against the dataclasses of
agents/config_types.py, every problem reported with the file, the table and the key."""

from __future__ import annotations

import dataclasses
import difflib
import ipaddress
import json
import math
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from agents.config_types import (
    DEFAULT_INTERVALS_S,
    MAX_INTERVAL_S,
    PRINTABLE_NAME_RE,
    SITE_CODE_RE,
    AgentConfig,
    AgentSettings,
    CentralSettings,
    HostTcpTarget,
    JobsSettings,
    TwampTarget,
)
from agents.replay_collector import ReplayTarget
from collectors.nuttcp import NuttcpConfig
from collectors.owamp import OwampConfig
from collectors.snmp_config import VERSIONS as SNMP_CONFIG_VERSIONS
from collectors.snmp_config import SnmpDeviceConfig
from collectors.traceroute import TracerouteConfig

# --- validation --------------------------------------------------------------------------------

_TOP_LEVEL_TABLES = ("central", "agent", "jobs")
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
# interval_s = 0: a test table used only by tests on demand (agents/jobs.py), never scheduled.
_ON_DEMAND_BOUNDS: Mapping[str, Mapping[str, float]] = {
    **_EXTERNAL_BOUNDS,
    "interval_s": {"ge": 0, "le": MAX_INTERVAL_S},
}
_MISSING = object()


class ConfigValidator:
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
        jobs = self.build(JobsSettings, data["jobs"], "jobs") if isinstance(data.get("jobs"), dict) else JobsSettings()
        if "jobs" in data and not isinstance(data["jobs"], dict):
            self.error("jobs", "must be a table [jobs], not a value")
        if central is not None:
            self.check_central(central)
        if agent is not None:
            self.site_code(agent.site, "agent.site")
            if not PRINTABLE_NAME_RE.match(agent.name):
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
            if config.interval_s and config.interval_s < cycle_s:
                self.error(
                    f"nuttcp[{i}].interval_s",
                    f"{config.interval_s:g} s is shorter than one test cycle ({cycle_s:g} s of testing)",
                )
        if central is None or agent is None or jobs is None:
            return None
        return AgentConfig(
            source=self.source,
            central=central,
            agent=agent,
            jobs=jobs,
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
        if isinstance(value, str) and not (len(value) <= 32 and SITE_CODE_RE.match(value)):
            self.error(path, f"{_show(value)} is not a site code (letters, digits, '_', '.', '-'; at most 32)")

    def far_site(self, table: Mapping[str, Any], where: str, site: str | None) -> bool:
        """Whether a path test table's ``dst`` is a site code other than this agent's own ``site`` (errors if not)."""
        self.site_code(table.get("dst"), f"{where}.dst")
        if site is not None and table.get("dst") == site:
            self.error(f"{where}.dst", f"is this agent's own site ({site}); a test needs another site")
            return False
        return True

    def test(self, table: dict[str, Any], where: str, cls: type, site: str | None) -> Any:
        """A path test table (nuttcp/owamp/traceroute): the collector's own config dataclass."""
        if not self.far_site(table, where, site):
            return None
        config = self.build(cls, table, where, bounds=_ON_DEMAND_BOUNDS)
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
        if not self.far_site(table, where, site):
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
