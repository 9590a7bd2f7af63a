"""The ingest service: one validated batch of records -> TimescaleDB, all or nothing, exactly once.

The hot path avoids per-record ORM work: references (site codes, equipment and interface names)
are resolved with one query per kind, rows are written with psycopg 3 COPY inside one transaction,
and everything slow (rates, rollups, diagnosis) runs after commit. A large batch arrives as chunks
(``chunks=``): the SNMP samples of one chunk are on their way into PostgreSQL, which stores them on
the other core, while the next chunk is decoded and checked.
"""

from __future__ import annotations

import logging
import operator
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import DataError, IntegrityError, connection, models, transaction
from django.utils import timezone

from collectors.records import PATH_TEST_TYPES, BatchStream, decode_batch, decode_batch_stream
from collectors.records.types import iso_z
from wanmon.inventory.models import Agent, Equipment, Interface, Site
from wanmon.measurements.columns import SNMP, TABLES
from wanmon.measurements.copy_rows import (
    SNMP_COLUMNS,
    CopyStream,
    copy_rows,
    database_errors,
    record_extra,
    record_kind,
    snmp_rows,
)
from wanmon.measurements.hooks import job_results_link
from wanmon.measurements.rollups import retention_policy

logger = logging.getLogger(__name__)



@dataclass
class IngestError(Exception):
    """A batch refused as a whole: HTTP-like status (400 invalid, 403 forbidden, 409 conflicts with what is
    stored) and per-record errors. ``complete`` is True when ``errors`` already names every offending record
    (a streamed batch otherwise stops at the first bad chunk and is checked again whole to name them all)."""

    status: int
    errors: list[dict]
    complete: bool = False

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


_SNMP_NAMES = operator.attrgetter("equipment", "interface")
_TIME = operator.attrgetter("time")
_SITE = operator.attrgetter("site")


# The equipment an SNMP batch names, the batch's interfaces on it and whether the agent may poll it, in
# one round trip (ANY(array) keeps the statement the same whatever the number of names).
_SNMP_REFS_SQL = f"""
    SELECT e.id, e.name, i.id, i.name,
           EXISTS (SELECT 1 FROM {Agent.equipment.through._meta.db_table} ae
                   WHERE ae.agent_id = %s AND ae.equipment_id = e.id)
    FROM {Equipment._meta.db_table} e
    LEFT JOIN {Interface._meta.db_table} i ON i.equipment_id = e.id AND i.name = ANY(%s)
    WHERE e.name = ANY(%s)
"""


@dataclass
class _Refs:
    """Names of the batch resolved to ids so far; grows chunk by chunk when a batch is streamed."""

    sites: dict[str, int] = field(default_factory=dict)
    equipment: dict[str, int] = field(default_factory=dict)
    allowed_equipment: set[int] = field(default_factory=set)
    snmp: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)  # names -> (equipment, interface)


def _unknown_reference_errors(records: Sequence, offset: int, prefix: str, refs: _Refs) -> list[dict]:
    """One error per site code or equipment name of the records that the inventory does not know."""
    errors: list[dict] = []
    for i, r in enumerate(records, offset):
        path = f"{prefix}[{i}]"
        k = record_kind(r)
        if k in PATH_TEST_TYPES:
            for key in ("src", "dst"):
                code = getattr(r, key)
                if code not in refs.sites:
                    errors.append({"path": f"{path}.{key}", "message": f"unknown site {code!r}"})
        elif k == "host_tcp" and r.site not in refs.sites:
            errors.append({"path": f"{path}.site", "message": f"unknown site {r.site!r}"})
        elif k == "snmp" and r.equipment not in refs.equipment:
            errors.append({"path": f"{path}.equipment", "message": f"unknown equipment {r.equipment!r}"})
    return errors


def _unauthorised_errors(records: Sequence, offset: int, prefix: str, agent: Agent, refs: _Refs) -> list[dict]:
    """One error per record the agent may not send: tests not from or to its site, another site's host settings,
    equipment it is not assigned to poll."""
    site_code = agent.site.code
    errors: list[dict] = []
    for i, r in enumerate(records, offset):
        k = record_kind(r)
        if k in PATH_TEST_TYPES and site_code not in (r.src, r.dst):
            message = f"agent {agent.name!r} of site {site_code} may not send {k} records between {r.src} and {r.dst}"
        elif k == "host_tcp" and r.site != site_code:
            message = f"agent {agent.name!r} of site {site_code} may not send host_tcp records of site {r.site}"
        elif k == "snmp" and refs.equipment[r.equipment] not in refs.allowed_equipment:
            message = f"agent {agent.name!r} is not assigned to poll equipment {r.equipment!r}"
        else:
            continue
        errors.append({"path": f"{prefix}[{i}]", "message": message})
    return errors


