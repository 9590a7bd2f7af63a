"""SNMP interface collector: IF-MIB counters of routers and switches as ``snmp`` records.

Two halves, as every collector here (STYLE.md, "the collector boundary"):

* a transport behind the small :class:`SnmpTransport` protocol (``get`` scalars, ``bulk_walk``
  one column), implemented with pysnmp 7's asyncio API by :class:`SnmpPoller`. This is the only
  module that imports pysnmp, and only when a poller is created;
* pure functions from plain values to records: :func:`read_device` turns the walked columns
  (``{column OID: {ifIndex: value}}``) and scalars into :class:`InterfaceReading` rows,
  :func:`build_records` into wire :class:`~collectors.records.SnmpRecord` objects. They need no
  network and no pysnmp.

What one poll of a device reads (numeric OIDs, no MIB lookups):

1. GET ``sysUpTime.0`` and ``snmpEngineBoots.0`` (SNMP-FRAMEWORK-MIB; many v2c agents do not
   expose it: then ``snmp_engine_boots`` is None). This first request is also the reachability
   probe: a dead device costs one request and its retries, not a burst of walks.
2. GETBULK walks, concurrently (one column per walk; at most ``max_parallel_requests`` at once):
   ifName, ifDescr, ifAlias, ifHighSpeed, ifMtu, ifAdminStatus, ifOperStatus, ifHCIn/OutOctets,
   ifHCIn/OutUcastPkts, ifIn/OutErrors, ifIn/OutDiscards, ifCounterDiscontinuityTime.
3. Only for selected interfaces that lack them: ifIn/OutOctets (Counter32) where there are no HC
   octet counters, ifSpeed where there is no ifHighSpeed.

Interfaces are named by ifName, else ifDescr (old agents without ifXTable), else
``ifIndex.N``; ``if_index_names`` maps an ifIndex to the inventory's name instead. With an
``interfaces`` filter only those names are reported.

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
import ipaddress
import math
import re
import time as _time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, Protocol, runtime_checkable

from collectors.counters import COUNTER_SPECS, TIMETICKS_MAX
from collectors.records import Counters, SnmpRecord

if TYPE_CHECKING:
    from pysnmp.hlapi.v3arch.asyncio import SnmpEngine

__all__ = [
    "ALL_COLUMNS",
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
    "PRIMARY_COLUMNS",
    "SCALAR_OIDS",
    "DevicePoll",
    "DeviceReading",
    "InterfaceReading",
    "SnmpDeviceConfig",
    "SnmpError",
    "SnmpPollError",
    "SnmpPoller",
    "SnmpTransport",
    "build_records",
    "fallback_columns",
    "index_column",
    "poll_device",
    "poll_devices",
    "poll_with_transport",
    "read_device",
    "records_from_reading",
]

# --- OIDs --------------------------------------------------------------------------------------

SYS_UPTIME: Final = "1.3.6.1.2.1.1.3.0"  # SNMPv2-MIB sysUpTime.0, TimeTicks
SNMP_ENGINE_BOOTS: Final = "1.3.6.1.6.3.10.2.1.2.0"  # SNMP-FRAMEWORK-MIB snmpEngineBoots.0
SCALAR_OIDS: Final = (SYS_UPTIME, SNMP_ENGINE_BOOTS)

_IF_ENTRY = "1.3.6.1.2.1.2.2.1"  # IF-MIB ifTable
_IFX_ENTRY = "1.3.6.1.2.1.31.1.1.1"  # IF-MIB ifXTable
IF_DESCR: Final = f"{_IF_ENTRY}.2"
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
    IF_NAME,
    IF_DESCR,
    IF_ALIAS,
    IF_HIGH_SPEED,
    IF_MTU,
    IF_ADMIN_STATUS,
    IF_OPER_STATUS,
    IF_HC_IN_OCTETS,
    IF_HC_OUT_OCTETS,
    IF_HC_IN_UCAST_PKTS,
    IF_HC_OUT_UCAST_PKTS,
    IF_IN_ERRORS,
    IF_OUT_ERRORS,
    IF_IN_DISCARDS,
    IF_OUT_DISCARDS,
    IF_COUNTER_DISCONTINUITY_TIME,
)
"""Walked on every poll."""
FALLBACK_COLUMNS: Final = (IF_IN_OCTETS, IF_OUT_OCTETS, IF_SPEED)
"""Walked only when a selected interface lacks the HC octet counters or ifHighSpeed."""
ALL_COLUMNS: Final = PRIMARY_COLUMNS + FALLBACK_COLUMNS

OPER_STATUS: Final[Mapping[int, str]] = {
    1: "up",
    2: "down",
    3: "testing",
    4: "unknown",
    5: "dormant",
    6: "notPresent",
    7: "lowerLayerDown",
}
ADMIN_STATUS: Final[Mapping[int, str]] = {1: "up", 2: "down", 3: "testing"}

IF_SPEED_SATURATED: Final = 2**32 - 1  # ifSpeed's "too fast for 32 bits" value
IF_INDEX_MAX: Final = 2**31 - 1
ENGINE_BOOTS_MAX: Final = 2**31 - 1
SPEED_MBPS_MAX: Final = 1e7  # records.SpeedMbps
MTU_MAX: Final = 65536
NAME_MAX_CHARS: Final = 128  # records.InterfaceName

# --- errors ------------------------------------------------------------------------------------

ERROR_TIMEOUT: Final = "timeout"  # no response within timeout_s x (retries + 1)
ERROR_DEADLINE: Final = "deadline"  # the whole poll took longer than deadline_s
ERROR_AUTH: Final = "auth"  # SNMPv3 USM: unknown user, wrong key, unsupported level...
ERROR_RESOLVE: Final = "resolve"  # host name does not resolve
ERROR_RESPONSE: Final = "response"  # the agent answered with an error status
ERROR_PROTOCOL: Final = "protocol"  # other SNMP engine errors (malformed, non-increasing OIDs...)
ERROR_NO_DATA: Final = "no_data"  # answered, but without sysUpTime or without any interface
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


# --- configuration -----------------------------------------------------------------------------

VERSIONS: Final = ("2c", "3")
AUTH_PROTOCOLS: Final = ("MD5", "SHA", "SHA224", "SHA256", "SHA384", "SHA512")
# AES192/AES256 use Reeder key extension (what Cisco implements; net-snmp calls it AES192C/
# AES256C); the -BLUMENTHAL variants are net-snmp's AES192/AES256.
PRIV_PROTOCOLS: Final = (
    "DES",
    "3DES",
    "AES",
    "AES128",
    "AES192",
    "AES256",
    "AES192C",
    "AES256C",
    "AES192-BLUMENTHAL",
    "AES256-BLUMENTHAL",
)
MIN_KEY_CHARS: Final = 8  # RFC 3414 section 11.2: USM pass phrases are at least 8 characters

DEFAULT_PORT: Final = 161
DEFAULT_TIMEOUT_S: Final = 2.0
DEFAULT_RETRIES: Final = 1
DEFAULT_MAX_REPETITIONS: Final = 25
DEFAULT_MAX_PARALLEL_REQUESTS: Final = 8
DEFAULT_MAX_CONCURRENT_DEVICES: Final = 64
MIN_DEFAULT_DEADLINE_S: Final = 20.0
MAX_WALK_ROWS: Final = 100_000  # a column longer than this is an agent bug, not a router

# What records.SnmpRecord accepts for ``equipment`` and ``host``.
_EQUIPMENT_NAME: Final = re.compile(r"[^\s:\x00-\x1f\x7f]{1,128}")
_HOST: Final = re.compile(r"[^\s\x00-\x1f\x7f]{1,255}")


@dataclass(frozen=True)
class SnmpDeviceConfig:
    """One ``[[snmp]]`` block of the agent configuration (CONTRACTS.md section 4).

    ``equipment`` is the inventory's equipment name, ``host`` the address polled. v2c needs
    ``community``; v3 needs ``user`` and, for authNoPriv/authPriv, ``auth_key`` (and
    ``priv_key``); ``context_name`` selects an SNMPv3 context (usually empty).

    Timing: each request waits ``timeout_s`` for an answer and is sent ``retries`` more times;
    the whole poll (all requests) must finish within ``deadline_s`` (default
    ``max(20 s, 4 x timeout_s x (retries + 1))``), else the device fails with ERROR_DEADLINE.

    ``interfaces`` limits the records to these interface names (ifName, else ifDescr); without
    it every interface is reported. ``if_index_names`` names interfaces by ifIndex (the
    inventory's name where it differs from ifName); with an ``interfaces`` filter the interfaces
    it names are selected as well. Secrets are left out of ``repr()``.
    """

    equipment: str
    host: str
    port: int = DEFAULT_PORT
    version: str = "2c"
    community: str | None = field(default=None, repr=False)
    user: str | None = None
    auth_protocol: str = "SHA"
    auth_key: str | None = field(default=None, repr=False)
    priv_protocol: str = "AES"
    priv_key: str | None = field(default=None, repr=False)
    context_name: str = ""
    timeout_s: float = DEFAULT_TIMEOUT_S
    retries: int = DEFAULT_RETRIES
    deadline_s: float | None = None
    max_repetitions: int = DEFAULT_MAX_REPETITIONS
    max_parallel_requests: int = DEFAULT_MAX_PARALLEL_REQUESTS
    interfaces: tuple[str, ...] | None = None
    if_index_names: Mapping[int, str] | None = None
    interval_s: float | None = None  # scheduling period, used by the agent's scheduler

    def __post_init__(self) -> None:
        version = str(self.version)
        if version == "v3":
            version = "3"
        if version in ("v2c", "2"):
            version = "2c"
        object.__setattr__(self, "version", version)
        object.__setattr__(self, "auth_protocol", str(self.auth_protocol).upper())
        object.__setattr__(self, "priv_protocol", str(self.priv_protocol).upper())
        if self.interfaces is not None:
            if isinstance(self.interfaces, str):
                raise ValueError(f"snmp {self.equipment}: interfaces must be a list of names, not a string")
            object.__setattr__(self, "interfaces", tuple(str(name) for name in self.interfaces))
        if self.if_index_names is not None:
            try:
                names = {int(index): str(name) for index, name in dict(self.if_index_names).items()}
            except (TypeError, ValueError):
                raise ValueError(f"snmp {self.equipment}: if_index_names keys must be ifIndex numbers") from None
            object.__setattr__(self, "if_index_names", names)
        for problem in self._problems():
            raise ValueError(f"snmp {self.equipment or '?'}: {problem}")

    def _problems(self) -> Iterable[str]:
        if not _EQUIPMENT_NAME.fullmatch(self.equipment or ""):
            yield f"equipment {self.equipment!r} is not an inventory equipment name (no spaces or ':')"
        if not _HOST.fullmatch(self.host or ""):
            yield f"host {self.host!r} is not a host name or address"
        if not 1 <= self.port <= 65535:
            yield f"port {self.port} is not a UDP port"
        if self.version not in VERSIONS:
            yield f"version must be one of {VERSIONS}, got {self.version!r}"
        if self.version == "2c" and not self.community:
            yield "SNMP v2c needs a community"
        if self.version == "3":
            yield from self._v3_problems()
        if not (self.timeout_s > 0 and math.isfinite(self.timeout_s)):
            yield "timeout_s must be > 0"
        if self.retries < 0:
            yield "retries must be >= 0"
        if self.deadline_s is not None and not self.deadline_s >= self.request_budget_s:
            yield (
                f"deadline_s {self.deadline_s} is shorter than one request with its retries "
                f"(timeout_s {self.timeout_s} x {self.retries + 1} = {self.request_budget_s} s)"
            )
        if not 1 <= self.max_repetitions <= 1000:
            yield "max_repetitions must be within 1..1000"
        if self.max_parallel_requests < 1:
            yield "max_parallel_requests must be >= 1"
        for index in self.if_index_names or {}:
            if not 1 <= index <= IF_INDEX_MAX:
                yield f"if_index_names: {index} is not an ifIndex (1..2^31-1)"

    def _v3_problems(self) -> Iterable[str]:
        if not self.user:
            yield "SNMP v3 needs a user"
        if self.auth_protocol not in AUTH_PROTOCOLS:
            yield f"auth_protocol must be one of {AUTH_PROTOCOLS}, got {self.auth_protocol!r}"
        if self.priv_protocol not in PRIV_PROTOCOLS:
            yield f"priv_protocol must be one of {PRIV_PROTOCOLS}, got {self.priv_protocol!r}"
        if self.priv_key is not None and self.auth_key is None:
            yield "priv_key needs auth_key (SNMPv3 has no privacy without authentication)"
        for name in ("auth_key", "priv_key"):
            key = getattr(self, name)
            if key is not None and len(key) < MIN_KEY_CHARS:
                yield f"{name} must have at least {MIN_KEY_CHARS} characters (RFC 3414)"

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> SnmpDeviceConfig:
        """Build from a TOML table; unknown keys are an error (typos must not pass silently)."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown snmp option(s): {', '.join(unknown)}")
        return cls(**dict(data))

    @property
    def security_level(self) -> str:
        """The SNMPv3 security level the keys give (``noAuthNoPriv``, ``authNoPriv``, ``authPriv``)."""
        if self.auth_key is None:
            return "noAuthNoPriv"
        return "authPriv" if self.priv_key is not None else "authNoPriv"

    @property
    def request_budget_s(self) -> float:
        """Longest wait for one request: its timeout times the number of tries."""
        return self.timeout_s * (self.retries + 1)

    @property
    def effective_deadline_s(self) -> float:
        """``deadline_s``, or the default derived from the request timing."""
        if self.deadline_s is not None:
            return self.deadline_s
        return max(MIN_DEFAULT_DEADLINE_S, 4 * self.request_budget_s)


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


