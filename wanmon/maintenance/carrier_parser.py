"""Adapter to circuit-maintenance-parser (Apache-2.0): carrier e-mails -> ParsedWindow. The only module importing it.

Nothing may leave the host while parsing:

- the library resolves the city of some notifications (Cogent) to a time zone, first from its
  bundled table of world cities, then from the OpenStreetMap Nominatim web service. The web
  lookup is replaced here by one that fails: an unknown city becomes a parse error naming it;
- the library's last resort is an OpenAI model when PARSER_OPENAI_API_KEY is set. That parser is
  disabled here whatever the environment says.
"""

from __future__ import annotations

import email
import email.policy
import logging
from datetime import UTC, datetime
from importlib import metadata

import circuit_maintenance_parser as cmp
from circuit_maintenance_parser.errors import ProviderError
from circuit_maintenance_parser.parsers.openai import OpenAIParser
from circuit_maintenance_parser.utils import Geolocator

from wanmon.maintenance.parsed import ParsedObject, ParsedWindow, impact_normalise, impact_worst, status_normalise

logger = logging.getLogger(__name__)

VERSION = metadata.version("circuit-maintenance-parser")
# A provider id circuit-maintenance-parser does not know is refused with this list.
PROVIDERS = tuple(sorted(p.get_provider_type() for p in cmp.SUPPORTED_PROVIDERS))


class GeocodingDisabled(ValueError):
    """Raised instead of calling an online geocoder."""


def _offline_geocoder(city: str) -> tuple[float, float]:
    raise GeocodingDisabled(
        f"city {city!r} is not in circuit-maintenance-parser's offline table and online geocoding is disabled"
    )


def _no_llm(self, content):  # noqa: ARG001 - the library's signature
    logger.warning("circuit-maintenance-parser asked for its LLM fallback; disabled in wanmon")
    return None


# Applied once at import: every use of the library in this process goes through this module.
Geolocator.get_location_from_api = staticmethod(_offline_geocoder)
OpenAIParser.get_llm_response = _no_llm


class CarrierParseError(ValueError):
    """The e-mail could not be parsed by the carrier's parser; the message says why."""


def parser_name(provider: str) -> str:
    return f"circuit-maintenance-parser {VERSION} ({provider})"


def provider_for_sender(address: str) -> str | None:
    """The provider whose default organizer is exactly ``address`` (e.g. 'mr@zayo.com' -> 'zayo'), if any."""
    try:
        return cmp.get_provider_class_from_sender(address.strip().lower()).get_provider_type()
    except cmp.NonexistentProviderError:
        return None


def _notification_data(raw: bytes):
    data = cmp.NotificationData.init_from_email_bytes(raw)
    if data is None:  # not UTF-8: let the e-mail package decode the parts with their own charsets
        message = email.message_from_bytes(raw, policy=email.policy.compat32)
        data = cmp.NotificationData.init_from_emailmessage(message)
    return data


def _utc(epoch: int) -> datetime:
    return datetime.fromtimestamp(int(epoch), tz=UTC)


def email_parse_with_provider(raw: bytes, provider: str) -> list[ParsedWindow]:
    """The windows ``provider``'s parser finds in the e-mail ``raw``; CarrierParseError when it finds none."""
    provider = provider.strip().lower()
    if provider not in PROVIDERS:
        raise CarrierParseError(f"unknown parser {provider!r}; known: {', '.join(PROVIDERS)}")
    data = _notification_data(raw)
    if data is None:
        raise CarrierParseError("not a readable e-mail message")
    try:
        maintenances = list(cmp.init_provider(provider).get_maintenances(data))
    except ProviderError as exc:
        # The library's message lists every processor that failed and why.
        raise CarrierParseError(str(exc).strip().replace("\n", " ")) from None
    if not maintenances:
        raise CarrierParseError(f"the {provider} parser found no maintenance in this message")
    name = parser_name(provider)
    windows: list[ParsedWindow] = []
    seen: dict[str, int] = {}
    for m in maintenances:
        # Several windows of one maintenance (e.g. three nights) share its id: number the later ones.
        seen[m.maintenance_id] = seen.get(m.maintenance_id, 0) + 1
        reference = m.maintenance_id if seen[m.maintenance_id] == 1 else f"{m.maintenance_id} #{seen[m.maintenance_id]}"
        # The library fills uid "0" and sequence 1 when the e-mail has neither: then only the stamp orders updates.
        has_uid = bool(m.uid) and m.uid != "0"
        windows.append(
            ParsedWindow(
                reference=reference,
                aliases=(m.maintenance_id,) if reference != m.maintenance_id else (),
                uid=m.uid if has_uid else "",
                sequence=m.sequence if has_uid else None,
                stamp=_utc(m.stamp),
                start=_utc(m.start),
                end=_utc(m.end),
                source_tz="UTC",
                status=status_normalise(m.status.value),
                impact=impact_worst(c.impact.value for c in m.circuits),
                objects=tuple(
                    ParsedObject(object_id=c.circuit_id.strip(), impact=impact_normalise(c.impact.value))
                    for c in m.circuits
                ),
                provider=m.provider,
                account=m.account,
                organizer=m.organizer,
                summary=m.summary,
                parser=name,
            )
        )
    return windows

