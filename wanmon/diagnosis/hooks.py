"""What the diagnosis asks of the apps above it, without importing them.

A finding whose evidence leaves two explanations open can ask for the test that separates them (diagnosis-driven
tests, docs/diagnosis.md). The tests on demand live in ``wanmon.ondemand``, above the diagnosis; it registers a
function when it starts (``wanmon/ondemand/apps.py``). A shard of the periodic cycle calls it after its findings
are committed, with the findings it opened, reopened or updated; without one nothing happens.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import datetime

__all__ = ["FindingsTester", "findings_tested", "findings_tester_set"]

logger = logging.getLogger(__name__)

#: (finding ids, now) -> None
FindingsTester = Callable[..., None]

_tester: FindingsTester | None = None


def findings_tester_set(tester: FindingsTester | None) -> None:
    """Register the function that queues the discriminating tests of findings (the tests on demand do, at start)."""
    global _tester  # noqa: PLW0603 - one tester per process, set once at start
    _tester = tester


def findings_tested(*, finding_ids: Sequence[int], now: datetime) -> None:
    """Ask for the discriminating tests of these findings. A failure is logged, never raised: the findings are
    stored already, and a test not asked for now is asked for at the next cycle."""
    if not finding_ids or _tester is None:
        return
    try:
        _tester(finding_ids=list(finding_ids), now=now)
    except Exception:
        logger.exception("diagnosis-driven tests not queued", extra={"findings": list(finding_ids)[:20]})
