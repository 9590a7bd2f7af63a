"""Imports of carrier notices (HackSoft-style services): files, mailboxes, URLs.

Import rules (BCOP 3.7 and RFC 5546):

- a notice is kept verbatim (:class:`CarrierNotice`); the same bytes are applied once;
- a window is found by the carrier and iCalendar UID, else by the carrier's maintenance id (or an
  alias of a known window); a notice updates it only when it is newer: a higher SEQUENCE, or the
  same SEQUENCE with a later DTSTAMP. An older one is recorded in the audit trail and ignored. E-mails
  without UID/SEQUENCE are ordered by their stamp (the e-mail date);
- a window entered by hand yields to the carrier's first notice about it;
- announced objects (X-MAINTNOTE-OBJECT-ID, the circuit ids of e-mails) are matched to the inventory:
  the carrier's circuits (ignoring case and blanks), then any carrier's circuit when only one has that
  id, then equipment, ``equipment:interface``, trunk, ``site:CODE`` and ``path:SRC->DST`` labels.
  What matches nothing is kept on the window and reported; :func:`maintenance_window_rematch` retries
  when a circuit is added or renamed (``receivers.py``); a circuit matched that is another carrier's is noted;
- a notice without objects (real cancellations often have none) keeps the window's objects;
- a window whose times the e-mail's own text and date make doubtful (``plausibility.py``) is held for
  review with the reasons, whoever vouched for the notice;
- one bad notice never stops an import: whatever goes wrong with it (neither a calendar nor an e-mail, a parser's
  failure, an unreadable file) is recorded as its failure, with the reason, and the next one is imported.
"""

from __future__ import annotations

import hashlib
import logging
import mailbox
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path as FilePath
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from wanmon.core.jsonable import jsonable
from wanmon.inventory.models import Carrier
from wanmon.maintenance.carrier_notices import CarrierNoticeInvalid, carrier_notice_parse
from wanmon.maintenance.choices import CarrierNoticeStatus, EventKind, Review, Source, Status
from wanmon.maintenance.constants import MATERIAL_FIELDS
from wanmon.maintenance.fetch import FetchRefused, url_fetch, url_redacted
from wanmon.maintenance.import_reports import CarrierNoticeReport, ImportReport, WindowReport
from wanmon.maintenance.models import CarrierNotice, MaintenanceSource, MaintenanceWindow
from wanmon.maintenance.parsed import ParsedWindow, ParseResult, impact_normalise
from wanmon.maintenance.plausibility import window_doubts
from wanmon.maintenance.selectors import maintenance_source_for_mailbox, maintenance_source_for_sender
from wanmon.maintenance.services import (
    ObjectIndex,
    affects_replace,
    objects_resolve,
    window_assign,
    window_event,
    window_validate,
)
from wanmon.maintenance.trust import Trust, email_trust

__all__ = [
    "ImportReport",
    "CarrierNoticeReport",
    "WindowReport",
    "maintenance_import_file",
    "maintenance_import_maildir",
    "maintenance_import_url",
    "carrier_notice_import",
    "maintenance_sources_poll",
    "vouched_by_user",
]

logger = logging.getLogger(__name__)


# --------------------------------------------------------------------------- imports


def _is_newer(parsed: ParsedWindow, window: MaintenanceWindow) -> tuple[bool | None, str]:
    """True: apply; False: older, ignore; None: the very same version (nothing to do)."""
    if window.source in (Source.MANUAL, Source.API) and window.parser == "":
        return True, "the carrier's notice replaces the hand-made entry"
    if parsed.sequence is not None and parsed.uid and parsed.uid == window.uid:
        if parsed.sequence > window.sequence:
            return True, ""
        if parsed.sequence < window.sequence:
            return False, f"SEQUENCE {parsed.sequence} is older than the applied {window.sequence}"
    if parsed.stamp is not None and window.stamp is not None:
        if parsed.stamp > window.stamp:
            return True, ""
        if parsed.stamp < window.stamp:
            return False, (
                f"DTSTAMP {parsed.stamp:%Y-%m-%dT%H:%M:%SZ} is older than the applied {window.stamp:%Y-%m-%dT%H:%M:%SZ}"
            )
        return None, "same SEQUENCE and DTSTAMP as the applied version"
    return True, ""


