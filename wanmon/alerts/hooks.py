"""What the alerting asks of the apps above it, without importing them.

The carrier whose element an incident is about cannot open wanmon's internal pages: its copy of the e-mail carries
a link to the evidence scoped to it instead. The links are made by the sharing app (``wanmon/sharing``), which sits
above the alerting and registers its provider when it starts (``wanmon/sharing/apps.py``); without one, every
recipient gets the same e-mail.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction

logger = logging.getLogger(__name__)

__all__ = ["CarrierLink", "CarrierLinks", "carrier_links", "carrier_links_provider_set"]


@dataclass(frozen=True)
class CarrierLink:
    """The link a carrier's NOC gets in its copy of an incident e-mail, and until when it opens."""

    carrier: str
    url: str
    expires_at: datetime


#: (incident, recipients' addresses, now) -> {address (lower case): its carrier's link}
CarrierLinks = Callable[[Any, Sequence[str], datetime], dict[str, CarrierLink]]

_provider: CarrierLinks | None = None


def carrier_links_provider_set(provider: CarrierLinks | None) -> None:
    """Register the function that makes the carriers' links (the sharing app does, at start)."""
    global _provider  # noqa: PLW0603 - one provider per process, set once at start
    _provider = provider


def carrier_links(incident, emails: Sequence[str], now: datetime) -> dict[str, CarrierLink]:
    """The recipients among ``emails`` that are the NOC of a carrier operating the incident's elements, each with a
    new link to the evidence scoped to that carrier; {} without provider, or when making the links failed (logged):
    the e-mails go out all the same."""
    if not emails or _provider is None:
        return {}
    try:
        with transaction.atomic():  # a savepoint: a failure leaves the alerting's run intact
            return _provider(incident, emails, now)
    except Exception:  # the e-mail matters more than its link: the carrier then gets the internal links
        logger.exception("no share link for the carriers of incident %s", getattr(incident, "pk", None))
        return {}
