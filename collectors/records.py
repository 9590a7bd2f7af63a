"""The wire schema of measurement records, shared by the site agent and the central ingest.

One versioned definition (``SCHEMA_VERSION``) serves three readers: the agent builds and spools
these records, ``POST /api/v1/ingest`` validates agent batches against them (docs/contracts.md#ingest-api),
and ``manage.py replay`` validates scenario ``measurements`` (docs/scenario-format.md) with them.

Validation has two layers:

1. structure, in the types: msgspec Structs with ``msgspec.Meta`` bounds (ranges, lengths), a
   tagged union on ``type``. Unknown record and batch fields are ignored (agents may
   send extras, docs/contracts.md#ingest-api); unknown counter names are refused. msgspec stops at the first
   structural error of a document, so batches are decoded record by record: each bad record
   reports its first structural error;
2. meaning, in ``_semantic_errors``: relations between fields (packets_lost <= packets_sent,
   delay_min <= median <= max, src != dst, ascending tcp_rmem...), the time window and the
   patterns of names and texts (see ``_Pattern``). Every such error of every record is reported.

A valid batch, the common case, takes a fast path: one msgspec pass, then ``_records_clean``
checks the meaning batch-wise; only a batch that fails is gone through again record by record
to word its errors. ``decode_batch_stream`` does the same chunk by chunk for the ingest.

Errors are ``{"path": "records[3].throughput_bps", "message": "..."}`` items; the path ``""``
means the whole document. All times are timezone-aware and converted to UTC.
"""

from __future__ import annotations

import itertools
import math
import operator
import re
import time
import typing
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Final, Literal, NamedTuple, TypedDict

import msgspec
from msgspec import Meta

from collectors.counters import COUNTER32_MAX, COUNTER64_MAX, TIMETICKS_MAX

__all__ = [
    "MAX_FUTURE_SKEW",
    "MAX_RATE_BPS",
    "MAX_REPORTED_ERRORS",
    "MAX_TIME",
    "MIN_TIME",
    "RECORD_TYPES",
    "SCHEMA_VERSION",
    "SITE_CODE_PATTERN",
    "Batch",
    "BatchStream",
    "Counters",
    "ErrorItem",
    "HostTcpRecord",
    "OwampRecord",
    "Record",
    "RecordError",
    "SnmpRecord",
    "ThroughputRecord",
    "TooManyRecordsError",
    "TracerouteRecord",
    "batch_json_schema",
    "decode_batch",
    "decode_batch_stream",
    "decode_records",
    "encode_batch",
    "record_errors",
    "record_to_dict",
]

SCHEMA_VERSION: Final = 1
"""Bump when a change would make a record of one side invalid or different on the other side."""

MIN_TIME: Final = datetime(2000, 1, 1, tzinfo=UTC)
MAX_TIME: Final = datetime(2100, 1, 1, tzinfo=UTC)  # sanity bound when no `now` is given
MAX_FUTURE_SKEW: Final = timedelta(minutes=5)
"""How far ahead of the receiver's clock a timestamp may be (agent clocks drift, NTP may lag)."""

MAX_REPORTED_ERRORS: Final = 100
"""A 400 response lists at most this many errors, then says how many more there were."""

INT64_MAX: Final = 2**63 - 1  # plain counts fit a PostgreSQL bigint
MAX_RATE_BPS: Final = 1e13  # 10 Tb/s: above any interface or test this system will see
MAX_DELAY_MS: Final = 3.6e6  # one hour

# --- constrained field types -------------------------------------------------------------------
# Patterns end in \Z, not $: `$` also matches before a trailing newline ("CERN\n").
# Lone UTF-16 surrogates (\ud800-\udfff) cannot be stored as UTF-8 text in PostgreSQL.
_CONTROL = r"\x00-\x1f\x7f\ud800-\udfff"
SITE_CODE_PATTERN: Final = r"^[A-Za-z0-9][A-Za-z0-9_.-]*\Z"
# No ':' in equipment names: docs/scenario-format.md writes interfaces as "equipment:interface".
_EQUIPMENT_PATTERN = rf"^[^\s:{_CONTROL}]+\Z"
_TOKEN_PATTERN = rf"^[^\s{_CONTROL}]+\Z"  # host names, addresses, traceroute hops
_IF_NAME_PATTERN = rf"^[^\s{_CONTROL}](?:[^{_CONTROL}]*[^\s{_CONTROL}])?\Z"  # inner spaces allowed (ifDescr)
_LABEL_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.+-]*\Z"  # tool names, versions, congestion control
_TEXT_PATTERN = r"^[^\x00\ud800-\udfff]*\Z"  # free text: newlines and tabs allowed
_UUID_PATTERN = r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\Z"

