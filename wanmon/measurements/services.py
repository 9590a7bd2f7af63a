"""Follow-up work on stored measurements: rates and rollups (the slow half of ingest, run by Celery)."""

from __future__ import annotations

from datetime import datetime

from django.db import transaction

from wanmon.measurements.rates import RatesRefreshResult, interface_rates_refresh
from wanmon.measurements.rollups import interface_rollups_refresh


def measurements_process(*, interface_since: dict[int, datetime]) -> RatesRefreshResult:
    """Recompute rates and rollups for interfaces with new samples, each from its earliest new sample.

    Rollups are recomputed from the first rate the recompute rewrote, not from ``since``: buckets before
    it may hold rollups whose rates are gone (rates are kept longer than raw samples, rollups longer than
    rates), and recomputing those would shrink or delete them.
    """
    total = RatesRefreshResult()
    by_since: dict[datetime, list[int]] = {}
    for iid, since in interface_since.items():
        by_since.setdefault(since, []).append(iid)
    with transaction.atomic():
        for since, ids in sorted(by_since.items()):
            done = interface_rates_refresh(interface_ids=sorted(ids), since=since)
            total.rates += done.rates
            total.discontinuities += done.discontinuities
            total.since.update(done.since)
        by_rewritten: dict[datetime, list[int]] = {}
        for iid, rewritten in total.since.items():
            by_rewritten.setdefault(rewritten, []).append(iid)
        for rewritten, ids in sorted(by_rewritten.items()):
            interface_rollups_refresh(interface_ids=sorted(ids), since=rewritten)
    return total
