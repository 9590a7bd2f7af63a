"""Incoming carrier notice -> windows (pure): iCalendar files, e-mails with a BCOP attachment, other e-mails.

Which parser reads what:

1. an iCalendar object (a .ics file or URL) -> the BCOP reader (``ical.py``);
2. an e-mail with a text/calendar part in BCOP form -> the BCOP reader on that part;
3. any other e-mail -> circuit-maintenance-parser with the carrier's parser: the one given (from
   the carrier's MaintenanceSource), else the one whose default sender is the From address;
4. an e-mail whose calendar part is a plain (non-BCOP) event and that no carrier parser reads ->
   the plain event, with a warning.
"""

from __future__ import annotations

import email
import email.policy
import html
import re
from datetime import UTC, datetime
from email.utils import parseaddr, parsedate_to_datetime

from wanmon.maintenance.ical import CalendarInvalid, ical_parse, looks_like_icalendar
from wanmon.maintenance.parsed import ParsedWindow, ParseResult

CALENDAR_TYPES = frozenset({"text/calendar", "application/ics", "text/x-vcalendar"})
BCOP_PARSER = "bcop"
# A message has at least one of these (RFC 5322 requires From and Date); a text whose first line merely looks
# like a header ("Fwd: REMINDER - ...", a saved subject line) is not an e-mail.
MESSAGE_HEADERS = ("from", "date", "subject", "message-id", "received", "to", "mime-version", "return-path")
#: At most this much of an e-mail's text is kept to check the parser's reading against.
TEXT_MAX_CHARS = 200_000
_TAG = re.compile(r"<[^<>]*>")  # linear whatever the HTML (an unclosed "<" stops at the next one)


class CarrierNoticeInvalid(ValueError):
    """Neither an iCalendar object nor an e-mail message."""


def _calendar_parts(message) -> list[bytes]:
    parts = []
    for part in message.walk():
        if part.is_multipart():
            continue
        ctype = part.get_content_type()
        filename = (part.get_filename() or "").lower()
        if ctype in CALENDAR_TYPES or filename.endswith((".ics", ".ical", ".ifb")):
            payload = part.get_payload(decode=True)
            if payload:
                parts.append(payload)
    return parts


def _header(message, name: str) -> str:
    try:
        value = message.get(name)
    except (ValueError, IndexError, TypeError):  # malformed header the default policy refuses
        return ""
    return " ".join(str(value or "").split())


def _headers(message, name: str) -> tuple[str, ...]:
    try:
        values = message.get_all(name) or []
    except (ValueError, IndexError, TypeError):
        return ()
    return tuple(" ".join(str(v).split()) for v in values)


def _date(message) -> datetime | None:
    """The Date header in UTC (a zone-less one read as UTC); None when absent or unreadable."""
    value = _header(message, "Date")
    try:
        moment = parsedate_to_datetime(value) if value else None
    except (TypeError, ValueError, IndexError):
        return None
    if moment is None:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC)


def _text(message, subject: str) -> str:
    """The subject and every text part that is not an attachment, HTML without its tags."""
    texts = [subject]
    for part in message.walk():
        ctype = part.get_content_type()
        if part.is_multipart() or ctype not in ("text/plain", "text/html") or part.get_filename():
            continue
        try:
            body = part.get_content()
        except (LookupError, ValueError, AssertionError):  # an unknown or lying charset
            body = (part.get_payload(decode=True) or b"").decode("utf-8", errors="replace")
        body = body[:TEXT_MAX_CHARS]  # bounds the work below, whatever a message holds
        if ctype == "text/html":
            body = html.unescape(_TAG.sub(" ", body))
        texts.append(body)
    return "\n".join(texts)[:TEXT_MAX_CHARS]


def carrier_notice_parse(raw: bytes, *, provider: str | None = None) -> ParseResult:
    """Every window in one raw notice. ``provider``: a circuit-maintenance-parser id, or 'bcop'.

    Never raises for content a carrier might send: what cannot be read is in ``problems`` and the
    result has no windows. CarrierNoticeInvalid only for bytes that are neither iCalendar nor e-mail.
    """
    if looks_like_icalendar(raw):
        try:
            return ical_parse(raw)
        except CalendarInvalid as exc:
            return ParseResult(parser="bcop-icalendar", problems=[str(exc)], content_type="text/calendar")

    message = email.message_from_bytes(raw, policy=email.policy.default)
    if not {k.lower() for k in message.keys()} & set(MESSAGE_HEADERS):
        raise CarrierNoticeInvalid(
            "neither an iCalendar object (BEGIN:VCALENDAR) nor an e-mail message (no From, Date or Subject header)"
        )
    subject = _header(message, "Subject")
    result = ParseResult(
        sender=parseaddr(_header(message, "From"))[1],
        subject=subject,
        message_id=_header(message, "Message-ID"),
        content_type="message/rfc822",
        authentication_results=_headers(message, "Authentication-Results"),
        date=_date(message),
        text=_text(message, subject),
    )
    plain: list[ParsedWindow] = []
    for part in _calendar_parts(message):
        try:
            parsed = ical_parse(part)
        except CalendarInvalid as exc:
            result.problems.append(f"calendar attachment: {exc}")
            continue
        bcop = [w for w in parsed.windows if w.bcop]
        plain.extend(w for w in parsed.windows if not w.bcop)
        if bcop:
            result.windows.extend(bcop)
            result.problems.extend(parsed.problems)
    if result.windows:
        result.parser = "bcop-icalendar (e-mail attachment)"
        return result
    if provider == BCOP_PARSER:
        result.problems.append("no BCOP iCalendar attachment in this e-mail")
        return result

    # Imported here: the library is heavy (numpy, time zone tables) and only e-mails without BCOP need it.
    from wanmon.maintenance import carrier_parser

    chosen = provider or carrier_parser.provider_for_sender(result.sender)
    if chosen:
        try:
            result.windows = carrier_parser.email_parse_with_provider(raw, chosen)
            result.parser = carrier_parser.parser_name(chosen)
            return result
        except carrier_parser.CarrierParseError as exc:
            result.problems.append(f"{carrier_parser.parser_name(chosen)}: {exc}")
    if not chosen:
        result.problems.append(
            f"no parser for sender {result.sender or '(none)'}: give the carrier's parser "
            "(a maintenance source of the carrier, or --parser)"
        )
    if plain:
        result.windows = plain
        result.parser = "icalendar (plain event in e-mail)"
        result.problems.append("the calendar attachment has no X-MAINTNOTE properties: read as a plain event")
    return result
