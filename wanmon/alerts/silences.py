"""Silences: create, change and expire them (who, why, until when), and the silence an incident suggests.

A silence mutes the findings its matchers select (``policy.silence_matches``); the processing run
(``services.alerts_process``) applies it and reminds its author before it ends.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.core.exceptions import ValidationError
from django.db import transaction

from wanmon.alerts.choices import IncidentEventKind, IncidentKind, SilenceMatcher
from wanmon.alerts.conf import AlertSettings, alert_settings
from wanmon.alerts.models import Incident, IncidentEvent, Silence
from wanmon.diagnosis import text


def incident_default_matchers(incident: Incident) -> dict[str, str]:
    """The silence that mutes exactly this incident's kind of trouble (pre-filled on the page)."""
    if incident.kind in (IncidentKind.ELEMENT, IncidentKind.MAINTENANCE) and incident.elements:
        return {SilenceMatcher.EQUIPMENT: incident.elements[0]}
    if incident.kind == IncidentKind.SITE and incident.key.startswith("site:"):
        return {SilenceMatcher.SITE: incident.key.split(":", 1)[1]}
    if incident.kind == IncidentKind.PAIR:
        return {SilenceMatcher.PATH: incident.key.split(":", 1)[1] if len(incident.paths) > 1 else incident.paths[0]}
    root = incident.root_finding
    matchers = {SilenceMatcher.CODE: incident.code}
    subject = (root.subject if root else {}) or {}
    if "src" in subject:
        matchers[SilenceMatcher.PATH] = f"{subject['src']}->{subject['dst']}"
    elif "site" in subject:
        matchers[SilenceMatcher.SITE] = subject["site"]
    elif "equipment" in subject:
        matchers[SilenceMatcher.EQUIPMENT] = subject["equipment"]
    return matchers


def _clean_matchers(matchers: dict) -> dict[str, str]:
    if not isinstance(matchers, dict):
        raise ValidationError({"matchers": "must be an object such as {\"equipment\": \"geant-fra\"}"})
    return {str(k): str(v).strip() for k, v in matchers.items() if v is not None and str(v).strip()}


def silence_create(
    *,
    author,
    matchers: dict,
    comment: str,
    now: datetime,
    starts_at: datetime | None = None,
    ends_at: datetime | None = None,
    duration_s: float | None = None,
    incident: Incident | None = None,
) -> Silence:
    """Mute the findings ``matchers`` select from ``starts_at`` (default now) to ``ends_at`` (or for
    ``duration_s``): needs a comment and at most ALERTS_SILENCE_MAX_DURATION_S."""
    cfg = alert_settings()
    starts_at = starts_at or now
    if ends_at is None:
        if not duration_s or duration_s <= 0:
            raise ValidationError({"ends_at": "give ends_at or a positive duration"})
        # checked before the arithmetic: 2**64 s from now is no date at all (an OverflowError, a 500)
        if not duration_s <= cfg.silence_max_duration_s:
            longest = text.duration(cfg.silence_max_duration_s)
            raise ValidationError({"duration_s": f"a silence lasts at most {longest} ({cfg.silence_max_duration_s} s)"})
        ends_at = starts_at + timedelta(seconds=duration_s)
    silence = Silence(matchers=_clean_matchers(matchers), comment=(comment or "").strip(), author=author,
                      incident=incident, starts_at=starts_at, ends_at=ends_at)
    _validate_silence(silence, now=now, cfg=cfg)
    with transaction.atomic():
        silence.save()
        if incident is not None:
            IncidentEvent.objects.create(incident=incident, time=now, kind=IncidentEventKind.MUTED, user=author,
                                         note=f"silence #{silence.id} created: {silence.comment}",
                                         data={"silence": silence.id})
    return silence


def _validate_silence(silence: Silence, *, now: datetime, cfg: AlertSettings) -> None:
    if not silence.comment:
        raise ValidationError({"comment": "say why (a ticket, the carrier's reference, ...)"})
    if silence.ends_at <= now:
        raise ValidationError({"ends_at": "must be in the future"})
    longest = timedelta(seconds=cfg.silence_max_duration_s)
    if silence.ends_at - silence.starts_at > longest:
        raise ValidationError({"ends_at": f"a silence lasts at most {text.duration(longest.total_seconds())}"})
    silence.full_clean(exclude=["author", "incident", "expired_by"])


def silence_update(*, silence: Silence, now: datetime, ends_at: datetime | None = None,
                   comment: str | None = None) -> Silence:
    """Extend or shorten a silence, or change its comment (a new end gets a new reminder)."""
    cfg = alert_settings()
    with transaction.atomic():
        silence = Silence.objects.select_for_update().get(pk=silence.pk)
        if silence.expired_at or silence.ends_at <= now:
            raise ValueError("an ended silence cannot be changed: create a new one")
        if ends_at is not None and ends_at != silence.ends_at:
            silence.ends_at = ends_at
            silence.reminded_at = None
        if comment is not None:
            silence.comment = comment.strip()
        _validate_silence(silence, now=now, cfg=cfg)
        silence.save()
    return silence


def silence_expire(*, silence: Silence, user, now: datetime) -> Silence:
    """End a silence now; what it muted is e-mailed at the next run if still active."""
    with transaction.atomic():
        silence = Silence.objects.select_for_update().get(pk=silence.pk)
        if silence.end_time() <= now:
            return silence
        silence.expired_at = max(now, silence.starts_at)
        silence.expired_by = user
        silence.save(update_fields=["expired_at", "expired_by"])
    return silence
