"""When each collector polled: ``<spool_dir>/polls.json``, kept by the scheduler, shown by ``wanmon-agent spool``.

One entry per collector name::

    {"snmp[0]:ral-border": {
        "last_started": "2026-03-01T11:02:00.004Z",   # when the last run began (its records' time)
        "last_finished": "2026-03-01T11:02:00.412Z",
        "last_duration_s": 0.408,
        "last_records": 48, "last_invalid": 0,
        "last_error": null, "last_timed_out": false,
        "last_success": "2026-03-01T11:02:00.004Z",   # last run without error
        "last_skipped": null,                          # last run skipped (previous one still going)
        "next_due": "2026-03-01T11:03:00.004Z",        # null for `once`
        "runs": 1440, "failed_runs": 0, "skipped_runs": 0,
        "interval_s": 60.0}}

The file is rewritten after every run (write to a temporary file, rename: a reader never sees
half of it; no fsync: it is a report, the measurements themselves are in the spool). It
survives restarts: the counters and times go on from what the previous process left, and
entries of collectors no longer configured are dropped when the daemon starts.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from collectors.records.types import iso_z

__all__ = ["POLL_LOG_NAME", "PollLog", "read_poll_log"]

POLL_LOG_NAME = "polls.json"

logger = logging.getLogger(__name__)



def read_poll_log(path: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """The poll log at ``path`` ({} when absent or unreadable: it is informational)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    collectors = data.get("collectors") if isinstance(data, dict) else None
    return collectors if isinstance(collectors, dict) else {}


class PollLog:
    """The scheduler's record of every collector's runs (module docstring). Thread-safe."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._mutex = threading.Lock()
        self._entries: dict[str, dict[str, Any]] = read_poll_log(self.path)
        self._write_failed = False

    @property
    def entries(self) -> dict[str, dict[str, Any]]:
        """A copy of the current entries."""
        with self._mutex:
            return {name: dict(entry) for name, entry in self._entries.items()}

    def keep_only(self, names: Iterable[str]) -> None:
        """Forget collectors that are no longer configured."""
        wanted = set(names)
        with self._mutex:
            for name in [n for n in self._entries if n not in wanted]:
                del self._entries[name]
            self._save()

    def scheduled(self, name: str, *, interval_s: float, next_due: datetime | None) -> None:
        """The collector's next run is due at ``next_due``."""
        with self._mutex:
            entry = self._entry(name)
            entry["interval_s"] = interval_s
            entry["next_due"] = iso_z(next_due, "milliseconds")
            self._save()

    def ran(self, result: Any, *, interval_s: float, finished: datetime, next_due: datetime | None) -> None:
        """Record one :class:`~agents.scheduler.RunResult` (run or skipped)."""
        with self._mutex:
            entry = self._entry(name=result.collector)
            entry["interval_s"] = interval_s
            entry["next_due"] = iso_z(next_due, "milliseconds")
            if result.skipped:
                entry["last_skipped"] = iso_z(result.started, "milliseconds")
                entry["skipped_runs"] = entry.get("skipped_runs", 0) + 1
            else:
                entry.update(
                    last_started=iso_z(result.started, "milliseconds"),
                    last_finished=iso_z(finished, "milliseconds"),
                    last_duration_s=round(result.duration_s, 3),
                    last_records=len(result.records),
                    last_invalid=result.invalid,
                    last_error=result.error,
                    last_timed_out=result.timed_out,
                    runs=entry.get("runs", 0) + 1,
                )
                if result.error is None:
                    entry["last_success"] = iso_z(result.started, "milliseconds")
                else:
                    entry["failed_runs"] = entry.get("failed_runs", 0) + 1
            self._save()

    def _entry(self, name: str) -> dict[str, Any]:
        entry = self._entries.setdefault(name, {})
        for key in ("runs", "failed_runs", "skipped_runs"):
            entry.setdefault(key, 0)
        for key in ("last_started", "last_finished", "last_success", "last_skipped", "next_due", "last_error"):
            entry.setdefault(key, None)
        return entry

    def _save(self) -> None:
        body = json.dumps({"format": 1, "collectors": self._entries}, indent=1, sort_keys=True).encode()
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            tmp.write_bytes(body)
            os.replace(tmp, self.path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                tmp.unlink()
            if not self._write_failed:  # once: a full disk is reported by the spool with more urgency
                self._write_failed = True
                logger.warning("poll log not written", extra={"file": str(self.path), "error": str(exc)})
            return
        self._write_failed = False
