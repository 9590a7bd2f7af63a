"""The ingest service: one validated batch of records -> TimescaleDB, all or nothing, exactly once.

The hot path avoids per-record ORM work: references (site codes, equipment and interface names)
are resolved with one query per kind, rows are written with psycopg 3 COPY inside one transaction,
and everything slow (rates, rollups, diagnosis) runs after commit.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import msgspec
from django.db import connection, transaction
from django.utils import timezone

from collectors.records import Counters
from wanmon.inventory.models import Agent, Equipment, Interface, Site
from wanmon.measurements.constants import SNMP_COUNTERS

logger = logging.getLogger(__name__)

TEST_TYPES = {"throughput", "owamp", "traceroute"}
# Rows are built with msgspec.structs.astuple(counters): the wire struct must list the counters in column order.
if Counters.__struct_fields__ != SNMP_COUNTERS:
    raise RuntimeError("collectors.records.Counters must list the counters in SNMP_COUNTERS order")


def _kind(record) -> str:
    """The record's wire ``type`` (msgspec keeps the tag in the class, not on the instance)."""
    return type(record).__struct_config__.tag


@dataclass
class IngestError(Exception):
    """A batch refused as a whole: HTTP-like status (400 invalid, 403 forbidden) and per-record errors."""

    status: int
    errors: list[dict]

    def __str__(self) -> str:
        return "; ".join(f"{e['path']}: {e['message']}" for e in self.errors)


@dataclass
class IngestResult:
    """What was stored: ids the follow-up work needs (interfaces with new samples, the earliest sample time)."""

    batch_id: str
    accepted: int
    duplicate: bool
    counts: dict[str, int] = field(default_factory=dict)
    interface_since: dict[int, datetime] = field(default_factory=dict)
    paths: set[tuple[int, int]] = field(default_factory=set)
    sites: set[int] = field(default_factory=set)


@dataclass
class _Refs:
    sites: dict[str, int]
    equipment: dict[str, int]
    interfaces: dict[tuple[int, str], int]
    interface_speed_mbps: dict[int, int | None]


