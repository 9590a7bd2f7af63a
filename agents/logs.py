"""Logging of the agent: one JSON object per line on stderr.

Site admins ship agent logs to their own collectors (journald, Loki, Elastic...): JSON lines
need no parsing rules there. Structured fields are passed with ``extra={...}`` and appear as
top-level keys. Secrets never reach a log record: the token is only ever held by the
uploader, and httpx's own request logging (which could show URLs) is kept at WARNING.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import IO, Any

from collectors.records.types import iso_z

# Attributes every LogRecord has; anything else on a record came from ``extra=``.
_STANDARD_ATTRIBUTES = frozenset(vars(logging.makeLogRecord({}))) | {"message", "asctime", "taskName"}

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


class JsonLineFormatter(logging.Formatter):
    """``{"time": ..., "level": ..., "logger": ..., "message": ..., <extra fields>}`` on one line."""

    def format(self, record: logging.LogRecord) -> str:
        data: dict[str, Any] = {
            "time": iso_z(datetime.fromtimestamp(record.created, UTC), "milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD_ATTRIBUTES and not key.startswith("_"):
                data[key] = value
        if record.exc_info:
            data["exception"] = self.formatException(record.exc_info)
        # default=str: an odd extra value (a Path, a datetime) must never make logging itself fail.
        return json.dumps(data, default=str, ensure_ascii=False)


def setup_logging(level: str = "INFO", *, stream: IO[str] | None = None) -> None:
    """Send every log record of the process as JSON lines to ``stream`` (default: stderr)."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonLineFormatter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    # httpx logs every request at INFO; the agent logs its own, more useful, upload lines.
    for noisy in ("httpx", "httpcore"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
