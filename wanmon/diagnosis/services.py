"""Diagnosis services: run the engine over the database and keep the stored findings in step."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import connection, transaction
from django.db.models import Q

from wanmon.diagnosis import constants as k
from wanmon.diagnosis import engine
from wanmon.diagnosis.choices import ACTIVE_STATUSES, EventKind, FindingStatus
from wanmon.diagnosis.evidence import AgentSchedule
from wanmon.diagnosis.evidence import Finding as EngineFinding
from wanmon.diagnosis.models import Finding, FindingEvent
from wanmon.diagnosis.selectors import evidence_bundle_build

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


def _jsonable(value):
    return json.loads(json.dumps(value, default=str))


def findings_sync(
    *, findings: list[EngineFinding], now: datetime, resolve_ids: list[int] | None = None
) -> SyncResult:
    """Store an evaluation: open new findings, update the ones still present, resolve the ones that cleared.

    Deduplication is by code and subject: the same problem seen again updates its active finding
    (an acknowledged one stays acknowledged). Every change is recorded as a FindingEvent.
    With ``resolve_ids`` (one shard of the periodic cycle, wanmon/diagnosis/shards.py) the evaluation saw part
    of the network: only those active findings may be resolved, and only the findings it names or may resolve
    are read; a transaction-scoped lock per finding key (taken in key order) keeps two shards that find the
    same element from opening it twice.
    """
    result = SyncResult()
    with transaction.atomic():
        active_qs = Finding.objects.select_for_update().filter(status__in=ACTIVE_STATUSES)
        if resolve_ids is not None:
            keys = sorted({f"{f.code}|{subject_key(dict(f.subject))}" for f in findings})
            if keys:
                with connection.cursor() as cursor:
                    cursor.execute(
                        "SELECT pg_advisory_xact_lock(hashtextextended(k, 19)) FROM unnest(%s::text[]) AS k "
                        "ORDER BY k",
                        [keys],
                    )
            active_qs = active_qs.filter(
                Q(id__in=resolve_ids) | Q(subject_key__in={k.partition("|")[2] for k in keys})
            )
        active = {(f.code, f.subject_key): f for f in active_qs}
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
                "subject": _jsonable(dict(found.subject)),
                "rank": found.rank,
                "end": found.end,
                "summary": data["summary"],
                "explanation": data["explanation"],
                "evidence": _jsonable(data["evidence"]),
                "actions": list(data["actions"]),
                "explained_by": list(found.explained_by),
                "last_seen_at": now,
            }
            existing = active.get(key)
            if existing is None:
                finding = Finding.objects.create(
                    code=found.code,
                    subject_key=key[1],
                    start=found.start,
                    first_seen_at=now,
                    status=FindingStatus.OPEN,
                    **values,
                )
                FindingEvent.objects.create(
                    finding=finding,
                    time=now,
                    kind=EventKind.OPENED,
                    data={"severity": found.severity, "summary": data["summary"]},
                )
                result.opened.append(finding.id)
            else:
                changed = existing.severity != found.severity or existing.summary != data["summary"]
                for name, value in values.items():
                    setattr(existing, name, value)
                existing.save()
                if changed:
                    FindingEvent.objects.create(
                        finding=existing,
                        time=now,
                        kind=EventKind.UPDATED,
                        data={"severity": found.severity, "summary": data["summary"]},
                    )
                result.updated.append(existing.id)
        for key, finding in active.items():
            if key not in seen and (resolvable is None or finding.id in resolvable):
                finding.status = FindingStatus.RESOLVED
                finding.resolved_at = now
                finding.save(update_fields=["status", "resolved_at"])
                FindingEvent.objects.create(finding=finding, time=now, kind=EventKind.RESOLVED, note="evidence cleared")
                result.resolved.append(finding.id)
    return result


def finding_acknowledge(*, finding: Finding, user, note: str = "", now: datetime) -> Finding:
    """An operator takes a finding in hand: it stays active but is marked acknowledged (who, when, why)."""
    with transaction.atomic():
        finding = Finding.objects.select_for_update().get(pk=finding.pk)
        if finding.status == FindingStatus.RESOLVED:
            raise ValueError("a resolved finding cannot be acknowledged")
        finding.status = FindingStatus.ACKNOWLEDGED
        finding.acknowledged_at = now
        finding.acknowledged_by = user
        finding.save(update_fields=["status", "acknowledged_at", "acknowledged_by"])
        FindingEvent.objects.create(finding=finding, time=now, kind=EventKind.ACKNOWLEDGED, user=user, note=note)
    return finding


def diagnosis_evaluate(
    *,
    now: datetime,
    window_start: datetime | None = None,
    baseline_start: datetime | None = None,
    baseline_end: datetime | None = None,
    extra_schedules: tuple[AgentSchedule, ...] = (),
) -> list[EngineFinding]:
    """Build the evidence from the database and run every rule as of ``now`` (no writes)."""
    window_start = window_start or now - DEFAULT_WINDOW
    baseline_end = baseline_end or window_start
    baseline_start = baseline_start or baseline_end - DEFAULT_BASELINE
    bundle = evidence_bundle_build(
        now=now,
        window_start=window_start,
        baseline_start=baseline_start,
        baseline_end=baseline_end,
        extra_schedules=extra_schedules,
    )
    return engine.diagnose(bundle, now)


def diagnosis_run(*, now: datetime) -> SyncResult:
    """The periodic evaluation (Celery beat, every minute): evaluate and store."""
    return findings_sync(findings=diagnosis_evaluate(now=now), now=now)
