"""SNMP interface collector: IF-MIB counters of routers and switches as ``snmp`` records.

Two halves, as every collector here (STYLE.md, "the collector boundary"):

* a transport behind the small :class:`SnmpTransport` protocol (``get`` scalars, ``bulk_walk``
  one column), implemented with pysnmp 7's asyncio API by :class:`SnmpPoller`. This is the only
  module that imports pysnmp, and only when a poller is created;
* pure functions from plain values to records: :func:`read_device` turns the walked columns
  (``{column OID: {ifIndex: value}}``) and scalars into :class:`InterfaceReading` rows,
  :func:`build_records` into wire :class:`~collectors.records.SnmpRecord` objects. They need no
  network and no pysnmp.

The ``[[snmp]]`` table itself is :class:`~collectors.snmp_config.SnmpDeviceConfig` (re-exported here).

What one poll of a device reads (numeric OIDs, no MIB lookups):

1. GET ``sysUpTime.0``, ``snmpEngineBoots.0`` and ``snmpEngineTime.0`` (SNMP-FRAMEWORK-MIB). This
   first request is also the reachability probe: a dead device costs one request and its
   retries, not a burst of walks. The records' time is the moment this request was answered,
   so that the uptime and the time the centre compares it with are one reading.
2. GETBULK walks, concurrently (one column per walk; at most ``max_parallel_requests`` at once),
   the counter columns first so that they are read right after the uptime: ifHCIn/OutOctets,
   ifHCIn/OutUcastPkts, ifIn/OutErrors, ifIn/OutDiscards, ifCounterDiscontinuityTime, then
   ifName, ifDescr, ifAlias, ifHighSpeed, ifMtu, ifAdminStatus, ifOperStatus (and ifType when
   the configuration selects by type).
3. Only for selected interfaces that lack them: ifIn/OutOctets (Counter32) where there are no HC
   octet counters, ifSpeed where there is no ifHighSpeed.

Restart detection. ``sys_uptime_ticks`` is sysUpTime.0; a view without it (LibreNMS trims it
from captures, operators grant IF-MIB-only views) gets ``snmpEngineTime.0 x 100`` modulo 2^32
instead (the SNMP engine's uptime in TimeTicks, 1 s resolution, wrapping like sysUpTime). With
neither, the records carry no ``sys_uptime_ticks``: the centre then relies on snmpEngineBoots or
ifCounterDiscontinuityTime when present, and otherwise takes a counter that goes back for a
reset, never a wrap. The device says so once (a ``restart detection`` warning), not every poll.

Names. An interface is named by ``if_index_names``, else ifName, else ifDescr (old agents
without ifXTable), else ``ifIndex.N``; names are cleaned for the wire schema (no control
characters, at most 128 characters). A name that several interfaces of the device share is
made unique by appending ``#<ifIndex>`` to each of them (``Vlan10#3``, ``Vlan10#7``; a name from
``if_index_names`` is never changed): the suffix depends only on the device's own ifIndex, so it
is stable from poll to poll and whatever the selection.

Selection: :class:`InterfaceSelection` (``interfaces``, ``include``/``exclude`` globs,
``if_types``, ``admin_status``, ``require_octet_counters``; see collectors.snmp_config).

Warnings. What a poll ignores (an ifMtu of 2147483647 on a Junos SRX's internal interfaces, a
column the agent refuses) is a :class:`PollWarning` with a ``kind``; the values of one kind are
grouped into one warning per poll. :class:`SnmpPoller` reports each kind once per device as
``DevicePoll.warnings`` (the agent logs them) and later ones as ``DevicePoll.repeated``, logged
at debug level only: a device is not a warning source every minute.

Failures. A poll either returns records for the device's interfaces, or no records and a
:class:`SnmpPollError` (timeout, authentication, unresolvable host, per-device deadline...):
the wire ``snmp`` record describes one interface and requires ``equipment`` *and*
``interface``, so a dead device cannot be a record; the agent logs ``DevicePoll.error``. A
column the agent answers with an SNMP error status (e.g. genErr on ifCounterDiscontinuityTime)
is left out with a warning instead of failing the device. :func:`poll_devices` polls all
devices concurrently; a slow or dead device never delays the others beyond its own deadline.

Known pysnmp 7 traps handled here: ``bulk_walk_cmd`` yields a timeout and then retries forever
(we stop at the first error indication); one SnmpEngine per event loop (a poller binds to the
loop it first runs on); one varbind per bulk walk (columns are walked as separate, concurrent
walks); USM users are keyed by user name in an engine, so devices with the same v3 user name
but different keys get separate engines.
"""

from __future__ import annotations

import asyncio
import dataclasses
import ipaddress
import logging
import re
import time as _time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any, Final, Protocol, runtime_checkable

from collectors.counters import COUNTER_SPECS, TICKS_PER_S, TIMETICKS_MAX, TIMETICKS_MODULUS
from collectors.records import Counters, SnmpRecord
from collectors.snmp_config import (
    ADMIN_STATUS,
    AUTH_PROTOCOLS,
    DEFAULT_MAX_PARALLEL_REQUESTS,
    DEFAULT_MAX_REPETITIONS,
    DEFAULT_PORT,
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT_S,
    IF_INDEX_MAX,
    IF_TYPES,
    MIN_DEFAULT_DEADLINE_S,
    MIN_KEY_CHARS,
    PRIV_PROTOCOLS,
    VERSIONS,
    SnmpConfigError,
    SnmpDeviceConfig,
    if_type_label,
)

if TYPE_CHECKING:
    from pysnmp.hlapi.v3arch.asyncio import SnmpEngine

__all__ = [
    "ADMIN_STATUS",
    "ALL_COLUMNS",
    "AUTH_PROTOCOLS",
    "DEFAULT_MAX_PARALLEL_REQUESTS",
    "DEFAULT_MAX_REPETITIONS",
    "DEFAULT_PORT",
    "DEFAULT_RETRIES",
    "DEFAULT_TIMEOUT_S",
    "ERROR_AUTH",
    "ERROR_CONFIG",
    "ERROR_DEADLINE",
    "ERROR_INTERNAL",
    "ERROR_NO_DATA",
    "ERROR_PROTOCOL",
    "ERROR_RESOLVE",
    "ERROR_RESPONSE",
    "ERROR_TIMEOUT",
    "FALLBACK_COLUMNS",
    "IF_TYPES",
    "MIN_DEFAULT_DEADLINE_S",
    "MIN_KEY_CHARS",
    "PRIMARY_COLUMNS",
    "PRIV_PROTOCOLS",
    "SCALAR_OIDS",
    "VERSIONS",
    "DevicePoll",
    "DeviceReading",
    "InterfaceReading",
    "InterfaceSelection",
    "PollWarning",
    "SnmpConfigError",
    "SnmpDeviceConfig",
    "SnmpError",
    "SnmpPollError",
    "SnmpPoller",
    "SnmpTransport",
    "WarningMemory",
    "build_records",
    "fallback_columns",
    "if_type_label",
    "index_column",
    "poll_device",
    "poll_devices",
    "poll_with_transport",
    "read_device",
    "records_from_reading",
]

