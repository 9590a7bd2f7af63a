"""The configured tables turned into scheduler collectors (see :mod:`agents.scheduler` for the protocol).

nuttcp, owamp, traceroute and host_tcp wrap the ``run_test``/``collect`` functions of their
``collectors`` modules, tools being run through an injectable
:class:`~collectors.runner.CommandRunner`. SNMP and TWAMP are imported lazily from
``collectors.snmp`` and ``collectors.twamp``, only when the file has such tables: if the module
(or pysnmp under it) is missing on a site's install, those tables are skipped with an error
logged and every other collector still runs.

SNMP devices of one agent share one ``collectors.snmp.SnmpPoller`` (one pysnmp engine, one UDP
socket) and are polled in the agent's event loop; TWAMP-light sessions run in it too. The
tool-driven collectors are plain functions: the scheduler runs them in threads.

Active tests never overlap where they would measure each other (scheduler exclusive groups):

* every nuttcp test is in the ``throughput`` group: one throughput test of this agent at a time;
* nuttcp, owamp and TWAMP-light tests are in the group of their far host (:func:`host_group`,
  ``host:<name>``): never two active tests towards the same host at once, whatever their kind
  (a nuttcp stream would show up as delay and loss in an owping session to the same node).

Traceroute, SNMP and host_tcp are passive or nearly so and run alongside anything.

``[[replay]]`` tables (:mod:`agents.replay_collector`) replay a scenario file's timeline instead of
measuring: simulated site agents, e.g. those of ``scripts/demo``.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
from collections.abc import Callable, Mapping
from dataclasses import fields
from datetime import datetime
from types import ModuleType
from typing import Any

from agents.config import AgentConfig, ConfigError, HostTcpTarget, SnmpTarget, TwampTarget
from agents.replay_collector import ReplayCollector
from agents.scheduler import exclusive_groups
from collectors import hostinfo, nuttcp, owamp, traceroute
from collectors.runner import CommandRunner, SubprocessRunner, host_part

__all__ = [
    "HostTcpCollector",
    "NuttcpCollector",
    "OwampCollector",
    "SnmpCollector",
    "TracerouteCollector",
    "TwampCollector",
    "build_collectors",
    "close_collectors",
    "describe",
    "host_group",
]

logger = logging.getLogger(__name__)

THROUGHPUT_GROUP = "throughput"  # tests that load the path: one at a time, or they measure each other
_VERSION_PROBE_S = 10.0  # `nuttcp -V` before each test
_MARGIN_S = 10.0  # beyond a tool's own deadline, before the scheduler gives up on it

ModuleLoader = Callable[[str], ModuleType]


def host_group(host: str) -> str:
    """The exclusive group of active tests towards ``host``: ``host:<name>``, case and port ignored.

    ``FZK-DT01.example.org.``, ``fzk-dt01.example.org:861`` and ``fzk-dt01.example.org`` are one
    host; ``[2001:db8::1]:861`` and ``2001:db8::1`` too. Names are not resolved (a name and its
    address are two groups): configure one spelling per host.
    """
    return "host:" + host_part(host.strip().lower()).rstrip(".")


class _ToolCollector:
    """A table of a tool run through the command runner towards the table's ``dst`` site: a test run ``collect``s
    its records, one a scheduled run missed (hung, failed) gives error records (``error_records``)."""

    exclusive_group: str | None = None
    table = ""  # the configuration table, e.g. "owamp" for [[owamp]]

    def __init__(self, config: Any, *, index: int, site: str, runner: CommandRunner) -> None:
        self.config = config
        self.site = site
        self.runner = runner
        self.name = f"{self.table}[{index}]:{config.dst}"
        self.interval_s = float(config.interval_s or 0)

    def _run_test(self, module: ModuleType, now: datetime, **options: Any) -> list[dict[str, Any]]:
        return module.run_test(
            self.runner, self.config, src_site=self.site, dst_site=self.config.dst, now=now, **options
        )

    def _error_args(self, now: datetime, message: str) -> dict[str, Any]:
        """The arguments of the module's ``error_record`` that every tool's takes."""
        return {"src_site": self.site, "dst_site": self.config.dst, "time": now, "error": message}


class NuttcpCollector(_ToolCollector):
    """A ``[[nuttcp]]`` test (one record per direction per run)."""

    exclusive_group = THROUGHPUT_GROUP
    table = "nuttcp"

    def __init__(
        self, config: nuttcp.NuttcpConfig, *, index: int, site: str, runner: CommandRunner, retrans=None
    ) -> None:
        super().__init__(config, index=index, site=site, runner=runner)
        self.retrans = retrans
        self.timeout_s = config.timeout_s * len(config.directions()) + _VERSION_PROBE_S + _MARGIN_S
        self.exclusive_groups = (host_group(config.host),)

    def collect(self, now: datetime) -> list[dict[str, Any]]:
        """Run the test(s) now."""
        return self._run_test(nuttcp, now, retrans_counter=self.retrans)

    def error_records(self, now: datetime, message: str) -> list[dict[str, Any]]:
        """A throughput error record per direction: a hung test is evidence about the path."""
        return [
            nuttcp.error_record(self.config, direction=direction, **self._error_args(now, message))
            for direction in self.config.directions()
        ]


class OwampCollector(_ToolCollector):
    """An ``[[owamp]]`` test (one record per requested direction per run)."""

    table = "owamp"

    def __init__(self, config: owamp.OwampConfig, *, index: int, site: str, runner: CommandRunner) -> None:
        super().__init__(config, index=index, site=site, runner=runner)
        self.timeout_s = config.timeout_s + _MARGIN_S
        self.exclusive_groups = (host_group(config.host),)

    def collect(self, now: datetime) -> list[dict[str, Any]]:
        """Run owping now."""
        return self._run_test(owamp, now)

    def error_records(self, now: datetime, message: str) -> list[dict[str, Any]]:
        """An owamp error record per requested direction."""
        return [
            owamp.error_record(direction=direction, host=self.config.host, **self._error_args(now, message))
            for direction in self.config.requested
        ]


class TracerouteCollector(_ToolCollector):
    """A ``[[traceroute]]`` table."""

    table = "traceroute"

    def __init__(self, config: traceroute.TracerouteConfig, *, index: int, site: str, runner: CommandRunner) -> None:
        super().__init__(config, index=index, site=site, runner=runner)
        self.timeout_s = config.timeout_s * 2 + _MARGIN_S  # the fallback tool may run after the first

    def collect(self, now: datetime) -> list[dict[str, Any]]:
        """Trace the route now."""
        return self._run_test(traceroute, now)

    def error_records(self, now: datetime, message: str) -> list[dict[str, Any]]:
        """One traceroute error record."""
        return [traceroute.error_record(tool=self.config.tool, host=self.config.host, **self._error_args(now, message))]


class HostTcpCollector:
    """A ``[[host_tcp]]`` table: this host's TCP settings."""

    exclusive_group = None
    timeout_s = 30.0

    def __init__(self, target: HostTcpTarget, *, index: int, site: str) -> None:
        self.target = target
        self.site = site
        self.name = f"host_tcp[{index}]"
        self.interval_s = target.interval_s

    def collect(self, now: datetime) -> list[dict[str, Any]]:
        """Read the settings now."""
        return hostinfo.collect(
            site=self.site,
            now=now,
            host=self.target.host,
            interface=self.target.interface,
            proc_root=self.target.proc_root,
            sys_root=self.target.sys_root,
        )