def _window_find(parsed: ParsedWindow, carrier: Carrier | None) -> MaintenanceWindow | None:
    qs = MaintenanceWindow.objects.select_for_update().filter(carrier=carrier)
    if parsed.uid:
        found = qs.filter(uid=parsed.uid).first()
        if found:
            return found
    return qs.filter(reference=parsed.reference).first() or qs.filter(aliases__contains=[parsed.reference]).first()


def _carrier_for(
    result: ParseResult, explicit: Carrier | None, source: MaintenanceSource | None, index: ObjectIndex
) -> Carrier | None:
    if explicit is not None:
        return explicit
    if source is not None:
        return source.carrier
    providers = {w.provider.strip().lower() for w in result.windows if w.provider.strip()}
    for src in MaintenanceSource.objects.select_related("carrier").filter(enabled=True):
        if providers & {p.lower() for p in src.provider_names}:
            return src.carrier
    for carrier in Carrier.objects.all():
        names = {carrier.code.lower(), carrier.name.lower()}
        domain = carrier.noc_email.rpartition("@")[2].lower()
        if providers & names or (domain and any(p == domain or p.endswith("." + domain) for p in providers)):
            return carrier
    # Last resort: the circuits announced belong to exactly one carrier.
    carriers: set[int] = set()
    for w in result.windows:
        for obj in w.objects:
            carriers |= index.circuit_carriers(obj.object_id)
    if len(carriers) == 1:
        return Carrier.objects.get(pk=carriers.pop())
    return None


def _zone_or_utc(name: str) -> str:
    """The announced zone when it is an IANA name (times are converted to UTC already either way)."""
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return "UTC"
    return name[:64]


def _window_values(parsed: ParsedWindow, window: MaintenanceWindow | None, source: str) -> dict[str, Any]:
    values: dict[str, Any] = {
        "start": parsed.start,
        "end": parsed.end,
        "source_tz": _zone_or_utc(parsed.source_tz),
        "impact": impact_normalise(parsed.impact),
        "summary": parsed.summary[:500],
        "description": parsed.description,
        "provider": parsed.provider[:200],
        "account": parsed.account[:200],
        "organizer": parsed.organizer[:320],
        "rrule": parsed.rrule[:500],
        "stamp": parsed.stamp,
        "source": source,
        "parser": parsed.parser[:200],
    }
    if parsed.status is not None:
        values["status"] = parsed.status
    elif window is None:
        values["status"] = Status.CONFIRMED
    if parsed.uid:
        values["uid"] = parsed.uid[:255]
    if parsed.sequence is not None:
        values["sequence"] = max(parsed.sequence, 0)
    aliases = list(dict.fromkeys([*(window.aliases if window else []), *parsed.aliases]))
    values["aliases"] = [a for a in aliases if a != parsed.reference]
    return values