_PATTERN_HELP: Final = {
    SITE_CODE_PATTERN: "a site code: letters, digits, '_', '.' and '-', starting with a letter or digit",
    _EQUIPMENT_PATTERN: "a name without spaces, ':' or control characters",
    _TOKEN_PATTERN: "a name or address without spaces or control characters",
    _IF_NAME_PATTERN: "a name without control characters or leading/trailing spaces",
    _LABEL_PATTERN: "letters, digits, '_', '.', '+' and '-', starting with a letter or digit",
    _TEXT_PATTERN: "text without NUL characters or lone surrogates",
    _UUID_PATTERN: "a UUID such as 6f1c0c8e-1b7e-4c8a-9a53-2f3f1c1d9e01",
}


class _Pattern:
    """``Annotated`` marker of a string field whose pattern is checked after decoding (``_pattern_problems``).

    msgspec would run the regular expression on every value while decoding; a batch of 5 000 SNMP
    samples names the same hundred interfaces fifty times, so the ingest checks each distinct value
    once instead (a third of the decoding time). The published JSON schema keeps the pattern.
    """

    __slots__ = ("help", "regex")

    def __init__(self, pattern: str) -> None:
        self.regex = re.compile(pattern)
        self.help = _PATTERN_HELP[pattern]


def _name(pattern: str, *, min_length: int = 0, max_length: int, description: str | None = None) -> Any:
    meta = Meta(
        min_length=min_length, max_length=max_length, description=description, extra_json_schema={"pattern": pattern}
    )
    return Annotated[str, meta, _Pattern(pattern)]


SiteCode = _name(SITE_CODE_PATTERN, min_length=1, max_length=32, description="site code")
EquipmentName = _name(_EQUIPMENT_PATTERN, min_length=1, max_length=100)  # the inventory's equipment names
InterfaceName = _name(_IF_NAME_PATTERN, min_length=1, max_length=128)
HostName = _name(_TOKEN_PATTERN, min_length=1, max_length=255, description="DNS name or address")
Label = _name(_LABEL_PATTERN, min_length=1, max_length=64)
ShortText = _name(_IF_NAME_PATTERN, min_length=1, max_length=128)
Text = _name(_TEXT_PATTERN, max_length=8192)
# Once per batch: msgspec checks the pattern itself.
AgentVersion = Annotated[str, Meta(min_length=1, max_length=64, pattern=_LABEL_PATTERN)]
BatchId = Annotated[str, Meta(pattern=_UUID_PATTERN, description="UUID, the idempotency key of the batch")]

UtcDatetime = Annotated[datetime, Meta(tz=True, description="RFC 3339 time with a zone; stored in UTC")]
Count = Annotated[int, Meta(ge=0, le=INT64_MAX)]
Counter32 = Annotated[int, Meta(ge=0, le=COUNTER32_MAX)]
# msgspec bounds must fit an int64, so the 2^64 - 1 upper bound is checked in _snmp_problems.
Counter64 = Annotated[int, Meta(ge=0, description="0..2^64-1")]
TimeTicks = Annotated[int, Meta(ge=0, le=TIMETICKS_MAX, description="hundredths of a second")]
RateBps = Annotated[float, Meta(ge=0, le=MAX_RATE_BPS)]
DurationS = Annotated[float, Meta(gt=0, le=86400)]
IntervalS = Annotated[float, Meta(gt=0, le=7 * 86400)]
# One-way delays may be negative: that is how unsynchronised clocks show (CLOCK_UNSYNC).
DelayMs = Annotated[float, Meta(ge=-MAX_DELAY_MS, le=MAX_DELAY_MS)]
PositiveMs = Annotated[float, Meta(ge=0, le=MAX_DELAY_MS)]
SizeBytes = Annotated[int, Meta(ge=0, le=2**40)]  # socket buffers and windows; 1 TiB is absurd already
MssBytes = Annotated[int, Meta(ge=1, le=65535)]
PacketBytes = Annotated[int, Meta(ge=1, le=65535)]
PmtuBytes = Annotated[int, Meta(ge=68, le=65535)]
MtuBytes = Annotated[int, Meta(ge=68, le=65536)]  # Linux loopback reports 65536
Streams = Annotated[int, Meta(ge=1, le=4096)]
ExitCode = Annotated[int, Meta(ge=-(2**31), le=2**31 - 1)]  # negative: killed by a signal
IfIndex = Annotated[int, Meta(ge=1, le=2**31 - 1)]
EngineBoots = Annotated[int, Meta(ge=0, le=2**31 - 1)]
SpeedMbps = Annotated[float, Meta(ge=0, le=1e7, description="ifHighSpeed, Mbit/s; 0 = unknown")]
SysctlTriple = Annotated[list[Annotated[int, Meta(ge=0, le=2**40)]], Meta(min_length=3, max_length=3)]
Hop = Annotated[str, Meta(min_length=1, max_length=255, pattern=_TOKEN_PATTERN)]