logger = logging.getLogger(__name__)

# --- OIDs --------------------------------------------------------------------------------------

SYS_UPTIME: Final = "1.3.6.1.2.1.1.3.0"  # SNMPv2-MIB sysUpTime.0, TimeTicks
SNMP_ENGINE_BOOTS: Final = "1.3.6.1.6.3.10.2.1.2.0"  # SNMP-FRAMEWORK-MIB snmpEngineBoots.0
SNMP_ENGINE_TIME: Final = "1.3.6.1.6.3.10.2.1.3.0"  # SNMP-FRAMEWORK-MIB snmpEngineTime.0, seconds
SCALAR_OIDS: Final = (SYS_UPTIME, SNMP_ENGINE_BOOTS, SNMP_ENGINE_TIME)

_IF_ENTRY = "1.3.6.1.2.1.2.2.1"  # IF-MIB ifTable
_IFX_ENTRY = "1.3.6.1.2.1.31.1.1.1"  # IF-MIB ifXTable
IF_DESCR: Final = f"{_IF_ENTRY}.2"
IF_TYPE: Final = f"{_IF_ENTRY}.3"  # IANAifType
IF_MTU: Final = f"{_IF_ENTRY}.4"
IF_SPEED: Final = f"{_IF_ENTRY}.5"  # Gauge32, bit/s; 4294967295 means "see ifHighSpeed"
IF_ADMIN_STATUS: Final = f"{_IF_ENTRY}.7"
IF_OPER_STATUS: Final = f"{_IF_ENTRY}.8"
IF_IN_OCTETS: Final = f"{_IF_ENTRY}.10"
IF_IN_DISCARDS: Final = f"{_IF_ENTRY}.13"
IF_IN_ERRORS: Final = f"{_IF_ENTRY}.14"
IF_OUT_OCTETS: Final = f"{_IF_ENTRY}.16"
IF_OUT_DISCARDS: Final = f"{_IF_ENTRY}.19"
IF_OUT_ERRORS: Final = f"{_IF_ENTRY}.20"
IF_NAME: Final = f"{_IFX_ENTRY}.1"
IF_HC_IN_OCTETS: Final = f"{_IFX_ENTRY}.6"
IF_HC_IN_UCAST_PKTS: Final = f"{_IFX_ENTRY}.7"
IF_HC_OUT_OCTETS: Final = f"{_IFX_ENTRY}.10"
IF_HC_OUT_UCAST_PKTS: Final = f"{_IFX_ENTRY}.11"
IF_HIGH_SPEED: Final = f"{_IFX_ENTRY}.15"  # Gauge32, Mbit/s
IF_ALIAS: Final = f"{_IFX_ENTRY}.18"
IF_COUNTER_DISCONTINUITY_TIME: Final = f"{_IFX_ENTRY}.19"  # TimeTicks

# Counter name (records.Counters / counters.COUNTER_SPECS) -> column.
COUNTER_COLUMNS: Final[Mapping[str, str]] = {
    "hc_in_octets": IF_HC_IN_OCTETS,
    "hc_out_octets": IF_HC_OUT_OCTETS,
    "hc_in_ucast_pkts": IF_HC_IN_UCAST_PKTS,
    "hc_out_ucast_pkts": IF_HC_OUT_UCAST_PKTS,
    "in_octets": IF_IN_OCTETS,
    "out_octets": IF_OUT_OCTETS,
    "in_errors": IF_IN_ERRORS,
    "out_errors": IF_OUT_ERRORS,
    "in_discards": IF_IN_DISCARDS,
    "out_discards": IF_OUT_DISCARDS,
}
# 32-bit octet counters are reported only where the 64-bit one is missing (FORMAT.md).
_OCTET_FALLBACKS: Final = {"in_octets": "hc_in_octets", "out_octets": "hc_out_octets"}

PRIMARY_COLUMNS: Final = (
    # Counters first: with max_parallel_requests walks at once they are read right after the uptime.
    IF_HC_IN_OCTETS,
    IF_HC_OUT_OCTETS,
    IF_HC_IN_UCAST_PKTS,
    IF_HC_OUT_UCAST_PKTS,
    IF_IN_ERRORS,
    IF_OUT_ERRORS,
    IF_IN_DISCARDS,
    IF_OUT_DISCARDS,
    IF_COUNTER_DISCONTINUITY_TIME,
    IF_NAME,
    IF_DESCR,
    IF_ALIAS,
    IF_HIGH_SPEED,
    IF_MTU,
    IF_ADMIN_STATUS,
    IF_OPER_STATUS,
)
"""Walked on every poll."""
FALLBACK_COLUMNS: Final = (IF_IN_OCTETS, IF_OUT_OCTETS, IF_SPEED)
"""Walked only when a selected interface lacks the HC octet counters or ifHighSpeed."""
SELECTION_COLUMNS: Final = (IF_TYPE,)
"""Walked only when the configuration selects interfaces by ifType."""
ALL_COLUMNS: Final = PRIMARY_COLUMNS + FALLBACK_COLUMNS
OCTET_COUNTERS: Final = ("hc_in_octets", "hc_out_octets", "in_octets", "out_octets")

OPER_STATUS: Final[Mapping[int, str]] = {
    1: "up",
    2: "down",
    3: "testing",
    4: "unknown",
    5: "dormant",
    6: "notPresent",
    7: "lowerLayerDown",
}

IF_SPEED_SATURATED: Final = 2**32 - 1  # ifSpeed's "too fast for 32 bits" value
ENGINE_BOOTS_MAX: Final = 2**31 - 1
ENGINE_TIME_MAX: Final = 2**31 - 1  # snmpEngineTime, seconds
SPEED_MBPS_MAX: Final = 1e7  # records.SpeedMbps
MTU_MAX: Final = 65536
NAME_MAX_CHARS: Final = 128  # records.InterfaceName
DEFAULT_MAX_CONCURRENT_DEVICES: Final = 64
MAX_WALK_ROWS: Final = 100_000  # a column longer than this is an agent bug, not a router

# --- errors ------------------------------------------------------------------------------------