def _window_apply(
    parsed: ParsedWindow,
    *,
    carrier: Carrier | None,
    notice: CarrierNotice,
    index: ObjectIndex,
    source: str,
    user,
    now: datetime,
    trust: Trust,
    doubts: list[str],
) -> WindowReport:
    report = WindowReport(
        reference=parsed.reference,
        uid=parsed.uid,
        sequence=parsed.sequence,
        start=jsonable(parsed.start),
        end=jsonable(parsed.end),
        status=parsed.status,
        action="created",
        doubts=list(doubts),
    )
    matched, unmatched = objects_resolve(parsed.objects, carrier, index)
    report.matched = [m["label"] for m in matched]
    report.unmatched = [u["object_id"] for u in unmatched]
    if carrier is not None:
        report.notes = [
            f"{m['label']} is {owner}'s circuit, not {carrier.code}'s"
            for m in matched
            if m["field"] == "circuit" and (owner := index.circuit_carrier_code(m["id"])) != carrier.code
        ]
    window = _window_find(parsed, carrier)
    if window is not None:
        report.window_id = window.pk
        newer, reason = _is_newer(parsed, window)
        if newer is None:
            report.action, report.reason = "unchanged", reason
            return report
        if newer is False:
            report.action, report.reason = "ignored", reason
            window_event(window, EventKind.IGNORED, now=now, carrier_notice=notice, note=reason)
            return report
        report.reason = reason
    values = _window_values(parsed, window, source)
    creating = window is None
    if creating:
        window = MaintenanceWindow(reference=parsed.reference[:200], carrier=carrier)
    changes = window_assign(window, values)
    window.carrier_notice = notice
    if not parsed.objects and not creating:
        # A cancellation or status update often names no object: the window keeps the ones it had.
        affects = None
    else:
        affects = matched
        unmatched_before = window.unmatched_objects or []
        if unmatched != unmatched_before:
            changes["unmatched_objects"] = [unmatched_before, unmatched]
        window.unmatched_objects = unmatched
    try:
        window_validate(window)
    except ValidationError as exc:
        report.action, report.reason = "failed", "; ".join(exc.messages)
        return report
    # What an untrusted notice creates or changes acts on nothing until an operator accepts it, nor does a
    # window whose times are doubtful, whoever vouched for the notice; a trusted one (the carrier's own
    # channel, or an operator) with believable times decides again.
    review = Review.ACCEPTED if trust.trusted and not doubts else Review.HELD
    note = f"times doubtful: {'; '.join(doubts)}" if doubts else trust.reason
    held = review == Review.HELD and window.review != Review.HELD
    if creating or changes or affects is not None or doubts:
        window.review, window.review_note = review, note[:500]
        window.reviewed_by, window.reviewed_at = None, None
    window.save()
    affects_changed = affects_replace(window, affects) if affects is not None else False
    if affects_changed and not creating:
        changes["affects"] = [None, report.matched]
    report.review = window.review
    if creating:
        window_event(window, EventKind.CREATED, now=now, user=user, carrier_notice=notice,
               note=f"from {notice.source} via {parsed.parser}; {trust.reason}")
        if window.review == Review.HELD:
            window_event(window, EventKind.HELD, now=now, carrier_notice=notice, note=note)
        report.window_id = window.pk
        return report
    material = affects_changed or any(name in MATERIAL_FIELDS for name in changes)
    if material:
        window.revision += 1
        window.save(update_fields=["revision"])
    report.action = "updated" if material else "unchanged"
    if changes:
        kind = EventKind.CANCELLED if window.status == Status.CANCELLED and "status" in changes else EventKind.UPDATED
        window_event(window, kind, now=now, user=user, carrier_notice=notice, changes=changes)
    if held and window.review == Review.HELD:
        window_event(window, EventKind.HELD, now=now, carrier_notice=notice, note=note)
    return report


def _trust(
    result: ParseResult,
    *,
    vouched_by: str,
    polled_source: MaintenanceSource | None,
    mailbox_source: MaintenanceSource | None,
    carrier: Carrier | None,
) -> Trust:
    if vouched_by:
        return Trust(True, vouched_by)
    if polled_source is not None:
        return Trust(True, f"calendar URL of {polled_source.carrier.code}'s maintenance source")
    if mailbox_source is not None:
        channel = f"mailbox of {mailbox_source.carrier.code}'s maintenance source"
        if result.content_type != "message/rfc822":
            return Trust(True, channel)
        return email_trust(
            sender=result.sender,
            carrier_code=mailbox_source.carrier.code,
            authentication_results=result.authentication_results,
            authserv_ids=settings.WANMON_MAINTENANCE_AUTHSERV_IDS or (),
            require_authentication=bool(settings.WANMON_MAINTENANCE_REQUIRE_EMAIL_AUTH),
            channel=channel,
        )
    if result.content_type != "message/rfc822":
        return Trust(False, "a calendar from no carrier's source URL")
    listed = maintenance_source_for_sender(result.sender) if result.sender else None
    if listed is not None and carrier is not None and listed.carrier_id != carrier.pk:
        listed = None  # the sender is another carrier's
    return email_trust(
        sender=result.sender,
        carrier_code=listed.carrier.code if listed else None,
        authentication_results=result.authentication_results,
        authserv_ids=settings.WANMON_MAINTENANCE_AUTHSERV_IDS or (),
        require_authentication=bool(settings.WANMON_MAINTENANCE_REQUIRE_EMAIL_AUTH),
    )


