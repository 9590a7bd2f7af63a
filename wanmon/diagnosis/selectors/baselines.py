"""Baseline summaries of path directions, learned from the period before the evaluated window."""

from __future__ import annotations

import logging
from datetime import datetime

from django.core.cache import cache

from wanmon.diagnosis.evidence import PathSummary, summarise_path
from wanmon.diagnosis.selectors.common import maintenance_periods
from wanmon.diagnosis.selectors.series import BASELINE_BUCKET_S, owamp_bucketed, throughput_for, traceroutes_for

logger = logging.getLogger(__name__)


def baselines_cached(
    keys: list[tuple[int, int]], baseline_start: datetime, baseline_end: datetime
) -> dict[tuple[int, int], PathSummary]:
    """Baseline summaries of these directions. A week of one-minute results is 10 080 sessions a path: the
    summary is computed once an hour (its period aligned on the hour, in the cache for two) instead of every
    minute, and the period's tests are read only for the summaries not in the cache. Like
    ``evidence_bundle_build``, only directions with TCP tests in the baseline get one (the others are cached
    as ``False``)."""
    span = baseline_end - baseline_start
    end = baseline_end.replace(minute=0, second=0, microsecond=0)
    start = end - span
    wanted = list(keys)
    if not wanted:
        return {}
    names = {k: f"wanmon:diagnosis:baseline:v2:{k[0]}:{k[1]}:{end.isoformat()}" for k in wanted}
    try:
        hits = cache.get_many(list(names.values()))
    except Exception:  # noqa: BLE001 -- Redis down: compute, the diagnosis must not stop for a cache
        logger.warning("baseline cache unavailable", exc_info=True)
        hits = {}
    out = {k: hits[names[k]] for k in wanted if names[k] in hits}
    missing = [k for k in wanted if k not in out]
    if missing:
        tests = throughput_for(missing, start, end)
        owamp = owamp_bucketed(missing, start, end, BASELINE_BUCKET_S, outages=False)
        _, routes = traceroutes_for(missing, start, start, start, end)
        works = maintenance_periods(start, end)
        fresh = {
            k: summarise_path(tests[k], owamp.get(k, []), routes.get(k, []), start, end, excluded=works)
            if tests.get(k)
            else False
            for k in missing
        }
        out.update(fresh)
        try:
            cache.set_many({names[k]: v for k, v in fresh.items()}, timeout=2 * 3600)
        except Exception:  # noqa: BLE001 -- as above
            logger.warning("baseline cache unavailable", exc_info=True)
    return {k: v for k, v in out.items() if v is not False}
