"""Helpers shared by the management commands: a time option, and a site or carrier named by its code."""

from __future__ import annotations

from datetime import datetime

from django.core.management.base import CommandError
from django.utils.dateparse import parse_datetime

from wanmon.inventory.models import Carrier, Site


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


def site_option(code: str | None) -> Site | None:
    """The site a command option names by its code (None without one); an unknown code is the command's error."""
    return _coded_option(Site, code)


def carrier_option(code: str | None) -> Carrier | None:
    """The carrier a command option names by its code (None without one); an unknown code is the command's error."""
    return _coded_option(Carrier, code)


def _coded_option(model: type[Site | Carrier], code: str | None):
    if not code:
        return None
    found = model.objects.filter(code=code).first()
    if found is None:
        raise CommandError(f"unknown {model._meta.verbose_name} {code!r}")
    return found
