"""Both ends of the ingest contract: a batch as the site agent builds and sends it, the rows PostgreSQL holds.

Sending (``agent_batch``): a collector's output goes through the agent's own ``check_records`` (what
the scheduler does with every run), each record is encoded as the spool encodes it, the batch body is
``agents.uploader.build_body`` gzip-compressed at the uploader's level, and it is POSTed to the real
``/api/v1/ingest`` view with a real agent token (``post_batch``).

Reading back (``assert_stored``): every row of the batch in every measurement table, compared field
by field with the JSON that went over the wire. The expectation is derived from the wire records and
the real table columns (information_schema), not from the ingest code: a wire field is stored in the
column of its name (``RENAMED`` and the names that become ids, ``REFERENCES``, aside; the SNMP
counters in their own columns); a field without a column is kept in the row's ``extra`` jsonb.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import time
import uuid
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import msgspec
from django.db import connection

import tests.conftest
from agents.spool import SpooledBatch
from agents.uploader import GZIP_LEVEL, build_body
from agents.validation import check_records
from wanmon.inventory.models import Equipment, Interface, Site

ROOT = Path(__file__).resolve().parents[2]
AGENT_VERSION = "2.0.0"

TABLES: Mapping[str, str] = {
    "snmp": "measurements_snmpsample",
    "throughput": "measurements_throughputtest",
    "owamp": "measurements_owamptest",
    "traceroute": "measurements_traceroute",
    "host_tcp": "measurements_hosttcp",
}
# Names the ingest resolves to inventory ids.
REFERENCES: Mapping[str, str] = {
    "src": "src_id",
    "dst": "dst_id",
    "site": "site_id",
    "equipment": "equipment_id",
    "interface": "interface_id",
}
# Wire fields stored under another column name (the SNMP table predates the wire names).
RENAMED: Mapping[str, Mapping[str, str]] = {
    "snmp": {"snmp_engine_boots": "engine_boots", "counter_discontinuity_ticks": "discontinuity_ticks"},
}
# Wire fields the ingest stores neither in a column nor in `extra` (none: every field is kept; a field listed
# here would only be compared when present).
UNSTORED: Mapping[str, frozenset[str]] = {}


def shared_fixture(*parts: str) -> Path:
    """A file or directory of ../shared/fixtures, or skip the test saying which is absent."""
    return tests.conftest.shared_fixture("fixtures", *parts)


# --- the agent's side --------------------------------------------------------------------------------


def agent_records(items: Any, *, now: datetime, schedule_interval_s: float | None = None) -> list[Any]:
    """What the agent's scheduler keeps of one collector run; a record the collector made invalid fails here."""
    checked = check_records(items, now=now, schedule_interval_s=schedule_interval_s)
    assert not checked.invalid, f"the collector produced records the agent drops: {checked.invalid}"
    return checked.records


@dataclass(frozen=True)
class AgentBatch:
    """One upload: its id, the gzip body and the records exactly as the JSON carries them."""

    batch_id: str
    body: bytes
    wire: list[dict[str, Any]]


_ENCODER = msgspec.json.Encoder()


def agent_batch(records: Sequence[Any]) -> AgentBatch:
    """The body the agent's uploader sends for ``records`` (Record structs, or plain dicts for hostile input)."""
    encoded = [msgspec.Raw(_ENCODER.encode(record)) for record in records]  # as Spool.append stores them
    batch = SpooledBatch(batch_id=str(uuid.uuid4()), path=Path(os.devnull), created_ns=time.time_ns(), records=encoded)
    body = build_body(batch, agent_version=AGENT_VERSION, sent_at=datetime.now(UTC))
    wire = msgspec.json.decode(body)["records"]
    return AgentBatch(batch.batch_id, gzip.compress(body, compresslevel=GZIP_LEVEL), wire)


