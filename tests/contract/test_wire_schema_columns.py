"""The wire schema and the tables agree: every field the ingest stores has a column that holds every value the
schema lets through, read from the migrated test database (information_schema), not from the models.

The record structs of collectors/records/ are walked with ``msgspec.inspect`` (the counters too); their
columns are the ingest's COPY specification (wanmon/measurements/columns.py, which ingest.py copies from).
Compatible means: a float in ``double precision`` or unconstrained ``numeric`` (``real`` would round); an
integer in a type whose range covers the schema's bounds (Counter64's 2^64-1 needs ``numeric(20,0)``); a
string in ``text`` or a ``varchar`` at least as long as its ``max_length``; a list in an array of such.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import msgspec.inspect as mi
import pytest

from collectors.records import RECORD_TYPES
from tests.contract.wire import table_columns
from wanmon.measurements import ingest
from wanmon.measurements.columns import TABLES, Source

pytestmark = pytest.mark.django_db

INTEGER_RANGES = {
    "smallint": (-(2**15), 2**15 - 1),
    "integer": (-(2**31), 2**31 - 1),
    "bigint": (-(2**63), 2**63 - 1),
}
# An integer field without an upper bound in msgspec.Meta (it must fit an int64) documents it instead.
_DOCUMENTED_BOUND = re.compile(r"\A(\d+)\.\.2\^(\d+)-1\Z")


def wire_fields(cls: type) -> Iterator[tuple[str, Any]]:
    """(wire field, msgspec.inspect type without None and metadata) of a record type, counters as counters.x."""
    for field in mi.type_info(cls).fields:
        kind = _plain(field.type)
        if isinstance(kind, mi.StructType):
            for sub in kind.fields:
                yield f"{field.name}.{sub.name}", _annotated(sub.type)
        else:
            yield field.name, _annotated(field.type)


def _annotated(kind: Any) -> Any:
    """The type without its None alternative, keeping the Metadata wrapper (it holds documented bounds)."""
    if isinstance(kind, mi.UnionType):
        (kind,) = [k for k in kind.types if not isinstance(k, mi.NoneType)]
    return kind


def _plain(kind: Any) -> Any:
    kind = _annotated(kind)
    return kind.type if isinstance(kind, mi.Metadata) else kind


def _int_bounds(kind: Any) -> tuple[int, int | None]:
    plain = _plain(kind)
    low = plain.ge if plain.ge is not None else (plain.gt + 1 if plain.gt is not None else -(2**63))
    high = plain.le if plain.le is not None else (plain.lt - 1 if plain.lt is not None else None)
    if high is None and isinstance(kind, mi.Metadata):
        match = _DOCUMENTED_BOUND.match((kind.extra_json_schema or {}).get("description", ""))
        if match:
            high = 2 ** int(match[2]) - 1
    return low, high


def holds(kind: Any, column: dict[str, Any]) -> str | None:
    """Why ``column`` cannot hold every value of the wire type ``kind`` (None: it can)."""
    plain = _plain(kind)
    data_type = column["data_type"]
    if isinstance(plain, mi.ListType):
        if data_type != "ARRAY":
            return f"a list stored in {data_type}"
        element = {"_int2": "smallint", "_int4": "integer", "_int8": "bigint", "_text": "text", "_numeric": "numeric"}
        item = _annotated(plain.item_type)
        return holds(item, {**column, "data_type": element.get(column["udt_name"], column["udt_name"])})
    if isinstance(plain, mi.FloatType):
        if data_type == "double precision" or (data_type == "numeric" and column["numeric_precision"] is None):
            return None
        return f"a float stored in {data_type}"
    if isinstance(plain, mi.IntType):
        low, high = _int_bounds(kind)
        if high is None:
            return "an integer without a documented upper bound"
        if data_type in INTEGER_RANGES:
            lowest, highest = INTEGER_RANGES[data_type]
            return None if lowest <= low and high <= highest else f"{low}..{high} does not fit {data_type}"
        if data_type == "numeric":
            precision, scale = column["numeric_precision"], column["numeric_scale"]
            if precision is None or (scale == 0 and max(abs(low), high) < 10**precision):
                return None
            return f"{low}..{high} does not fit numeric({precision},{scale})"
        return f"an integer stored in {data_type}"
    if isinstance(plain, mi.StrType | mi.LiteralType):
        longest = plain.max_length if isinstance(plain, mi.StrType) else max(len(v) for v in plain.values)
        if data_type == "text":
            return None
        if data_type == "character varying":
            limit = column["character_maximum_length"]
            return None if limit is None or limit >= (longest or 10**9) else f"{longest} characters in varchar({limit})"
        return f"a string stored in {data_type}"
    if isinstance(plain, mi.DateTimeType):
        return None if data_type == "timestamp with time zone" else f"a zoned time stored in {data_type}"
    return f"no rule for {plain!r}"


@pytest.mark.parametrize("kind", sorted(RECORD_TYPES))
def test_every_copy_column_is_a_column_of_the_real_table(kind):
    table = TABLES[kind]
    real = table_columns(table.name)

    assert set(table.column_names) <= set(real), set(table.column_names) - set(real)
    required = {name for name, c in real.items() if c["is_nullable"] == "NO" and name != "id"}
    assert required <= set(table.column_names), (
        f"NOT NULL columns the COPY leaves out: {required - set(table.column_names)}"
    )


def test_the_ingest_copies_snmp_samples_in_the_specified_columns():
    assert ingest.SNMP_COLUMNS == TABLES["snmp"].column_names
    assert TABLES["snmp"].column_names[:3] == ("time", "equipment_id", "interface_id")


@pytest.mark.parametrize("kind", sorted(RECORD_TYPES))
def test_every_stored_field_has_a_column_that_holds_every_value_the_schema_allows(kind):
    # given the record type's wire fields and the table the ingest copies them into
    table = TABLES[kind]
    real = table_columns(table.name)

    problems = []
    stored = 0
    for name, wire_type in wire_fields(RECORD_TYPES[kind]):
        column = table.column_of(name)
        if column is None or column.source not in (Source.FIELD, Source.COUNTER):
            continue  # references become inventory ids; fields without a column go to `extra`
        stored += 1
        why = holds(wire_type, real[column.name])
        if why:
            problems.append(f"{table.name}.{column.name} ({real[column.name]['data_type']}) for {name}: {why}")

    # then every one of them fits
    assert stored >= 3
    assert not problems, problems


def test_the_compatibility_rules_refuse_what_lost_data_before():
    # speed_mbps was a bigint while the wire sends 2.048; Counter64 does not fit a bigint; varchar too short
    speed = dict(wire_fields(RECORD_TYPES["snmp"]))["speed_mbps"]
    counter64 = dict(wire_fields(RECORD_TYPES["snmp"]))["counters.hc_in_octets"]
    name = dict(wire_fields(RECORD_TYPES["snmp"]))["interface"]
    column = {"udt_name": "", "numeric_precision": None, "numeric_scale": None, "character_maximum_length": None}

    assert holds(speed, {**column, "data_type": "bigint"}) == "a float stored in bigint"
    assert holds(speed, {**column, "data_type": "double precision"}) is None
    assert holds(counter64, {**column, "data_type": "bigint"}) == "0..18446744073709551615 does not fit bigint"
    assert holds(counter64, {**column, "data_type": "numeric", "numeric_precision": 20, "numeric_scale": 0}) is None
    assert holds(counter64, {**column, "data_type": "numeric", "numeric_precision": 19, "numeric_scale": 0})
    too_short = {**column, "data_type": "character varying", "character_maximum_length": 100}
    assert holds(name, too_short) == "128 characters in varchar(100)"
