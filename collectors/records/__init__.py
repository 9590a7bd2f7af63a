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

The package: ``types`` (limits, counter widths, constrained field types, error items), ``schema`` (the
structs), ``checks`` (the meaning), ``decode`` (batches and records in and out). Import from here.
"""

from __future__ import annotations

from collectors.records.decode import (
    BatchStream,
    batch_json_schema,
    decode_batch,
    decode_batch_stream,
    decode_records,
    encode_batch,
    record_errors,
    record_to_dict,
    schema_version_needed,
)
from collectors.records.schema import (
    PATH_TEST_TYPES,
    RECORD_TYPES,
    Batch,
    Counters,
    HostTcpRecord,
    OwampRecord,
    Record,
    SnmpRecord,
    ThroughputRecord,
    TracerouteRecord,
)
from collectors.records.types import (
    JOB_ID_SCHEMA_VERSION,
    MAX_FUTURE_SKEW,
    MAX_RATE_BPS,
    MAX_REPORTED_ERRORS,
    MAX_TIME,
    MIN_TIME,
    SCHEMA_VERSION,
    SITE_CODE_PATTERN,
    ErrorItem,
    RecordError,
    TooManyRecordsError,
)

__all__ = [
    "JOB_ID_SCHEMA_VERSION",
    "MAX_FUTURE_SKEW",
    "MAX_RATE_BPS",
    "MAX_REPORTED_ERRORS",
    "MAX_TIME",
    "MIN_TIME",
    "PATH_TEST_TYPES",
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
    "schema_version_needed",
]
