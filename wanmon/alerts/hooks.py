"""What the alerting asks of the apps above it, without importing them: each registers its provider when it starts;
without one, the alerting does without.

- The carrier whose element an incident is about cannot open wanmon's internal pages: its copy of the e-mail
  carries a link to the evidence scoped to it instead. The links are made by the sharing app (``wanmon/sharing``,
  ``apps.py``); without it, every recipient gets the same e-mail.
- The incident page, the incident API and the e-mails show the solved cases an incident resembles and the
  operators' notes. They come from the case memory (``wanmon/cases``, ``apps.py``), which reads incidents, so the
  alerting must not import it; without it, an incident resembles nothing and has no notes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction

logger = logging.getLogger(__name__)

__all__ = [
    "CarrierLink",
    "CarrierLinks",
    "CaseMemory",
    "carrier_links",
    "carrier_links_provider_set",
    "case_memory_provider_set",
    "notes_for_mail",
    "notes_mailed",
    "page_context",
    "similar_cases",
]


@dataclass(frozen=True)
class CarrierLink:
    """The link a carrier's NOC gets in its copy of an incident e-mail, and until when it opens."""

    carrier: str
    url: str
    expires_at: datetime


#: (incident, recipients' addresses, now) -> {address (lower case): its carrier's link}
CarrierLinks = Callable[[Any, Sequence[str], datetime], dict[str, CarrierLink]]

_carrier_links: CarrierLinks | None = None


def carrier_links_provider_set(provider: CarrierLinks | None) -> None:
    """Register the function that makes the carriers' links (the sharing app does, at start)."""
    global _carrier_links  # noqa: PLW0603 - one provider per process, set once at start
    _carrier_links = provider


def carrier_links(incident, emails: Sequence[str], now: datetime) -> dict[str, CarrierLink]:
    """The recipients among ``emails`` that are the NOC of a carrier operating the incident's elements, each with a
    new link to the evidence scoped to that carrier; {} without provider, or when making the links failed (logged):
    the e-mails go out all the same."""
    if not emails or _carrier_links is None:
        return {}
    try:
        with transaction.atomic():  # a savepoint: a failure leaves the alerting's run intact
            return _carrier_links(incident, emails, now)
    except Exception:  # the e-mail matters more than its link: the carrier then gets the internal links
        logger.exception("no share link for the carriers of incident %s", getattr(incident, "pk", None))
        return {}


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


_case_memory: CaseMemory | None = None


def case_memory_provider_set(provider: CaseMemory | None) -> None:
    """Register the case memory (the cases app does, at start)."""
    global _case_memory  # noqa: PLW0603 - one provider per process, set once at start
    _case_memory = provider


def similar_cases(incident) -> list[dict]:
    """The solved cases ``incident`` resembles, best first; [] without a case memory."""
    return _case_memory.similar_cases(incident) if _case_memory is not None and incident.pk else []


def page_context(incident) -> dict:
    """What the incident page adds for the case memory (its template and context); {} without one."""
    return _case_memory.page_context(incident) if _case_memory is not None and incident.pk else {}


def notes_for_mail(incident) -> list[dict]:
    """The notes of ``incident`` that no e-mail carried yet; [] without a case memory."""
    return _case_memory.notes_for_mail(incident) if _case_memory is not None and incident.pk else []


def notes_mailed(*, incident, note_ids: list[int], now: datetime) -> None:
    """Record that an e-mail of the incident's thread carried these notes."""
    if _case_memory is not None and note_ids:
        _case_memory.notes_mailed(incident=incident, note_ids=note_ids, now=now)
