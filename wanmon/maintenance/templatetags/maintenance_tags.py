"""Template filters of the maintenance pages."""

from __future__ import annotations

from django import template

from wanmon.maintenance.parsed import http_url as _http_url

register = template.Library()


@register.filter
def http_url(value) -> str:
    """The value when it is an http(s) URL, else "": a carrier's link is shown only when it cannot run script."""
    return _http_url(value)
