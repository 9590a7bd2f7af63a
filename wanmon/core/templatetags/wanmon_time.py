"""Template filters of the one time form of the incident pages, the incident list and the alerts e-mails
(:mod:`wanmon.core.times`): UTC, the date only where it is not today's, no seconds."""

from __future__ import annotations

from datetime import datetime

from django import template
from django.utils import timezone

from wanmon.core.times import format_utc

register = template.Library()


@register.filter
def utc(value, reference=None) -> str:
    """``13:10 UTC`` today, ``27 Nov 13:10 UTC`` on another day; "today" is ``reference``'s (default: now), so that
    every time of one page or e-mail is judged against the same instant: ``{{ t|utc:now }}``."""
    now = reference if isinstance(reference, datetime) else timezone.now()
    return format_utc(value, now)
