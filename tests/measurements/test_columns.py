"""The one column specification (wanmon/measurements/columns.py) agrees with the wire schema, the models and
the tables the migrations really created: a column renamed or added in one place and not the others fails here."""

import msgspec
import pytest
from django.apps import apps
from django.db import connection

from collectors.records import RECORD_TYPES, Counters
from wanmon.measurements.columns import TABLES, Source

pytestmark = pytest.mark.django_db


def _db_columns(table: str) -> dict[str, str]:
    with connection.cursor() as c:
        c.execute("SELECT column_name, data_type FROM information_schema.columns WHERE table_name = %s", [table])
        return dict(c.fetchall())


@pytest.mark.parametrize("kind", sorted(TABLES))
def test_every_column_of_the_table_is_specified_and_exists(kind):
    table = TABLES[kind]
    db = _db_columns(table.name)

    assert set(db) - {"id"} == set(table.column_names)


@pytest.mark.parametrize("kind", sorted(TABLES))
def test_the_model_mirrors_the_specified_columns(kind):
    table = TABLES[kind]
    model = next(m for m in apps.get_app_config("measurements").get_models() if m._meta.db_table == table.name)

    assert {f.column for f in model._meta.concrete_fields} - {"id"} == set(table.column_names)


@pytest.mark.parametrize("kind", sorted(TABLES))
def test_every_column_is_filled_from_a_field_the_wire_schema_has(kind):
    table = TABLES[kind]
    fields = {f.name for f in msgspec.structs.fields(RECORD_TYPES[kind])}
    counters = set(Counters.__struct_fields__)

    for column in table.columns:
        if column.source is Source.COUNTER:
            assert column.field in counters, column
        elif column.wire_field is not None:
            assert column.wire_field in fields, column


# Stored types that hold every value the wire schema allows for the field's Python type.
_HOLDS = {
    float: {"double precision", "numeric"},
    int: {"bigint", "integer", "numeric"},
    str: {"text", "character varying"},
    list: {"ARRAY"},
}


@pytest.mark.parametrize("kind", sorted(TABLES))
def test_column_types_hold_what_the_wire_schema_allows(kind):
    # speed_mbps was a float on the wire and a bigint in the table: every real SNMP upload failed.
    table = TABLES[kind]
    db = _db_columns(table.name)
    wire = {f.name: f.type for f in msgspec.structs.fields(RECORD_TYPES[kind])}
    for column in table.columns:
        if column.source is Source.COUNTER:
            assert db[column.name] == "numeric", column  # Counter64 up to 2^64-1 does not fit a bigint
            continue
        if column.source is not Source.FIELD or column.name == "time":
            continue
        python = _python_type(wire[column.field or column.name])
        assert db[column.name] in _HOLDS[python], f"{table.name}.{column.name}: {db[column.name]} for {python}"


def _python_type(annotation) -> type:
    """float, int, str or list for an Annotated/Optional/Literal wire annotation."""
    import typing

    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _python_type(typing.get_args(annotation)[0])
    if origin is typing.Literal:
        return type(typing.get_args(annotation)[0])
    if origin is list:
        return list
    if origin in (typing.Union, __import__("types").UnionType):
        return next(_python_type(a) for a in typing.get_args(annotation) if a is not type(None))
    return annotation
