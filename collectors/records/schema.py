"""The record and batch structs of the wire schema (msgspec), and their decoders."""

from __future__ import annotations

import typing
from collections.abc import Mapping
from datetime import UTC
from typing import Annotated, Final, Literal

import msgspec
from msgspec import Meta

from collectors.records.types import (
    SCHEMA_VERSION,
    AdminStatus,
    AgentVersion,
    BatchId,
    Count,
    Counter32,
    Counter64,
    DelayMs,
    DurationS,
    EngineBoots,
    EquipmentName,
    ExitCode,
    Hop,
    HostName,
    IfIndex,
    InterfaceName,
    IntervalS,
    JobId,
    Label,
    MssBytes,
    MtuBytes,
    NicSpeedMbps,
    OperStatus,
    PacketBytes,
    PmtuBytes,
    PositiveMs,
    RateBps,
    ShortText,
    SiteCode,
    SizeBytes,
    SpeedMbps,
    Streams,
    SysctlTriple,
    Text,
    TimeTicks,
    UtcDatetime,
    to_utc,
)

# --- records -----------------------------------------------------------------------------------


class _Record(msgspec.Struct, tag_field="type", omit_defaults=True, kw_only=True, frozen=True, gc=False):
    """Fields every record has: when, and how the collection went (a failed test is a record too).

    Unknown fields are ignored, not refused: agents may send extras the centre does not know yet
    (docs/contracts.md#ingest-api), and an older centre must keep accepting a newer agent's records.
    """

    time: UtcDatetime
    tool_version: ShortText | None = None
    error: Text | None = None  # set when the measurement failed; then some values may be absent
    exit_code: ExitCode | None = None
    stderr_excerpt: Text | None = None
    raw_excerpt: Text | None = None

    def __post_init__(self) -> None:
        # msgspec decodes "Z" and "+00:00" to datetime.UTC itself: only other offsets need converting.
        if self.time.tzinfo is not UTC:
            msgspec.structs.force_setattr(self, "time", to_utc(self.time))


class PathRecord(_Record, kw_only=True, frozen=True):
    """A test between two sites, measured in the direction src -> dst."""

    src: SiteCode
    dst: SiteCode
    src_host: HostName | None = None
    dst_host: HostName | None = None
    schedule_interval_s: IntervalS | None = None  # the agent's period for this test (PERIODIC_LOSS)
    job_id: JobId | None = None  # a test on demand: the job it answers (schema version 2, docs/ondemand.md)


class ThroughputRecord(PathRecord, tag="throughput", kw_only=True, frozen=True):
    """A nuttcp (or iperf) test. ``throughput_bps`` may be absent only when ``error`` says why."""

    tool: Label
    protocol: Literal["tcp", "udp"]
    duration_s: DurationS
    throughput_bps: RateBps | None = None
    streams: Streams | None = None
    window_bytes: SizeBytes | None = None
    mss_bytes: MssBytes | None = None
    retransmits: Count | None = None  # None: unknown (old nuttcp, several streams), not zero
    rtt_ms: PositiveMs | None = None
    offered_bps: RateBps | None = None  # UDP: the rate asked for (-R)
    packets_sent: Count | None = None
    packets_lost: Count | None = None


class OwampRecord(PathRecord, tag="owamp", kw_only=True, frozen=True):
    """One-way delay and loss (owping).

    ``packets_sent``/``packets_lost`` are required unless ``error``; delays are required when a
    packet arrived and there is no error, and absent when none arrived. ``duplicates`` and
    ``reordered`` may be unknown (None) with some owping output formats.
    """

    packets_sent: Count | None = None
    packets_lost: Count | None = None
    duplicates: Count | None = None
    reordered: Count | None = None
    delay_min_ms: DelayMs | None = None
    delay_median_ms: DelayMs | None = None
    delay_max_ms: DelayMs | None = None
    jitter_ms: PositiveMs | None = None  # P95 - P50 of the packets' delays (collectors/delay.py)
    clock_error_ms: PositiveMs | None = None
    tool: Label | None = None
    packet_interval_s: IntervalS | None = None
    packet_size_bytes: PacketBytes | None = None


class Counters(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, kw_only=True, frozen=True, gc=False):
    """IF-MIB counters in snake case; only these names exist (counters.COUNTER_SPECS)."""

    hc_in_octets: Counter64 | None = None
    hc_out_octets: Counter64 | None = None
    hc_in_ucast_pkts: Counter64 | None = None
    hc_out_ucast_pkts: Counter64 | None = None
    in_octets: Counter32 | None = None
    out_octets: Counter32 | None = None
    in_errors: Counter32 | None = None
    out_errors: Counter32 | None = None
    in_discards: Counter32 | None = None
    out_discards: Counter32 | None = None