def post_batch(client, token: str, batch: AgentBatch):
    """POST the batch as the agent does (bearer token, gzip) to the real ingest view."""
    return client.post(
        "/api/v1/ingest",
        data=batch.body,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
        HTTP_CONTENT_ENCODING="gzip",
    )


def deliver(client, token: str, records: Sequence[Any]) -> AgentBatch:
    """Send ``records`` and require the centre's 200 acknowledging all of them."""
    batch = agent_batch(records)
    response = post_batch(client, token, batch)
    assert response.status_code == 200, (response.status_code, response.content[:3000])
    assert response.json() == {"batch_id": batch.batch_id, "accepted": len(records), "duplicate": False}
    return batch


# --- the centre's side -------------------------------------------------------------------------------


def table_columns(table: str) -> dict[str, dict[str, Any]]:
    """The real columns of ``table`` in the migrated test database (information_schema)."""
    with connection.cursor() as cursor:
        cursor.execute(
            """SELECT column_name, data_type, udt_name, character_maximum_length, numeric_precision, numeric_scale,
                      is_nullable
               FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = %s""",
            [table],
        )
        names = [c[0] for c in cursor.description]
        return {row[0]: dict(zip(names, row, strict=True)) for row in cursor.fetchall()}


def stored_rows(batch_id: str) -> dict[str, list[dict[str, Any]]]:
    """Every row of the batch, per record type, in the order they were stored."""
    out: dict[str, list[dict[str, Any]]] = {}
    with connection.cursor() as cursor:
        for kind, table in TABLES.items():
            cursor.execute(f"SELECT * FROM {table} WHERE batch_id = %s ORDER BY id", [batch_id])  # noqa: S608
            names = [c[0] for c in cursor.description]
            rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
            for row in rows:
                if isinstance(row.get("extra"), str):  # Django's psycopg set-up reads jsonb as its text
                    row["extra"] = json.loads(row["extra"])
            out[kind] = rows
    return out


def batch_stored(batch_id: str) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM measurements_ingestbatch WHERE batch_id = %s", [batch_id])
        return cursor.fetchone()[0] > 0


def _wire_time(value: str) -> datetime:
    moment = datetime.fromisoformat(value)
    assert moment.utcoffset() is not None, value
    return moment


def _same(sent: Any, stored: Any) -> bool:
    """Exact equality across the JSON/PostgreSQL boundary: numeric(20,0) as int, floats bit for bit."""
    if sent is None or stored is None:
        return sent is None and stored is None
    if isinstance(sent, list):
        return isinstance(stored, list) and len(sent) == len(stored) and all(map(_same, sent, stored))
    if isinstance(sent, bool) or isinstance(stored, bool):
        return sent is stored
    if isinstance(sent, float):
        if isinstance(stored, Decimal):  # a numeric column holds the decimal the float was written as
            return float(stored) == sent and Decimal(repr(sent)) == stored
        return isinstance(stored, float | int) and float(stored) == sent
    if isinstance(sent, int):
        if isinstance(stored, Decimal):
            return stored == stored.to_integral_value() and int(stored) == sent
        # a JSON integer in a float field (speed_mbps: 10000) is stored as a double: equal as numbers
        return isinstance(stored, int | float) and stored == sent
    if isinstance(sent, datetime):
        return isinstance(stored, datetime) and stored == sent
    if isinstance(sent, dict):
        return (
            isinstance(stored, dict)
            and sent.keys() == stored.keys()
            and all(_same(v, stored[k]) for k, v in sent.items())
        )
    return type(sent) is type(stored) and sent == stored


class _Ids:
    """Inventory ids of the names a batch uses (sites, equipment, interfaces)."""

    def __init__(self) -> None:
        self.sites = dict(Site.objects.values_list("code", "id"))
        self.equipment = dict(Equipment.objects.values_list("name", "id"))
        self.interfaces = {(e, n): i for e, n, i in Interface.objects.values_list("equipment__name", "name", "id")}

    def of(self, field: str, record: Mapping[str, Any]) -> int | None:
        value = record[field]
        if field in ("src", "dst", "site"):
            return self.sites.get(value)
        if field == "equipment":
            return self.equipment.get(value)
        return self.interfaces.get((record["equipment"], value))