@dataclass(frozen=True)
class DeviceReading:
    """The selected interfaces of one device plus its scalars; ``warnings`` explain omissions."""

    interfaces: tuple[InterfaceReading, ...]
    sys_uptime_ticks: int | None
    snmp_engine_boots: int | None
    warnings: tuple[str, ...] = ()
    interfaces_seen: int = 0  # ifIndex values the device reported, before the filter


def read_device(
    walks: Walks,
    scalars: Scalars,
    *,
    interface_filter: Iterable[str] | None = None,
    if_index_names: Mapping[int, str] | None = None,
) -> DeviceReading:
    """Interfaces and scalars of one poll, from plain values.

    Interfaces are the ifIndex values present in any walked column, in ifIndex order. Each gets
    its name (``if_index_names``, else ifName, else ifDescr, else ``ifIndex.N``), its HC
    counters where present and the Counter32 octet counters only where the HC ones are missing.
    Values of the wrong type or out of range (a Counter32 above 2^32-1, a negative gauge) are
    dropped with a warning rather than sent. With ``interface_filter`` (names) only those
    interfaces, plus the ones ``if_index_names`` names, are kept; names or ifIndex values not
    found become warnings, as do duplicate names (the lowest ifIndex keeps the name).
    """
    warnings: list[str] = []
    sys_uptime = _uint(scalars.get(SYS_UPTIME), TIMETICKS_MAX, "sysUpTime.0", warnings)
    engine_boots = _uint(scalars.get(SNMP_ENGINE_BOOTS), ENGINE_BOOTS_MAX, "snmpEngineBoots.0", warnings)

    indexes = sorted({index for column in walks.values() for index in column if 1 <= index <= IF_INDEX_MAX})
    rows: list[InterfaceReading] = []
    for index in indexes:
        rows.append(_read_interface(index, walks, if_index_names or {}, warnings))

    selected = _select(rows, interface_filter, if_index_names, warnings)
    return DeviceReading(
        interfaces=tuple(selected),
        sys_uptime_ticks=sys_uptime,
        snmp_engine_boots=engine_boots,
        warnings=tuple(warnings),
        interfaces_seen=len(rows),
    )


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
    """One ``snmp`` record per selected interface. Raises SnmpError(ERROR_NO_DATA) without sysUpTime."""
    if reading.sys_uptime_ticks is None:
        raise SnmpError(ERROR_NO_DATA, "the device returned no sysUpTime.0 (needed to detect restarts)")
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
) -> list[SnmpRecord]:
    """The ``snmp`` records of one poll: :func:`read_device` then :func:`records_from_reading`.

    ``walks`` maps column OIDs (``IF_HC_IN_OCTETS``...) to ``{ifIndex: value}``, ``scalars``
    maps ``SYS_UPTIME``/``SNMP_ENGINE_BOOTS`` to values; ``device_name`` is the inventory's
    equipment name and ``now`` (timezone-aware) the poll time. Counter64 values are Python ints
    and pass through exactly (18446744073000000000 stays 18446744073000000000).
    """
    reading = read_device(walks, scalars, interface_filter=interface_filter, if_index_names=if_index_names)
    return records_from_reading(reading, equipment=device_name, time=now, host=host)


