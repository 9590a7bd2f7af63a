"""The pure half of the SNMP collector: the walked columns and scalars of one device read into
:class:`InterfaceReading` rows (:func:`read_device`) and wire records (:func:`build_records`). No pysnmp, no network;
``collectors.snmp`` (the package) describes what a poll reads and why.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from fnmatch import fnmatchcase
from typing import Final

from collectors.counters import COUNTER_SPECS
from collectors.records import Counters, SnmpRecord
from collectors.records.types import TICKS_PER_S, TIMETICKS_MAX, TIMETICKS_MODULUS
from collectors.snmp.oids import (
    COUNTER_COLUMNS,
    ENGINE_BOOTS_MAX,
    ENGINE_TIME_MAX,
    IF_ADMIN_STATUS,
    IF_ALIAS,
    IF_COUNTER_DISCONTINUITY_TIME,
    IF_DESCR,
    IF_HIGH_SPEED,
    IF_IN_OCTETS,
    IF_MTU,
    IF_NAME,
    IF_OPER_STATUS,
    IF_OUT_OCTETS,
    IF_SPEED,
    IF_SPEED_SATURATED,
    IF_TYPE,
    MTU_MAX,
    NAME_MAX_CHARS,
    OCTET_COUNTERS,
    OCTET_FALLBACKS,
    OPER_STATUS,
    SNMP_ENGINE_BOOTS,
    SNMP_ENGINE_TIME,
    SPEED_MBPS_MAX,
    SYS_UPTIME,
    Scalars,
    SnmpValue,
    Walks,
)
from collectors.snmp_config import ADMIN_STATUS, IF_INDEX_MAX, SnmpDeviceConfig

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
        hc = OCTET_FALLBACKS[counter]
        if any(hc not in row.counters and counter not in row.counters for row in reading.interfaces):
            needed.append(column)
    if any(row.speed_mbps is None for row in reading.interfaces):
        needed.append(IF_SPEED)
    return tuple(needed)


def records_from_reading(
    reading: DeviceReading, *, equipment: str, time: datetime, host: str | None = None
) -> list[SnmpRecord]:
    """One ``snmp`` record per selected interface (``sys_uptime_ticks`` absent when the view has no uptime)."""
    moment = as_utc(time)
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
        if counter in OCTET_FALLBACKS and OCTET_FALLBACKS[counter] in counters:
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


def as_utc(moment: datetime) -> datetime:
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError("time must be timezone-aware (UTC expected), got a naive datetime")
    return moment.astimezone(UTC)