ERROR_TIMEOUT: Final = "timeout"  # no response within timeout_s x (retries + 1)
ERROR_DEADLINE: Final = "deadline"  # the whole poll took longer than deadline_s
ERROR_AUTH: Final = "auth"  # SNMPv3 USM: unknown user, wrong key, unsupported level...
ERROR_RESOLVE: Final = "resolve"  # host name does not resolve
ERROR_RESPONSE: Final = "response"  # the agent answered with an error status
ERROR_PROTOCOL: Final = "protocol"  # other SNMP engine errors (malformed, non-increasing OIDs...)
ERROR_NO_DATA: Final = "no_data"  # answered, but without any interface
ERROR_CONFIG: Final = "config"  # the device configuration cannot be used
ERROR_INTERNAL: Final = "internal"  # a bug here or in pysnmp; the message has the exception

# pysnmp error indications (pysnmp.proto.errind class names) that mean "credentials".
_AUTH_INDICATIONS: Final = frozenset(
    {
        "UnknownUserName",
        "WrongDigest",
        "DecryptionError",
        "EncryptionError",
        "AuthenticationError",
        "AuthenticationFailure",
        "UnsupportedSecurityLevel",
        "UnsupportedAuthProtocol",
        "UnsupportedPrivProtocol",
        "UnknownSecurityName",
        "NoAuthentication",
        "NoEncryption",
    }
)


class SnmpError(Exception):
    """An SNMP request failed. ``kind`` is one of the ``ERROR_*`` constants."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


@dataclass(frozen=True)
class SnmpPollError:
    """Why a whole device gave no records; what the agent logs (``str()`` is the log line)."""

    equipment: str
    host: str
    port: int
    kind: str
    message: str
    time: datetime
    elapsed_s: float

    def __str__(self) -> str:
        return f"SNMP poll of {self.equipment} ({self.host}:{self.port}) failed after {self.elapsed_s:.2f} s: " + (
            f"{self.kind}: {self.message}"
        )

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready fields for structured logs."""
        return {
            "equipment": self.equipment,
            "host": self.host,
            "port": self.port,
            "kind": self.kind,
            "message": self.message,
            "time": self.time.isoformat(),
            "elapsed_s": round(self.elapsed_s, 3),
        }


# --- plain values ------------------------------------------------------------------------------

SnmpValue = int | bytes | str | None
"""A varbind value after the transport: numbers as int (Counter64 exact), OCTET STRING as bytes,
OIDs as dotted text, None for noSuchObject / noSuchInstance / endOfMibView."""
Walks = Mapping[str, Mapping[int, SnmpValue]]
"""Walked columns: column OID -> {ifIndex: value}."""
Scalars = Mapping[str, SnmpValue]
"""Scalar OID (with its ``.0``) -> value."""


@runtime_checkable
class SnmpTransport(Protocol):
    """Talks SNMP to one device. Raises :class:`SnmpError` when a request fails."""

    async def get(self, oids: Sequence[str]) -> dict[str, SnmpValue]:
        """GET these OIDs in one request; absent objects map to None."""
        ...

    async def bulk_walk(self, oid: str) -> dict[str, SnmpValue]:
        """GETBULK-walk the subtree under ``oid``; full OID -> value, within the subtree only."""
        ...


def index_column(column_oid: str, rows: Mapping[str, SnmpValue]) -> dict[int, SnmpValue]:
    """``{ifIndex: value}`` of a walked IF-MIB column (rows outside the column are ignored)."""
    prefix = column_oid + "."
    indexed: dict[int, SnmpValue] = {}
    for oid, value in rows.items():
        if not oid.startswith(prefix):
            continue
        suffix = oid[len(prefix) :]
        if suffix.isdigit():
            indexed[int(suffix)] = value
    return indexed


# --- pure reading ------------------------------------------------------------------------------


@dataclass(frozen=True)
class PollWarning:
    """Something one poll ignored or could not do. ``kind`` groups it: a device reports a kind once."""

    kind: str
    message: str

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class InterfaceSelection:
    """Which interfaces of a device are reported: the selection keys of SnmpDeviceConfig, resolved.

    ``names`` (the ``interfaces`` key) lists interfaces exactly; otherwise an interface is
    reported when it passes every filter that is set. Interfaces named by ``if_index_names``
    are always reported. The default selects every interface.
    """

    names: tuple[str, ...] | None = None
    if_index_names: Mapping[int, str] | None = None
    include: tuple[str, ...] | None = None
    exclude: tuple[str, ...] | None = None
    if_types: tuple[int, ...] | None = None
    admin_status: tuple[str, ...] | None = None
    require_octet_counters: bool = False

    @classmethod
    def from_config(cls, config: SnmpDeviceConfig) -> InterfaceSelection:
        """The selection an ``[[snmp]]`` table asks for."""
        return cls(
            names=config.interfaces,
            if_index_names=config.if_index_names,
            include=config.include,
            exclude=config.exclude,
            if_types=config.if_types,  # type: ignore[arg-type]  # numbers after SnmpDeviceConfig.__post_init__
            admin_status=config.admin_status,
            require_octet_counters=config.require_octet_counters,
        )

    def passes(self, row: InterfaceReading) -> bool:
        """True when ``row`` passes the filters (not the ``names`` list, see :func:`read_device`)."""
        if self.include is not None and not any(fnmatchcase(row.name, pattern) for pattern in self.include):
            return False
        if self.exclude is not None and any(fnmatchcase(row.name, pattern) for pattern in self.exclude):
            return False
        if self.if_types is not None and row.if_type not in self.if_types:
            return False
        if self.admin_status is not None and row.admin_status not in self.admin_status:
            return False
        return not (self.require_octet_counters and not any(name in row.counters for name in OCTET_COUNTERS))


@dataclass(frozen=True)
class InterfaceReading:
    """What one poll says about one interface (plain values, ready for a record)."""

    if_index: int
    name: str
    counters: Mapping[str, int]
    oper_status: str | None = None
    admin_status: str | None = None
    speed_mbps: float | None = None
    mtu_bytes: int | None = None
    alias: str | None = None
    counter_discontinuity_ticks: int | None = None
    if_name: str | None = None  # ifName as the device reports it (None: absent)
    if_type: int | None = None  # IANAifType number, when walked (selection by if_types)


UPTIME_SYS: Final = "sysUpTime.0"
UPTIME_ENGINE_TIME: Final = "snmpEngineTime.0"