def _resolve(
    records: Sequence,
    by_type: dict[str, list],
    refs: _Refs,
    *,
    prefix: str,
    offset: int = 0,
    agent: Agent | None,
    auto_interfaces: bool,
    before_lookup: Callable[[], None] = lambda: None,
) -> None:
    """Add to ``refs`` every site code / equipment / interface name the records use; check authorisation.

    Raises IngestError(400) listing every unknown reference, then IngestError(403) naming every record
    the agent may not send. Unknown interfaces on known equipment are registered (SNMP discovery).
    ``by_type`` holds the records grouped by wire type; ``records`` (in order, the first being record
    number ``offset`` of the batch) is only read to word errors. Names already in ``refs`` cost no
    query; ``before_lookup`` is called before the first query (a COPY in progress must end first).
    """
    # The distinct references are collected per type in C-level passes; the per-record loops below
    # only run to word the errors when a check on these small sets has failed.
    snmp_refs = set(map(_SNMP_NAMES, by_type.get("snmp", ())))
    test_pairs = {(r.src, r.dst) for k in PATH_TEST_TYPES for r in by_type.get(k, ())}
    host_sites = set(map(_SITE, by_type.get("host_tcp", ())))
    site_codes = {c for pair in test_pairs for c in pair} | host_sites
    new_sites = site_codes - refs.sites.keys()
    new_snmp = snmp_refs - refs.snmp.keys()
    if new_sites or new_snmp:
        before_lookup()
    if new_sites:
        refs.sites.update(Site.objects.filter(code__in=new_sites).values_list("code", "id"))
    if new_snmp:
        with connection.cursor() as cursor:
            cursor.execute(
                _SNMP_REFS_SQL,
                [agent.id if agent else None, list({i for _, i in new_snmp}), list({e for e, _ in new_snmp})],
            )
            for eid, name, iid, iname, allowed in cursor.fetchall():
                refs.equipment[name] = eid
                if allowed or agent is None:
                    refs.allowed_equipment.add(eid)
                if iid is not None and (name, iname) in new_snmp:
                    refs.snmp[(name, iname)] = (eid, iid)
    equipment = refs.equipment

    if not (site_codes <= refs.sites.keys() and {e for e, _ in new_snmp} <= equipment.keys()):
        raise IngestError(400, _unknown_reference_errors(records, offset, prefix, refs))
    if agent is not None:
        site_code = agent.site.code
        allowed = (
            all(site_code in pair for pair in test_pairs)
            and host_sites <= {site_code}
            and {equipment[e] for e, _ in new_snmp} <= refs.allowed_equipment
        )
        if not allowed:
            raise IngestError(403, _unauthorised_errors(records, offset, prefix, agent, refs))

    missing = new_snmp - refs.snmp.keys()
    if missing and not auto_interfaces:
        raise IngestError(
            400,
            [
                {
                    "path": f"{prefix}[{i}].interface",
                    "message": f"unknown interface {r.interface!r} on {r.equipment!r}",
                }
                for i, r in enumerate(records, offset)
                if record_kind(r) == "snmp" and (r.equipment, r.interface) in missing
            ],
        )
    if missing:
        _interface_cap_check(records, offset, prefix, missing, equipment)
    for equipment_name, name in sorted(missing):
        # Discovery: an SNMP walk names interfaces the inventory does not list yet; learn them.
        samples = [r for r in by_type["snmp"] if r.interface == name and r.equipment == equipment_name]
        speed = next((r.speed_mbps for r in samples if r.speed_mbps), None)
        if_index = next((r.if_index for r in samples if r.if_index is not None), None)
        eid = equipment[equipment_name]
        refs.snmp[(equipment_name, name)] = (eid, _interface_discover(eid, name, speed, if_index))


