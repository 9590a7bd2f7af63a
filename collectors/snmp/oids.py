"""What the SNMP collector reads and says, as plain values: the IF-MIB and SNMP-FRAMEWORK-MIB OIDs and the
column groups of a poll, the limits of their values, poll errors, and the small :class:`SnmpTransport` protocol
the transports implement (``collectors.snmp.pysnmp_transport`` for devices, ``collectors.snmp.fake`` in tests).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, Protocol, runtime_checkable

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
OCTET_FALLBACKS: Final = {"in_octets": "hc_in_octets", "out_octets": "hc_out_octets"}

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