def _resolve(
    records: Sequence, kinds: Sequence[str], *, prefix: str, agent: Agent | None, auto_interfaces: bool
) -> _Refs:
    """Map every site code / equipment / interface name used by the batch to ids; check authorisation.

    Raises IngestError(400) listing every unknown reference, then IngestError(403) naming every record
    the agent may not send. Unknown interfaces on known equipment are registered (SNMP discovery).
    """
    # One pass collects the distinct references; the per-record loops below only run to word the
    # errors when a check on these small sets has failed (the hot path of a valid batch skips them).
    test_pairs: set[tuple[str, str]] = set()
    host_sites: set[str] = set()
    snmp_refs: set[tuple[str, str]] = set()
    for r, k in zip(records, kinds, strict=True):
        if k == "snmp":
            snmp_refs.add((r.equipment, r.interface))
        elif k == "host_tcp":
            host_sites.add(r.site)
        else:
            test_pairs.add((r.src, r.dst))
    equipment_names = {e for e, _ in snmp_refs}
    site_codes = {c for pair in test_pairs for c in pair} | host_sites
    sites = dict(Site.objects.filter(code__in=site_codes).values_list("code", "id"))
    equipment = dict(Equipment.objects.filter(name__in=equipment_names).values_list("name", "id"))

    errors: list[dict] = []
    if not (site_codes <= sites.keys() and equipment_names <= equipment.keys()):
        for i, (r, k) in enumerate(zip(records, kinds, strict=True)):
            path = f"{prefix}[{i}]"
            if k in TEST_TYPES:
                for key in ("src", "dst"):
                    code = getattr(r, key)
                    if code not in sites:
                        errors.append({"path": f"{path}.{key}", "message": f"unknown site {code!r}"})
            elif k == "host_tcp" and r.site not in sites:
                errors.append({"path": f"{path}.site", "message": f"unknown site {r.site!r}"})
            elif k == "snmp" and r.equipment not in equipment:
                errors.append({"path": f"{path}.equipment", "message": f"unknown equipment {r.equipment!r}"})
        raise IngestError(400, errors)

    if agent is not None:
        site_code = agent.site.code
        allowed_equipment = set(agent.equipment.values_list("id", flat=True))
        allowed = (
            all(site_code in pair for pair in test_pairs)
            and host_sites <= {site_code}
            and {equipment[e] for e in equipment_names} <= allowed_equipment
        )
        if not allowed:
            for i, (r, k) in enumerate(zip(records, kinds, strict=True)):
                path = f"{prefix}[{i}]"
                if k in TEST_TYPES and site_code not in (r.src, r.dst):
                    message = (
                        f"agent {agent.name!r} of site {site_code} may not send {k} records between {r.src} and {r.dst}"
                    )
                elif k == "host_tcp" and r.site != site_code:
                    message = f"agent {agent.name!r} of site {site_code} may not send host_tcp records of site {r.site}"
                elif k == "snmp" and equipment[r.equipment] not in allowed_equipment:
                    message = f"agent {agent.name!r} is not assigned to poll equipment {r.equipment!r}"
                else:
                    continue
                errors.append({"path": path, "message": message})
            raise IngestError(403, errors)

    wanted = {(equipment[e], name) for e, name in snmp_refs}
    interfaces: dict[tuple[int, str], int] = {}
    speeds: dict[int, int | None] = {}
    if wanted:
        eq_ids = {e for e, _ in wanted}
        for iid, eid, name, speed in Interface.objects.filter(equipment_id__in=eq_ids).values_list(
            "id", "equipment_id", "name", "speed_mbps"
        ):
            if (eid, name) in wanted:
                interfaces[(eid, name)] = iid
                speeds[iid] = speed
        missing = wanted - interfaces.keys()
        if missing and not auto_interfaces:
            names = {v: k for k, v in equipment.items()}
            raise IngestError(
                400,
                [
                    {
                        "path": f"{prefix}[{i}].interface",
                        "message": f"unknown interface {r.interface!r} on {r.equipment!r}",
                    }
                    for i, (r, k) in enumerate(zip(records, kinds, strict=True))
                    if k == "snmp" and (equipment[r.equipment], r.interface) in missing
                ]
                or [{"path": prefix, "message": f"unknown interfaces {sorted(names[e] for e, _ in missing)}"}],
            )
        for eid, name in sorted(missing):
            # Discovery: an SNMP walk names interfaces the inventory does not list yet; learn them.
            speed = next(
                (
                    r.speed_mbps
                    for r, k in zip(records, kinds, strict=True)
                    if k == "snmp"
                    and equipment[r.equipment] == eid
                    and r.interface == name
                    and getattr(r, "speed_mbps", None)
                ),
                None,
            )
            if_index = next(
                (
                    r.if_index
                    for r, k in zip(records, kinds, strict=True)
                    if k == "snmp"
                    and equipment[r.equipment] == eid
                    and r.interface == name
                    and getattr(r, "if_index", None) is not None
                ),
                None,
            )
            iface, _ = Interface.objects.get_or_create(
                equipment_id=eid, name=name, defaults={"speed_mbps": speed, "if_index": if_index}
            )
            interfaces[(eid, name)] = iface.id
            speeds[iface.id] = iface.speed_mbps
    return _Refs(sites=sites, equipment=equipment, interfaces=interfaces, interface_speed_mbps=speeds)


def _stored_fields() -> frozenset[str]:
    # Record fields with a column of their own (the test tables' columns, plus the names that become ids
    # and the wire tag); everything else a record carries (tool version, raw output excerpt, exit code,
    # test parameters...) is kept in the row's `extra` jsonb so nothing is lost.
    columns = {*THROUGHPUT_COLUMNS, *OWAMP_COLUMNS, *TRACEROUTE_COLUMNS, *HOSTTCP_COLUMNS}
    return frozenset(columns | {"type", "src", "dst", "site"})