class _SharedSnmpPoller:
    """One ``collectors.snmp.SnmpPoller`` for all SNMP collectors of the running event loop.

    A poller (its pysnmp engine and UDP socket) belongs to the loop it first ran on and costs
    ~0.3 s of CPU to create: it is created on first use and kept, and replaced only if the
    agent runs a new event loop (successive ``asyncio.run`` calls, as in tests).
    """

    def __init__(self, module: ModuleType) -> None:
        self._module = module
        self._loop: asyncio.AbstractEventLoop | None = None
        self._poller: Any = None

    def get(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._poller is None or self._loop is not loop:
            self.close()
            self._poller, self._loop = self._module.SnmpPoller(), loop
        return self._poller

    def close(self) -> None:
        if self._poller is not None:
            with contextlib.suppress(Exception):  # sockets of a finished loop: best effort
                self._poller.close()
        self._poller = self._loop = None


class SnmpCollector:
    """An ``[[snmp]]`` device, polled with ``collectors.snmp`` (pysnmp asyncio, in the agent's loop).

    A device that does not answer gives no records (an ``snmp`` record needs an interface): the
    failure is logged with the module's explanation (timeout, authentication, deadline...).
    """

    exclusive_group = None

    def __init__(
        self, target: SnmpTarget, *, index: int, site: str, module: ModuleType, poller: _SharedSnmpPoller
    ) -> None:
        self.target = target
        self.site = site
        self.name = f"snmp[{index}]:{target.equipment}"
        self.interval_s = target.interval_s
        options = {f.name: getattr(target, f.name) for f in fields(target)}
        if options["if_index_names"] is not None:
            options["if_index_names"] = {int(k): v for k, v in options["if_index_names"].items()}
        # Unset options are left out so that collectors.snmp's own defaults apply.
        self.config = module.SnmpDeviceConfig.from_mapping({k: v for k, v in options.items() if v is not None})
        self._poller = poller
        self.timeout_s = float(self.config.effective_deadline_s) + _MARGIN_S

    async def collect(self, now: datetime) -> list[Any]:
        """Poll the device now."""
        poll = await self._poller.get().poll_device(self.config, now=now)
        for warning in poll.warnings:
            logger.warning("SNMP poll warning", extra={"collector": self.name, "warning": warning})
        if poll.error is not None:
            logger.error(str(poll.error), extra={"collector": self.name, "snmp_error": poll.error.as_dict()})
        return list(poll.records)

    def close(self) -> None:
        """Release the shared poller's socket (at shutdown)."""
        self._poller.close()


class TwampCollector:
    """A ``[[twamp]]`` TWAMP-light session: two ``owamp`` records (src -> dst, dst -> src) per run."""

    exclusive_group = None

    def __init__(self, target: TwampTarget, *, index: int, site: str, module: ModuleType) -> None:
        for needed in ("run_session", "stats_to_records"):
            if not callable(getattr(module, needed, None)):
                raise ImportError(f"collectors.twamp has no {needed}()")
        self.target = target
        self.site = site
        self.name = f"twamp[{index}]:{target.dst}"
        self.interval_s = target.interval_s
        self.timeout_s = (target.packets - 1) * target.packet_interval_s + target.timeout_s + _MARGIN_S
        self.exclusive_groups = (host_group(target.host),)
        self._module = module

    async def collect(self, now: datetime) -> list[dict[str, Any]]:
        """Run one session now. A host name that does not resolve raises (logged by the scheduler)."""
        t = self.target
        options: dict[str, Any] = {"packets": t.packets, "interval_s": t.packet_interval_s, "timeout_s": t.timeout_s}
        if t.padding_bytes is not None:
            options["padding_bytes"] = t.padding_bytes
        stats = await self._module.run_session(t.host, t.port, **options)
        return self._module.stats_to_records(stats, self.site, t.dst, now, dst_host=t.host)


# --- building ------------------------------------------------------------------------------------


def build_collectors(
    config: AgentConfig,
    *,
    runner: CommandRunner | None = None,
    import_module: ModuleLoader = importlib.import_module,
    retrans_counter: Any | None = None,
) -> list[Any]:
    """Every collector of ``config``; SNMP/TWAMP tables whose module is missing are skipped (logged).

    Raises ConfigError when ``collectors.snmp`` refuses a ``[[snmp]]`` table.
    """
    runner = runner or SubprocessRunner()
    site = config.agent.site
    if retrans_counter is None:
        retrans_counter = nuttcp.ProcNetSnmpRetransCounter()
    built: list[Any] = []
    # interval_s = 0: the table serves tests on demand only (agents/jobs.py), it is not scheduled
    built += [
        NuttcpCollector(c, index=i, site=site, runner=runner, retrans=retrans_counter)
        for i, c in enumerate(config.nuttcp)
        if c.interval_s
    ]
    built += [OwampCollector(c, index=i, site=site, runner=runner) for i, c in enumerate(config.owamp) if c.interval_s]
    built += [
        TracerouteCollector(c, index=i, site=site, runner=runner)
        for i, c in enumerate(config.traceroute)
        if c.interval_s
    ]
    built += [HostTcpCollector(t, index=i, site=site) for i, t in enumerate(config.host_tcp)]
    built += [
        ReplayCollector(t, index=i, site=site, state_dir=config.agent.spool_dir) for i, t in enumerate(config.replay)
    ]
    if config.snmp:
        built += _snmp_collectors(config, import_module)
    if config.twamp:
        built += _twamp_collectors(config, import_module)
    return built


def close_collectors(collectors: list[Any]) -> None:
    """Release what collectors hold (the SNMP socket); called once the scheduler has stopped."""
    for collector in collectors:
        close = getattr(collector, "close", None)
        if close is not None:
            with contextlib.suppress(Exception):
                close()


def _snmp_collectors(config: AgentConfig, import_module: ModuleLoader) -> list[Any]:
    try:
        module = import_module("collectors.snmp")
        for needed in ("SnmpDeviceConfig", "SnmpPoller"):
            if not hasattr(module, needed):
                raise ImportError(f"collectors.snmp has no {needed}")
    except ImportError as exc:  # the module, or pysnmp under it, is not installed
        logger.error(
            "SNMP collector unavailable: [[snmp]] tables skipped",
            extra={"equipment": [t.equipment for t in config.snmp], "error": str(exc)},
        )
        return []
    poller = _SharedSnmpPoller(module)
    built: list[Any] = []
    errors: list[str] = []
    for index, target in enumerate(config.snmp):
        try:
            built.append(SnmpCollector(target, index=index, site=config.agent.site, module=module, poller=poller))
        except (ValueError, TypeError) as exc:  # the module's own checks of the table
            errors.append(f"{config.source}: snmp[{index}]: {exc}")
    if errors:
        raise ConfigError(errors)
    return built


def _twamp_collectors(config: AgentConfig, import_module: ModuleLoader) -> list[Any]:
    try:
        module = import_module("collectors.twamp")
        return [
            TwampCollector(target, index=index, site=config.agent.site, module=module)
            for index, target in enumerate(config.twamp)
        ]
    except ImportError as exc:
        logger.error(
            "TWAMP collector unavailable: [[twamp]] tables skipped",
            extra={"tables": len(config.twamp), "error": str(exc)},
        )
        return []


def describe(collectors: list[Any]) -> list[Mapping[str, Any]]:
    """Name, interval, timeout and exclusive groups of each collector (logged at start-up)."""
    return [
        {
            "name": c.name,
            "interval_s": c.interval_s,
            "timeout_s": getattr(c, "timeout_s", None) or c.interval_s,
            "exclusive_groups": exclusive_groups(c),
        }
        for c in collectors
    ]