OperStatus = Literal["up", "down", "testing", "unknown", "dormant", "notPresent", "lowerLayerDown"]
AdminStatus = Literal["up", "down", "testing"]


class ErrorItem(TypedDict):
    """One validation error: where (``records[3].throughput_bps``; ``""`` = whole document) and what."""

    path: str
    message: str


class RecordError(ValueError):
    """Invalid input. ``errors`` lists every problem found, each with its path."""

    def __init__(self, errors: list[ErrorItem]) -> None:
        self.errors = errors
        shown = "; ".join(f"{e['path'] or '(document)'}: {e['message']}" for e in errors[:5])
        more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
        super().__init__(f"{len(errors)} validation error(s): {shown}{more}")


class TooManyRecordsError(RecordError):
    """More records than the receiver accepts in one batch (refused before any record is decoded).

    Not a problem of any record: an agent splits such a batch (HTTP 413), it does not park it.
    """


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
            msgspec.structs.force_setattr(self, "time", _to_utc(self.time))


class _PathRecord(_Record, kw_only=True, frozen=True):
    """A test between two sites, measured in the direction src -> dst."""

    src: SiteCode
    dst: SiteCode
    src_host: HostName | None = None
    dst_host: HostName | None = None
    schedule_interval_s: IntervalS | None = None  # the agent's period for this test (PERIODIC_LOSS)


class ThroughputRecord(_PathRecord, tag="throughput", kw_only=True, frozen=True):
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


class OwampRecord(_PathRecord, tag="owamp", kw_only=True, frozen=True):
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
    jitter_ms: PositiveMs | None = None
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


class TracerouteRecord(_PathRecord, tag="traceroute", kw_only=True, frozen=True):
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
    interface: InterfaceName | None = None  # whose MTU this is


Record = ThroughputRecord | OwampRecord | SnmpRecord | TracerouteRecord | HostTcpRecord
RECORD_TYPES: Final[Mapping[str, type[_Record]]] = {
    cls.__struct_config__.tag: cls  # type: ignore[misc]
    for cls in (ThroughputRecord, OwampRecord, SnmpRecord, TracerouteRecord, HostTcpRecord)
}


class Batch(msgspec.Struct, kw_only=True, frozen=True):
    """What an agent POSTs to /api/v1/ingest. ``batch_id`` is stored lower-case; unknown fields are ignored."""

    batch_id: BatchId
    agent_version: AgentVersion
    sent_at: UtcDatetime
    records: list[Record]
    schema_version: Annotated[int, Meta(ge=1, le=1000)] = SCHEMA_VERSION

    def __post_init__(self) -> None:
        msgspec.structs.force_setattr(self, "batch_id", self.batch_id.lower())
        msgspec.structs.force_setattr(self, "sent_at", _to_utc(self.sent_at))


class _BatchEnvelope(msgspec.Struct, kw_only=True):
    """Batch with its records left undecoded, so each record is decoded (and reported) on its own."""

    batch_id: BatchId
    agent_version: AgentVersion
    sent_at: UtcDatetime
    records: list[msgspec.Raw]
    schema_version: Annotated[int, Meta(ge=1, le=1000)] = SCHEMA_VERSION


_BATCH_DECODER = msgspec.json.Decoder(Batch)
_ENVELOPE_DECODER = msgspec.json.Decoder(_BatchEnvelope)
_RECORD_DECODER = msgspec.json.Decoder(Record)
_RECORDS_DECODER = msgspec.json.Decoder(list[Record])
_RAW_LIST_DECODER = msgspec.json.Decoder(list[msgspec.Raw])
_ENCODER = msgspec.json.Encoder()


# --- public functions --------------------------------------------------------------------------


