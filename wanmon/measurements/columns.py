"""The one column specification of the tables the ingest writes with COPY: which column, from which wire field.

``ingest.py`` builds every COPY row from these specifications (and nothing else); a test checks them
against the models (models.py) and against the columns migration 0001 really created. A wire field with
no column of its own is kept in the row's ``extra`` jsonb (see ``stored_fields``), so nothing is lost.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from wanmon.measurements.constants import SNMP_COUNTERS


class Source(StrEnum):
    """Where a column's value comes from."""

    FIELD = "field"  # the wire field ``field`` as it is
    SITE = "site"  # the id of the site whose code is in ``field``
    EQUIPMENT = "equipment"  # the id of the record's equipment
    INTERFACE = "interface"  # the id of the record's interface
    COUNTER = "counter"  # the counter ``field`` of an SNMP record's ``counters``
    AGENT = "agent"  # the uploading agent's id (NULL for trusted local sources)
    EXTRA = "extra"  # the wire fields without a column, as jsonb
    BATCH = "batch"  # the batch id


@dataclass(frozen=True)
class Column:
    """One column of a measurement table and the wire field it is filled from."""

    name: str
    source: Source = Source.FIELD
    field: str = ""

    @property
    def wire_field(self) -> str | None:
        """The wire field (``counters.x`` for counters) this column stores, None for values the ingest adds."""
        if self.source is Source.COUNTER:
            return f"counters.{self.field}"
        if self.source in (Source.FIELD, Source.SITE):
            return self.field or self.name
        if self.source is Source.EQUIPMENT:
            return "equipment"
        if self.source is Source.INTERFACE:
            return "interface"
        return None


@dataclass(frozen=True)
class Table:
    """A measurement table written by the ingest: the wire record type it stores and its columns in COPY order."""

    name: str
    kind: str
    columns: tuple[Column, ...]

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    def column_of(self, wire_field: str) -> Column | None:
        """The column storing ``wire_field`` (``counters.x`` for a counter), or None."""
        return next((c for c in self.columns if c.wire_field == wire_field), None)

    def rows(
        self,
        records: Iterable[Any],
        *,
        sites: Mapping[str, int],
        agent_id: int | None,
        batch_id: str,
        extra: Callable[[Any], str | None],
    ) -> list[tuple]:
        """COPY rows of ``records`` (of this table's kind), in column order."""
        getters = [_getter(c, sites, agent_id, batch_id, extra) for c in self.columns]
        return [tuple(get(r) for get in getters) for r in records]


def _getter(column: Column, sites: Mapping[str, int], agent_id, batch_id, extra) -> Callable[[Any], Any]:
    if column.source is Source.FIELD:
        return operator.attrgetter(column.field or column.name)
    if column.source is Source.SITE:
        code = operator.attrgetter(column.field)
        return lambda r: sites[code(r)]
    if column.source is Source.AGENT:
        return lambda r: agent_id
    if column.source is Source.BATCH:
        return lambda r: batch_id
    if column.source is Source.EXTRA:
        return extra
    raise ValueError(f"{column.name}: {column.source} columns are filled by the SNMP row builder")


def _fields(*names: str) -> tuple[Column, ...]:
    return tuple(Column(name) for name in names)


_PATH = (
    Column("time"),
    Column("src_id", Source.SITE, "src"),
    Column("dst_id", Source.SITE, "dst"),
    Column("agent_id", Source.AGENT),
)
_TRAILER = (Column("extra", Source.EXTRA), Column("batch_id", Source.BATCH))

SNMP = Table(
    "measurements_snmpsample",
    "snmp",
    (
        Column("time"),
        Column("equipment_id", Source.EQUIPMENT),
        Column("interface_id", Source.INTERFACE),
        *_fields("if_index", "sys_uptime_ticks"),
        Column("engine_boots", field="snmp_engine_boots"),
        Column("discontinuity_ticks", field="counter_discontinuity_ticks"),
        *_fields("oper_status", "speed_mbps", "admin_status", "host", "error"),
        *(Column(name, Source.COUNTER, name) for name in SNMP_COUNTERS),
        Column("extra", Source.EXTRA),
        Column("batch_id", Source.BATCH),
    ),
)
THROUGHPUT = Table(
    "measurements_throughputtest",
    "throughput",
    (
        *_PATH,
        *_fields("tool", "protocol", "duration_s", "streams", "window_bytes", "mss_bytes", "throughput_bps"),
        *_fields("retransmits", "rtt_ms", "offered_bps", "packets_sent", "packets_lost", "src_host", "dst_host"),
        Column("error"),
        *_TRAILER,
    ),
)
OWAMP = Table(
    "measurements_owamptest",
    "owamp",
    (
        *_PATH,
        *_fields("packets_sent", "packets_lost", "duplicates", "reordered", "delay_min_ms", "delay_median_ms"),
        *_fields("delay_max_ms", "jitter_ms", "clock_error_ms", "error"),
        *_TRAILER,
    ),
)
TRACEROUTE = Table(
    "measurements_traceroute", "traceroute", (*_PATH, *_fields("hops", "pmtu_bytes", "error"), *_TRAILER)
)
HOST_TCP = Table(
    "measurements_hosttcp",
    "host_tcp",
    (
        Column("time"),
        Column("site_id", Source.SITE, "site"),
        Column("agent_id", Source.AGENT),
        *_fields("host", "tcp_rmem", "tcp_wmem", "rmem_max", "wmem_max", "congestion_control", "mtu"),
        Column("nic_speed_mbps"),
        *_TRAILER,
    ),
)
TABLES: Mapping[str, Table] = {t.kind: t for t in (SNMP, THROUGHPUT, OWAMP, TRACEROUTE, HOST_TCP)}
"""The tables by the wire record type they store."""
TABLES_BY_NAME: Mapping[str, Table] = {t.name: t for t in TABLES.values()}

SNMP_HEAD_FIELDS: tuple[str, ...] = tuple(c.field or c.name for c in SNMP.columns if c.source is Source.FIELD)[1:]
"""The SNMP columns between the interface id and the counters, as wire field names (time is formatted apart)."""


def stored_fields(table: Table) -> frozenset[str]:
    """Top-level wire fields of ``table``'s records that have a column (the rest goes to ``extra``), plus the tag."""
    return frozenset({"type", *(c.wire_field.split(".")[0] for c in table.columns if c.wire_field)})


def column_names(tables: Sequence[Table] = tuple(TABLES.values())) -> dict[str, tuple[str, ...]]:
    """Column names per table name, for checks and benchmarks."""
    return {t.name: t.column_names for t in tables}
