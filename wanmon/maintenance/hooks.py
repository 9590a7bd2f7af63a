"""What the maintenance app asks of the apps above it, without importing them.

The layers go inventory < measurements < maintenance < diagnosis < alerts: the diagnosis reads the
maintenance calendar, so the maintenance app must not import the diagnosis. One notice needs it all
the same: "ended but still degraded" asks which paths a window touched still have active degradation
findings. The diagnosis answers through the provider it registers when it starts
(``wanmon/diagnosis/apps.py``); without one, no path counts as degraded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

__all__ = ["DegradedPaths", "degraded_paths", "degraded_paths_provider_set"]

#: (path directions {(src, dst): key}, findings seen since) -> {key: [active degradation findings]}
DegradedPaths = Callable[[Mapping[tuple[str, str], str], datetime], dict[str, list[Any]]]

_provider: DegradedPaths | None = None


def degraded_paths_provider_set(provider: DegradedPaths | None) -> None:
    """Register the function that says which paths are still degraded (the diagnosis does, at start)."""
    global _provider  # noqa: PLW0603 - one provider per process, set once at start
    _provider = provider


def degraded_paths(keys: Mapping[tuple[str, str], str], since: datetime) -> dict[str, list[Any]]:
    """Path directions (of ``keys``) with active degradation findings seen since ``since``; {} without provider."""
    if not keys or _provider is None:
        return {}
    return _provider(keys, since)