def _read_interface(
    index: int, walks: Walks, if_index_names: Mapping[int, str], warnings: list[str]
) -> InterfaceReading:
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
        number = _uint(value(column), COUNTER_SPECS[counter].modulus - 1, f"{label} {counter}", warnings)
        if number is not None:
            counters[counter] = number

    oper = _status(value(IF_OPER_STATUS), OPER_STATUS, f"{label} ifOperStatus", warnings)
    if oper is None:
        warnings.append(f"{name} ({label}): no ifOperStatus; reported as 'unknown'")
    admin = _status(value(IF_ADMIN_STATUS), ADMIN_STATUS, f"{label} ifAdminStatus", warnings)
    mtu = _uint(value(IF_MTU), MTU_MAX, f"{label} ifMtu", warnings)
    return InterfaceReading(
        if_index=index,
        name=name,
        counters=counters,
        oper_status=oper,
        admin_status=admin,
        speed_mbps=_speed_mbps(value(IF_HIGH_SPEED), value(IF_SPEED), label, warnings),
        mtu_bytes=mtu or None,  # 0: no MTU (e.g. a loopback)
        alias=_clean_text(_text(value(IF_ALIAS))),
        counter_discontinuity_ticks=_uint(
            value(IF_COUNTER_DISCONTINUITY_TIME), TIMETICKS_MAX, f"{label} ifCounterDiscontinuityTime", warnings
        ),
        if_name=if_name,
    )