def decode_batch(raw: bytes, *, now: datetime, max_records: int) -> Batch:
    """Validate an ingest body and return the Batch, or raise RecordError listing every problem.

    Never raises anything else for any ``raw`` bytes: malformed JSON, invalid UTF-8, NaN or
    Infinity, numbers out of range, deep nesting, unknown types or fields, naive timestamps or
    ones outside [2000-01-01, ``now`` + 5 min] all become errors with a path. More than
    ``max_records`` records is refused before any record is decoded.
    """
    _require_aware(now)
    # Fast path for the common case, a valid batch: one msgspec pass over the whole body, then the
    # semantic checks. Only a body that fails is decoded again record by record, so that every
    # structural error is reported with its record's path.
    try:
        batch = _BATCH_DECODER.decode(raw)
    except _DECODE_ERRORS:
        batch = None
    except Exception:  # noqa: BLE001 - anything odd in the fast path: let the careful path report it
        batch = None
    if batch is not None and len(batch.records) <= max_records and batch.schema_version <= SCHEMA_VERSION:
        errors = [_item(path, msg) for path, msg in _time_errors("sent_at", batch.sent_at, now)]
        if not errors and _records_clean(batch.records, now):
            return batch
        for index, record in enumerate(batch.records):
            # JSON cannot carry NaN and the schema's bounds refuse infinities: skip the non-finite scan.
            problems = _semantic_errors(record, now, finite_checked=True)
            if problems:
                prefix = f"records[{index}]"
                errors.extend(_item(_join(prefix, f".{path}"), msg) for path, msg in problems)
        if errors:
            raise RecordError(_capped(errors))
        return batch
    try:
        envelope = _ENVELOPE_DECODER.decode(raw)
    except _DECODE_ERRORS as exc:
        raise RecordError([_error_from_exception(exc, "")]) from None

    errors: list[ErrorItem] = []
    if envelope.schema_version > SCHEMA_VERSION:
        errors.append(
            _item(
                "schema_version",
                f"schema version {envelope.schema_version} is newer than this server's ({SCHEMA_VERSION}); "
                f"upgrade the central service first",
            )
        )
    sent_at = _to_utc(envelope.sent_at)
    errors.extend(_item(path, msg) for path, msg in _time_errors("sent_at", sent_at, now))
    if len(envelope.records) > max_records:
        errors.append(_item("records", f"{len(envelope.records)} records, more than the limit of {max_records}"))
        raise TooManyRecordsError(_capped(errors))

    records: list[Record] = []
    for index, raw_record in enumerate(envelope.records):
        prefix = f"records[{index}]"
        try:
            record = _RECORD_DECODER.decode(raw_record)
        except _DECODE_ERRORS as exc:
            errors.append(_error_from_exception(exc, prefix))
            continue
        errors.extend(_item(_join(prefix, f".{path}"), msg) for path, msg in _semantic_errors(record, now))
        records.append(record)
    if errors:
        raise RecordError(_capped(errors))
    return Batch(
        batch_id=envelope.batch_id,
        agent_version=envelope.agent_version,
        sent_at=sent_at,
        records=records,
        schema_version=envelope.schema_version,
    )


class BatchStream(NamedTuple):
    """A batch whose envelope is checked and whose records are decoded chunk by chunk (decode_batch_stream)."""

    batch_id: str
    agent_version: str
    sent_at: datetime
    record_count: int
    chunks: Iterator[list[Record]]
    decode_s: list[float]  # seconds spent decoding so far (envelope, then each chunk), for Server-Timing


