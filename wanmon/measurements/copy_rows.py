"""The rows a batch becomes and the COPY that carries them (the hot half of ingest).

Rows are built in the layout of the column specification (columns.py); a COPY stream stays open across the
chunks of a streamed batch; a database error raised by a COPY is traced back to the record it names.
"""

from __future__ import annotations

import itertools
import json
import operator
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime

import msgspec

from collectors.records import Counters, SnmpRecord
from wanmon.measurements.columns import SNMP, SNMP_HEAD_FIELDS, TABLES, TABLES_BY_NAME, Source, stored_fields
from wanmon.measurements.constants import SNMP_COUNTERS

SNMP_COLUMNS = SNMP.column_names
# Rows are built with msgspec.structs.astuple(counters): the wire struct must list the counters in column order.
if Counters.__struct_fields__ != SNMP_COUNTERS:
    raise RuntimeError("collectors.records.Counters must list the counters in SNMP_COUNTERS order")
_SNMP_NAMES = operator.attrgetter("equipment", "interface")


def record_kind(record) -> str:
    """The record's wire ``type`` (msgspec keeps the tag in the class, not on the instance)."""
    return type(record).__struct_config__.tag


# Record fields with a column of their own, per wire type; everything else a record carries (tool version, raw
# output excerpt, exit code, test parameters...) is kept in the row's `extra` jsonb so nothing is lost.
_STORED_FIELDS = {kind: stored_fields(table) for kind, table in TABLES.items()}


def record_extra(record) -> str | None:
    stored = _STORED_FIELDS[record_kind(record)]
    extra = {
        name: getattr(record, name)
        for name in record.__struct_fields__
        if name not in stored and getattr(record, name) is not None
    }
    return json.dumps(extra, separators=(",", ":"), default=str) if extra else None


# SNMP rows are built in a hot loop (snmp_rows) in the layout of the spec: time, the two ids, the plain
# fields, the counters (msgspec.structs.astuple of Counters, in column order), the batch id.
_SNMP_HEAD = operator.attrgetter(*SNMP_HEAD_FIELDS)
# The SNMP record fields kept in `extra`; a sample whose are all None (nearly every one) gets no JSON built.
_SNMP_EXTRA_FIELDS = tuple(sorted(set(SnmpRecord.__struct_fields__) - _STORED_FIELDS["snmp"]))
_SNMP_EXTRA = operator.attrgetter(*_SNMP_EXTRA_FIELDS, "time")  # "time": a tuple even for one field
_SNMP_NO_EXTRA = (None,) * len(_SNMP_EXTRA_FIELDS)
_SNMP_LAYOUT = [c.source for c in SNMP.columns]
if _SNMP_LAYOUT != [
    Source.FIELD,
    Source.EQUIPMENT,
    Source.INTERFACE,
    *[Source.FIELD] * len(SNMP_HEAD_FIELDS),
    *[Source.COUNTER] * len(SNMP_COUNTERS),
    Source.EXTRA,
    Source.BATCH,
] or [c.field for c in SNMP.columns if c.source is Source.COUNTER] != list(SNMP_COUNTERS):
    raise RuntimeError("columns.SNMP must be laid out as snmp_rows builds its rows")


def snmp_rows(
    records: Sequence, ids: Mapping[tuple[str, str], tuple[int, int]], batch_id: str, since: dict[int, datetime]
) -> Iterator[tuple]:
    """COPY rows of SNMP samples in SNMP_COLUMNS order (``ids``: (equipment id, interface id) by their names);
    records each interface's earliest sample in ``since``.

    A generator on purpose: PostgreSQL stores the rows already sent while the next ones are built.
    """
    astuple = msgspec.structs.astuple
    # psycopg needs ~2 us to format a datetime for COPY, more than the rest of the row; the samples of
    # one poll share their time, so each distinct time is formatted once (ISO 8601, read back exactly).
    stamps: dict[datetime, str] = {}
    for r in records:
        eid, iid = ids[_SNMP_NAMES(r)]
        moment = r.time
        stamp = stamps.get(moment)
        if stamp is None:
            stamp = stamps[moment] = moment.isoformat()
        first = since.get(iid)
        if first is None or moment < first:
            since[iid] = moment
        # A poll rarely carries anything for `extra` (tool version, excerpts): one C-level test skips it.
        extra = None if _SNMP_EXTRA(r)[:-1] == _SNMP_NO_EXTRA else record_extra(r)
        yield (stamp, eid, iid, *_SNMP_HEAD(r), *astuple(r.counters), extra, batch_id)