def _notice_status(report: CarrierNoticeReport) -> str:
    if not report.windows or all(w.action == "failed" for w in report.windows):
        return CarrierNoticeStatus.FAILED
    if report.problems or any(w.unmatched or w.action == "failed" for w in report.windows):
        return CarrierNoticeStatus.PARTIAL
    return CarrierNoticeStatus.PARSED


def _parse(raw: bytes, *, parser: str | None, carrier: Carrier | None) -> tuple[ParseResult, MaintenanceSource | None]:
    """What the notice says, read with the right parser, and the maintenance source that chose it."""
    try:
        result = carrier_notice_parse(raw, provider=parser or None)
    except CarrierNoticeInvalid as exc:
        return ParseResult(problems=[str(exc)]), None
    if carrier is not None:  # the carrier is known: its own parser, if it has one
        src = MaintenanceSource.objects.filter(carrier=carrier, enabled=True).exclude(parser="").first()
    else:
        src = maintenance_source_for_sender(result.sender) if result.sender else None
    if src is not None and src.parser and not parser and not any(w.bcop for w in result.windows):
        # The sender is a known carrier whose e-mails need its own parser: read the message again with it.
        result = carrier_notice_parse(raw, provider=src.parser)
    return result, src


def carrier_notice_import(
    *,
    raw: bytes,
    source: str,
    origin: str = "",
    carrier: Carrier | None = None,
    parser: str | None = None,
    user=None,
    now: datetime | None = None,
    vouched_by: str = "",
    polled_source: MaintenanceSource | None = None,
    mailbox_source: MaintenanceSource | None = None,
) -> CarrierNoticeReport:
    """Keep one raw notice and apply the windows it announces (see the module docstring).

    Trust (``trust.py``): ``vouched_by`` (who imported it by hand, see :func:`vouched_by_user`), the
    ``polled_source`` whose calendar URL it came from, the ``mailbox_source`` whose mailbox it was in, or
    an e-mail from a listed and authenticated sender; windows of any other notice are held for review.

    Never raises for a notice: whatever fails while importing it is its failure, recorded with the reason.
    """
    user = user if user is not None and getattr(user, "is_authenticated", False) else None
    try:
        return _notice_import(
            raw=raw, source=source, origin=origin, carrier=carrier, parser=parser, user=user, now=now or timezone.now(),
            vouched_by=vouched_by, polled_source=polled_source, mailbox_source=mailbox_source,
        )
    except Exception as exc:  # noqa: BLE001 - one bad notice never stops an import (mailbox, files)
        logger.exception("importing a carrier notice failed", extra={"origin": url_redacted(origin)})
        reason = f"could not be imported: {type(exc).__name__}: {exc}"
    return _failure_record(raw=raw, source=source, origin=origin, user=user, reason=reason)


@transaction.atomic
def _failure_record(*, raw: bytes, source: str, origin: str, user, reason: str) -> CarrierNoticeReport:
    """Keep a notice whose import failed, with the reason (it is tried again when imported again)."""
    report = CarrierNoticeReport(origin=origin, status=CarrierNoticeStatus.FAILED, problems=[reason[:2000]])
    notice, _ = CarrierNotice.objects.update_or_create(
        sha256=hashlib.sha256(raw).hexdigest(),
        defaults={"source": source, "origin": origin[:1000], "raw": raw, "uploaded_by": user, "parser": "",
                  "status": CarrierNoticeStatus.FAILED, "report": report.as_dict()},
    )
    report.notice_id = notice.pk
    return report