def _record_extra(record) -> str | None:
    extra = {
        name: getattr(record, name)
        for name in record.__struct_fields__
        if name not in STORED_FIELDS and getattr(record, name) is not None
    }
    if _kind(record) == "owamp" and getattr(record, "tool", None):
        extra["tool"] = record.tool
    return json.dumps(extra, separators=(",", ":"), default=str) if extra else None


def _copy(cursor, table: str, columns: Sequence[str], rows: Iterable[tuple]) -> int:
    n = 0
    with cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)
            n += 1
    return n


SNMP_COLUMNS = (
    "time",
    "equipment_id",
    "interface_id",
    "if_index",
    "sys_uptime_ticks",
    "engine_boots",
    "discontinuity_ticks",
    "oper_status",
    "speed_mbps",
    *SNMP_COUNTERS,
    "batch_id",
)
THROUGHPUT_COLUMNS = (
    "time",
    "src_id",
    "dst_id",
    "agent_id",
    "tool",
    "protocol",
    "duration_s",
    "streams",
    "window_bytes",
    "mss_bytes",
    "throughput_bps",
    "retransmits",
    "rtt_ms",
    "offered_bps",
    "packets_sent",
    "packets_lost",
    "src_host",
    "dst_host",
    "error",
    "extra",
    "batch_id",
)
OWAMP_COLUMNS = (
    "time",
    "src_id",
    "dst_id",
    "agent_id",
    "packets_sent",
    "packets_lost",
    "duplicates",
    "reordered",
    "delay_min_ms",
    "delay_median_ms",
    "delay_max_ms",
    "jitter_ms",
    "clock_error_ms",
    "error",
    "extra",
    "batch_id",
)
TRACEROUTE_COLUMNS = ("time", "src_id", "dst_id", "agent_id", "hops", "pmtu_bytes", "error", "extra", "batch_id")
HOSTTCP_COLUMNS = (
    "time",
    "site_id",
    "agent_id",
    "host",
    "tcp_rmem",
    "tcp_wmem",
    "rmem_max",
    "wmem_max",
    "congestion_control",
    "mtu",
    "extra",
    "batch_id",
)
STORED_FIELDS = _stored_fields()


