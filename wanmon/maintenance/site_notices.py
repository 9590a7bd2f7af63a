"""Outgoing notices to the sites a maintenance window touches (HackSoft-style services), sent once each.

Who: the contacts of the touched sites (the ends of the paths the window touches, the sites of its
equipment, the sites it names), in the first role of WANMON_MAINTENANCE_NOTICE_ROLES a site has
(default: 'maintenance', else 'noc'). One e-mail per recipient, the window attached as BCOP iCalendar.

When (each run of :func:`site_notices_send`, every minute from Celery beat):

- advance: WANMON_MAINTENANCE_NOTICE_LEAD_HOURS before an occurrence starts (or at once when a window
  is announced later than that, as long as it has not ended);
- changed: after a material change (times, status, impact, objects...), to those already told;
- cancelled: when a window is cancelled, to those already told;
- ended-degraded: when an occurrence ends and a path it touched still has active degradation findings.

Each (window, occurrence, kind, recipient[, revision]) is claimed in the sent-log
(:class:`SiteNotice`, unique) in the transaction that sends the e-mail: a notice goes out once,
and one whose sending failed is tried again on the next run.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.core.mail import EmailMessage, get_connection
from django.db import IntegrityError, transaction
from django.db.models import Max, Q
from django.template.loader import render_to_string
from django.utils import timezone

from wanmon.core.guard import one_line
from wanmon.maintenance import footprint as topo
from wanmon.maintenance.choices import LIVE_STATUSES, EventKind, Review, SiteNoticeKind, Status
from wanmon.maintenance.constants import (
    ENDED_CHECK_WINDOW_S,
    ENDED_DEGRADED_RECENT_S,
)
from wanmon.maintenance.feeds import maintenance_export_window
from wanmon.maintenance.hooks import degraded_paths
from wanmon.maintenance.ical import calendar_render
from wanmon.maintenance.models import MaintenanceEvent, MaintenanceWindow, SiteNotice
from wanmon.maintenance.selectors import (
    Occurrence,
    WindowFootprint,
    maintenance_occurrence_list,
    maintenance_window_queryset,
    site_recipients,
    topology_load,
    window_targets,
)

logger = logging.getLogger(__name__)

__all__ = ["SiteNoticeReport", "site_notices_send"]

@dataclass
class SiteNoticeReport:
    """What one run sent (kind, reference, recipient) and what failed (with the error)."""

    sent: list[tuple[str, str, str]] = field(default_factory=list)
    failed: list[tuple[str, str, str, str]] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"sent": len(self.sent), "failed": len(self.failed)}


def _lead() -> timedelta:
    return timedelta(hours=float(settings.WANMON_MAINTENANCE_NOTICE_LEAD_HOURS))


def _roles() -> tuple[str, ...]:
    return tuple(settings.WANMON_MAINTENANCE_NOTICE_ROLES)


def _footprint(occ: Occurrence, tp: topo.Topology) -> tuple[WindowFootprint, set[int]]:
    targets = window_targets(occ.window)
    site_ids = tp.window_sites(targets, occ.start, occ.end)
    touches = tp.window_touches(targets, occ.start, occ.end)
    codes = tuple(sorted(tp.site_codes[s] for s in site_ids if s in tp.site_codes))
    return WindowFootprint(touches=tuple(touches), site_codes=codes), site_ids


def _subject(kind: str, occ: Occurrence) -> str:
    w = occ.window
    who = f"{w.carrier.code} " if w.carrier_id else ""
    span = f"{occ.start:%Y-%m-%d %H:%M}-{occ.end:%H:%M} UTC"
    if (occ.end - occ.start) >= timedelta(days=1) or occ.end.date() != occ.start.date():
        span = f"{occ.start:%Y-%m-%d %H:%M} - {occ.end:%Y-%m-%d %H:%M} UTC"
    prefix = {
        SiteNoticeKind.ADVANCE: "Maintenance notice",
        SiteNoticeKind.CHANGED: "Maintenance CHANGED",
        SiteNoticeKind.CANCELLED: "Maintenance CANCELLED",
        SiteNoticeKind.ENDED_DEGRADED: "Maintenance ended, path still degraded",
    }[kind]
    return f"[wanmon] {prefix}: {who}{one_line(w.reference)} ({w.impact}) {span}"


def _changes_since(window: MaintenanceWindow, since: datetime | None) -> list[str]:
    events = window.events.filter(kind__in=[EventKind.UPDATED, EventKind.CANCELLED])
    if since is not None:
        events = events.filter(time__gt=since)
    lines = []
    for event in events.order_by("time", "id"):
        for name, change in (event.changes or {}).items():
            if isinstance(change, list) and len(change) == 2:
                lines.append(f"{name}: {change[0]} -> {change[1]}")
            else:
                lines.append(f"{name}: {change}")
    return lines


def _send(
    *,
    kind: str,
    occ: Occurrence,
    key: datetime,
    recipient: str,
    sites: list[str],
    footprint: WindowFootprint,
    revision: int,
    report: SiteNoticeReport,
    connection,
    extra: dict | None = None,
) -> bool:
    """Claim the notice in the sent-log and send it, in one transaction; False when it was sent before."""
    w = occ.window
    subject = _subject(kind, occ)
    context = {
        "kind": kind,
        "window": w,
        "start": occ.start,
        "end": occ.end,
        "footprint": footprint,
        "recipient_sites": sites,
        "url": f"{settings.WANMON_BASE_URL}/maintenance/{w.pk}/",
        "lead_hours": _lead().total_seconds() / 3600,
        **(extra or {}),
    }
    try:
        with transaction.atomic():
            notice = SiteNotice.objects.create(
                window=w,
                kind=kind,
                recipient=recipient,
                occurrence_start=key,
                revision=revision,
                window_revision=w.revision,
                subject=subject[:998],
            )
            with timezone.override(UTC):  # e-mails say UTC whatever zone a web user chose
                body = render_to_string(f"maintenance/email/{kind}.txt", context)
            message = EmailMessage(
                subject=subject,
                body=body,
                from_email=settings.DEFAULT_FROM_EMAIL,
                to=[recipient],
                # one line whatever the stored reference holds: a line break in a header is refused at every send
                headers={"Auto-Submitted": "auto-generated", "X-Wanmon-Maintenance": one_line(w.reference)},
                connection=connection,
            )
            if kind != SiteNoticeKind.ENDED_DEGRADED:
                ics = calendar_render([maintenance_export_window(w, footprint)], name=one_line(w.reference))
                message.attach(f"{one_line(w.reference)}.ics".replace("/", "-"), ics, "text/calendar")
            message.send(fail_silently=False)
            notice.sent_at = timezone.now()
            notice.save(update_fields=["sent_at"])
    except IntegrityError:
        return False  # claimed before: sent already (or being sent by another worker)
    except Exception as exc:  # an SMTP problem must not stop the other notices; retried next run
        logger.warning("maintenance notice %s %r to %s failed: %r", kind, w.reference, recipient, str(exc))
        report.failed.append((kind, w.reference, recipient, str(exc)))
        return False
    report.sent.append((kind, w.reference, recipient))
    return True


# Notices about a single (non-recurring) window are keyed on the window, not on its start, so that a
# postponed window is still the one its sites were told about.
SINGLE = datetime(1970, 1, 1, tzinfo=UTC)


def _occurrence_key(occ: Occurrence) -> datetime:
    return occ.start if occ.window.rrule else SINGLE


def _occurrence_of(window: MaintenanceWindow, key: datetime) -> Occurrence:
    if key == SINGLE or not window.rrule:
        return Occurrence(window, window.start, window.end)
    return Occurrence(window, key, key + (window.end - window.start))


def _already_sent(window: MaintenanceWindow, key: datetime) -> dict[str, int]:
    """Recipients told about this occurrence (advance or change) -> the latest window revision they saw."""
    rows = (
        SiteNotice.objects.filter(
            window=window,
            occurrence_start=key,
            kind__in=[SiteNoticeKind.ADVANCE, SiteNoticeKind.CHANGED],
            sent_at__isnull=False,
        )
        .values("recipient")
        .annotate(seen=Max("window_revision"))
    )
    return {r["recipient"]: r["seen"] for r in rows}


def _audit(window: MaintenanceWindow, kind: str, recipients: list[str], now: datetime) -> None:
    if recipients:
        MaintenanceEvent.objects.create(
            window=window, kind=EventKind.NOTICE, time=now, note=f"{kind} notice sent to {', '.join(recipients)}"
        )


def _advance(now: datetime, tp: topo.Topology, report: SiteNoticeReport, connection) -> None:
    roles = _roles()
    for occ in maintenance_occurrence_list(start=now, end=now + _lead(), include_cancelled=False, topology=tp):
        if occ.window.status not in LIVE_STATUSES or occ.window.review != Review.ACCEPTED:
            continue
        key = _occurrence_key(occ)
        footprint, site_ids = _footprint(occ, tp)
        told = _already_sent(occ.window, key)
        sent_now = []
        for recipient, sites in site_recipients(site_ids, roles).items():
            if recipient not in told and _send(
                kind=SiteNoticeKind.ADVANCE, occ=occ, key=key, recipient=recipient, sites=sites, footprint=footprint,
                revision=0, report=report, connection=connection,
            ):
                sent_now.append(recipient)
        _audit(occ.window, SiteNoticeKind.ADVANCE, sent_now, now)


def _changes_and_cancellations(now: datetime, tp: topo.Topology, report: SiteNoticeReport, connection) -> None:
    """Tell those already told when a window changed or was cancelled (while it has not ended)."""
    told_keys = set(
        SiteNotice.objects.filter(kind__in=[SiteNoticeKind.ADVANCE, SiteNoticeKind.CHANGED], sent_at__isnull=False)
        .filter(Q(window__end__gt=now) | ~Q(window__rrule=""))
        .values_list("window_id", "occurrence_start")
    )
    windows = maintenance_window_queryset().in_bulk({pk for pk, _ in told_keys})
    for window_id, key in sorted(told_keys):
        w = windows[window_id]
        occ = _occurrence_of(w, key)
        if occ.end <= now or w.review != Review.ACCEPTED:
            continue  # over, or a change held for review (told once an operator accepts it)
        footprint, _ = _footprint(occ, tp)
        told = _already_sent(w, key)
        if w.status == Status.CANCELLED:
            kind, revision, extra = SiteNoticeKind.CANCELLED, 0, {}
            recipients = list(told)
        elif w.status in LIVE_STATUSES and w.revision:
            kind, revision = SiteNoticeKind.CHANGED, w.revision
            recipients = [r for r, seen in told.items() if seen < w.revision]
        else:
            continue
        sent_now = []
        for recipient in recipients:
            if kind == SiteNoticeKind.CHANGED:
                last = (
                    SiteNotice.objects.filter(window=w, recipient=recipient, sent_at__isnull=False)
                    .order_by("-sent_at")
                    .values_list("sent_at", flat=True)
                    .first()
                )
                extra = {"changes": _changes_since(w, last)}
            if _send(kind=kind, occ=occ, key=key, recipient=recipient, sites=[], footprint=footprint,
                     revision=revision, report=report, connection=connection, extra=extra):
                sent_now.append(recipient)
        _audit(w, kind, sent_now, now)


def _degraded_paths(footprint: WindowFootprint, end: datetime) -> dict[str, list]:
    """Path directions of the footprint with active degradation findings seen up to the end of the window."""
    keys = {(t.path.src, t.path.dst): t.path.key for t in footprint.touches}
    return degraded_paths(keys, end - timedelta(seconds=ENDED_DEGRADED_RECENT_S))


def _ended_degraded(now: datetime, tp: topo.Topology, report: SiteNoticeReport, connection) -> None:
    since = now - timedelta(seconds=ENDED_CHECK_WINDOW_S)
    for occ in maintenance_occurrence_list(start=since, end=now, include_cancelled=False, topology=tp):
        if not (since < occ.end <= now) or occ.window.review != Review.ACCEPTED:
            continue
        footprint, _ = _footprint(occ, tp)
        degraded = _degraded_paths(footprint, occ.end)
        if not degraded:
            continue
        site_ids = set()
        for touch in footprint.touches:
            if touch.path.key in degraded:
                site_ids |= {touch.path.src_site_id, touch.path.dst_site_id}
        sent_now = []
        for recipient, sites in site_recipients(site_ids, _roles()).items():
            if _send(kind=SiteNoticeKind.ENDED_DEGRADED, occ=occ, key=occ.start, recipient=recipient, sites=sites,
                     footprint=footprint,
                     revision=0, report=report, connection=connection, extra={"degraded": degraded}):
                sent_now.append(recipient)
        _audit(occ.window, SiteNoticeKind.ENDED_DEGRADED, sent_now, now)


def site_notices_send(*, now: datetime | None = None) -> SiteNoticeReport:
    """Send every notice due at ``now`` (see the module docstring); idempotent."""
    now = now or timezone.now()
    report = SiteNoticeReport()
    tp = topology_load()
    connection = get_connection(fail_silently=False)
    try:
        _advance(now, tp, report, connection)
        _changes_and_cancellations(now, tp, report, connection)
        _ended_degraded(now, tp, report, connection)
    finally:
        connection.close()
    return report

