"""Turn what a collector returned into wire-schema records, checked as the centre will check them.

The centre accepts or refuses a batch as a whole (docs/contracts.md#ingest-api). A record it would refuse
must therefore never reach the spool: one bad record would poison every batch it lands in.
Each item is converted to a :data:`collectors.records.Record` and checked with
:func:`collectors.records.record_errors`; invalid ones are returned separately, with the
errors, for the caller to log and drop.

Collectors return dicts with more keys than the wire schema has (``direction``, ``command``,
``notes``, ...: useful locally, unknown to the centre, which refuses unknown fields). Those
keys are dropped here and reported in ``dropped_fields``; ``None`` values mean "absent".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import msgspec

from collectors.records import RECORD_TYPES, Counters, ErrorItem, Record, record_errors

__all__ = ["CheckedRecords", "InvalidRecord", "check_records"]

# Record types measured along a path between two sites: they carry the agent's test schedule.
_SCHEDULE_FIELD = "schedule_interval_s"
_RECORD_CLASSES = tuple(RECORD_TYPES.values())
_COUNTER_FIELDS = frozenset(Counters.__struct_fields__)


@dataclass(frozen=True)
class InvalidRecord:
    """An item that would be refused by the centre: its position in the collector's output and why."""

    index: int
    record_type: str | None
    errors: list[ErrorItem]


@dataclass
class CheckedRecords:
    """The valid records (in collector order), the invalid items, and the extra keys that were dropped."""

    records: list[Record] = field(default_factory=list)
    invalid: list[InvalidRecord] = field(default_factory=list)
    dropped_fields: set[str] = field(default_factory=set)


def check_records(
    items: Iterable[Any] | None, *, now: datetime, schedule_interval_s: float | None = None
) -> CheckedRecords:
    """Convert and check every item (a Record or a record dict); never raises for any item.

    ``now`` bounds timestamps as the centre does (at most 5 minutes ahead). ``schedule_interval_s``
    (the collector's period) is set on records whose type has the field and that do not set it,
    so the centre can tell a periodic loss caused by the agent's own polling from a real one.
    """
    checked = CheckedRecords()
    if items is None:
        return checked
    if isinstance(items, Mapping | msgspec.Struct):  # one record returned bare: be forgiving
        items = [items]
    try:
        if isinstance(items, str | bytes):
            raise TypeError
        items = list(items)
    except TypeError:  # a collector bug: its output is not a list at all
        message = f"a collector returned {type(items).__name__}, not a list of records"
        checked.invalid.append(InvalidRecord(0, None, [{"path": "", "message": message}]))
        return checked
    for index, item in enumerate(items):
        record, errors = _one(item, now=now, schedule_interval_s=schedule_interval_s, dropped=checked.dropped_fields)
        if record is None:
            kind = item.get("type") if isinstance(item, Mapping) else type(item).__name__
            checked.invalid.append(InvalidRecord(index, kind if isinstance(kind, str) else None, errors))
        else:
            checked.records.append(record)
    return checked


def _one(
    item: Any, *, now: datetime, schedule_interval_s: float | None, dropped: set[str]
) -> tuple[Record | None, list[ErrorItem]]:
    if isinstance(item, _RECORD_CLASSES):
        record = item
        if schedule_interval_s is not None and _SCHEDULE_FIELD in record.__struct_fields__:
            if getattr(record, _SCHEDULE_FIELD) is None:
                record = msgspec.structs.replace(record, **{_SCHEDULE_FIELD: schedule_interval_s})
    elif isinstance(item, Mapping):
        data = _schema_fields(item, schedule_interval_s=schedule_interval_s, dropped=dropped)
        if isinstance(data, list):
            return None, data
        try:
            record = msgspec.convert(data, Record)
        except (msgspec.ValidationError, RecursionError) as exc:
            return None, [_error_from_validation(exc)]
    else:
        return None, [{"path": "", "message": f"a collector returned {type(item).__name__}, not a record"}]
    try:
        errors = record_errors(record, now=now)
    except (msgspec.ValidationError, ValueError, TypeError, OverflowError) as exc:  # defensive: never crash a cycle
        errors = [{"path": "", "message": f"unexpected record: {exc}"}]
    return (None, errors) if errors else (record, [])


def _schema_fields(
    item: Mapping[str, Any], *, schedule_interval_s: float | None, dropped: set[str]
) -> dict[str, Any] | list[ErrorItem]:
    """The item restricted to its type's schema fields (None values omitted), or an error list."""
    kind = item.get("type")
    cls = RECORD_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        expected = ", ".join(RECORD_TYPES)
        return [{"path": "type", "message": f"unknown record type {kind!r}; expected one of: {expected}"}]
    known = cls.__struct_fields__
    data: dict[str, Any] = {"type": kind}
    for key, value in item.items():
        if key == "type" or value is None:
            continue
        if key not in known:
            dropped.add(key)
            continue
        if key == "counters" and isinstance(value, Mapping):
            value = {name: count for name, count in value.items() if count is not None}
            for name in [name for name in value if name not in _COUNTER_FIELDS]:
                dropped.add(f"counters.{name}")
                del value[name]
        data[key] = value
    if schedule_interval_s is not None and _SCHEDULE_FIELD in known and _SCHEDULE_FIELD not in data:
        data[_SCHEDULE_FIELD] = schedule_interval_s
    return data


def _error_from_validation(exc: BaseException) -> ErrorItem:
    """``Expected `int`, got `str` - at `$.packets_lost``` -> {"path": "packets_lost", "message": ...}."""
    text = str(exc)
    message, found, where = text.rpartition(" - at `$")
    if not found:
        return {"path": "", "message": text}
    return {"path": where.rstrip("`").lstrip("."), "message": message}
