"""Subscribable calendars (reads): feed tokens by their secret, and windows as BCOP events for feeds and notices.

Calendar clients cannot log in: a feed URL carries a secret token, of which only the SHA-256 is stored
(:func:`feed_token_hash`). A feed carries the accepted windows from ``past_days`` ago on, each with the
paths and sites it touches in its description.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from wanmon.core.tokens import token_hash as feed_token_hash
from wanmon.inventory.models import Carrier, Site
from wanmon.inventory.selectors import site_get
from wanmon.maintenance.choices import Review, Status
from wanmon.maintenance.ical import ExportObject, ExportWindow
from wanmon.maintenance.models import FeedToken, MaintenanceWindow
from wanmon.maintenance.parsed import http_url, impact_normalise
from wanmon.maintenance.recurrence import rrule_check
from wanmon.maintenance.selectors import WindowFootprint, maintenance_window_list, topology_load, window_targets

__all__ = ["feed_token_get", "feed_token_hash", "maintenance_export_window", "maintenance_export_windows"]


def feed_token_get(token: str) -> FeedToken | None:
    """The active feed token whose secret is ``token`` (compared by hash), or None."""
    if not token or len(token) > 200:
        return None
    return (
        FeedToken.objects.select_related("site", "carrier")
        .filter(token_hash=feed_token_hash(token), revoked_at__isnull=True)
        .first()
    )


def _window_url(window: MaintenanceWindow) -> str:
    return f"{settings.WANMON_BASE_URL}/maintenance/{window.pk}/"


def _rule_ok(text: str) -> bool:
    try:
        rrule_check(text)
    except ValueError:
        return False
    return True


def maintenance_export_window(window: MaintenanceWindow, footprint: WindowFootprint) -> ExportWindow:
    carrier = window.carrier.code if window.carrier_id else ""
    objects = tuple(
        ExportObject(
            object_id=a.object_id or a.label,
            impact=impact_normalise(a.impact) if a.impact else None,
            altrep=http_url(a.altrep),
        )
        for a in window.affects.all()
    ) + tuple(ExportObject(o.get("object_id", ""), o.get("impact")) for o in window.unmatched_objects or [])
    paths = "; ".join(f"{t.path.key} ({t.impact})" for t in footprint.touches)
    lines = [
        window.summary,
        window.description,
        f"Carrier: {window.carrier.name} ({carrier})" if carrier else "",
        f"Maintenance id: {window.reference}" + (f" (also {', '.join(window.aliases)})" if window.aliases else ""),
        f"Impact: {window.impact}; status: {window.status}; wanmon behaviour: {window.behaviour}",
        "Affects: " + ", ".join(o.object_id for o in objects) if objects else "",
        f"Paths: {paths}" if paths else "",
        f"Sites: {', '.join(footprint.site_codes)}" if footprint.site_codes else "",
        f"Announced in {window.source_tz}" if window.source_tz and window.source_tz != "UTC" else "",
        _window_url(window),
    ]
    title = f"[{carrier}] " if carrier else ""
    title += f"{window.reference} {window.impact}"
    if window.summary:
        title += f": {window.summary}"
    if window.status == Status.CANCELLED:
        title = f"CANCELLED {title}"
    return ExportWindow(
        uid=window.uid or f"wanmon-maintenance-{window.pk}@{settings.WANMON_BASE_URL.split('//')[-1]}",
        sequence=window.sequence,
        start=window.start,
        end=window.end,
        stamp=window.stamp or window.updated_at,
        last_modified=window.updated_at,
        reference=window.reference,
        aliases=tuple(window.aliases or ()),
        summary=title[:250],
        status=window.status,
        impact=window.impact,
        provider=window.provider or (window.carrier.code if window.carrier_id else "wanmon"),
        account=window.account or "wanmon",
        organizer=window.organizer or (window.carrier.noc_email if window.carrier_id else ""),
        objects=objects,
        description="\n".join(line for line in lines if line),
        location=", ".join(footprint.site_codes),
        url=_window_url(window),
        rrule=window.rrule if _rule_ok(window.rrule) else "",
    )


def maintenance_export_windows(
    *,
    site: Site | str | None = None,
    carrier: Carrier | str | None = None,
    now: datetime | None = None,
    past_days: int = 90,
) -> list[ExportWindow]:
    """Windows for a feed: all, one site's (those touching it) or one carrier's, from ``past_days`` ago on.

    Windows held for review or rejected stay out: subscribers' calendars show only what wanmon acts on.
    """
    now = now or timezone.now()
    since = now - timedelta(days=past_days)
    windows = list(maintenance_window_list(start=since, carrier=carrier).filter(review=Review.ACCEPTED))
    tp = topology_load(start=since)
    site_obj = None
    if site is not None:
        site_obj = site_get(site)
        if site_obj is None:
            return []
    out = []
    for w in windows:
        targets = window_targets(w)
        end = (w.recurrence_end or now + timedelta(days=366)) if w.rrule else w.end
        if site_obj is not None and site_obj.pk not in tp.window_sites(targets, w.start, end):
            continue
        footprint = WindowFootprint(
            touches=tuple(tp.window_touches(targets, w.start, end)),
            site_codes=tuple(sorted(tp.site_codes[s] for s in tp.window_sites(targets, w.start, end))),
        )
        out.append(maintenance_export_window(w, footprint))
    return out
