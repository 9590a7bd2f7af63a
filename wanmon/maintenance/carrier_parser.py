"""Adapter to circuit-maintenance-parser (Apache-2.0): carrier e-mails -> ParsedWindow. The only module importing it.

Nothing may leave the host while parsing:

- the library resolves the city of some notices (Cogent) to a time zone, first from its
  bundled table of world cities, then from the OpenStreetMap Nominatim web service. The web
  lookup is replaced here by one that fails: an unknown city becomes a parse error naming it;
- the library's last resort is an OpenAI model when PARSER_OPENAI_API_KEY is set. That parser is
  disabled here whatever the environment says.

Two defects of the library are worked around here, each checked by a test on the real notice:

- it finds the parser for a sender by comparing the address with each parser's default sender, case
  included (Colt's is PlannedWorks@colt.net): the lookup here ignores case (and PCCW's "mailto:");
- Cogent writes its times month first (US: "10:00pm CT 11/3/2022"), its text parser reads them day
  first ("%d/%m/%Y"): 11/3 became 11 March, a 726-hour window. The dates of its "Start time:" and
  "End time:" lines are handed to it day first. (Whatever a parser still misreads, the guards of
  ``plausibility.py`` hold for review.)

Any exception the library raises for a message is that message's parse error: one bad e-mail never
stops an import.
"""

from __future__ import annotations

import email
import email.policy
import logging
import re
from datetime import UTC, datetime
from importlib import metadata

import circuit_maintenance_parser as cmp
from circuit_maintenance_parser.errors import ProviderError
from circuit_maintenance_parser.parsers.cogent import TextParserCogent1
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


_SLASH_DATE = re.compile(r"\b(\d{1,2})/(\d{1,2})/(\d{4})\b")
_cogent_parse_text = TextParserCogent1.parse_text


def _cogent_parse_text_us_dates(self, text):
    """Cogent's text parser, given the dates of its time lines day first, as it reads them."""
    lines = [
        _SLASH_DATE.sub(r"\2/\1/\3", line) if line.startswith(("Start time:", "End time:")) else line
        for line in text.splitlines()
    ]
    return _cogent_parse_text(self, "\n".join(lines))


# Applied once at import: every use of the library in this process goes through this module.
Geolocator.get_location_from_api = staticmethod(_offline_geocoder)
OpenAIParser.get_llm_response = _no_llm
TextParserCogent1.parse_text = _cogent_parse_text_us_dates


class CarrierParseError(ValueError):
    """The e-mail could not be parsed by the carrier's parser; the message says why."""


def parser_name(provider: str) -> str:
    return f"circuit-maintenance-parser {VERSION} ({provider})"


def _sender_key(address: str) -> str:
    return address.strip().lower().removeprefix("mailto:")


# Default sender -> provider, case ignored; where two parsers share a sender (Arelion and Telia, Seaborn and
# Turkcell) the first in the library's order, as its own lookup picks.
_PROVIDER_BY_SENDER: dict[str, str] = {}
for _provider in cmp.SUPPORTED_PROVIDERS:
    _PROVIDER_BY_SENDER.setdefault(_sender_key(_provider.get_default_organizer()), _provider.get_provider_type())


def provider_for_sender(address: str) -> str | None:
    """The provider whose default sender is ``address``, case ignored ('plannedworks@colt.net' -> 'colt'), if any."""
    return _PROVIDER_BY_SENDER.get(_sender_key(address)) if address.strip() else None


def _notice_data(raw: bytes):
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        data = None  # the library's own reading of the bytes would fail, and log the whole message
    else:
        data = cmp.NotificationData.init_from_email_bytes(raw)
    if data is None:  # let the e-mail package decode the parts with their own charsets
        data = cmp.NotificationData.init_from_emailmessage(email.message_from_bytes(raw, policy=email.policy.compat32))
    return data


def _has_date(raw: bytes) -> bool:
    return bool(str(email.message_from_bytes(raw, policy=email.policy.compat32).get("Date") or "").strip())


def _utc(epoch: int) -> datetime:
    return datetime.fromtimestamp(int(epoch), tz=UTC)


def email_parse_with_provider(raw: bytes, provider: str) -> list[ParsedWindow]:
    """The windows ``provider``'s parser finds in the e-mail ``raw``; CarrierParseError when it finds none."""
    provider = provider.strip().lower()
    if provider not in PROVIDERS:
        raise CarrierParseError(f"unknown parser {provider!r}; known: {', '.join(PROVIDERS)}")
    data = _notice_data(raw)
    if data is None:
        raise CarrierParseError("not a readable e-mail message")
    try:
        maintenances = list(cmp.init_provider(provider).get_maintenances(data))
    except ProviderError as exc:
        # The library's message lists every processor that failed and why.
        reason = " ".join(str(exc).split())
        if not _has_date(raw):
            reason = f"the message has no Date header, which the {provider} parser needs; {reason}"
        raise CarrierParseError(reason) from None
    except Exception as exc:  # noqa: BLE001 - any failure of the library on one message is that message's error
        raise CarrierParseError(f"the {provider} parser failed: {type(exc).__name__}: {exc}") from None
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

