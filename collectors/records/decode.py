"""Decoding and encoding of batches and records: the fast path, the record-by-record path, error wording."""

from __future__ import annotations

import itertools
import math
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Final, NamedTuple

import msgspec

from collectors.records.checks import records_clean, semantic_errors, time_errors
from collectors.records.schema import (
    BATCH_DECODER,
    ENCODER,
    ENVELOPE_DECODER,
    RAW_LIST_DECODER,
    RECORD_DECODER,
    RECORD_TYPES,
    RECORDS_DECODER,
    Batch,
    Record,
)
from collectors.records.types import (
    JOB_ID_SCHEMA_VERSION,
    PATTERN_HELP,
    SCHEMA_VERSION,
    ErrorItem,
    RecordError,
    TooManyRecordsError,
    capped_errors,
    error_item,
    join_location,
    require_aware,
    to_utc,
)

# --- public functions --------------------------------------------------------------------------


def decode_batch(raw: bytes, *, now: datetime, max_records: int) -> Batch:
    """Validate an ingest body and return the Batch, or raise RecordError listing every problem.

    Never raises anything else for any ``raw`` bytes: malformed JSON, invalid UTF-8, NaN or
    Infinity, numbers out of range, deep nesting, unknown types or fields, naive timestamps or
    ones outside [2000-01-01, ``now`` + 5 min] all become errors with a path. More than
    ``max_records`` records is refused before any record is decoded.
    """
    require_aware(now)
    # Fast path for the common case, a valid batch: one msgspec pass over the whole body, then the
    # semantic checks. Only a body that fails is decoded again record by record, so that every
    # structural error is reported with its record's path.
    try:
        batch = BATCH_DECODER.decode(raw)
    except _DECODE_ERRORS:
        batch = None
    except Exception:  # noqa: BLE001 - anything odd in the fast path: let the careful path report it
        batch = None
    if batch is not None and len(batch.records) <= max_records and batch.schema_version <= SCHEMA_VERSION:
        errors = [error_item(path, msg) for path, msg in time_errors("sent_at", batch.sent_at, now)]
        if not errors and records_clean(batch.records, now):
            return batch
        for index, record in enumerate(batch.records):
            # JSON cannot carry NaN and the schema's bounds refuse infinities: skip the non-finite scan.
            problems = semantic_errors(record, now, finite_checked=True)
            if problems:
                prefix = f"records[{index}]"
                errors.extend(error_item(join_location(prefix, f".{path}"), msg) for path, msg in problems)
        if errors:
            raise RecordError(capped_errors(errors))
        return batch
    try:
        envelope = ENVELOPE_DECODER.decode(raw)
    except _DECODE_ERRORS as exc:
        raise RecordError([_error_from_exception(exc, "")]) from None

    errors: list[ErrorItem] = []
    if envelope.schema_version > SCHEMA_VERSION:
        errors.append(
            error_item(
                "schema_version",
                f"schema version {envelope.schema_version} is newer than this server's ({SCHEMA_VERSION}); "
                f"upgrade the central service first",
            )
        )
    sent_at = to_utc(envelope.sent_at)
    errors.extend(error_item(path, msg) for path, msg in time_errors("sent_at", sent_at, now))
    if len(envelope.records) > max_records:
        errors.append(error_item("records", f"{len(envelope.records)} records, more than the limit of {max_records}"))
        raise TooManyRecordsError(capped_errors(errors))

    records: list[Record] = []
    for index, raw_record in enumerate(envelope.records):
        prefix = f"records[{index}]"
        try:
            record = RECORD_DECODER.decode(raw_record)
        except _DECODE_ERRORS as exc:
            errors.append(_error_from_exception(exc, prefix))
            continue
        errors.extend(error_item(join_location(prefix, f".{path}"), msg) for path, msg in semantic_errors(record, now))
        records.append(record)
    if errors:
        raise RecordError(capped_errors(errors))
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
    require_aware(now)
    started = time.perf_counter()
    try:
        envelope = ENVELOPE_DECODER.decode(raw)
    except Exception:  # noqa: BLE001 - whatever it is, the careful path words it
        envelope = None
    if (
        envelope is None
        or envelope.schema_version > SCHEMA_VERSION
        or len(envelope.records) > max_records
        or next(time_errors("sent_at", to_utc(envelope.sent_at), now), None) is not None
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
                records = RECORDS_DECODER.decode(b"[" + b",".join(raws[start:stop]) + b"]")
                clean = records_clean(records, now)
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
        to_utc(envelope.sent_at),
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
        require_aware(now)
    if isinstance(items, bytes | bytearray | memoryview | str):
        try:
            raw_items: list[Any] = RAW_LIST_DECODER.decode(items)
        except _DECODE_ERRORS as exc:
            raise RecordError([_error_from_exception(exc, path)]) from None
        decode_one = _decode_raw_record
    elif isinstance(items, Sequence):
        raw_items = list(items)
        decode_one = _convert_record
    else:
        raise RecordError([error_item(path, f"expected a list of records, got {type(items).__name__}")])
    if max_records is not None and len(raw_items) > max_records:
        raise TooManyRecordsError([error_item(path, f"{len(raw_items)} records, more than the limit of {max_records}")])

    errors: list[ErrorItem] = []
    records: list[Record] = []
    for index, item in enumerate(raw_items):
        prefix = f"{path}[{index}]"
        record, item_errors = decode_one(item, prefix)
        if record is not None:
            item_errors.extend(
                error_item(join_location(prefix, f".{p}"), msg) for p, msg in semantic_errors(record, now)
            )
            records.append(record)
        errors.extend(item_errors)
    if errors:
        raise RecordError(capped_errors(errors))
    return records


def record_errors(record: Record, *, now: datetime | None = None, path: str = "") -> list[ErrorItem]:
    """Every problem the ingest would find in one record built in code (the agent checks before
    spooling, so one bad record cannot poison a whole batch). Empty when the record is valid."""
    data = msgspec.to_builtins(record)
    _, errors = _convert_record(data, path, coerce_exponent_strings=False)
    if errors:
        return errors
    return [error_item(join_location(path, f".{p}"), msg) for p, msg in semantic_errors(record, now)]


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
            raise RecordError(capped_errors(errors))
    body = ENCODER.encode(batch)
    if validate:
        decode_batch(body, now=now or datetime.now(UTC), max_records=max(len(batch.records), 1))
    return body


def schema_version_needed(raw_records: Sequence[bytes | msgspec.Raw]) -> int:
    """The lowest schema version that describes these encoded records: 2 when one answers a test on demand
    (``job_id``), else 1. A centre that knows only version 1 refuses a batch announcing 2 as a whole; the scheduled
    records of a newer agent must still reach it."""
    if any(b'"job_id"' in bytes(raw) for raw in raw_records):
        return JOB_ID_SCHEMA_VERSION
    return 1


def record_to_dict(record: Record) -> dict[str, Any]:
    """The record as JSON-ready builtins (times as RFC 3339 UTC strings, absent fields omitted)."""
    return msgspec.to_builtins(record)


def batch_json_schema() -> dict[str, Any]:
    """JSON Schema of the ingest body, for the OpenAPI document and for agent authors."""
    return msgspec.json.schema(Batch)


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
        return RECORD_DECODER.decode(item), []
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
        return [] if math.isfinite(value) else [error_item(path, f"{value} is not allowed: numbers must be finite")]
    if depth > 32:  # records are shallow; deeper data fails the schema anyway
        return []
    if isinstance(value, Mapping):
        return [
            e for key, sub in value.items() for e in _non_finite_errors(sub, join_location(path, f".{key}"), depth + 1)
        ]
    if isinstance(value, list | tuple):
        return [e for i, sub in enumerate(value) for e in _non_finite_errors(sub, f"{path}[{i}]", depth + 1)]
    return []


_KEY_ERROR = re.compile(r"(?P<message>.*) - at `key` in `\$(?P<path>[^`]*)`\Z", re.S)
_MISSING_FIELD = re.compile(r"Object missing required field `(?P<name>[^`]*)`\Z")
_UNKNOWN_FIELD = re.compile(r"Object contains unknown field `(?P<name>[^`]*)`\Z")


def _error_from_exception(exc: BaseException, prefix: str) -> ErrorItem:
    """Turn a msgspec error ("Expected `int`, got `str` - at `$.records[3].x`") into an ErrorItem."""
    if isinstance(exc, UnicodeDecodeError):
        return error_item(prefix, f"not valid UTF-8 text (byte {exc.start})")
    if isinstance(exc, RecursionError):
        return error_item(prefix, "nested too deeply")
    text = str(exc)
    if not isinstance(exc, msgspec.ValidationError):
        if "truncated" in text:
            return error_item(
                prefix, "malformed JSON: input ends early (an unterminated string or a lone \\u surrogate?)"
            )
        return error_item(prefix, text.replace("JSON is malformed", "malformed JSON"))
    if match := _KEY_ERROR.match(text):  # a non-string key of an object
        return error_item(join_location(prefix, match["path"]), f"object keys must be strings ({match['message']})")
    message, found, where = text.rpartition(" - at `$")
    if found:
        path = join_location(prefix, where[:-1])  # strip the closing backtick
    else:
        message, path = text, prefix
    if message.startswith("Expected `str` matching regex"):
        pattern = next((p for p in PATTERN_HELP if repr(p) in message), None)
        return error_item(path, f"expected {PATTERN_HELP[pattern]}" if pattern else message)
    if match := _MISSING_FIELD.match(message):
        return error_item(join_location(path, f".{match['name']}"), "required field is missing")
    if match := _UNKNOWN_FIELD.match(message):
        return error_item(join_location(path, f".{match['name']}"), "unknown field")
    if path.endswith("type") and message.startswith("Invalid value"):
        value = message.removeprefix("Invalid value").strip()
        return error_item(path, f"unknown record type {value}; expected one of: {', '.join(RECORD_TYPES)}")
    return error_item(path, message)