def _select(
    rows: list[InterfaceReading],
    interface_filter: Iterable[str] | None,
    if_index_names: Mapping[int, str] | None,
    warnings: list[str],
) -> list[InterfaceReading]:
    present = {row.if_index for row in rows}
    for index, name in (if_index_names or {}).items():
        if index not in present:
            warnings.append(f"ifIndex {index} ({name!r}) not found on the device")
    if interface_filter is None:
        selected = list(rows)
    else:
        keep = {index for index in (if_index_names or {}) if index in present}
        for wanted in dict.fromkeys(interface_filter):
            matches = [row.if_index for row in rows if row.name == wanted]
            if matches:
                keep.update(matches)
            else:
                warnings.append(f"interface {wanted!r} not found on the device (ifName, ifDescr)")
        selected = [row for row in rows if row.if_index in keep]

    seen: dict[str, int] = {}
    unique: list[InterfaceReading] = []
    for row in selected:
        if row.name in seen:
            warnings.append(
                f"interface name {row.name!r} is used by ifIndex {seen[row.name]} and {row.if_index}; "
                f"ifIndex {row.if_index} left out (name it with if_index_names)"
            )
            continue
        seen[row.name] = row.if_index
        unique.append(row)
    return unique


def _uint(value: SnmpValue, maximum: int, label: str, warnings: list[str]) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= maximum:
        warnings.append(f"{label}: {value!r} is not a number within 0..{maximum}; left out")
        return None
    return value