@dataclass(frozen=True)
class DeviceReading:
    """The selected interfaces of one device plus its scalars; ``notices`` explain omissions.

    ``uptime_source`` says where ``sys_uptime_ticks`` comes from: :data:`UPTIME_SYS`,
    :data:`UPTIME_ENGINE_TIME` (snmpEngineTime x 100 modulo 2^32) or None (neither answered).
    """

    interfaces: tuple[InterfaceReading, ...]
    sys_uptime_ticks: int | None
    snmp_engine_boots: int | None
    notices: tuple[PollWarning, ...] = ()
    interfaces_seen: int = 0  # ifIndex values the device reported, before the selection
    uptime_source: str | None = None

    @property
    def warnings(self) -> tuple[str, ...]:
        """The notices' messages."""
        return tuple(notice.message for notice in self.notices)


class _Notices:
    """Collects a poll's notices; values of one kind (column and problem) become one notice."""

    MAX_LISTED = 5

    def __init__(self) -> None:
        self._single: list[PollWarning] = []
        self._grouped: dict[str, list[str]] = {}

    def add(self, kind: str, message: str) -> None:
        self._single.append(PollWarning(kind, message))

    def value(self, kind: str, item: str) -> None:
        """``item`` (e.g. ``ifIndex 6: 2147483647``) shows one value of ``kind`` (e.g. ``ifMtu: ...``)."""
        self._grouped.setdefault(kind, []).append(item)

    def result(self) -> tuple[PollWarning, ...]:
        grouped = []
        for kind, items in self._grouped.items():
            shown = ", ".join(items[: self.MAX_LISTED])
            more = f" and {len(items) - self.MAX_LISTED} more" if len(items) > self.MAX_LISTED else ""
            grouped.append(PollWarning(kind, f"{kind} ({shown}{more})"))
        return tuple(grouped + self._single)


def read_device(
    walks: Walks,
    scalars: Scalars,
    *,
    interface_filter: Iterable[str] | None = None,
    if_index_names: Mapping[int, str] | None = None,
    selection: InterfaceSelection | None = None,
) -> DeviceReading:
    """Interfaces and scalars of one poll, from plain values.

    Interfaces are the ifIndex values present in any walked column, in ifIndex order. Each gets
    its name (module docstring: ``if_index_names``, else ifName, else ifDescr, else
    ``ifIndex.N``; a name several interfaces share gets ``#<ifIndex>``), its HC counters where
    present and the Counter32 octet counters only where the HC ones are missing. Values of the
    wrong type or out of range (a Counter32 above 2^32-1, an ifMtu of 2^31-1) are left out with a
    notice, one per kind of value, rather than sent. ``selection`` (or, for short,
    ``interface_filter`` = its ``names`` and ``if_index_names``) picks the interfaces reported;
    names or ifIndex values not found become notices.
    """
    if selection is None:
        names = tuple(interface_filter) if interface_filter is not None else None
        selection = InterfaceSelection(names=names, if_index_names=if_index_names)
    notices = _Notices()
    sys_uptime = _uint(scalars.get(SYS_UPTIME), TIMETICKS_MAX, notices, "sysUpTime.0", "value")
    engine_boots = _uint(scalars.get(SNMP_ENGINE_BOOTS), ENGINE_BOOTS_MAX, notices, "snmpEngineBoots.0", "value")
    engine_time = _uint(scalars.get(SNMP_ENGINE_TIME), ENGINE_TIME_MAX, notices, "snmpEngineTime.0", "value")
    if sys_uptime is not None:
        uptime, source = sys_uptime, UPTIME_SYS
    elif engine_time is not None:
        # The SNMP engine's uptime as TimeTicks, wrapping at 2^32 like sysUpTime (the centre knows that wrap).
        uptime, source = engine_time * TICKS_PER_S % TIMETICKS_MODULUS, UPTIME_ENGINE_TIME
    else:
        uptime, source = None, None

    explicit = selection.if_index_names or {}
    indexes = sorted({index for column in walks.values() for index in column if 1 <= index <= IF_INDEX_MAX})
    rows = _unique_names([_read_interface(index, walks, explicit, notices) for index in indexes], explicit, notices)
    selected = _select(rows, selection, notices)
    if source != UPTIME_SYS and selected:
        _restart_detection_notice(source, engine_boots, selected, notices)
    return DeviceReading(
        interfaces=tuple(selected),
        sys_uptime_ticks=uptime,
        snmp_engine_boots=engine_boots,
        notices=notices.result(),
        interfaces_seen=len(rows),
        uptime_source=source,
    )


def _restart_detection_notice(
    source: str | None, engine_boots: int | None, rows: Sequence[InterfaceReading], notices: _Notices
) -> None:
    detectors = [UPTIME_ENGINE_TIME] if source == UPTIME_ENGINE_TIME else []
    if engine_boots is not None:
        detectors.append("snmpEngineBoots.0")
    with_discontinuity = sum(1 for row in rows if row.counter_discontinuity_ticks is not None)
    if with_discontinuity:
        detectors.append(f"ifCounterDiscontinuityTime ({with_discontinuity} of {len(rows)} interfaces)")
    if detectors:
        how = "restarts are detected from " + ", ".join(detectors)
        if source == UPTIME_ENGINE_TIME:
            how += " (sent as sys_uptime_ticks, 1 s resolution)"
    else:
        how = (
            "nor snmpEngineTime.0, snmpEngineBoots.0 or ifCounterDiscontinuityTime: the centre takes any counter "
            "that goes back for a reset, never a wrap"
        )
    notices.add("restart detection", f"no sysUpTime.0 in this device's view: restart detection is limited; {how}")


def fallback_columns(reading: DeviceReading) -> tuple[str, ...]:
    """The FALLBACK_COLUMNS a second round must walk for the selected interfaces."""
    needed: list[str] = []
    for counter, column in (("in_octets", IF_IN_OCTETS), ("out_octets", IF_OUT_OCTETS)):
        hc = _OCTET_FALLBACKS[counter]
        if any(hc not in row.counters and counter not in row.counters for row in reading.interfaces):
            needed.append(column)
    if any(row.speed_mbps is None for row in reading.interfaces):
        needed.append(IF_SPEED)
    return tuple(needed)


def records_from_reading(
    reading: DeviceReading, *, equipment: str, time: datetime, host: str | None = None
) -> list[SnmpRecord]:
    """One ``snmp`` record per selected interface (``sys_uptime_ticks`` absent when the view has no uptime)."""
    moment = _utc(time)
    return [
        SnmpRecord(
            time=moment,
            equipment=equipment,
            interface=row.name,
            counters=Counters(**row.counters),
            if_index=row.if_index,
            host=host,
            sys_uptime_ticks=reading.sys_uptime_ticks,
            snmp_engine_boots=reading.snmp_engine_boots,
            counter_discontinuity_ticks=row.counter_discontinuity_ticks,
            oper_status=row.oper_status or "unknown",  # type: ignore[arg-type]  # OPER_STATUS labels
            admin_status=row.admin_status,  # type: ignore[arg-type]
            speed_mbps=row.speed_mbps,
        )
        for row in reading.interfaces
    ]