def batch_ingest(
    *,
    batch_id: str,
    records: Sequence,
    agent: Agent | None = None,
    agent_version: str = "",
    sent_at: datetime | None = None,
    source: str = "agent",
    error_prefix: str = "records",
    auto_interfaces: bool = True,
    on_commit: Callable[[IngestResult], None] | None = None,
) -> IngestResult:
    """Store one batch of validated records atomically and exactly once (idempotent on ``batch_id``).

    ``agent`` None means a trusted local source (scenario replay, imports): no site scoping.
    Raises IngestError (400 unknown references, 403 not allowed); nothing is written then.
    ``on_commit`` is called with the result after the transaction commits (enqueue follow-up work there).
    """
    kinds = [_kind(r) for r in records]
    refs = _resolve(records, kinds, prefix=error_prefix, agent=agent, auto_interfaces=auto_interfaces)
    agent_id = agent.id if agent else None
    result = IngestResult(batch_id=str(batch_id), accepted=len(records), duplicate=False)
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO measurements_ingestbatch (batch_id, agent_id, source, sent_at, agent_version, "
                "record_count) VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (batch_id) DO NOTHING RETURNING batch_id",
                [str(batch_id), agent_id, source, sent_at, agent_version or "", len(records)],
            )
            if cursor.fetchone() is None:
                # Already stored by an earlier upload of the same batch: acknowledge, store nothing.
                result.duplicate = True
                result.accepted = 0
                return result
            raw = cursor.cursor  # the psycopg 3 cursor under Django's wrapper: COPY lives there
            by_type: dict[str, list] = {}
            for r, k in zip(records, kinds, strict=True):
                by_type.setdefault(k, []).append(r)
            sites = refs.sites
            if "snmp" in by_type:
                rows = []
                for r in by_type["snmp"]:
                    eid = refs.equipment[r.equipment]
                    iid = refs.interfaces[(eid, r.interface)]
                    c = r.counters
                    rows.append(
                        (
                            r.time,
                            eid,
                            iid,
                            r.if_index,
                            r.sys_uptime_ticks,
                            r.snmp_engine_boots,
                            r.counter_discontinuity_ticks,
                            r.oper_status,
                            r.speed_mbps,
                            *msgspec.structs.astuple(c),
                            batch_id,
                        )
                    )
                    since = result.interface_since.get(iid)
                    if since is None or r.time < since:
                        result.interface_since[iid] = r.time
                result.counts["snmp"] = _copy(raw, "measurements_snmpsample", SNMP_COLUMNS, rows)
            if "throughput" in by_type:
                rows = [
                    (
                        r.time,
                        sites[r.src],
                        sites[r.dst],
                        agent_id,
                        r.tool,
                        r.protocol,
                        r.duration_s,
                        r.streams,
                        r.window_bytes,
                        r.mss_bytes,
                        r.throughput_bps,
                        r.retransmits,
                        r.rtt_ms,
                        r.offered_bps,
                        r.packets_sent,
                        r.packets_lost,
                        r.src_host,
                        r.dst_host,
                        r.error,
                        _record_extra(r),
                        batch_id,
                    )
                    for r in by_type["throughput"]
                ]
                result.counts["throughput"] = _copy(raw, "measurements_throughputtest", THROUGHPUT_COLUMNS, rows)
            if "owamp" in by_type:
                rows = [
                    (
                        r.time,
                        sites[r.src],
                        sites[r.dst],
                        agent_id,
                        r.packets_sent,
                        r.packets_lost,
                        r.duplicates,
                        r.reordered,
                        r.delay_min_ms,
                        r.delay_median_ms,
                        r.delay_max_ms,
                        r.jitter_ms,
                        r.clock_error_ms,
                        r.error,
                        _record_extra(r),
                        batch_id,
                    )
                    for r in by_type["owamp"]
                ]
                result.counts["owamp"] = _copy(raw, "measurements_owamptest", OWAMP_COLUMNS, rows)
            if "traceroute" in by_type:
                rows = [
                    (
                        r.time,
                        sites[r.src],
                        sites[r.dst],
                        agent_id,
                        [h if h else None for h in r.hops],
                        r.pmtu_bytes,
                        r.error,
                        _record_extra(r),
                        batch_id,
                    )
                    for r in by_type["traceroute"]
                ]
                result.counts["traceroute"] = _copy(raw, "measurements_traceroute", TRACEROUTE_COLUMNS, rows)
            if "host_tcp" in by_type:
                rows = [
                    (
                        r.time,
                        sites[r.site],
                        agent_id,
                        r.host,
                        list(r.tcp_rmem) if r.tcp_rmem else None,
                        list(r.tcp_wmem) if r.tcp_wmem else None,
                        r.rmem_max,
                        r.wmem_max,
                        r.congestion_control,
                        r.mtu,
                        _record_extra(r),
                        batch_id,
                    )
                    for r in by_type["host_tcp"]
                ]
                result.counts["host_tcp"] = _copy(raw, "measurements_hosttcp", HOSTTCP_COLUMNS, rows)
            result.paths = {(sites[r.src], sites[r.dst]) for k in TEST_TYPES for r in by_type.get(k, ())}
            result.sites = {sites[r.site] for r in by_type.get("host_tcp", ())}
        if agent is not None:
            Agent.objects.filter(pk=agent.pk).update(last_seen_at=timezone.now(), version=agent_version[:50])
        if on_commit is not None:
            transaction.on_commit(lambda: on_commit(result))
    return result