@transaction.atomic
def _notice_import(
    *,
    raw: bytes,
    source: str,
    origin: str,
    carrier: Carrier | None,
    parser: str | None,
    user,
    now: datetime,
    vouched_by: str,
    polled_source: MaintenanceSource | None,
    mailbox_source: MaintenanceSource | None,
) -> CarrierNoticeReport:
    digest = hashlib.sha256(raw).hexdigest()
    existing = CarrierNotice.objects.select_for_update().filter(sha256=digest).first()
    if existing is not None and existing.status != CarrierNoticeStatus.FAILED:
        stored = existing.report or {}
        return CarrierNoticeReport(
            origin=origin or existing.origin,
            notice_id=existing.pk,
            duplicate=True,
            parser=existing.parser,
            status=existing.status,
            carrier=stored.get("carrier"),
            windows=[WindowReport(**w) for w in stored.get("windows", [])],
            problems=list(stored.get("problems", [])),
            trusted=bool(stored.get("trusted")),
            trust=stored.get("trust", ""),
        )
    report = CarrierNoticeReport(origin=origin)
    result, src = _parse(raw, parser=parser, carrier=carrier)
    index = ObjectIndex()
    chosen = _carrier_for(result, carrier, polled_source or mailbox_source or src, index)
    trust = _trust(result, vouched_by=vouched_by, polled_source=polled_source, mailbox_source=mailbox_source,
                   carrier=carrier)
    notice = existing or CarrierNotice(sha256=digest)
    notice.source = source
    notice.origin = origin[:1000]
    notice.content_type = result.content_type[:100]
    notice.message_id = result.message_id[:998]
    notice.sender = result.sender[:320]
    notice.subject = result.subject[:998]
    notice.raw = raw
    notice.parser = result.parser[:200]
    notice.uploaded_by = user
    notice.save()
    report.notice_id = notice.pk
    report.parser = result.parser
    report.carrier = chosen.code if chosen else None
    report.trusted, report.trust = trust.trusted, trust.reason
    report.problems = list(result.problems)
    if chosen is None and result.windows:
        report.problems.append("carrier unknown: windows are kept without carrier (configure a maintenance source)")
    for parsed in result.windows:
        # An e-mail's text and date say enough to doubt a parser's reading; a calendar's times are not read from prose.
        doubts = (window_doubts(parsed, notice_date=result.date, text=result.text)
                  if result.content_type == "message/rfc822" else [])
        report.windows.append(
            _window_apply(
                parsed, carrier=chosen, notice=notice, index=index, source=source, user=user, now=now,
                trust=trust, doubts=doubts,
            )
        )
    report.status = _notice_status(report)
    notice.status = report.status
    notice.report = report.as_dict()
    notice.save(update_fields=["status", "report"])
    return report


def vouched_by_user(user) -> str:
    """The trust note of a notice an operator imported by hand (upload, URL); "" for anyone else."""
    from wanmon.core.permissions import user_is_operator

    if user is not None and getattr(user, "is_authenticated", False) and user_is_operator(user):
        return f"imported by {user.get_username()}"
    return ""


