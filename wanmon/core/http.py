"""Small answers the apps' pages share."""

from __future__ import annotations

from typing import TypeVar

from django.http import Http404

T = TypeVar("T")


def found(obj: T | None, what: str) -> T:
    """``obj``, or a 404 saying there is no ``what`` (a selector's ``None`` for an unknown name or id)."""
    if obj is None:
        raise Http404(f"no {what}")
    return obj
