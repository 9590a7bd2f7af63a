"""What the ingest asks of the apps above it, without importing them.

Path test records may answer a test on demand (``job_id``, wire schema version 2). The tests on demand live in
``wanmon.ondemand``, above the measurements; it registers a linker when it starts (``wanmon/ondemand/apps.py``).
The ingest calls it inside the batch's transaction, after the rows are written: a refusal rolls the whole batch
back like any other. Without a linker the ``job_id`` is kept in the row's ``extra`` and nothing else happens.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, NamedTuple

__all__ = ["JobRefusal", "JobResultsLinker", "job_results_link", "job_results_linker_set"]


class JobRefusal(NamedTuple):
    """A record whose ``job_id`` the linker refuses: HTTP status (400 unknown job, 403 another agent's) and why."""

    record: Any
    status: int
    message: str


#: (records carrying a job_id, uploading agent or None, batch id, now) -> refusals
JobResultsLinker = Callable[..., list[JobRefusal]]

_linker: JobResultsLinker | None = None


def job_results_linker_set(linker: JobResultsLinker | None) -> None:
    """Register the function that links job results to their jobs (the tests on demand do, at start)."""
    global _linker  # noqa: PLW0603 - one linker per process, set once at start
    _linker = linker


def job_results_link(records: Sequence[Any], *, agent: Any, batch_id: str, now: datetime) -> list[JobRefusal]:
    """Link ``records`` (path test records with a ``job_id``) to their jobs; the refusals, [] without a linker."""
    if not records or _linker is None:
        return []
    return _linker(records, agent=agent, batch_id=batch_id, now=now)