def decode_batch_stream(raw: bytes, *, now: datetime, max_records: int, chunk_records: int = 1000) -> BatchStream:
    """``decode_batch`` for a consumer that stores records while the next ones are decoded.

    The envelope (batch id, sent_at, schema version, number of records) is checked here; each chunk
    of ``chunk_records`` records (the first: a quarter of that) when the iterator reaches it.
    Whatever the problem and wherever it is, the exception raised (here or by the iterator) is the
    RecordError of ``decode_batch`` for the whole body, listing every error, so a consumer must be
    able to undo the chunks it took (the ingest runs in one transaction).
    """
    _require_aware(now)
    started = time.perf_counter()
    try:
        envelope = _ENVELOPE_DECODER.decode(raw)
    except Exception:  # noqa: BLE001 - whatever it is, the careful path words it
        envelope = None
    if (
        envelope is None
        or envelope.schema_version > SCHEMA_VERSION
        or len(envelope.records) > max_records
        or next(_time_errors("sent_at", _to_utc(envelope.sent_at), now), None) is not None
    ):
        batch = decode_batch(raw, now=now, max_records=max_records)  # raises, listing every error
        return BatchStream(
            batch.batch_id, batch.agent_version, batch.sent_at, len(batch.records), iter([batch.records]), [0.0]
        )
    decode_s = [time.perf_counter() - started]

    def chunks() -> Iterator[list[Record]]:
        raws = envelope.records
        # The first chunk is a quarter of the others: the consumer can start storing sooner.
        bounds = sorted({0, *range(max(1, chunk_records // 4), len(raws), chunk_records), len(raws)})
        for start, stop in itertools.pairwise(bounds):
            began = time.perf_counter()
            try:
                records = _RECORDS_DECODER.decode(b"[" + b",".join(raws[start:stop]) + b"]")
                clean = _records_clean(records, now)
            except Exception:  # noqa: BLE001 - the careful path below words it
                clean = False
            if not clean:
                # Raises the whole body's RecordError; should it find nothing wrong, its records go on.
                yield decode_batch(raw, now=now, max_records=max_records).records[start:]
                return
            decode_s[0] += time.perf_counter() - began
            yield records

    return BatchStream(
        envelope.batch_id.lower(),
        envelope.agent_version,
        _to_utc(envelope.sent_at),
        len(envelope.records),
        chunks(),
        decode_s,
    )


def decode_records(
    items: Sequence[Mapping[str, Any]] | bytes | str,
    *,
    path: str = "measurements",
    now: datetime | None = None,
    max_records: int | None = None,
) -> list[Record]:
    """Validate measurement records given as plain dicts (a YAML scenario) or a JSON array.

    Errors carry ``path`` as prefix: ``measurements[12].throughput_bps``. Times may be ISO
    strings or datetime objects, and must have a zone. With ``now``, times more than 5 minutes
    after it are refused (scenario replays usually pass None: their data may be "in the future").

    PyYAML follows YAML 1.1 and reads ``9.0e8`` or ``1e9`` as strings: in float fields such
    strings are taken as numbers here (only here; the JSON wire format has real numbers).
    NaN and Infinity are refused.
    """
    if now is not None:
        _require_aware(now)
    if isinstance(items, bytes | bytearray | memoryview | str):
        try:
            raw_items: list[Any] = _RAW_LIST_DECODER.decode(items)
        except _DECODE_ERRORS as exc:
            raise RecordError([_error_from_exception(exc, path)]) from None
        decode_one = _decode_raw_record
    elif isinstance(items, Sequence):
        raw_items = list(items)
        decode_one = _convert_record
    else:
        raise RecordError([_item(path, f"expected a list of records, got {type(items).__name__}")])
    if max_records is not None and len(raw_items) > max_records:
        raise TooManyRecordsError([_item(path, f"{len(raw_items)} records, more than the limit of {max_records}")])

    errors: list[ErrorItem] = []
    records: list[Record] = []
    for index, item in enumerate(raw_items):
        prefix = f"{path}[{index}]"
        record, item_errors = decode_one(item, prefix)
        if record is not None:
            item_errors.extend(_item(_join(prefix, f".{p}"), msg) for p, msg in _semantic_errors(record, now))
            records.append(record)
        errors.extend(item_errors)
    if errors:
        raise RecordError(_capped(errors))
    return records


def record_errors(record: Record, *, now: datetime | None = None, path: str = "") -> list[ErrorItem]:
    """Every problem the ingest would find in one record built in code (the agent checks before
    spooling, so one bad record cannot poison a whole batch). Empty when the record is valid."""
    data = msgspec.to_builtins(record)
    _, errors = _convert_record(data, path, coerce_exponent_strings=False)
    if errors:
        return errors
    return [_item(_join(path, f".{p}"), msg) for p, msg in _semantic_errors(record, now)]


def encode_batch(batch: Batch, *, validate: bool = True, now: datetime | None = None) -> bytes:
    """The JSON body of an ingest request.

    With ``validate`` (default) the batch is checked as the centre would check it (time window
    against ``now``, default the local clock) and RecordError is raised instead of sending
    something the centre will refuse. NaN floats are refused, not silently sent as null.
    """
    if validate:
        errors = [
            error
            for index, record in enumerate(batch.records)
            for error in _non_finite_errors(msgspec.to_builtins(record), f"records[{index}]")
        ]
        if errors:
            raise RecordError(_capped(errors))
    body = _ENCODER.encode(batch)
    if validate:
        decode_batch(body, now=now or datetime.now(UTC), max_records=max(len(batch.records), 1))
    return body


def record_to_dict(record: Record) -> dict[str, Any]:
    """The record as JSON-ready builtins (times as RFC 3339 UTC strings, absent fields omitted)."""
    return msgspec.to_builtins(record)


def batch_json_schema() -> dict[str, Any]:
    """JSON Schema of the ingest body, for the OpenAPI document and for agent authors."""
    return msgspec.json.schema(Batch)


# --- semantic checks ---------------------------------------------------------------------------

_Problems = Iterator[tuple[str, str]]  # (path relative to the record, message)


def _semantic_errors(record: Record, now: datetime | None, *, finite_checked: bool = False) -> list[tuple[str, str]]:
    problems = list(_time_errors("time", record.time, now))
    problems.extend(_pattern_problems(record))
    if not finite_checked:
        problems.extend(_non_finite_fields(record))
    checker = _CHECKS.get(type(record))
    if checker is not None:
        problems.extend(checker(record))
    return problems


def _pattern_fields(cls: type) -> tuple[tuple[str, _Pattern], ...]:
    """The fields of a record type whose pattern is checked after decoding (see _Pattern)."""

    def marker(annotation: Any) -> _Pattern | None:
        for meta in getattr(annotation, "__metadata__", ()):
            if isinstance(meta, _Pattern):
                return meta
        return next(filter(None, map(marker, typing.get_args(annotation))), None)

    found = ((field.name, marker(field.type)) for field in msgspec.structs.fields(cls))
    return tuple((name, pattern) for name, pattern in found if pattern is not None)


_PATTERN_FIELDS: Final = {cls: _pattern_fields(cls) for cls in RECORD_TYPES.values()}


def _pattern_problems(record: Record) -> _Problems:
    for name, pattern in _PATTERN_FIELDS[type(record)]:
        value = getattr(record, name)
        if value is not None and not pattern.regex.search(value):
            yield name, f"expected {pattern.help}"


def _records_clean(records: Sequence[Record], now: datetime) -> bool:
    """True when no record has a semantic problem, checked batch-wise (the ingest hot path).

    Equivalent to every ``_semantic_errors`` being empty, but cheaper: the time window is checked
    on the earliest and latest time, patterns on each distinct value, SNMP samples with a few
    C-level passes. False only means "look closer": the caller then words every problem per record.
    """
    by_type: dict[type, list[Record]] = {}
    for record in records:
        by_type.setdefault(type(record), []).append(record)
    for cls, group in by_type.items():
        times = list(map(_TIME, group))
        if next(_time_errors("time", min(times), now), None) or next(_time_errors("time", max(times), now), None):
            return False
        for name, pattern in _PATTERN_FIELDS[cls]:
            values = set(map(operator.attrgetter(name), group))
            values.discard(None)
            if not all(map(pattern.regex.search, values)):
                return False
        if cls is SnmpRecord:
            if not _snmp_clean(group):
                return False
        else:
            checker = _CHECKS[cls]
            if any(next(checker(record), None) for record in group):
                return False
    return True


_TIME: Final = operator.attrgetter("time")
_SNMP_REQUIRED: Final = operator.attrgetter("error", "oper_status")
_COUNTER64: Final = operator.attrgetter("hc_in_octets", "hc_out_octets", "hc_in_ucast_pkts", "hc_out_ucast_pkts")


def _snmp_clean(group: list[SnmpRecord]) -> bool:
    """``_snmp_problems`` for a whole group of decoded samples (the schema bounds their Counter32 values)."""
    counters = map(_COUNTER64, map(operator.attrgetter("counters"), group))
    values = filter(None, itertools.chain.from_iterable(counters))  # drops None (and 0, harmless for a maximum)
    if max(values, default=0) > COUNTER64_MAX:
        return False
    return not any(error is None and oper is None for error, oper in map(_SNMP_REQUIRED, group))


def _time_errors(field: str, moment: datetime, now: datetime | None) -> _Problems:
    if moment < MIN_TIME:
        yield field, f"{_iso(moment)} is before {_iso(MIN_TIME)}"
    elif now is not None and moment > now + MAX_FUTURE_SKEW:
        ahead_s = (moment - now).total_seconds()
        yield (
            field,
            (
                f"{_iso(moment)} is {ahead_s:.0f} s ahead of the receiver's clock ({_iso(now)}); at most "
                f"{MAX_FUTURE_SKEW.total_seconds():.0f} s are tolerated: check the agent's NTP"
            ),
        )
    elif moment >= MAX_TIME:
        yield field, f"{_iso(moment)} is not before {_iso(MAX_TIME)}"


def _non_finite_fields(record: msgspec.Struct) -> _Problems:
    # JSON cannot carry NaN and the bounds reject infinities; this guards records built in code.
    for name in record.__struct_fields__:
        value = getattr(record, name)
        if isinstance(value, float) and not math.isfinite(value):
            yield name, f"{value} is not a finite number"


def _path_problems(record: _PathRecord) -> _Problems:
    if record.src == record.dst:
        yield "dst", f"dst equals src ({record.src}): a test needs two different sites"


def _lost_problems(sent: int | None, lost: int | None) -> _Problems:
    if lost is not None and sent is None:
        yield "packets_sent", "required when packets_lost is given"
    elif sent is not None and lost is not None and lost > sent:
        yield "packets_lost", f"{lost} lost is more than the {sent} packets sent"


def _throughput_problems(record: ThroughputRecord) -> _Problems:
    yield from _path_problems(record)
    if record.throughput_bps is None and record.error is None:
        yield "throughput_bps", "required unless `error` says why the test gave no result"
    yield from _lost_problems(record.packets_sent, record.packets_lost)
    if record.protocol == "udp" and record.retransmits is not None:
        yield "retransmits", "UDP has no retransmissions; this field is for TCP tests"


def _owamp_problems(record: OwampRecord) -> _Problems:
    yield from _path_problems(record)
    sent, lost = record.packets_sent, record.packets_lost
    if record.error is None:
        for name, value in (("packets_sent", sent), ("packets_lost", lost)):
            if value is None:
                yield name, "required unless `error` says why the test gave no result"
    if sent is not None or record.error is not None:  # else already reported as required
        yield from _lost_problems(sent, lost)
    delays = {
        "delay_min_ms": record.delay_min_ms,
        "delay_median_ms": record.delay_median_ms,
        "delay_max_ms": record.delay_max_ms,
    }
    if sent is not None and lost is not None:
        received = sent - lost
        if received < 0:
            return  # already reported; the rules below would only add noise
        if record.reordered is not None and record.reordered > received:
            yield "reordered", f"{record.reordered} reordered is more than the {received} packets received"
        if received == 0:
            for name, value in delays.items():
                if value is not None:
                    yield name, "must be null: no packet was received"
            return
        if record.error is None:
            for name, value in delays.items():
                if value is None:
                    yield name, f"required: {received} packets were received"
    low, mid, high = delays.values()
    if low is not None and mid is not None and low > mid:
        yield "delay_median_ms", f"median {mid} ms is below the minimum {low} ms"
    if mid is not None and high is not None and mid > high:
        yield "delay_max_ms", f"maximum {high} ms is below the median {mid} ms"
    if mid is None and low is not None and high is not None and low > high:
        yield "delay_max_ms", f"maximum {high} ms is below the minimum {low} ms"


def _snmp_problems(record: SnmpRecord) -> _Problems:
    for name in record.counters.__struct_fields__:
        value = getattr(record.counters, name)
        if value is not None and value > COUNTER64_MAX:
            yield f"counters.{name}", f"{value} is above the Counter64 maximum 2^64-1 ({COUNTER64_MAX})"
    if record.error is None and record.oper_status is None:
        yield "oper_status", "required unless `error` says why the poll failed"


def _traceroute_problems(record: TracerouteRecord) -> _Problems:
    yield from _path_problems(record)
    if not record.hops and record.error is None:
        yield "hops", "must list at least one hop unless `error` says why the traceroute failed"


_HOST_TCP_SETTINGS: Final = ("tcp_rmem", "tcp_wmem", "rmem_max", "wmem_max", "congestion_control", "mtu")


def _host_tcp_problems(record: HostTcpRecord) -> _Problems:
    if record.error is None and all(getattr(record, name) is None for name in _HOST_TCP_SETTINGS):
        yield "tcp_rmem", "no setting given: at least one is required unless `error` says why none could be read"
    for name in ("tcp_rmem", "tcp_wmem"):
        triple = getattr(record, name)
        if triple is None:
            continue
        low, default, high = triple
        if not low <= default <= high:
            yield name, f"[{low}, {default}, {high}] must be ascending: min <= default <= max bytes"


_CHECKS: Final = {
    ThroughputRecord: _throughput_problems,
    OwampRecord: _owamp_problems,
    SnmpRecord: _snmp_problems,
    TracerouteRecord: _traceroute_problems,
    HostTcpRecord: _host_tcp_problems,
}


# --- decoding helpers --------------------------------------------------------------------------

# UnicodeDecodeError: invalid UTF-8 in the body; RecursionError: msgspec's nesting depth limit.
_DECODE_ERRORS = (msgspec.DecodeError, UnicodeDecodeError, RecursionError)

_EXPONENT_FLOAT = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)[eE][-+]?\d+\Z")


def _is_float_annotation(annotation: Any) -> bool:
    """True for float, Annotated[float, ...] and unions containing them."""
    if annotation is float:
        return True
    if hasattr(annotation, "__metadata__"):  # Annotated[float, Meta(...)]
        return _is_float_annotation(annotation.__origin__)
    return any(_is_float_annotation(arg) for arg in getattr(annotation, "__args__", ()))


# Float fields per record type, for decode_records' YAML 1.1 workaround.
_FLOAT_FIELDS: Final = {
    tag: frozenset(field.name for field in msgspec.structs.fields(cls) if _is_float_annotation(field.type))
    for tag, cls in RECORD_TYPES.items()
}


def _decode_raw_record(item: msgspec.Raw, prefix: str) -> tuple[Record | None, list[ErrorItem]]:
    try:
        return _RECORD_DECODER.decode(item), []
    except _DECODE_ERRORS as exc:
        return None, [_error_from_exception(exc, prefix)]


def _convert_record(
    item: Any, prefix: str, *, coerce_exponent_strings: bool = True
) -> tuple[Record | None, list[ErrorItem]]:
    errors = _non_finite_errors(item, prefix)
    if errors:
        return None, errors
    if coerce_exponent_strings and isinstance(item, Mapping):
        item = _with_exponent_floats(item)
    try:
        return msgspec.convert(item, Record), []
    except (msgspec.ValidationError, RecursionError) as exc:
        return None, [_error_from_exception(exc, prefix)]


def _with_exponent_floats(item: Mapping[str, Any]) -> Mapping[str, Any]:
    float_fields = _FLOAT_FIELDS.get(item.get("type"), frozenset())  # type: ignore[arg-type]
    fixed = {
        key: float(value)
        for key, value in item.items()
        if key in float_fields and isinstance(value, str) and _EXPONENT_FLOAT.match(value)
    }
    return {**item, **fixed} if fixed else item


def _non_finite_errors(value: Any, path: str, depth: int = 0) -> list[ErrorItem]:
    """Paths of NaN/Infinity floats in plain data, with a clearer message than a failed bound."""
    if isinstance(value, float):
        return [] if math.isfinite(value) else [_item(path, f"{value} is not allowed: numbers must be finite")]
    if depth > 32:  # records are shallow; deeper data fails the schema anyway
        return []
    if isinstance(value, Mapping):
        return [e for key, sub in value.items() for e in _non_finite_errors(sub, _join(path, f".{key}"), depth + 1)]
    if isinstance(value, list | tuple):
        return [e for i, sub in enumerate(value) for e in _non_finite_errors(sub, f"{path}[{i}]", depth + 1)]
    return []


_KEY_ERROR = re.compile(r"(?P<message>.*) - at `key` in `\$(?P<path>[^`]*)`\Z", re.S)
_MISSING_FIELD = re.compile(r"Object missing required field `(?P<name>[^`]*)`\Z")
_UNKNOWN_FIELD = re.compile(r"Object contains unknown field `(?P<name>[^`]*)`\Z")


def _error_from_exception(exc: BaseException, prefix: str) -> ErrorItem:
    """Turn a msgspec error ("Expected `int`, got `str` - at `$.records[3].x`") into an ErrorItem."""
    if isinstance(exc, UnicodeDecodeError):
        return _item(prefix, f"not valid UTF-8 text (byte {exc.start})")
    if isinstance(exc, RecursionError):
        return _item(prefix, "nested too deeply")
    text = str(exc)
    if not isinstance(exc, msgspec.ValidationError):
        if "truncated" in text:
            return _item(prefix, "malformed JSON: input ends early (an unterminated string or a lone \\u surrogate?)")
        return _item(prefix, text.replace("JSON is malformed", "malformed JSON"))
    if match := _KEY_ERROR.match(text):  # a non-string key of an object
        return _item(_join(prefix, match["path"]), f"object keys must be strings ({match['message']})")
    message, found, where = text.rpartition(" - at `$")
    if found:
        path = _join(prefix, where[:-1])  # strip the closing backtick
    else:
        message, path = text, prefix
    if message.startswith("Expected `str` matching regex"):
        pattern = next((p for p in _PATTERN_HELP if repr(p) in message), None)
        return _item(path, f"expected {_PATTERN_HELP[pattern]}" if pattern else message)
    if match := _MISSING_FIELD.match(message):
        return _item(_join(path, f".{match['name']}"), "required field is missing")
    if match := _UNKNOWN_FIELD.match(message):
        return _item(_join(path, f".{match['name']}"), "unknown field")
    if path.endswith("type") and message.startswith("Invalid value"):
        value = message.removeprefix("Invalid value").strip()
        return _item(path, f"unknown record type {value}; expected one of: {', '.join(RECORD_TYPES)}")
    return _item(path, message)


def _join(prefix: str, rest: str) -> str:
    """records[3] + .x -> records[3].x; "" + .x -> x; prefix + [2] -> prefix[2]."""
    if not prefix:
        return rest.removeprefix(".")
    return prefix + rest


def _item(path: str, message: str) -> ErrorItem:
    return {"path": path, "message": message}


def _capped(errors: list[ErrorItem]) -> list[ErrorItem]:
    if len(errors) <= MAX_REPORTED_ERRORS:
        return errors
    hidden = len(errors) - MAX_REPORTED_ERRORS
    return [*errors[:MAX_REPORTED_ERRORS], _item("", f"... and {hidden} more errors not shown")]


def _to_utc(moment: datetime) -> datetime:
    """The same instant in UTC. A naive datetime is returned as is, never taken as local time
    (astimezone would): the schema then refuses it. Year 1 or 9999 with an offset cannot be
    converted and is left for the time-window check to refuse."""
    if not isinstance(moment, datetime) or moment.utcoffset() is None:
        return moment
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        return moment


def _require_aware(now: datetime) -> None:
    if now.tzinfo is None or now.utcoffset() is None:
        raise TypeError(f"`now` must be a timezone-aware datetime, got {now!r}")


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")