def build_records(
    device_name: str,
    walks: Walks,
    scalars: Scalars,
    now: datetime,
    interface_filter: Iterable[str] | None = None,
    *,
    host: str | None = None,
    if_index_names: Mapping[int, str] | None = None,
    selection: InterfaceSelection | None = None,
) -> list[SnmpRecord]:
    """The ``snmp`` records of one poll: :func:`read_device` then :func:`records_from_reading`.

    ``walks`` maps column OIDs (``IF_HC_IN_OCTETS``...) to ``{ifIndex: value}``, ``scalars``
    maps ``SYS_UPTIME``/``SNMP_ENGINE_BOOTS``/``SNMP_ENGINE_TIME`` to values; ``device_name`` is
    the inventory's equipment name and ``now`` (timezone-aware) the poll time. Counter64 values
    are Python ints and pass through exactly (18446744073000000000 stays 18446744073000000000).
    """
    reading = read_device(
        walks, scalars, interface_filter=interface_filter, if_index_names=if_index_names, selection=selection
    )
    return records_from_reading(reading, equipment=device_name, time=now, host=host)


def _read_interface(index: int, walks: Walks, if_index_names: Mapping[int, str], notices: _Notices) -> InterfaceReading:
    def value(column: str) -> SnmpValue:
        return walks.get(column, {}).get(index)

    label = f"ifIndex {index}"
    if_name = _text(value(IF_NAME))
    name = _clean_name(if_index_names.get(index)) or _clean_name(if_name) or _clean_name(_text(value(IF_DESCR)))
    name = name or f"ifIndex.{index}"

    counters: dict[str, int] = {}
    for counter, column in COUNTER_COLUMNS.items():
        if counter in _OCTET_FALLBACKS and _OCTET_FALLBACKS[counter] in counters:
            continue  # 64-bit present: the 32-bit octet counter is not reported
        number = _uint(value(column), COUNTER_SPECS[counter].modulus - 1, notices, counter, label)
        if number is not None:
            counters[counter] = number

    oper = _status(value(IF_OPER_STATUS), OPER_STATUS, notices, "ifOperStatus", label)
    if oper is None and value(IF_OPER_STATUS) is None:
        notices.value("ifOperStatus: absent, reported as 'unknown'", name)
    admin = _status(value(IF_ADMIN_STATUS), ADMIN_STATUS, notices, "ifAdminStatus", label)
    mtu = _uint(value(IF_MTU), MTU_MAX, notices, "ifMtu", label)
    if_type = _uint(value(IF_TYPE), IF_INDEX_MAX, notices, "ifType", label)
    return InterfaceReading(
        if_index=index,
        name=name,
        counters=counters,
        oper_status=oper,
        admin_status=admin,
        speed_mbps=_speed_mbps(value(IF_HIGH_SPEED), value(IF_SPEED), notices, label),
        mtu_bytes=mtu or None,  # 0: no MTU (e.g. a loopback)
        alias=_clean_text(_text(value(IF_ALIAS))),
        counter_discontinuity_ticks=_uint(
            value(IF_COUNTER_DISCONTINUITY_TIME), TIMETICKS_MAX, notices, "ifCounterDiscontinuityTime", label
        ),
        if_name=if_name,
        if_type=if_type,
    )


def _unique_names(
    rows: list[InterfaceReading], explicit: Mapping[int, str], notices: _Notices
) -> list[InterfaceReading]:
    """Rows whose names are unique on the device: a shared name gets ``#<ifIndex>`` (module docstring)."""
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.name] = counts.get(row.name, 0) + 1
    renamed: list[InterfaceReading] = []
    shared: set[str] = set()
    for row in rows:
        if counts[row.name] > 1 and row.if_index not in explicit:
            shared.add(row.name)
            suffix = f"#{row.if_index}"
            name = row.name[: NAME_MAX_CHARS - len(suffix)].rstrip() + suffix
            row = dataclasses.replace(row, name=name)
        renamed.append(row)
    for name in sorted(shared):
        notices.value("interface names shared by several ifIndex values, each suffixed with #ifIndex", repr(name))
    # A suffixed name that happens to be another interface's real name: the later ifIndex cannot be named.
    seen: dict[str, int] = {}
    unique: list[InterfaceReading] = []
    for row in renamed:
        if row.name in seen:
            notices.add(
                f"duplicate name {row.name}",
                f"interface name {row.name!r} is used by ifIndex {seen[row.name]} and {row.if_index}; "
                f"ifIndex {row.if_index} left out (name it with if_index_names)",
            )
            continue
        seen[row.name] = row.if_index
        unique.append(row)
    return unique


def _select(rows: list[InterfaceReading], selection: InterfaceSelection, notices: _Notices) -> list[InterfaceReading]:
    explicit = selection.if_index_names or {}
    present = {row.if_index for row in rows}
    for index, name in explicit.items():
        if index not in present:
            notices.add(f"ifIndex {index} not found", f"ifIndex {index} ({name!r}) not found on the device")
    if selection.names is None:
        return [row for row in rows if row.if_index in explicit or selection.passes(row)]
    keep = {index for index in explicit if index in present}
    for wanted in dict.fromkeys(selection.names):
        # The device's own name matches every interface sharing it (xe-0/0/0 -> xe-0/0/0#5, xe-0/0/0#9).
        matches = [row.if_index for row in rows if row.name == wanted or _base_name(row) == wanted]
        if matches:
            keep.update(matches)
        else:
            notices.add(
                f"interface {wanted} not found", f"interface {wanted!r} not found on the device (ifName, ifDescr)"
            )
    return [row for row in rows if row.if_index in keep]


def _base_name(row: InterfaceReading) -> str:
    suffix = f"#{row.if_index}"
    return row.name[: -len(suffix)] if row.name.endswith(suffix) else row.name


