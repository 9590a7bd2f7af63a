"""Helpers shared by the inventory management commands."""

from __future__ import annotations

from datetime import datetime

from django.core.management.base import CommandError
from django.utils.dateparse import parse_datetime


def parse_aware_datetime(value: str | None, *, option: str) -> datetime | None:
    """An ISO 8601 time with a zone (``2026-03-01T12:00:00Z``) from a command option, or None."""
    if value is None:
        return None
    parsed = parse_datetime(value.replace("Z", "+00:00") if value.endswith("Z") else value)
    if parsed is None or parsed.tzinfo is None:
        raise CommandError(
            f"{option}: expected an ISO 8601 time with a zone, e.g. 2026-03-01T12:00:00Z; got {value!r}", returncode=2
        )
    return parsed