def _status(value: SnmpValue, labels: Mapping[int, str], label: str, warnings: list[str]) -> str | None:
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and value in labels:
        return labels[value]
    warnings.append(f"{label}: {value!r} is not a known status; left out")
    return None


def _speed_mbps(high_speed: SnmpValue, speed: SnmpValue, label: str, warnings: list[str]) -> float | None:
    mbps = _uint(high_speed, int(SPEED_MBPS_MAX), f"{label} ifHighSpeed", warnings)
    if mbps is not None:
        return float(mbps)
    bps = _uint(speed, IF_SPEED_SATURATED, f"{label} ifSpeed", warnings)
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
    """The outcome of polling one device: records, or no records and ``error``."""

    equipment: str
    host: str
    port: int
    time: datetime
    elapsed_s: float
    records: tuple[SnmpRecord, ...] = ()
    interfaces: tuple[InterfaceReading, ...] = ()
    error: SnmpPollError | None = None
    warnings: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """True when the device answered and gave records (possibly none, see ``warnings``)."""
        return self.error is None


async def poll_with_transport(
    transport: SnmpTransport,
    config: SnmpDeviceConfig,
    *,
    now: datetime | None = None,
    started: float | None = None,
) -> DevicePoll:
    """Poll one device through ``transport`` within ``config.effective_deadline_s``.

    Never raises for anything the device, the network or pysnmp does (only cancellation
    propagates): failures are ``DevicePoll.error``. ``now`` is the records' time; by default
    the UTC clock when the counters are requested. ``started`` (``time.monotonic()``) is when
    the deadline began, if before this call (name resolution).
    """
    started = _time.monotonic() if started is None else started
    start_time = datetime.now(UTC)
    deadline_s = config.effective_deadline_s
    try:
        async with asyncio.timeout(max(0.0, deadline_s - (_time.monotonic() - started))):
            reading, poll_time, column_warnings = await _read(transport, config, now)
        if reading.interfaces_seen == 0:
            raise SnmpError(
                ERROR_NO_DATA,
                "the device returned no IF-MIB interface rows (is IF-MIB in the view of this community/user?)",
            )
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
    return DevicePoll(
        equipment=config.equipment,
        host=config.host,
        port=config.port,
        time=poll_time,
        elapsed_s=_time.monotonic() - started,
        records=tuple(records),
        interfaces=reading.interfaces,
        warnings=column_warnings + reading.warnings,
    )


