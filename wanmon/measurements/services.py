"""Follow-up work on stored measurements: rates and rollups (the slow half of ingest, run by Celery).

Each interface has a watermark (``InterfaceWatermark.processed_until``): every sample up to it has its rate and
rollups. ``measurements_process`` recomputes from the earlier of the samples it was told about and the watermark,
and advances the watermark in the same transaction, so the watermark is never ahead of the rates and a task lost
in the broker leaves the interface behind, not a silent gap: ``measurements_catch_up`` (beat, every minute) finds
interfaces whose samples are newer than their watermark and recomputes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from wanmon.core.sql import sql_array
from wanmon.measurements.constants import ROLLUP_CADENCE_S, ROLLUP_LEVELS
from wanmon.measurements.rates import RatesRefreshResult, interface_rates_refresh
from wanmon.measurements.rollups import interface_rollups_refresh

# An interface with no watermark yet is computed from its first sample (the first task of a new interface may
# be the one that was lost).
_BEGINNING = datetime(1970, 1, 1, tzinfo=UTC)
# The watermark's own sample has its rate: a recompute that starts at the watermark starts just after it (the
# database keeps microseconds), so the usual batch computes each new sample's rate once, not the previous one again.
_AFTER = timedelta(microseconds=1)


def _watermarks_lock(interface_ids: list[int], *, skip_locked: bool) -> dict[int, datetime | None]:
    """Create missing watermark rows and lock them (in id order: two tasks never deadlock). Returns the locked
    interfaces and their watermark; with ``skip_locked``, interfaces another transaction is computing are left out.
    """
    ids = sql_array(interface_ids)
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO measurements_interfacewatermark (interface_id, processed_until, updated_at) "
            "SELECT i.id, NULL, now() FROM inventory_interface i WHERE i.id = ANY(%s::bigint[]) ORDER BY i.id "
            "ON CONFLICT (interface_id) DO NOTHING",
            [ids],
        )
        cursor.execute(
            "SELECT interface_id, processed_until FROM measurements_interfacewatermark "
            "WHERE interface_id = ANY(%s::bigint[]) "
            f"ORDER BY interface_id FOR UPDATE{' SKIP LOCKED' if skip_locked else ''}",
            [ids],
        )
        return dict(cursor.fetchall())


def _watermarks_advance(until: dict[int, datetime]) -> None:
    if not until:
        return
    ids, times = zip(*sorted(until.items()), strict=True)
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE measurements_interfacewatermark w SET processed_until = greatest(w.processed_until, u.until), "
            "updated_at = now() FROM unnest(%s::bigint[], %s::timestamptz[]) AS u(interface_id, until) "
            "WHERE w.interface_id = u.interface_id",
            [sql_array(ids), sql_array(times)],
        )


def _period_start(moment: datetime, period_s: int) -> datetime:
    """The start of the period of ``period_s`` seconds holding ``moment`` (aligned on the epoch, as time_bucket)."""
    return datetime.fromtimestamp(int(moment.timestamp()) // period_s * period_s, UTC)


def _rollups_due(done: RatesRefreshResult, watermarks: dict[int, datetime | None]) -> dict[str, dict[int, datetime]]:
    """Per rollup level, the interfaces whose buckets are recomputed now and from when (ROLLUP_CADENCE_S).

    A level with a cadence is recomputed when the new rates enter another period of it than the watermark's: from
    the start of the watermark's period, so the rates of the batches that skipped it are rolled up too (they lie
    in that period, inside the bucket). A recompute reaching back to the watermark or before (late samples, the
    catch-up) or of an interface without a watermark recomputes every level from its first rewritten rate.
    """
    due: dict[str, dict[int, datetime]] = {level: {} for level in ROLLUP_LEVELS}
    for iid, first in done.since.items():
        old = watermarks.get(iid)
        for level, period_s in ROLLUP_CADENCE_S.items():
            if not period_s or old is None or first <= old:
                due[level][iid] = first
            elif _period_start(done.until[iid], period_s) != (start := _period_start(old, period_s)):
                due[level][iid] = min(first, start)
    return due


def measurements_process(*, interface_since: dict[int, datetime], skip_locked: bool = False) -> RatesRefreshResult:
    """Recompute rates and rollups for interfaces with new samples, each from its earliest new sample or its
    watermark, whichever is earlier, and advance the watermarks.

    Starting just after the watermark when it is earlier redoes the samples of a lost earlier task, so the watermark
    means "everything up to here" (in the usual case the watermark is the previous batch's last sample, and each
    new sample's rate is computed once). Rollups are recomputed from the first rate the recompute rewrote, not from
    ``since``: buckets before it may hold rollups whose rates are gone (rates are kept longer than raw samples,
    rollups longer than rates), and recomputing those would shrink or delete them. The daily level follows its
    cadence (``_rollups_due``). A fixed number of statements whatever the number of interfaces.
    """
    total = RatesRefreshResult()
    if not interface_since:
        return total
    with transaction.atomic():
        watermarks = _watermarks_lock(sorted(interface_since), skip_locked=skip_locked)
        since = {
            iid: min(interface_since[iid], processed_until + _AFTER) if processed_until is not None else _BEGINNING
            for iid, processed_until in watermarks.items()
        }
        total = interface_rates_refresh(interface_since=since)
        for level, level_since in _rollups_due(total, watermarks).items():
            interface_rollups_refresh(interface_since=level_since, levels=(level,))
        _watermarks_advance(total.until)
    return total


@dataclass
class CatchUpResult:
    """What one catch-up pass found behind and recomputed."""

    interfaces: int = 0
    rates: int = 0
    discontinuities: int = 0
    behind_s: dict[int, float] = field(default_factory=dict)  # per interface: newest sample - watermark


# One statement, cheap when nothing is behind: per interface a probe of the (interface_id, time) index for one
# sample newer than its watermark, bounded by the look-back (old chunks are excluded before the probes run).
# A watermark moved within the grace period belongs to an interface whose tasks run: what is newer is most likely
# queued (and any later task of the interface starts at the watermark anyway), so it is not computed twice.
# Also behind: an interface that went silent inside a period of the rollups' cadence (its last batches skipped the
# daily level) once the period is over; recomputing it from its watermark completes it.
_BEHIND_SQL = """
SELECT i.id, w.processed_until
FROM inventory_interface i
LEFT JOIN measurements_interfacewatermark w ON w.interface_id = i.id
WHERE (w.updated_at IS NULL OR w.processed_until IS NULL OR w.updated_at <= now() - make_interval(secs => %(grace)s))
  AND (EXISTS (
    SELECT 1 FROM measurements_snmpsample s
    WHERE s.interface_id = i.id AND s.time > %(horizon)s AND s.time > coalesce(w.processed_until, '-infinity'))
    OR (w.processed_until > %(horizon)s
        AND w.updated_at < time_bucket(%(cadence)s, w.processed_until) + %(cadence)s
        AND time_bucket(%(cadence)s, w.processed_until) + %(cadence)s <= now() - make_interval(secs => %(grace)s)))
ORDER BY i.id
LIMIT %(limit)s
"""


def interfaces_behind(*, now: datetime | None = None, limit: int = 100_000) -> dict[int, datetime | None]:
    """Interfaces with samples newer than their watermark (within the look-back), or silent with a daily rollup
    still to complete, and their watermark."""
    now = now or timezone.now()
    horizon = now - timedelta(seconds=settings.WANMON_CATCHUP_LOOKBACK_S)
    with connection.cursor() as cursor:
        cursor.execute(
            _BEHIND_SQL,
            {
                "horizon": horizon,
                "limit": limit,
                "grace": float(settings.WANMON_CATCHUP_GRACE_S),
                "cadence": timedelta(seconds=min(s for s in ROLLUP_CADENCE_S.values() if s)),
            },
        )
        return dict(cursor.fetchall())


def measurements_catch_up(*, now: datetime | None = None, group_size: int = 200) -> CatchUpResult:
    """Recompute every interface whose samples are newer than its watermark (work lost on its way through the
    broker), ``group_size`` interfaces per transaction. Interfaces another task is computing are skipped: they
    are caught up by that task, or at the next pass."""
    result = CatchUpResult()
    behind = interfaces_behind(now=now)
    ids = sorted(behind)
    for start in range(0, len(ids), group_size):
        group = ids[start : start + group_size]
        done = measurements_process(interface_since={iid: behind[iid] or _BEGINNING for iid in group}, skip_locked=True)
        result.interfaces += len(done.until)
        result.rates += done.rates
        result.discontinuities += done.discontinuities
        for iid, until in done.until.items():
            start_at = behind[iid]
            result.behind_s[iid] = (until - start_at).total_seconds() if start_at else 0.0
    return result
