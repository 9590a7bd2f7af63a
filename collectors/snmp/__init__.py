"""SNMP interface collector: IF-MIB counters of routers and switches as ``snmp`` records.

Two halves, as every collector here (docs/architecture.md#choices):

* a transport behind the small :class:`SnmpTransport` protocol (``get`` scalars, ``bulk_walk``
  one column), implemented with pysnmp 7's asyncio API by :class:`SnmpPoller`
  (``collectors.snmp.pysnmp_transport``, the only module that imports pysnmp, and only when a
  poller first talks to a device); :class:`FakeSnmpTransport` stands in for a device in tests;
* pure functions from plain values to records: :func:`read_device` turns the walked columns
  (``{column OID: {ifIndex: value}}``) and scalars into :class:`InterfaceReading` rows,
  :func:`build_records` into wire :class:`~collectors.records.SnmpRecord` objects. They need no
  network and no pysnmp.

The ``[[snmp]]`` table itself is :class:`~collectors.snmp_config.SnmpDeviceConfig`. This package
re-exports everything from its modules: ``oids`` (OIDs, errors, the transport protocol), ``reading``
(the pure half), ``poll`` (:func:`poll_with_transport`), ``pysnmp_transport`` (:class:`SnmpPoller`),
``fake`` (:class:`FakeSnmpTransport`, for tests).

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

Known pysnmp 7 traps handled in ``pysnmp_transport``: ``bulk_walk_cmd`` yields a timeout and then retries forever
(we stop at the first error indication); one SnmpEngine per event loop (a poller binds to the
loop it first runs on); one varbind per bulk walk (columns are walked as separate, concurrent
walks); USM users are keyed by user name in an engine, so devices with the same v3 user name
but different keys get separate engines.
"""

from collectors.snmp.fake import FakeSnmpTransport
from collectors.snmp.oids import (
    ALL_COLUMNS,
    COUNTER_COLUMNS,
    DEFAULT_MAX_CONCURRENT_DEVICES,
    ENGINE_BOOTS_MAX,
    ENGINE_TIME_MAX,
    ERROR_AUTH,
    ERROR_CONFIG,
    ERROR_DEADLINE,
    ERROR_INTERNAL,
    ERROR_NO_DATA,
    ERROR_PROTOCOL,
    ERROR_RESOLVE,
    ERROR_RESPONSE,
    ERROR_TIMEOUT,
    FALLBACK_COLUMNS,
    IF_ADMIN_STATUS,
    IF_ALIAS,
    IF_COUNTER_DISCONTINUITY_TIME,
    IF_DESCR,
    IF_HC_IN_OCTETS,
    IF_HC_IN_UCAST_PKTS,
    IF_HC_OUT_OCTETS,
    IF_HC_OUT_UCAST_PKTS,
    IF_HIGH_SPEED,
    IF_IN_DISCARDS,
    IF_IN_ERRORS,
    IF_IN_OCTETS,
    IF_MTU,
    IF_NAME,
    IF_OPER_STATUS,
    IF_OUT_DISCARDS,
    IF_OUT_ERRORS,
    IF_OUT_OCTETS,
    IF_SPEED,
    IF_SPEED_SATURATED,
    IF_TYPE,
    MAX_WALK_ROWS,
    MTU_MAX,
    NAME_MAX_CHARS,
    OCTET_COUNTERS,
    OPER_STATUS,
    PRIMARY_COLUMNS,
    SCALAR_OIDS,
    SELECTION_COLUMNS,
    SNMP_ENGINE_BOOTS,
    SNMP_ENGINE_TIME,
    SPEED_MBPS_MAX,
    SYS_UPTIME,
    Scalars,
    SnmpError,
    SnmpPollError,
    SnmpTransport,
    SnmpValue,
    Walks,
    index_column,
)
from collectors.snmp.poll import (
    DevicePoll,
    WarningMemory,
    poll_with_transport,
)
from collectors.snmp.pysnmp_transport import (
    SnmpPoller,
    TransportFactory,
    poll_device,
    poll_devices,
)
from collectors.snmp.reading import (
    UPTIME_ENGINE_TIME,
    UPTIME_SYS,
    DeviceReading,
    InterfaceReading,
    InterfaceSelection,
    PollWarning,
    build_records,
    fallback_columns,
    read_device,
    records_from_reading,
)
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

__all__ = [
    "ADMIN_STATUS",
    "ALL_COLUMNS",
    "AUTH_PROTOCOLS",
    "COUNTER_COLUMNS",
    "DEFAULT_MAX_CONCURRENT_DEVICES",
    "DEFAULT_MAX_PARALLEL_REQUESTS",
    "DEFAULT_MAX_REPETITIONS",
    "DEFAULT_PORT",
    "DEFAULT_RETRIES",
    "DEFAULT_TIMEOUT_S",
    "DevicePoll",
    "DeviceReading",
    "ENGINE_BOOTS_MAX",
    "ENGINE_TIME_MAX",
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
    "FakeSnmpTransport",
    "IF_ADMIN_STATUS",
    "IF_ALIAS",
    "IF_COUNTER_DISCONTINUITY_TIME",
    "IF_DESCR",
    "IF_HC_IN_OCTETS",
    "IF_HC_IN_UCAST_PKTS",
    "IF_HC_OUT_OCTETS",
    "IF_HC_OUT_UCAST_PKTS",
    "IF_HIGH_SPEED",
    "IF_INDEX_MAX",
    "IF_IN_DISCARDS",
    "IF_IN_ERRORS",
    "IF_IN_OCTETS",
    "IF_MTU",
    "IF_NAME",
    "IF_OPER_STATUS",
    "IF_OUT_DISCARDS",
    "IF_OUT_ERRORS",
    "IF_OUT_OCTETS",
    "IF_SPEED",
    "IF_SPEED_SATURATED",
    "IF_TYPE",
    "IF_TYPES",
    "InterfaceReading",
    "InterfaceSelection",
    "MAX_WALK_ROWS",
    "MIN_DEFAULT_DEADLINE_S",
    "MIN_KEY_CHARS",
    "MTU_MAX",
    "NAME_MAX_CHARS",
    "OCTET_COUNTERS",
    "OPER_STATUS",
    "PRIMARY_COLUMNS",
    "PRIV_PROTOCOLS",
    "PollWarning",
    "SCALAR_OIDS",
    "SELECTION_COLUMNS",
    "SNMP_ENGINE_BOOTS",
    "SNMP_ENGINE_TIME",
    "SPEED_MBPS_MAX",
    "SYS_UPTIME",
    "Scalars",
    "SnmpConfigError",
    "SnmpDeviceConfig",
    "SnmpError",
    "SnmpPollError",
    "SnmpPoller",
    "SnmpTransport",
    "SnmpValue",
    "TransportFactory",
    "UPTIME_ENGINE_TIME",
    "UPTIME_SYS",
    "VERSIONS",
    "Walks",
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