async def _read(
    transport: SnmpTransport, config: SnmpDeviceConfig, now: datetime | None
) -> tuple[DeviceReading, datetime, tuple[str, ...]]:
    scalars = await transport.get(SCALAR_OIDS)
    poll_time = _utc(now) if now is not None else datetime.now(UTC)
    limit = asyncio.Semaphore(config.max_parallel_requests)
    warnings: list[str] = []
    walks = await _walk_columns(transport, PRIMARY_COLUMNS, limit, warnings)
    reading = read_device(walks, scalars, interface_filter=config.interfaces, if_index_names=config.if_index_names)
    extra = fallback_columns(reading)
    if extra:
        walks.update(await _walk_columns(transport, extra, limit, warnings))
        reading = read_device(walks, scalars, interface_filter=config.interfaces, if_index_names=config.if_index_names)
    return reading, poll_time, tuple(warnings)


async def _walk_columns(
    transport: SnmpTransport, columns: Sequence[str], limit: asyncio.Semaphore, warnings: list[str]
) -> dict[str, dict[int, SnmpValue]]:
    async def walk(column: str) -> dict[int, SnmpValue]:
        async with limit:
            try:
                return index_column(column, await transport.bulk_walk(column))
            except SnmpError as exc:
                if exc.kind != ERROR_RESPONSE:
                    raise
                warnings.append(f"column {column} left out: {exc.message}")
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
    polled at once; each device's deadline counts from the start of its own poll.
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
        return await poll_with_transport(transport, config, now=now, started=started)

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