def _interface_cap_check(
    records: Sequence, offset: int, prefix: str, missing: set[tuple[str, str]], equipment: dict[str, int]
) -> None:
    """Refuse (400) discovery that would give a device more than WANMON_INGEST_MAX_INTERFACES_PER_DEVICE
    interfaces: an agent (or a device) inventing names must not grow the inventory without bound. The
    error names the first record of each interface beyond the cap; nothing of the batch is stored."""
    cap = settings.WANMON_INGEST_MAX_INTERFACES_PER_DEVICE
    new_per_device: dict[str, list[str]] = {}
    for equipment_name, name in sorted(missing):
        new_per_device.setdefault(equipment_name, []).append(name)
    ids = {equipment[e] for e in new_per_device}
    existing = dict(
        Interface.objects.filter(equipment_id__in=ids)
        .values("equipment_id")
        .annotate(n=models.Count("id"))
        .values_list("equipment_id", "n")
    )
    over: set[tuple[str, str]] = set()
    for equipment_name, names in new_per_device.items():
        room = max(cap - existing.get(equipment[equipment_name], 0), 0)
        over.update((equipment_name, name) for name in names[room:])
    if not over:
        return
    errors, seen = [], set()
    for i, r in enumerate(records, offset):
        ref = (getattr(r, "equipment", None), getattr(r, "interface", None))
        if record_kind(r) == "snmp" and ref in over and ref not in seen:
            seen.add(ref)
            errors.append(
                {
                    "path": f"{prefix}[{i}].interface",
                    "message": f"interface {ref[1]!r} would give {ref[0]!r} more than {cap} interfaces "
                    "(WANMON_INGEST_MAX_INTERFACES_PER_DEVICE): not registered",
                }
            )
    raise IngestError(400, errors)


def _interface_discover(equipment_id: int, name: str, speed_mbps: float | None, if_index: int | None) -> int:
    """The id of interface ``name`` on the equipment, registering it when the inventory does not list it yet.

    The inventory speed is whole Mbit/s (what ifHighSpeed reports); a sub-Mbit/s ifSpeed is left unknown
    there (the samples keep the exact value). A device that renumbered its interfaces (ifIndex is not
    persistent across reboots on every platform) may report an ifIndex the inventory gives another
    interface: the name is the identity, so the new interface is registered without an ifIndex rather
    than refusing its counters.
    """
    speed = round(speed_mbps) if speed_mbps and speed_mbps >= 1 else None
    try:
        with transaction.atomic():
            iface, _ = Interface.objects.get_or_create(
                equipment_id=equipment_id, name=name, defaults={"speed_mbps": speed, "if_index": if_index}
            )
    except IntegrityError:
        if if_index is None:
            raise
        holder = Interface.objects.filter(equipment_id=equipment_id, if_index=if_index).first()
        logger.warning(
            "discovered interface %r reports ifIndex %s, which the inventory gives to %r: registered without ifIndex",
            name,
            if_index,
            holder.name if holder else "?",
        )
        iface, _ = Interface.objects.get_or_create(
            equipment_id=equipment_id, name=name, defaults={"speed_mbps": speed, "if_index": None}
        )
    return iface.id


