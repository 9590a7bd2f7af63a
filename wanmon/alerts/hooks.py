"""What the alerting asks of the case memory above it, without importing it.

The case memory (``wanmon.cases``) reads incidents, so the alerting must not import it; yet the incident page, the
incident API and the e-mails show the solved cases an incident resembles and the operators' notes. The case memory
registers its provider when it starts (``wanmon/cases/apps.py``); without one, an incident resembles nothing and has
no notes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

__all__ = ["CaseMemory", "case_memory_provider_set", "notes_for_mail", "notes_mailed", "page_context", "similar_cases"]


@dataclass(frozen=True)
class CaseMemory:
    """The case memory's answers: ``similar_cases(incident)`` -> ``[{incident, score, why, cause, fix, ticket,
    ...}]`` best first; ``page_context(incident)`` -> what the incident page shows of it (``case_memory_template``
    and its context); ``notes_for_mail(incident)`` -> the notes no e-mail of its thread carried yet;
    ``notes_mailed(incident=, note_ids=, now=)`` records that an e-mail carried them."""

    similar_cases: Callable[[Any], list[dict]]
    page_context: Callable[[Any], dict]
    notes_for_mail: Callable[[Any], list[dict]]
    notes_mailed: Callable[..., None]


_provider: CaseMemory | None = None


def case_memory_provider_set(provider: CaseMemory | None) -> None:
    """Register the case memory (the cases app does, at start)."""
    global _provider  # noqa: PLW0603 - one provider per process, set once at start
    _provider = provider


def similar_cases(incident) -> list[dict]:
    """The solved cases ``incident`` resembles, best first; [] without a case memory."""
    return _provider.similar_cases(incident) if _provider is not None and incident.pk else []


def page_context(incident) -> dict:
    """What the incident page adds for the case memory (its template and context); {} without one."""
    return _provider.page_context(incident) if _provider is not None and incident.pk else {}


def notes_for_mail(incident) -> list[dict]:
    """The notes of ``incident`` that no e-mail carried yet; [] without a case memory."""
    return _provider.notes_for_mail(incident) if _provider is not None and incident.pk else []


def notes_mailed(*, incident, note_ids: list[int], now: datetime) -> None:
    """Record that an e-mail of the incident's thread carried these notes."""
    if _provider is not None and note_ids:
        _provider.notes_mailed(incident=incident, note_ids=note_ids, now=now)