def _counter_bits() -> dict[str, int]:
    hints = typing.get_type_hints(Counters, include_extras=True)
    return {name: 64 if Counter64 in typing.get_args(hints[name]) else 32 for name in Counters.__struct_fields__}


COUNTER_BITS: Final[Mapping[str, int]] = _counter_bits()
"""Width of each IF-MIB counter of the schema (Counter32 or Counter64), as its type in :class:`Counters` says."""


class SnmpRecord(_Record, tag="snmp", kw_only=True, frozen=True):
    """One poll of one interface. ``oper_status`` is required unless ``error``.

    ``sys_uptime_ticks`` is absent when the device's view has no sysUpTime.0 (IF-MIB-only views); the
    centre then detects restarts from ``snmp_engine_boots`` or ``counter_discontinuity_ticks`` when
    present, and otherwise takes any counter that goes back as a reset, never as a wrap.
    """

    equipment: EquipmentName
    interface: InterfaceName
    counters: Counters
    if_index: IfIndex | None = None
    host: HostName | None = None  # the address polled
    sys_uptime_ticks: TimeTicks | None = None
    snmp_engine_boots: EngineBoots | None = None
    counter_discontinuity_ticks: TimeTicks | None = None  # ifCounterDiscontinuityTime
    oper_status: OperStatus | None = None  # IF-MIB ifOperStatus labels
    admin_status: AdminStatus | None = None
    speed_mbps: SpeedMbps | None = None


class TracerouteRecord(PathRecord, tag="traceroute", kw_only=True, frozen=True):
    """The hop list of a path. Unknown hops are null (``"*"`` is accepted and stored as null)."""

    hops: Annotated[list[Hop | None], Meta(max_length=255)] = []  # empty only with `error`
    pmtu_bytes: PmtuBytes | None = None
    tool: Label | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if "*" in self.hops:
            msgspec.structs.force_setattr(self, "hops", [None if hop == "*" else hop for hop in self.hops])


class HostTcpRecord(_Record, tag="host_tcp", kw_only=True, frozen=True):
    """TCP settings of a transfer host (Linux sysctls), for HOST_TCP_TUNING.

    A setting the agent could not read is None (containers hide some sysctls); without ``error``
    at least one setting must be there.
    """

    site: SiteCode
    host: HostName
    tcp_rmem: SysctlTriple | None = None  # net.ipv4.tcp_rmem: min, default, max bytes
    tcp_wmem: SysctlTriple | None = None
    rmem_max: SizeBytes | None = None  # net.core.rmem_max
    wmem_max: SizeBytes | None = None
    congestion_control: Label | None = None
    mtu: MtuBytes | None = None
    interface: InterfaceName | None = None  # whose MTU and speed these are
    nic_speed_mbps: NicSpeedMbps | None = None  # null when the kernel does not know (-1, virtual interfaces)


Record = ThroughputRecord | OwampRecord | SnmpRecord | TracerouteRecord | HostTcpRecord
RECORD_TYPES: Final[Mapping[str, type[_Record]]] = {
    cls.__struct_config__.tag: cls  # type: ignore[misc]
    for cls in (ThroughputRecord, OwampRecord, SnmpRecord, TracerouteRecord, HostTcpRecord)
}
# The record types that measure a path direction (src -> dst): the ones a site may send only for its own paths.
PATH_TEST_TYPES: Final[frozenset[str]] = frozenset(
    tag for tag, cls in RECORD_TYPES.items() if issubclass(cls, PathRecord)
)


class Batch(msgspec.Struct, kw_only=True, frozen=True):
    """What an agent POSTs to /api/v1/ingest. ``batch_id`` is stored lower-case; unknown fields are ignored."""

    batch_id: BatchId
    agent_version: AgentVersion
    sent_at: UtcDatetime
    records: list[Record]
    schema_version: Annotated[int, Meta(ge=1, le=1000)] = SCHEMA_VERSION

    def __post_init__(self) -> None:
        msgspec.structs.force_setattr(self, "batch_id", self.batch_id.lower())
        msgspec.structs.force_setattr(self, "sent_at", to_utc(self.sent_at))


class _BatchEnvelope(msgspec.Struct, kw_only=True):
    """Batch with its records left undecoded, so each record is decoded (and reported) on its own."""

    batch_id: BatchId
    agent_version: AgentVersion
    sent_at: UtcDatetime
    records: list[msgspec.Raw]
    schema_version: Annotated[int, Meta(ge=1, le=1000)] = SCHEMA_VERSION


BATCH_DECODER = msgspec.json.Decoder(Batch)
ENVELOPE_DECODER = msgspec.json.Decoder(_BatchEnvelope)
RECORD_DECODER = msgspec.json.Decoder(Record)
RECORDS_DECODER = msgspec.json.Decoder(list[Record])
RAW_LIST_DECODER = msgspec.json.Decoder(list[msgspec.Raw])
ENCODER = msgspec.json.Encoder()