class CopyStream:
    """A COPY into one table that stays open across chunks: opened by the first rows, ended by ``end()``
    before any other statement on the connection (a later chunk's lookup) and reopened after it."""

    def __init__(self, cursor, table: str, columns: Sequence[str]) -> None:
        self._cursor = cursor
        self._sql = f"COPY {table} ({', '.join(columns)}) FROM STDIN"
        self._context = None
        self._copy = None
        self.rows = 0
        self.command_start = 0  # rows sent before the current COPY command: its "line 1" is row command_start

    def write(self, rows: Iterable[tuple], count: int) -> None:
        """Send ``count`` rows (the server stores them while the caller goes on)."""
        if self._copy is None:
            self.command_start = self.rows
            self._context = self._cursor.copy(self._sql)
            self._copy = self._context.__enter__()
        write_row = self._copy.write_row
        for row in rows:
            write_row(row)
        self.rows += count

    def end(self) -> None:
        if self._context is not None:
            context, self._context, self._copy = self._context, None, None
            context.__exit__(None, None, None)

    def __enter__(self) -> CopyStream:
        return self

    def __exit__(self, *exc_info) -> None:
        if self._context is not None:  # an error: psycopg tells the server to abandon the COPY
            context, self._context, self._copy = self._context, None, None
            context.__exit__(*exc_info)


def copy_rows(cursor, table: str, columns: Sequence[str], rows: list[tuple]) -> int:
    with CopyStream(cursor, table, columns) as stream:
        stream.write(rows, len(rows))
        stream.end()
    return stream.rows


# A COPY error's context names the row: 'COPY measurements_snmpsample, line 27, column speed_mbps: "10000.0"'.
_COPY_CONTEXT = re.compile(r"COPY (?P<table>\w+), line (?P<line>\d+)(?:, column (?P<column>\w+))?")


def database_errors(exc: Exception, chunks: Sequence[Sequence], copying: Sequence[CopyStream], prefix: str):
    """Error items for a database error caused by the data, naming the record when PostgreSQL says which row.

    Rows of one table are copied in the batch's order, so row n of a COPY is the n-th record of that type
    (counted from where the current COPY command began, for the SNMP stream that reopens between chunks).
    When the row cannot be told (a conflict outside COPY), the error is about the batch: the agent then
    splits it to find the record.
    """
    diag = getattr(exc.__cause__, "diag", None)
    message = (getattr(diag, "message_primary", None) or str(exc).splitlines()[0]).strip()
    detail = getattr(diag, "message_detail", None)
    if detail:
        message = f"{message} ({detail})"
    match = _COPY_CONTEXT.search(getattr(diag, "context", None) or "")
    table = TABLES_BY_NAME.get(match["table"]) if match else None
    if table is None:
        return [{"path": "", "message": f"the database refused the batch: {message}"}]
    row = int(match["line"]) - 1
    kind = table.kind
    if table is SNMP and copying:
        row += copying[0].command_start
    index = next(
        itertools.islice(
            (i for i, r in enumerate(itertools.chain.from_iterable(chunks)) if record_kind(r) == kind), row, None
        ),
        None,
    )
    if index is None:
        return [{"path": "", "message": f"the database refused the batch: {message}"}]
    column = next((c for c in table.columns if c.name == match["column"]), None)
    field = f".{column.wire_field}" if column is not None and column.wire_field else ""
    return [{"path": f"{prefix}[{index}]{field}", "message": f"the database refused this value: {message}"}]
