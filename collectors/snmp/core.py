"""The pure half of the SNMP collector, and one device polled through any :class:`SnmpTransport`.

OIDs, errors, plain values, the reading of walked columns into interfaces and records
(:func:`read_device`, :func:`build_records`), and :func:`poll_with_transport`. Neither pysnmp
nor a network is needed here: ``collectors.snmp.pysnmp_transport`` talks to devices,
``collectors.snmp.fake`` stands in for them in tests. ``collectors.snmp`` (the package)
re-exports everything; its docstring describes what a poll reads and why.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
import time as _time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from fnmatch import fnmatchcase
from typing import Any, Final, Protocol, runtime_checkable

from collectors.counters import COUNTER_SPECS, TICKS_PER_S, TIMETICKS_MAX, TIMETICKS_MODULUS
from collectors.records import Counters, SnmpRecord
from collectors.snmp_config import ADMIN_STATUS, IF_INDEX_MAX, SnmpDeviceConfig

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
# 32-bit octet counters are reported only where the 64-bit one is missing (docs/scenario-format.md).
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