def maintenance_import_file(
    *, path: str | FilePath, carrier: Carrier | None = None, parser: str | None = None, user=None,
    now: datetime | None = None, vouched_by: str = "imported from a file on the server",
) -> ImportReport:
    """Import one file given by hand: an iCalendar object (.ics) or an e-mail message (.eml); vouched for.

    A file that cannot be read is reported failed, with the reason (nothing is kept: there are no bytes).
    """
    path = FilePath(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return ImportReport([_unreadable(str(path), exc.strerror or str(exc))])
    source = Source.ICAL_FILE if path.suffix.lower() in {".ics", ".ical", ".ifb"} else Source.EMAIL
    return ImportReport(
        [carrier_notice_import(raw=raw, source=source, origin=str(path), carrier=carrier, parser=parser,
                               user=user, now=now, vouched_by=vouched_by)]
    )


def _unreadable(origin: str, reason: str) -> CarrierNoticeReport:
    return CarrierNoticeReport(origin=origin, status=CarrierNoticeStatus.FAILED, problems=[f"cannot be read: {reason}"])


def _mailbox_messages(directory: FilePath) -> Iterable[tuple[str, bytes | None, str]]:
    """(origin, bytes, "") of each message, or (origin, None, why it could not be read): it may vanish meanwhile."""
    if (directory / "cur").is_dir() or (directory / "new").is_dir():
        box = mailbox.Maildir(str(directory), factory=None, create=False)
        for key in sorted(box.iterkeys()):
            try:
                yield f"{directory}/{key}", box.get_bytes(key), ""
            except KeyError:  # moved or deleted since it was listed
                yield f"{directory}/{key}", None, "no longer in the mailbox"
            except OSError as exc:
                yield f"{directory}/{key}", None, exc.strerror or str(exc)
        return
    for path in sorted(p for p in directory.iterdir() if p.is_file() and not p.name.startswith(".")):
        try:
            yield str(path), path.read_bytes(), ""
        except OSError as exc:
            yield str(path), None, exc.strerror or str(exc)


def maintenance_import_maildir(
    *, directory: str | FilePath, carrier: Carrier | None = None, parser: str | None = None, user=None,
    now: datetime | None = None,
) -> ImportReport:
    """Import every message of a Maildir (new/ and cur/, left untouched) or every file of a plain directory.

    Running it again imports only what is new (a message is applied once, by its content hash). Nobody
    has read these messages: each is trusted by its sender and authentication, or held for review. A message
    that fails is recorded failed with the reason (and tried again next time); the others are imported.
    """
    directory = FilePath(directory)
    if not directory.is_dir():
        raise ValidationError({"path": [f"{directory} is not a directory"]})
    mailbox_source = maintenance_source_for_mailbox(directory)
    if mailbox_source is not None and carrier is None:
        carrier = mailbox_source.carrier
    elif mailbox_source is not None and mailbox_source.carrier_id != carrier.pk:
        mailbox_source = None  # imported as another carrier's: the mailbox vouches for nothing
    report = ImportReport()
    for origin, raw, unreadable in _mailbox_messages(directory):
        if raw is None:
            report.notices.append(_unreadable(origin, unreadable))
            continue
        source = Source.ICAL_FILE if origin.lower().endswith(".ics") else Source.MAILDIR
        report.notices.append(
            carrier_notice_import(raw=raw, source=source, origin=origin, carrier=carrier, parser=parser,
                                  user=user, now=now, mailbox_source=mailbox_source)
        )
    return report


def _fetch(url: str) -> tuple[bytes, str]:
    try:
        fetched = url_fetch(url, accept="text/calendar, message/rfc822;q=0.5, */*;q=0.1")
    except FetchRefused as exc:
        raise ValidationError({"url": [str(exc)]}) from None
    return fetched.body, fetched.content_type


def maintenance_import_url(
    *, url: str, carrier: Carrier | None = None, parser: str | None = None, user=None, now: datetime | None = None,
    vouched_by: str = "", polled_source: MaintenanceSource | None = None,
) -> ImportReport:
    """Fetch an iCalendar feed (or a message) over HTTP(S) and import it (``fetch.py`` says which URLs)."""
    body, ctype = _fetch(url)
    source = Source.EMAIL if ctype == "message/rfc822" else Source.ICAL_URL
    return ImportReport(
        [carrier_notice_import(raw=body, source=source, origin=url, carrier=carrier, parser=parser,
                               user=user, now=now, vouched_by=vouched_by, polled_source=polled_source)]
    )


def maintenance_sources_poll(*, now: datetime | None = None) -> ImportReport:
    """Import the calendar URL of every enabled maintenance source; an unreachable one is noted, not fatal."""
    now = now or timezone.now()
    report = ImportReport()
    for src in MaintenanceSource.objects.select_related("carrier").filter(enabled=True).exclude(url=""):
        try:
            polled = maintenance_import_url(url=src.url, carrier=src.carrier, parser=src.parser or None, now=now,
                                            polled_source=src)
            report.notices.extend(polled.notices)
            src.last_error = ""
        except ValidationError as exc:
            # The URL may hold a token, and viewers read last_error: the error names it redacted.
            src.last_error = "; ".join(exc.messages).replace(src.url, url_redacted(src.url))
        src.last_polled_at = now
        src.save(update_fields=["last_error", "last_polled_at"])
    return report


