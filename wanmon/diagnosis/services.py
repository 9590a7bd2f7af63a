"""Diagnosis services: run the engine over the database and keep the stored findings in step."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import connection, transaction
from django.db.models import Q

from wanmon.core.jsonable import jsonable
from wanmon.core.lifecycle import lifecycle_acknowledge
from wanmon.diagnosis import constants as k
from wanmon.diagnosis.choices import ACTIVE_STATUSES, EventKind, FindingStatus
from wanmon.diagnosis.evidence import RuleFinding
from wanmon.diagnosis.models import Finding, FindingEvent

# Production look-back: the last 6 hours are judged against the 21 days before them.
DEFAULT_WINDOW = timedelta(hours=6)
# the baseline is learned from three weeks (constants.BASELINE_HISTORY_DAYS): a fault of a week stays a minority
DEFAULT_BASELINE = timedelta(days=k.BASELINE_HISTORY_DAYS)


def subject_key(subject: dict) -> str:
    """Canonical text of a subject: the deduplication key with the code."""
    return ";".join(f"{k}={subject[k]}" for k in sorted(subject))


@dataclass
class SyncResult:
    """What one evaluation changed in the stored findings."""

    opened: list[int] = field(default_factory=list)
    updated: list[int] = field(default_factory=list)
    resolved: list[int] = field(default_factory=list)
    reopened: list[int] = field(default_factory=list)
    absent: list[int] = field(default_factory=list)  # still active, not reported by this evaluation



def finding_close_due(*, absent_evaluations: int, last_seen_at: datetime, now: datetime) -> bool:
    """Whether an active finding that ``absent_evaluations`` evaluations in a row (this one included) did not
    report is resolved now: enough misses, and long enough since it was last seen (pure)."""
    return (
        absent_evaluations >= k.FINDING_CLOSE_ABSENT_EVALUATIONS
        and (now - last_seen_at).total_seconds() >= k.FINDING_CLOSE_ABSENT_S
    )


def findings_mark_absent(*, findings: Iterable[Finding], now: datetime, result: SyncResult) -> None:
    """An evaluation that could have reported these active findings did not: count the miss on each, and resolve
    those whose misses are due (``finding_close_due``). The caller holds their row locks."""
    for finding in findings:
        finding.absent_evaluations += 1
        if not finding_close_due(
            absent_evaluations=finding.absent_evaluations, last_seen_at=finding.last_seen_at, now=now
        ):
            finding.save(update_fields=["absent_evaluations"])
            result.absent.append(finding.id)
            continue
        finding.status = FindingStatus.RESOLVED
        finding.resolved_at = now
        finding.save(update_fields=["status", "resolved_at", "absent_evaluations"])
        FindingEvent.objects.create(
            finding=finding,
            time=now,
            kind=EventKind.RESOLVED,
            note="evidence cleared",
            data={"absent_evaluations": finding.absent_evaluations, "last_seen_at": finding.last_seen_at.isoformat()},
        )
        result.resolved.append(finding.id)


def _recently_resolved(keys: set[tuple[str, str]], now: datetime) -> dict[tuple[str, str], Finding]:
    """The latest finding of each (code, subject key) resolved within FINDING_REOPEN_WITHIN_S (row-locked)."""
    if not keys:
        return {}
    since = now - timedelta(seconds=k.FINDING_REOPEN_WITHIN_S)
    rows = (
        Finding.objects.select_for_update()
        .filter(status=FindingStatus.RESOLVED, resolved_at__gte=since, subject_key__in={s for _, s in keys})
        .order_by("resolved_at", "id")
    )
    return {(f.code, f.subject_key): f for f in rows if (f.code, f.subject_key) in keys}


def findings_sync(*, findings: list[RuleFinding], now: datetime, resolve_ids: list[int] | None = None) -> SyncResult:
    """Store an evaluation: open new findings, update the ones still present, count a miss on the ones it did
    not report and resolve those absent long enough (``findings_mark_absent``).

    Deduplication is by code and subject: the same problem seen again updates its active finding
    (an acknowledged one stays acknowledged); a problem resolved less than FINDING_REOPEN_WITHIN_S ago reopens
    its finding (event REOPENED) instead of opening a new one. Every change is recorded as a FindingEvent.
    With ``resolve_ids`` (one shard of the periodic cycle, wanmon/diagnosis/shards.py) the evaluation saw part
    of the network: only those active findings count a miss, and only the findings it names or may resolve
    are read; a transaction-scoped lock per finding key (taken in key order) keeps two shards that find the
    same element from opening it twice.
    """
    result = SyncResult()
    if not findings and resolve_ids is not None and not resolve_ids:
        return result  # a shard that found nothing and owns no active finding: nothing to store
    with transaction.atomic():
        active_qs = Finding.objects.select_for_update().filter(status__in=ACTIVE_STATUSES)
        if resolve_ids is not None:
            keys = sorted({f"{f.code}|{subject_key(dict(f.subject))}" for f in findings})
            if keys:
                with connection.cursor() as cursor:
                    cursor.execute(
                        "SELECT pg_advisory_xact_lock(hashtextextended(k, 19)) FROM unnest(%s::text[]) AS k ORDER BY k",
                        [keys],
                    )
            active_qs = active_qs.filter(Q(id__in=resolve_ids) | Q(subject_key__in={k.partition("|")[2] for k in keys}))
        active = {(f.code, f.subject_key): f for f in active_qs}
        reported = {(f.code, subject_key(dict(f.subject))) for f in findings}
        reopenable = _recently_resolved(reported - active.keys(), now)
        resolvable = set(resolve_ids) if resolve_ids is not None else None
        seen: set[tuple[str, str]] = set()
        for found in findings:
            data = found.to_dict()
            key = (found.code, subject_key(dict(found.subject)))
            if key in seen:
                continue
            seen.add(key)
            values = {
                "severity": found.severity,
                "subject": jsonable(dict(found.subject)),
                "rank": found.rank,
                "end": found.end,
                "summary": data["summary"],
                "explanation": data["explanation"],
                "evidence": jsonable(data["evidence"]),
                "actions": list(data["actions"]),
                "explained_by": list(found.explained_by),
                "last_seen_at": now,
                "absent_evaluations": 0,
            }
            event_data = {"severity": found.severity, "summary": data["summary"]}
            existing = active.get(key)
            if existing is None and key in reopenable:
                existing = reopenable[key]
                resolved_at = existing.resolved_at
                existing.status = FindingStatus.OPEN
                existing.resolved_at = None
                existing.onset = found.start  # a new episode of the same problem
                for name, value in values.items():
                    setattr(existing, name, value)
                existing.save()
                FindingEvent.objects.create(
                    finding=existing,
                    time=now,
                    kind=EventKind.REOPENED,
                    note=f"reported again {(now - resolved_at).total_seconds() / 60:.0f} min after it was resolved",
                    data=event_data,
                )
                result.reopened.append(existing.id)
            elif existing is None:
                finding = Finding.objects.create(
                    code=found.code,
                    subject_key=key[1],
                    start=found.start,
                    onset=found.start,
                    first_seen_at=now,
                    status=FindingStatus.OPEN,
                    **values,
                )
                FindingEvent.objects.create(finding=finding, time=now, kind=EventKind.OPENED, data=event_data)
                result.opened.append(finding.id)
            else:
                changed = existing.severity != found.severity or existing.summary != data["summary"]
                # the window slides past the episode's first bad results: its onset is the earliest start reported
                existing.onset = min(existing.onset or found.start, found.start)
                for name, value in values.items():
                    setattr(existing, name, value)
                existing.save()
                if changed:
                    FindingEvent.objects.create(finding=existing, time=now, kind=EventKind.UPDATED, data=event_data)
                result.updated.append(existing.id)
        missing = [
            finding
            for key, finding in active.items()
            if key not in seen and (resolvable is None or finding.id in resolvable)
        ]
        findings_mark_absent(findings=missing, now=now, result=result)
    return result


def finding_acknowledge(*, finding: Finding, user, note: str = "", now: datetime) -> Finding:
    """An operator takes a finding in hand: it stays active but is marked acknowledged (who, when, why)."""
    with transaction.atomic():
        finding = lifecycle_acknowledge(finding, user=user, now=now)
        FindingEvent.objects.create(finding=finding, time=now, kind=EventKind.ACKNOWLEDGED, user=user, note=note)
    return finding