def batch_ingest(
    *,
    batch_id: str,
    records: Sequence | None = None,
    chunks: Iterable[Sequence] | None = None,
    record_count: int | None = None,
    agent: Agent | None = None,
    agent_version: str = "",
    sent_at: datetime | None = None,
    source: str = "agent",
    error_prefix: str = "records",
    auto_interfaces: bool = True,
    on_commit: Callable[[IngestResult], None] | None = None,
) -> IngestResult:
    """Store one batch of validated records atomically and exactly once (idempotent on ``batch_id``).

    The records come as one sequence (``records``) or as consecutive ``chunks`` of ``record_count``
    records in all, produced while they are stored: PostgreSQL then writes the SNMP samples of one
    chunk while the next is decoded. An exception raised by the chunk iterator (a chunk that fails
    validation) rolls the whole batch back like any other.
    ``agent`` None means a trusted local source (scenario replay, imports): no site scoping.
    Raises IngestError (400 unknown references, 403 not allowed); nothing is written then. With
    chunks, the error lists only the first offending chunk's records.
    ``on_commit`` is called with the result after the transaction commits (enqueue follow-up work there).
    """
    if chunks is None:
        chunks = [records or ()]
        record_count = len(records or ())
    elif record_count is None:
        raise TypeError("batch_ingest(chunks=...) needs the record_count the chunks add up to")
    agent_id = agent.id if agent else None
    result = IngestResult(batch_id=str(batch_id), accepted=record_count or 0, duplicate=False)
    refs = _Refs()
    seen: list[Sequence] = []  # the chunks taken so far: a database error's row number is traced back to them
    copying: list[CopyStream] = []
    try:
        # wrap_database_errors: COPY runs on the raw psycopg cursor, outside Django's error translation;
        # a failure there (disk full, connection lost) must still be a django.db.DatabaseError (HTTP 503).
        with transaction.atomic(), connection.cursor() as cursor, connection.wrap_database_errors:
            # One round trip claims the batch id and marks the agent seen (a re-sent batch is contact too).
            cursor.execute(
                f"""WITH seen AS (UPDATE {Agent._meta.db_table} SET last_seen_at = %s, version = %s WHERE id = %s)
                INSERT INTO measurements_ingestbatch (batch_id, agent_id, source, sent_at, agent_version, record_count)
                VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (agent_id, batch_id) DO NOTHING RETURNING batch_id""",
                [
                    timezone.now(),
                    agent_version[:50],
                    agent_id,
                    str(batch_id),
                    agent_id,
                    source,
                    sent_at,
                    agent_version or "",
                    record_count,
                ],
            )
            # Already stored by an earlier upload of the same batch: checked like any batch, nothing stored.
            result.duplicate = cursor.fetchone() is None
            raw = cursor.cursor  # the psycopg 3 cursor under Django's wrapper: COPY lives there
            held: dict[str, list] = {}  # the other record types, copied after the SNMP samples
            offset = 0
            with CopyStream(raw, SNMP.name, SNMP_COLUMNS) as snmp:
                copying.append(snmp)
                for chunk in chunks:
                    seen.append(chunk)
                    by_type: dict[str, list] = {}
                    for r in chunk:
                        by_type.setdefault(record_kind(r), []).append(r)
                    _resolve(
                        chunk,
                        by_type,
                        refs,
                        prefix=error_prefix,
                        offset=offset,
                        agent=agent,
                        auto_interfaces=auto_interfaces,
                        before_lookup=snmp.end,
                    )
                    offset += len(chunk)
                    if result.duplicate:
                        continue
                    if "snmp" in by_type:
                        samples = by_type.pop("snmp")
                        if agent is not None:
                            _history_check(
                                samples, chunk, offset - len(chunk), refs, prefix=error_prefix, before_query=snmp.end
                            )
                        snmp.write(snmp_rows(samples, refs.snmp, batch_id, result.interface_since), len(samples))
                    for k, rs in by_type.items():
                        held.setdefault(k, []).extend(rs)
                snmp.end()
            if offset != record_count:
                raise RuntimeError(f"batch {batch_id}: {offset} records arrived, {record_count} were announced")
            if result.duplicate:
                result.accepted = 0
                return result
            if snmp.rows:
                result.counts["snmp"] = snmp.rows
            _copy_others(raw, held, refs.sites, agent_id, batch_id, result)
            _jobs_link(held, seen, agent=agent, batch_id=str(batch_id), prefix=error_prefix)
            if on_commit is not None:
                transaction.on_commit(lambda: on_commit(result))
    except (DataError, IntegrityError) as exc:
        # The data, not the database, is at fault (a value PostgreSQL refuses, a conflict with stored rows):
        # the agent must park the records named, not retry the batch forever.
        status = 409 if isinstance(exc, IntegrityError) else 400
        raise IngestError(status, database_errors(exc, seen, copying, error_prefix), complete=True) from exc
    return result


def _jobs_link(held: dict[str, list], chunks: Sequence[Sequence], *, agent: Agent | None, batch_id: str,
               prefix: str) -> None:  # fmt: skip
    """Hand the test records that answer a test on demand to the jobs' linker (measurements/hooks.py); its
    refusals become an IngestError naming each record (the transaction rolls the batch back)."""
    answers = [r for kind in PATH_TEST_TYPES for r in held.get(kind, ()) if r.job_id is not None]
    if not answers:
        return
    refusals = job_results_link(answers, agent=agent, batch_id=batch_id, now=timezone.now())
    if not refusals:
        return
    index = {id(r): i for i, r in enumerate(r for chunk in chunks for r in chunk)}
    status = max(refusal.status for refusal in refusals)
    raise IngestError(
        status,
        [{"path": f"{prefix}[{index[id(refusal.record)]}].job_id", "message": refusal.message} for refusal in refusals],
        complete=True,
    )


