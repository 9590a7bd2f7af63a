"""Semantic checks of records: relations between fields, time windows, patterns (second validation layer)."""

from __future__ import annotations

import itertools
import math
import operator
import typing
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any, Final

import msgspec

from collectors.records.schema import (
    COUNTER_BITS,
    RECORD_TYPES,
    HostTcpRecord,
    OwampRecord,
    PathRecord,
    Record,
    SnmpRecord,
    ThroughputRecord,
    TracerouteRecord,
)
from collectors.records.types import COUNTER64_MAX, MAX_FUTURE_SKEW, MAX_TIME, MIN_TIME, Pattern, iso_z

# --- semantic checks ---------------------------------------------------------------------------

_Problems = Iterator[tuple[str, str]]  # (path relative to the record, message)


def semantic_errors(record: Record, now: datetime | None, *, finite_checked: bool = False) -> list[tuple[str, str]]:
    problems = list(time_errors("time", record.time, now))
    problems.extend(_pattern_problems(record))
    if not finite_checked:
        problems.extend(_non_finite_fields(record))
    checker = _CHECKS.get(type(record))
    if checker is not None:
        problems.extend(checker(record))
    return problems


def _pattern_fields(cls: type) -> tuple[tuple[str, Pattern], ...]:
    """The fields of a record type whose pattern is checked after decoding (see Pattern)."""

    def marker(annotation: Any) -> Pattern | None:
        for meta in getattr(annotation, "__metadata__", ()):
            if isinstance(meta, Pattern):
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


def records_clean(records: Sequence[Record], now: datetime) -> bool:
    """True when no record has a semantic problem, checked batch-wise (the ingest hot path).

    Equivalent to every ``semantic_errors`` being empty, but cheaper: the time window is checked
    on the earliest and latest time, patterns on each distinct value, SNMP samples with a few
    C-level passes. False only means "look closer": the caller then words every problem per record.
    """
    by_type: dict[type, list[Record]] = {}
    for record in records:
        by_type.setdefault(type(record), []).append(record)
    for cls, group in by_type.items():
        times = list(map(_TIME, group))
        if next(time_errors("time", min(times), now), None) or next(time_errors("time", max(times), now), None):
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
_COUNTER64: Final = operator.attrgetter(*(name for name, bits in COUNTER_BITS.items() if bits == 64))


def _snmp_clean(group: list[SnmpRecord]) -> bool:
    """``_snmp_problems`` for a whole group of decoded samples (the schema bounds their Counter32 values)."""
    counters = map(_COUNTER64, map(operator.attrgetter("counters"), group))
    values = filter(None, itertools.chain.from_iterable(counters))  # drops None (and 0, harmless for a maximum)
    if max(values, default=0) > COUNTER64_MAX:
        return False
    return not any(error is None and oper is None for error, oper in map(_SNMP_REQUIRED, group))


def time_errors(field: str, moment: datetime, now: datetime | None) -> _Problems:
    if moment < MIN_TIME:
        yield field, f"{iso_z(moment)} is before {iso_z(MIN_TIME)}"
    elif now is not None and moment > now + MAX_FUTURE_SKEW:
        ahead_s = (moment - now).total_seconds()
        yield (
            field,
            (
                f"{iso_z(moment)} is {ahead_s:.0f} s ahead of the receiver's clock ({iso_z(now)}); at most "
                f"{MAX_FUTURE_SKEW.total_seconds():.0f} s are tolerated: check the agent's NTP"
            ),
        )
    elif moment >= MAX_TIME:
        yield field, f"{iso_z(moment)} is not before {iso_z(MAX_TIME)}"


def _non_finite_fields(record: msgspec.Struct) -> _Problems:
    # JSON cannot carry NaN and the bounds reject infinities; this guards records built in code.
    for name in record.__struct_fields__:
        value = getattr(record, name)
        if isinstance(value, float) and not math.isfinite(value):
            yield name, f"{value} is not a finite number"


def _path_problems(record: PathRecord) -> _Problems:
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