def _uint(value: SnmpValue, maximum: int, notices: _Notices, what: str, subject: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= maximum:
        notices.value(f"{what}: not a number within 0..{maximum}, left out", f"{subject} {value!r}")
        return None
    return value


def _status(value: SnmpValue, labels: Mapping[int, str], notices: _Notices, what: str, subject: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and value in labels:
        return labels[value]
    notices.value(f"{what}: not a known status, left out", f"{subject} {value!r}")
    return None


def _speed_mbps(high_speed: SnmpValue, speed: SnmpValue, notices: _Notices, subject: str) -> float | None:
    mbps = _uint(high_speed, int(SPEED_MBPS_MAX), notices, "ifHighSpeed", subject)
    if mbps is not None:
        return float(mbps)
    bps = _uint(speed, IF_SPEED_SATURATED, notices, "ifSpeed", subject)
    if bps is None or bps == IF_SPEED_SATURATED:
        return None  # saturated ifSpeed without ifHighSpeed: the speed is unknown, not 4.29 Gb/s
    return bps / 1e6


def _text(value: SnmpValue) -> str | None:
    if value is None:
        return None
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


_CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f\ud800-\udfff]")


def _clean_text(text: str | None) -> str | None:
    if text is None:
        return None
    cleaned = _CONTROL_CHARS.sub("", text).strip()
    return cleaned or None


def _clean_name(text: str | None) -> str | None:
    """An interface name the wire schema accepts (no control characters, trimmed, <= 128 chars)."""
    cleaned = _clean_text(text)
    if cleaned is None:
        return None
    return cleaned[:NAME_MAX_CHARS].rstrip() or None


def _utc(moment: datetime) -> datetime:
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError("time must be timezone-aware (UTC expected), got a naive datetime")
    return moment.astimezone(UTC)


# --- one device through a transport ------------------------------------------------------------


@dataclass(frozen=True)
class DevicePoll:
    """The outcome of polling one device: records, or no records and ``error``.

    ``notices`` are everything this poll ignored; ``warnings`` the messages to log as warnings
    now and ``repeated`` those of kinds the device already reported (:class:`WarningMemory`;
    without one, every notice is a warning).
    """

    equipment: str
    host: str
    port: int
    time: datetime
    elapsed_s: float
    records: tuple[SnmpRecord, ...] = ()
    interfaces: tuple[InterfaceReading, ...] = ()
    error: SnmpPollError | None = None
    warnings: tuple[str, ...] = ()
    repeated: tuple[str, ...] = ()
    notices: tuple[PollWarning, ...] = ()
    uptime_source: str | None = None

    @property
    def ok(self) -> bool:
        """True when the device answered and gave records (possibly none, see ``warnings``)."""
        return self.error is None


class WarningMemory:
    """Which notice kinds each device has reported: a kind is a warning once per device, then debug only.

    A Junos SRX reports ifMtu 2147483647 on its internal interfaces at every poll; said every
    minute that would be 1 440 warnings a day about one harmless value.
    """

    def __init__(self) -> None:
        self._reported: dict[tuple[str, str, int], set[str]] = {}

    def split(
        self, config: SnmpDeviceConfig, notices: Iterable[PollWarning]
    ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(new warnings, repeated ones) for this poll of ``config``'s device; remembers the new kinds."""
        reported = self._reported.setdefault((config.equipment, config.host, config.port), set())
        new: list[str] = []
        repeated: list[str] = []
        for notice in notices:
            (repeated if notice.kind in reported else new).append(notice.message)
            reported.add(notice.kind)
        return tuple(new), tuple(repeated)


async def poll_with_transport(
    transport: SnmpTransport,
    config: SnmpDeviceConfig,
    *,
    now: datetime | None = None,
    started: float | None = None,
    memory: WarningMemory | None = None,
) -> DevicePoll:
    """Poll one device through ``transport`` within ``config.effective_deadline_s``.

    Never raises for anything the device, the network or pysnmp does (only cancellation
    propagates): failures are ``DevicePoll.error``. The records' time is the moment the first
    request (the uptime) was answered: ``now`` (default: the UTC clock) plus the time since
    ``started`` (``time.monotonic()`` when the poll began, if before this call: name
    resolution). ``memory`` turns notice kinds the device already reported into ``repeated``.
    """
    started = _time.monotonic() if started is None else started
    start_time = datetime.now(UTC)
    base_time = _utc(now) if now is not None else start_time - timedelta(seconds=_time.monotonic() - started)
    deadline_s = config.effective_deadline_s
    try:
        async with asyncio.timeout(max(0.0, deadline_s - (_time.monotonic() - started))):
            reading, answered, column_notices = await _read(transport, config)
        if reading.interfaces_seen == 0:
            raise SnmpError(
                ERROR_NO_DATA,
                "the device returned no IF-MIB interface rows (is IF-MIB in the view of this community/user?)",
            )
        poll_time = base_time + timedelta(seconds=answered - started)
        records = records_from_reading(reading, equipment=config.equipment, time=poll_time, host=config.host)
    except TimeoutError:
        return _failed(
            config,
            start_time,
            started,
            ERROR_DEADLINE,
            f"poll did not finish within its deadline of {deadline_s:g} s",
        )
    except SnmpError as exc:
        return _failed(config, start_time, started, exc.kind, exc.message)
    except Exception as exc:  # one device's surprise must not abort the cycle
        return _failed(config, start_time, started, ERROR_INTERNAL, f"{type(exc).__name__}: {exc}")
    notices = column_notices + reading.notices
    if memory is None:
        warnings, repeated = tuple(notice.message for notice in notices), ()
    else:
        warnings, repeated = memory.split(config, notices)
    return DevicePoll(
        equipment=config.equipment,
        host=config.host,
        port=config.port,
        time=poll_time,
        elapsed_s=_time.monotonic() - started,
        records=tuple(records),
        interfaces=reading.interfaces,
        warnings=warnings,
        repeated=repeated,
        notices=notices,
        uptime_source=reading.uptime_source,
    )


async def _read(
    transport: SnmpTransport, config: SnmpDeviceConfig
) -> tuple[DeviceReading, float, tuple[PollWarning, ...]]:
    """The reading, the monotonic time the uptime was answered, and the notices of refused columns."""
    scalars = await transport.get(SCALAR_OIDS)
    answered = _time.monotonic()
    limit = asyncio.Semaphore(config.max_parallel_requests)
    notices: list[PollWarning] = []
    selection = InterfaceSelection.from_config(config)
    columns = PRIMARY_COLUMNS + (SELECTION_COLUMNS if selection.if_types is not None else ())
    walks = await _walk_columns(transport, columns, limit, notices)
    # Octet counters decide the selection only once the Counter32 fallback is known too.
    first_round = dataclasses.replace(selection, require_octet_counters=False)
    extra = fallback_columns(read_device(walks, scalars, selection=first_round))
    if extra:
        walks.update(await _walk_columns(transport, extra, limit, notices))
    return read_device(walks, scalars, selection=selection), answered, tuple(notices)


async def _walk_columns(
    transport: SnmpTransport, columns: Sequence[str], limit: asyncio.Semaphore, notices: list[PollWarning]
) -> dict[str, dict[int, SnmpValue]]:
    async def walk(column: str) -> dict[int, SnmpValue]:
        async with limit:
            try:
                return index_column(column, await transport.bulk_walk(column))
            except SnmpError as exc:
                if exc.kind != ERROR_RESPONSE:
                    raise
                notices.append(PollWarning(f"column {column}", f"column {column} left out: {exc.message}"))
                return {}

    try:
        async with asyncio.TaskGroup() as group:
            tasks = {column: group.create_task(walk(column)) for column in columns}
    except BaseExceptionGroup as group_error:
        # The first failure cancelled the other walks; report it (they failed for the same reason).
        raise _first_leaf(group_error) from None
    return {column: task.result() for column, task in tasks.items()}


def _first_leaf(group: BaseExceptionGroup) -> BaseException:
    first = group.exceptions[0]
    return _first_leaf(first) if isinstance(first, BaseExceptionGroup) else first


def _failed(config: SnmpDeviceConfig, start_time: datetime, started: float, kind: str, message: str) -> DevicePoll:
    elapsed = _time.monotonic() - started
    error = SnmpPollError(
        equipment=config.equipment,
        host=config.host,
        port=config.port,
        kind=kind,
        message=message,
        time=start_time,
        elapsed_s=elapsed,
    )
    return DevicePoll(
        equipment=config.equipment, host=config.host, port=config.port, time=start_time, elapsed_s=elapsed, error=error
    )


# --- pysnmp ------------------------------------------------------------------------------------

TransportFactory = Callable[[SnmpDeviceConfig], Awaitable[SnmpTransport]]


def _hlapi() -> Any:
    # Imported on first use: the pure half of this module works without pysnmp installed.
    import pysnmp.hlapi.v3arch.asyncio as hlapi

    return hlapi


def _plain(value: Any) -> SnmpValue:
    """A pysnmp/pyasn1 value as a plain Python value (see SnmpValue)."""
    from pyasn1.type import univ

    if isinstance(value, univ.Null):  # noSuchObject, noSuchInstance, endOfMibView subclass Null
        return None
    if isinstance(value, univ.Integer):  # Integer32, Counter32/64, Gauge32, TimeTicks, Unsigned32
        return int(value)
    if isinstance(value, univ.OctetString):  # also IpAddress, Opaque, Bits
        return bytes(value.asOctets())
    if isinstance(value, univ.ObjectIdentifier):
        return str(value)
    return str(value.prettyPrint())


def _indication_error(indication: Any, config: SnmpDeviceConfig, what: str) -> SnmpError:
    name = type(indication).__name__
    text = str(indication)
    if name == "RequestTimedOut":
        hint = "host down, UDP port filtered" + (" or wrong community" if config.version == "2c" else "")
        return SnmpError(
            ERROR_TIMEOUT,
            f"no response to {what} within {config.timeout_s:g} s x {config.retries + 1} tries ({hint})",
        )
    if name in _AUTH_INDICATIONS:
        return SnmpError(ERROR_AUTH, f"{what}: {text} (check the SNMPv3 user, protocols and keys)")
    return SnmpError(ERROR_PROTOCOL, f"{what}: {name}: {text}")


def _status_error(status: Any, index: Any, var_binds: Sequence[Any], what: str) -> SnmpError:
    position = int(index or 0)
    subject = str(var_binds[position - 1][0]) if 0 < position <= len(var_binds) else what
    label = status.prettyPrint() if hasattr(status, "prettyPrint") else str(status)
    return SnmpError(ERROR_RESPONSE, f"agent answered {label} for {subject}")


class _PysnmpTransport:
    """:class:`SnmpTransport` for one device on a shared pysnmp engine."""

    def __init__(self, engine: SnmpEngine, config: SnmpDeviceConfig, target: Any) -> None:
        hlapi = _hlapi()
        self._hlapi = hlapi
        self._engine = engine
        self._config = config
        self._target = target
        self._auth = _auth_data(config)
        # SNMPv3 selects the MIB view by context name; v2c has none (the community selects it).
        self._context = hlapi.ContextData(contextName=config.context_name or "")

    async def get(self, oids: Sequence[str]) -> dict[str, SnmpValue]:
        hlapi = self._hlapi
        indication, status, index, var_binds = await hlapi.get_cmd(
            self._engine,
            self._auth,
            self._target,
            self._context,
            *(hlapi.ObjectType(hlapi.ObjectIdentity(oid)) for oid in oids),
            lookupMib=False,
        )
        what = "GET " + ", ".join(oids)
        if indication:
            raise _indication_error(indication, self._config, what)
        if status:
            raise _status_error(status, index, var_binds, what)
        return {str(name): _plain(value) for name, value in var_binds}

    async def bulk_walk(self, oid: str) -> dict[str, SnmpValue]:
        hlapi = self._hlapi
        rows: dict[str, SnmpValue] = {}
        walker = hlapi.bulk_walk_cmd(
            self._engine,
            self._auth,
            self._target,
            self._context,
            0,
            self._config.max_repetitions,
            hlapi.ObjectType(hlapi.ObjectIdentity(oid)),
            lookupMib=False,
            lexicographicMode=False,
        )
        what = f"GETBULK walk of {oid}"
        async with aclosing(walker):
            async for indication, status, index, var_binds in walker:
                if indication:
                    # bulk_walk_cmd yields a timeout and then retries it forever: stop here.
                    raise _indication_error(indication, self._config, what)
                if status:
                    raise _status_error(status, index, var_binds, what)
                for name, value in var_binds:
                    rows[str(name)] = _plain(value)
                if len(rows) > MAX_WALK_ROWS:
                    raise SnmpError(ERROR_PROTOCOL, f"{what}: more than {MAX_WALK_ROWS} rows; the agent loops")
        return rows


_AUTH_CONSTANTS: Final = {
    "MD5": "usmHMACMD5AuthProtocol",
    "SHA": "usmHMACSHAAuthProtocol",
    "SHA224": "usmHMAC128SHA224AuthProtocol",
    "SHA256": "usmHMAC192SHA256AuthProtocol",
    "SHA384": "usmHMAC256SHA384AuthProtocol",
    "SHA512": "usmHMAC384SHA512AuthProtocol",
}
_PRIV_CONSTANTS: Final = {
    "DES": "usmDESPrivProtocol",
    "3DES": "usm3DESEDEPrivProtocol",
    "AES": "usmAesCfb128Protocol",
    "AES128": "usmAesCfb128Protocol",
    "AES192": "usmAesCfb192Protocol",
    "AES256": "usmAesCfb256Protocol",
    "AES192C": "usmAesCfb192Protocol",
    "AES256C": "usmAesCfb256Protocol",
    "AES192-BLUMENTHAL": "usmAesBlumenthalCfb192Protocol",
    "AES256-BLUMENTHAL": "usmAesBlumenthalCfb256Protocol",
}


def _auth_data(config: SnmpDeviceConfig) -> Any:
    hlapi = _hlapi()
    if config.version == "2c":
        return hlapi.CommunityData(config.community, mpModel=1)
    auth_protocol = getattr(hlapi, _AUTH_CONSTANTS[config.auth_protocol]) if config.auth_key else None
    priv_protocol = getattr(hlapi, _PRIV_CONSTANTS[config.priv_protocol]) if config.priv_key else None
    return hlapi.UsmUserData(
        config.user,
        authKey=config.auth_key,
        privKey=config.priv_key,
        authProtocol=auth_protocol,
        privProtocol=priv_protocol,
    )


def _credentials(config: SnmpDeviceConfig) -> tuple[Any, ...]:
    return (config.auth_protocol, config.auth_key, config.priv_protocol, config.priv_key)


@dataclass
class _EngineSlot:
    engine: Any
    users: dict[str, tuple[Any, ...]] = field(default_factory=dict)


class SnmpPoller:
    """Polls devices with pysnmp: one SnmpEngine (one UDP socket) per event loop for all devices.

    Use as ``async with SnmpPoller() as poller: polls = await poller.poll_devices(configs)``,
    and keep it for the agent's lifetime (creating an engine costs ~0.3 s of CPU). A poller is
    bound to the event loop it first runs on. At most ``max_concurrent_devices`` devices are
    polled at once; each device's deadline counts from the start of its own poll. A kind of
    warning is reported once per device for the poller's lifetime (:class:`WarningMemory`).
    ``transport_factory`` replaces pysnmp (tests).
    """

    def __init__(
        self,
        *,
        max_concurrent_devices: int = DEFAULT_MAX_CONCURRENT_DEVICES,
        transport_factory: TransportFactory | None = None,
    ) -> None:
        if max_concurrent_devices < 1:
            raise ValueError("max_concurrent_devices must be >= 1")
        self._max_concurrent_devices = max_concurrent_devices
        self._transport_factory = transport_factory or self._pysnmp_transport
        self._slots: list[_EngineSlot] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False
        self._memory = WarningMemory()

    async def __aenter__(self) -> SnmpPoller:
        self._bind_loop()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the engines' sockets. The poller cannot be used afterwards."""
        self._closed = True
        for slot in self._slots:
            slot.engine.close_dispatcher()
        self._slots.clear()

    async def poll_device(self, config: SnmpDeviceConfig, *, now: datetime | None = None) -> DevicePoll:
        """Poll one device; never raises for device or network failures (see DevicePoll.error)."""
        self._bind_loop()
        started = _time.monotonic()
        start_time = datetime.now(UTC)
        try:
            async with asyncio.timeout(config.effective_deadline_s):
                transport = await self._transport_factory(config)
        except TimeoutError:
            return _failed(config, start_time, started, ERROR_RESOLVE, f"resolving {config.host!r} timed out")
        except SnmpError as exc:
            return _failed(config, start_time, started, exc.kind, exc.message)
        except Exception as exc:  # a bad device entry must not abort the cycle
            return _failed(config, start_time, started, ERROR_INTERNAL, f"{type(exc).__name__}: {exc}")
        poll = await poll_with_transport(transport, config, now=now, started=started, memory=self._memory)
        for message in poll.repeated:
            logger.debug(
                "SNMP poll warning (already reported for this device)",
                extra={"equipment": config.equipment, "warning": message},
            )
        return poll

    async def poll_devices(
        self, configs: Iterable[SnmpDeviceConfig], *, now: datetime | None = None
    ) -> list[DevicePoll]:
        """Poll all devices concurrently; results in the order of ``configs``."""
        self._bind_loop()
        limit = asyncio.Semaphore(self._max_concurrent_devices)

        async def one(config: SnmpDeviceConfig) -> DevicePoll:
            async with limit:
                return await self.poll_device(config, now=now)

        return list(await asyncio.gather(*(one(config) for config in configs)))

    def _bind_loop(self) -> None:
        if self._closed:
            raise RuntimeError("this SnmpPoller is closed")
        loop = asyncio.get_running_loop()
        if self._loop is None:
            self._loop = loop
        elif self._loop is not loop:
            raise RuntimeError(
                "an SnmpPoller (its pysnmp SnmpEngine) belongs to the event loop it first ran on; "
                "create one poller per event loop"
            )

    def _engine_for(self, config: SnmpDeviceConfig) -> Any:
        # pysnmp keys USM users by user name within an engine: a second device with the same user
        # name but other keys would replace the first one's keys mid-poll. Such devices get their
        # own engine; everything else shares the first.
        for slot in self._slots:
            if config.version != "3":
                return slot.engine
            known = slot.users.get(config.user or "")
            if known is None or known == _credentials(config):
                slot.users[config.user or ""] = _credentials(config)
                return slot.engine
        slot = _EngineSlot(engine=_hlapi().SnmpEngine())
        if config.version == "3":
            slot.users[config.user or ""] = _credentials(config)
        self._slots.append(slot)
        return slot.engine

    async def _pysnmp_transport(self, config: SnmpDeviceConfig) -> SnmpTransport:
        hlapi = _hlapi()
        target_class = hlapi.Udp6TransportTarget if _is_ipv6(config.host) else hlapi.UdpTransportTarget
        from pysnmp.error import PySnmpError

        try:
            target = await target_class.create(
                (config.host, config.port), timeout=config.timeout_s, retries=config.retries
            )
        except PySnmpError as exc:
            raise SnmpError(ERROR_RESOLVE, f"cannot resolve {config.host!r}: {exc}") from None
        return _PysnmpTransport(self._engine_for(config), config, target)


def _is_ipv6(host: str) -> bool:
    try:
        return isinstance(ipaddress.ip_address(host.strip("[]")), ipaddress.IPv6Address)
    except ValueError:
        return False  # a name: polled over IPv4 (UdpTransportTarget resolves A records)


async def poll_device(
    config: SnmpDeviceConfig, now: datetime | None = None, *, poller: SnmpPoller | None = None
) -> DevicePoll:
    """Poll one device (with ``poller``, or a temporary one closed afterwards)."""
    if poller is not None:
        return await poller.poll_device(config, now=now)
    async with SnmpPoller() as temporary:
        return await temporary.poll_device(config, now=now)


async def poll_devices(
    configs: Iterable[SnmpDeviceConfig], now: datetime | None = None, *, poller: SnmpPoller | None = None
) -> list[DevicePoll]:
    """Poll devices concurrently on one engine (with ``poller``, or a temporary one)."""
    if poller is not None:
        return await poller.poll_devices(configs, now=now)
    async with SnmpPoller() as temporary:
        return await temporary.poll_devices(configs, now=now)
