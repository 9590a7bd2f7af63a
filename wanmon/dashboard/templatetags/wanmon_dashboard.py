"""Template filters for numbers with units and times in the user's zone."""

from __future__ import annotations

from datetime import datetime

from django import template
from django.utils import timezone

from wanmon.core.times import format_since
from wanmon.dashboard import constants as k
from wanmon.dashboard import formatting

register = template.Library()


register.filter("bps", formatting.format_bps)
register.filter("nbytes", formatting.format_bytes)
register.filter("fraction", formatting.format_fraction)
register.filter("percent", formatting.format_percent)
register.filter("per_s", formatting.format_rate)


@register.filter
def by_name(value, name: str):
    return formatting.format_by_name(name, value)


def _strftime(value, pattern: str) -> str:
    return value.strftime(pattern) if isinstance(value, datetime) else "–"


@register.filter(expects_localtime=True)
def when(value):
    """``2026-03-01 12:00`` in the active time zone (the header names it)."""
    return _strftime(value, "%Y-%m-%d %H:%M")


@register.filter(expects_localtime=True)
def when_short(value):
    return _strftime(value, "%d %b %H:%M")


@register.filter
def ago(value, reference=None):
    """``5 min ago``, ``3 h ago``, ``2 d ago`` relative to ``reference`` (default: now)."""
    if not isinstance(value, datetime):
        return "never"
    now = reference if isinstance(reference, datetime) else timezone.now()
    seconds = (now - value).total_seconds()
    future = seconds < 0
    seconds = abs(seconds)
    if seconds < 90:
        text = f"{seconds:.0f} s"
    elif seconds < 5400:
        text = f"{seconds / 60:.0f} min"
    elif seconds < 2 * 86400:
        text = f"{seconds / 3600:.0f} h"
    else:
        text = f"{seconds / 86400:.0f} d"
    return f"in {text}" if future else f"{text} ago"


@register.filter
def onset(finding):
    """When a finding's episode began: its onset, kept across evaluations (its window's start when unknown)."""
    return getattr(finding, "onset", None) or getattr(finding, "start", None)


@register.filter
def since(value, reference=None):
    """``since 13:10, 12 h 05 min`` in the active time zone, relative to ``reference`` (default: now)."""
    now = reference if isinstance(reference, datetime) else timezone.now()
    return format_since(value, now, timezone.get_current_timezone())


@register.filter
def status_colour(status):
    return k.STATUS_STYLE.get(status, k.STATUS_STYLE[k.NODATA])[0]


@register.filter
def get_item(mapping, key):
    try:
        return mapping.get(key)
    except AttributeError:
        return None


@register.filter
def bps_short(value):
    """``906M``: the compact rate of a grid cell (the unit b/s is in the legend)."""
    text = formatting.format_bps(value)
    return text.replace(" b/s", "").replace("b/s", "").replace(" ", "") if text != "–" else "–"


@register.filter(expects_localtime=True)
def when_input(value):
    """The value of a datetime-local input, in the active time zone."""
    if not isinstance(value, datetime):
        return ""
    return value.strftime("%Y-%m-%dT%H:%M")


@register.filter
def status_glyph(status):
    """The glyph that says a status without colour: ✓ ▲ ✖ ⚙ ◷ ∅."""
    return k.STATUS_GLYPHS.get(status, "")


@register.filter
def status_label(status):
    """``nodata`` -> ``no data``: the short name of a grid status."""
    return k.STATUS_LABELS.get(status, status)