def _history_check(
    samples: Sequence,
    chunk: Sequence,
    offset: int,
    refs: _Refs,
    *,
    prefix: str,
    before_query: Callable[[], None],
) -> None:
    """Refuse agent samples that could rewrite history (IngestError 400 naming each one).

    Rates and rollups are recomputed from the earliest new sample on, so one sample from an agent whose
    clock booted at 2000-01-01 would have the recompute span years. Refused: a sample older than the raw
    samples' retention (it would be dropped at once), or more than WANMON_INGEST_MAX_SAMPLE_LAG_S older
    than the newest sample stored for its interface. A batch of fresh samples, the normal case, costs one
    min() here and no query.
    """
    now = timezone.now()
    oldest = min(map(_TIME, samples))
    lag_s = settings.WANMON_INGEST_MAX_SAMPLE_LAG_S
    if oldest >= now - timedelta(seconds=lag_s):
        return
    retention_days = retention_policy().get("measurements_snmpsample")
    horizon = now - timedelta(days=retention_days) if retention_days else None
    stale = {refs.snmp[_SNMP_NAMES(r)][1] for r in samples if r.time < now - timedelta(seconds=lag_s)}
    before_query()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT interface_id, max(time) FROM measurements_snmpsample WHERE interface_id = ANY(%s) "
            "AND time >= %s GROUP BY interface_id",
            [sorted(stale), horizon or datetime(2000, 1, 1, tzinfo=oldest.tzinfo)],
        )
        newest = dict(cursor.fetchall())
    errors: list[dict] = []
    for i, r in enumerate(chunk, offset):
        if record_kind(r) != "snmp":
            continue
        if horizon is not None and r.time < horizon:
            errors.append(
                {
                    "path": f"{prefix}[{i}].time",
                    "message": f"{iso_z(r.time)} is older than the {retention_days}-day retention of raw SNMP samples "
                    f"({iso_z(horizon)}): it would be dropped at once; check the agent's clock",
                }
            )
            continue
        latest = newest.get(refs.snmp[_SNMP_NAMES(r)][1])
        if latest is not None and r.time < latest - timedelta(seconds=lag_s):
            errors.append(
                {
                    "path": f"{prefix}[{i}].time",
                    "message": f"{iso_z(r.time)} is {(latest - r.time).total_seconds() / 86400:.1f} days older than "
                    f"the newest sample of {r.equipment}:{r.interface} ({iso_z(latest)}); at most "
                    f"{lag_s / 86400:g} days behind are accepted: check the agent's clock",
                }
            )
    if errors:
        raise IngestError(400, errors)


def batch_ingest_body(
    body: bytes,
    *,
    now: datetime,
    agent: Agent | None,
    max_records: int,
    chunk_records: int,
    on_commit: Callable[[IngestResult], None] | None = None,
) -> tuple[IngestResult, BatchStream]:
    """Decode and store one upload body (POST /api/v1/ingest): streamed, and all or nothing.

    PostgreSQL stores one chunk of records while the next is decoded. A streamed batch stops at the first
    chunk with an unknown or forbidden reference; the body is then checked whole so that the error names
    every offending record. Raises RecordError (TooManyRecordsError) or IngestError; returns the result
    and the stream (its decode time is the caller's Server-Timing).
    """
    stream = decode_batch_stream(body, now=now, max_records=max_records, chunk_records=chunk_records)
    common = {
        "batch_id": stream.batch_id,
        "agent": agent,
        "agent_version": stream.agent_version,
        "sent_at": stream.sent_at,
        "on_commit": on_commit,
    }
    try:
        return batch_ingest(chunks=stream.chunks, record_count=stream.record_count, **common), stream
    except IngestError as exc:
        if exc.complete or stream.record_count <= chunk_records:
            raise
    # Raises the complete error, unless the inventory changed meanwhile and the batch is now stored.
    return batch_ingest(records=decode_batch(body, now=now, max_records=max_records).records, **common), stream


def _copy_others(
    raw, by_type: dict[str, list], sites: dict[str, int], agent_id: int | None, batch_id: str, result: IngestResult
) -> None:
    """COPY the tests and host settings of a batch (few rows: built as lists, then copied table by table)."""
    for kind, records in by_type.items():
        table = TABLES[kind]
        rows = table.rows(records, sites=sites, agent_id=agent_id, batch_id=batch_id, extra=record_extra)
        result.counts[kind] = copy_rows(raw, table.name, table.column_names, rows)
    result.paths = {(sites[r.src], sites[r.dst]) for k in PATH_TEST_TYPES for r in by_type.get(k, ())}
    result.sites = {sites[r.site] for r in by_type.get("host_tcp", ())}