def expected_row(kind: str, record: Mapping[str, Any], columns: Iterable[str], ids: _Ids) -> dict[str, Any]:
    """The row ``record`` (wire JSON) must become: column -> value, with ``extra`` for the fields without one.

    Fields listed in UNSTORED are left out; ``assert_stored`` accepts them in ``extra`` when they are there.
    """
    columns = set(columns)
    row: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    renamed = RENAMED.get(kind, {})
    for field, value in record.items():
        if field == "type":
            continue
        if field == "time":
            row["time"] = _wire_time(value)
        elif field == "counters":
            for name, count in value.items():
                row[name] = count
        elif field in REFERENCES and REFERENCES[field] in columns:
            row[REFERENCES[field]] = ids.of(field, record)
        elif renamed.get(field, field) in columns:
            if kind == "traceroute" and field == "hops":
                value = [None if hop == "*" else hop for hop in value]  # "*" is stored as null (records.py)
            row[renamed.get(field, field)] = value
        elif field in UNSTORED.get(kind, ()):
            continue
        elif value is not None:
            extra[field] = value
    # A column the record leaves out is NULL (absent and null are the same on the wire).
    for column in columns - row.keys() - {"id", "agent_id", "batch_id", "extra"}:
        row[column] = None
    if "extra" in columns:
        row["extra"] = extra or None
    else:
        assert not extra, f"{kind}: fields {sorted(extra)} have no column and the table has no extra"
    return row


def mismatches(kind: str, sent: Mapping[str, Any], row: Mapping[str, Any], expected: Mapping[str, Any]) -> list[str]:
    """Every column where the stored row differs from the expectation (UNSTORED fields tolerated in extra)."""
    problems = []
    for column, value in expected.items():
        stored = row[column]
        if column == "extra" and stored:
            tolerated = {k for k in stored.keys() & UNSTORED.get(kind, ()) if _same(sent.get(k), stored[k])}
            stored = {k: v for k, v in stored.items() if k not in tolerated} or None
        if not _same(value, stored):
            problems.append(f"{column}: sent {value!r}, stored {stored!r}")
    return problems


def assert_stored(batch: AgentBatch, *, agent_id: int | None) -> Counter:
    """Every record of ``batch`` is stored exactly once, field by field; returns the rows per record type."""
    rows = stored_rows(batch.batch_id)
    sent_by_kind: dict[str, list[dict[str, Any]]] = {kind: [] for kind in TABLES}
    for record in batch.wire:
        sent_by_kind[record["type"]].append(record)
    counts = Counter({kind: len(r) for kind, r in rows.items() if r})
    assert counts == Counter({kind: len(r) for kind, r in sent_by_kind.items() if r}), "rows per table"
    ids = _Ids()
    problems = []
    for kind, sent in sent_by_kind.items():
        columns = table_columns(TABLES[kind])
        for index, (record, row) in enumerate(zip(sent, rows[kind], strict=True)):
            expected = expected_row(kind, record, columns, ids)
            found = mismatches(kind, record, row, expected)
            if "agent_id" in row and row["agent_id"] != agent_id:
                found.append(f"agent_id: {row['agent_id']} instead of {agent_id}")
            problems += [f"{kind}[{index}] {p}" for p in found]
    assert not problems, "stored values differ from the wire:\n" + "\n".join(problems[:60])
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT agent_id, record_count, agent_version FROM measurements_ingestbatch WHERE batch_id = %s",
            [batch.batch_id],
        )
        assert cursor.fetchall() == [(agent_id, len(batch.wire), AGENT_VERSION)]
    return counts


ERROR_PATH = re.compile(r"^records\[(\d+)\](?:\.|$)")
