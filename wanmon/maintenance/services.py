"""Maintenance writes (HackSoft-style services): windows entered by hand, inventory matching, feed tokens.

Imports of incoming carrier notices live in ``imports.py``; outgoing site notices in ``site_notices.py``.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from wanmon.core.guard import one_line_problem
from wanmon.core.jsonable import jsonable
from wanmon.inventory.models import Carrier, Circuit, Equipment, Interface, Path, Site, Trunk
from wanmon.maintenance.choices import Behaviour, EventKind, Impact, Review, Source, Status
from wanmon.maintenance.constants import FEED_TOKEN_BYTES, FEED_TOKEN_PREFIX_LEN, MATERIAL_FIELDS
from wanmon.maintenance.feeds import feed_token_hash
from wanmon.maintenance.models import (
    CarrierNotice,
    FeedToken,
    MaintenanceAffect,
    MaintenanceEvent,
    MaintenanceWindow,
)
from wanmon.maintenance.parsed import ParsedObject, compact, http_url
from wanmon.maintenance.recurrence import rrule_last_end

AFFECT_FIELDS = ("interface", "equipment", "trunk", "circuit", "path", "site")

__all__ = [
    "AffectSpec",
    "ObjectIndex",
    "feed_token_create",
    "feed_token_mark_used",
    "feed_token_revoke",
    "feed_urls",
    "maintenance_window_cancel",
    "maintenance_window_comment",
    "maintenance_window_create",
    "maintenance_window_rematch",
    "maintenance_window_review",
    "maintenance_window_update",
]


# --------------------------------------------------------------------------- inventory matching


class ObjectIndex:
    """The inventory's names, loaded once per import, to resolve announced objects to affects."""

    def __init__(self) -> None:
        self.circuits: dict[str, list[tuple[int, int, str]]] = {}
        self.circuit_carrier_codes: dict[int, str] = {}
        for pk, carrier_id, cid, code in Circuit.objects.values_list("id", "carrier_id", "cid", "carrier__code"):
            self.circuits.setdefault(compact(cid), []).append((pk, carrier_id, cid))
            self.circuit_carrier_codes[pk] = code
        self.equipment = {n.lower(): (pk, n) for pk, n in Equipment.objects.values_list("id", "name")}
        self.interfaces = {
            f"{eq}:{name}".lower(): (pk, f"{eq}:{name}")
            for pk, eq, name in Interface.objects.values_list("id", "equipment__name", "name")
        }
        self.trunks = {n.lower(): (pk, n) for pk, n in Trunk.objects.values_list("id", "name")}
        self.sites = {c.lower(): (pk, c) for pk, c in Site.objects.values_list("id", "code")}
        self.paths: dict[str, tuple[int, str]] = {}
        for pk, src, dst in Path.objects.order_by("valid_from").values_list("id", "src__code", "dst__code"):
            self.paths[f"{src}->{dst}".lower()] = (pk, f"{src}->{dst}")  # the latest version wins

    def circuit_carrier_code(self, pk: int) -> str:
        """The code of the carrier whose circuit ``pk`` is."""
        return self.circuit_carrier_codes[pk]

    def circuit_carriers(self, object_id: str) -> set[int]:
        return {carrier for _, carrier, _ in self.circuits.get(compact(object_id), [])}

    def resolve(self, object_id: str, carrier: Carrier | None) -> tuple[str, int, str] | None:
        """(affect field, id, label) for an announced object, or None when the inventory has nothing by that name."""
        text = object_id.strip()
        lowered = text.lower()
        for prefix, table, fieldname in (
            ("site:", self.sites, "site"),
            ("path:", self.paths, "path"),
            ("trunk:", self.trunks, "trunk"),
        ):
            if lowered.startswith(prefix):
                hit = table.get(lowered[len(prefix) :].strip())
                return (fieldname, hit[0], f"{prefix}{hit[1]}") if hit else None
        cid = text[8:] if lowered.startswith("circuit:") else text
        circuits = self.circuits.get(compact(cid), [])
        own = [c for c in circuits if carrier is not None and c[1] == carrier.pk]
        chosen = own or (circuits if len(circuits) == 1 else [])
        if chosen:
            return ("circuit", chosen[0][0], f"circuit:{chosen[0][2]}")
        if lowered.startswith("circuit:"):
            return None
        for table, fieldname in ((self.interfaces, "interface"), (self.equipment, "equipment"), (self.trunks, "trunk")):
            hit = table.get(lowered)
            if hit:
                return (fieldname, hit[0], hit[1])
        hit = self.paths.get(lowered)
        return ("path", hit[0], f"path:{hit[1]}") if hit else None


@dataclass(frozen=True)
class AffectSpec:
    """An affected object for manual entry: a label (as the topology names it) and an optional own impact."""

    label: str
    impact: str = ""


def objects_resolve(
    objects: Sequence[ParsedObject], carrier: Carrier | None, index: ObjectIndex
) -> tuple[list[dict], list[dict]]:
    matched, unmatched = [], []
    seen: set[tuple[str, int]] = set()
    for obj in objects:
        hit = index.resolve(obj.object_id, carrier)
        if hit is None:
            unmatched.append({"object_id": obj.object_id, "impact": obj.impact or ""})
            continue
        fieldname, pk, label = hit
        if (fieldname, pk) in seen:
            continue
        seen.add((fieldname, pk))
        matched.append(
            {
                "field": fieldname,
                "id": pk,
                "label": label,
                "impact": obj.impact or "",
                "object_id": obj.object_id,
                "altrep": http_url(obj.altrep),
            }
        )
    return matched, unmatched


def _affect_key(a: dict) -> tuple:
    return (a["field"], a["id"], a["impact"], a["object_id"], a["altrep"])


def _current_affects(window: MaintenanceWindow) -> list[dict]:
    out = []
    for a in window.affects.all().order_by("id"):
        fieldname = next(f for f in AFFECT_FIELDS if getattr(a, f"{f}_id"))
        out.append(
            {
                "field": fieldname,
                "id": getattr(a, f"{fieldname}_id"),
                "label": a.label,
                "impact": a.impact,
                "object_id": a.object_id,
                "altrep": a.altrep,
            }
        )
    return out


def affects_replace(window: MaintenanceWindow, affects: list[dict]) -> bool:
    """Replace the window's affects when they differ; True when they did."""
    if sorted(map(_affect_key, _current_affects(window))) == sorted(map(_affect_key, affects)):
        return False
    window.affects.all().delete()
    MaintenanceAffect.objects.bulk_create(
        [
            MaintenanceAffect(
                window=window,
                impact=a["impact"],
                object_id=a["object_id"][:200],
                altrep=http_url(a["altrep"]),
                **{f"{a['field']}_id": a["id"]},
            )
            for a in affects
        ]
    )
    return True


# --------------------------------------------------------------------------- windows


def window_event(
    window: MaintenanceWindow,
    kind: str,
    *,
    now: datetime,
    user=None,
    carrier_notice: CarrierNotice | None = None,
    changes: dict | None = None,
    note: str = "",
) -> MaintenanceEvent:
    return MaintenanceEvent.objects.create(
        window=window, kind=kind, time=now, user=user, carrier_notice=carrier_notice, changes=changes or {}, note=note
    )



def window_assign(window: MaintenanceWindow, values: dict[str, Any]) -> dict[str, list]:
    changes = {}
    for name, value in values.items():
        before = getattr(window, name)
        if before != value:
            changes[name] = [jsonable(before), jsonable(value)]
            setattr(window, name, value)
    return changes


def window_validate(window: MaintenanceWindow) -> None:
    errors: dict[str, list[str]] = {}
    # A reference goes into e-mail headers, attachment names and log lines: a line break there made every
    # advance notice of the window fail (and forged log lines).
    if problem := one_line_problem(window.reference):
        errors.setdefault("reference", []).append(problem)
    if window.end <= window.start:
        errors.setdefault("end", []).append("must be after start")
    if window.start.tzinfo is None or window.end.tzinfo is None:
        errors.setdefault("start", []).append("times must carry a zone")
    try:
        ZoneInfo(window.source_tz)
    except (ZoneInfoNotFoundError, ValueError):
        errors.setdefault("source_tz", []).append(f"unknown time zone {window.source_tz!r}")
    if window.rrule:
        try:
            window.recurrence_end = rrule_last_end(start=window.start, end=window.end, rrule_text=window.rrule)
        except (ValueError, TypeError) as exc:
            errors.setdefault("rrule", []).append(f"{window.reference}: RRULE refused: {exc}")
    else:
        window.recurrence_end = None
    for name, choices in (("status", Status), ("impact", Impact), ("behaviour", Behaviour)):
        if getattr(window, name) not in choices.values:
            errors.setdefault(name, []).append(f"must be one of {', '.join(choices.values)}")
    if errors:
        raise ValidationError(errors)


def _bump(window: MaintenanceWindow, changes: dict, affects_changed: bool) -> None:
    if affects_changed or any(name in MATERIAL_FIELDS for name in changes):
        window.revision += 1


def _affect_specs_resolve(specs: Iterable[AffectSpec | str], carrier: Carrier | None) -> list[dict]:
    index = ObjectIndex()
    objects, errors = [], []
    for i, spec in enumerate(specs):
        if isinstance(spec, str):
            spec = AffectSpec(label=spec)
        if spec.impact and spec.impact not in Impact.values:
            errors.append(f"affects[{i}]: impact must be one of {', '.join(Impact.values)}")
        objects.append(ParsedObject(object_id=spec.label, impact=spec.impact or None))
    matched, unmatched = objects_resolve(objects, carrier, index)
    errors += [f"unknown element {u['object_id']!r}" for u in unmatched]
    if errors:
        raise ValidationError({"affects": errors})
    for a in matched:
        a["object_id"] = ""  # entered by hand: the label is the identifier
    return matched


@transaction.atomic
def maintenance_window_create(
    *,
    reference: str,
    start: datetime,
    end: datetime,
    carrier: Carrier | None = None,
    summary: str = "",
    description: str = "",
    source_tz: str = "UTC",
    status: str = Status.CONFIRMED,
    impact: str = Impact.OUTAGE,
    behaviour: str = Behaviour.MUTE,
    rrule: str = "",
    affects: Iterable[AffectSpec | str] = (),
    source: str = Source.MANUAL,
    user=None,
    now: datetime | None = None,
) -> MaintenanceWindow:
    """A window entered by hand (UI or API), with its affected objects given as topology labels."""
    now = now or timezone.now()
    reference = reference.strip()
    if not reference:
        raise ValidationError({"reference": ["required: the carrier's maintenance id (or your own)"]})
    if MaintenanceWindow.objects.filter(carrier=carrier, reference=reference).exists():
        raise ValidationError({"reference": [f"{reference} already exists for this carrier"]})
    window = MaintenanceWindow(
        reference=reference,
        carrier=carrier,
        summary=summary[:500],
        description=description,
        start=start,
        end=end,
        source_tz=source_tz or "UTC",
        status=status,
        impact=impact,
        behaviour=behaviour,
        rrule=rrule.strip().removeprefix("RRULE:"),
        source=source,
        parser="",
        author=user if user is not None and user.is_authenticated else None,
        uid=f"{secrets.token_hex(12)}@wanmon",
        stamp=now,
        organizer=carrier.noc_email if carrier is not None else "",
        review=Review.ACCEPTED,
        review_note="entered by hand" + (f" by {user.get_username()}" if user is not None and user.is_authenticated
                                         else ""),
    )
    window_validate(window)
    matched = _affect_specs_resolve(affects, carrier)
    window.save()
    affects_replace(window, matched)
    window_event(window, EventKind.CREATED, now=now, user=window.author, note=f"entered by hand ({source})")
    return window


@transaction.atomic
def maintenance_window_update(
    *,
    window: MaintenanceWindow,
    user=None,
    now: datetime | None = None,
    affects: Iterable[AffectSpec | str] | None = None,
    note: str = "",
    **values: Any,
) -> MaintenanceWindow:
    """Change a window by hand: any of summary, description, start, end, source_tz, status, impact,
    behaviour, rrule, reference, carrier, and optionally its affects (labels). Bumps SEQUENCE for hand-made
    windows so that calendar clients take the change."""
    allowed = {"summary", "description", "start", "end", "source_tz", "status", "impact", "behaviour", "rrule",
               "reference", "carrier"}
    unknown = set(values) - allowed
    if unknown:
        raise ValidationError({name: ["cannot be changed"] for name in sorted(unknown)})
    now = now or timezone.now()
    window = MaintenanceWindow.objects.select_for_update().get(pk=window.pk)
    if "rrule" in values:
        values["rrule"] = (values["rrule"] or "").strip().removeprefix("RRULE:")
    changes = window_assign(window, values)
    window_validate(window)
    affects_changed = False
    if affects is not None:
        affects_changed = affects_replace(window, _affect_specs_resolve(affects, window.carrier))
        if affects_changed:
            changes["affects"] = "replaced"
    if not changes:
        return window
    _bump(window, changes, affects_changed)
    if window.source in (Source.MANUAL, Source.API):
        window.sequence += 1
        window.stamp = now
    try:
        window.save()
    except IntegrityError:
        raise ValidationError({"reference": [f"{window.reference} already exists for this carrier"]}) from None
    kind = EventKind.CANCELLED if changes.get("status", [None, None])[1] == Status.CANCELLED else EventKind.UPDATED
    window_event(window, kind, now=now, user=user if user is not None and user.is_authenticated else None,
           changes=changes, note=note)
    return window


def maintenance_window_cancel(
    *, window: MaintenanceWindow, user=None, now: datetime | None = None, note: str = ""
) -> MaintenanceWindow:
    """Cancel a window by hand (a cancellation notice goes to the sites already told about it)."""
    return maintenance_window_update(window=window, user=user, now=now, note=note, status=Status.CANCELLED)


@transaction.atomic
def maintenance_window_comment(*, window: MaintenanceWindow, text: str, user=None, now: datetime | None = None):
    """Add a comment to the window's audit trail."""
    text = text.strip()
    if not text:
        raise ValidationError({"text": ["a comment needs some text"]})
    return window_event(window, EventKind.COMMENT, now=now or timezone.now(),
                  user=user if user is not None and user.is_authenticated else None, note=text)


@transaction.atomic
def maintenance_window_review(
    *, window: MaintenanceWindow, accept: bool, user=None, note: str = "", now: datetime | None = None
) -> MaintenanceWindow:
    """An operator's decision on a window held for review: accepted, it explains, mutes and notifies from now
    on; rejected, it never does (until its carrier's trusted channel announces it again)."""
    now = now or timezone.now()
    user = user if user is not None and user.is_authenticated else None
    window = MaintenanceWindow.objects.select_for_update().get(pk=window.pk)
    decision = Review.ACCEPTED if accept else Review.REJECTED
    before = window.review
    window.review = decision
    window.reviewed_by, window.reviewed_at = user, now
    if user is not None:
        window.review_note = f"{decision} by {user.get_username()}" + (f": {note.strip()}" if note.strip() else "")
    window.save(update_fields=["review", "reviewed_by", "reviewed_at", "review_note"])
    window_event(window, EventKind.REVIEWED, now=now, user=user, changes={"review": [before, decision]}, note=note)
    return window


@transaction.atomic
def maintenance_window_rematch(*, window: MaintenanceWindow | None = None, now: datetime | None = None) -> int:
    """Try the unmatched objects of one window (or all) against the inventory again; returns objects matched."""
    now = now or timezone.now()
    windows = [window] if window is not None else list(MaintenanceWindow.objects.exclude(unmatched_objects=[]))
    if not windows:
        return 0  # the usual case after an inventory change: nothing waits, no need to load the inventory's names
    index = ObjectIndex()
    found = 0
    for w in windows:
        w = MaintenanceWindow.objects.select_for_update().get(pk=w.pk)
        objects = [ParsedObject(o["object_id"], o.get("impact") or None) for o in w.unmatched_objects or []]
        matched, unmatched = objects_resolve(objects, w.carrier, index)
        if not matched:
            continue
        current = _current_affects(w)
        affects_replace(w, current + [m for m in matched if (m["field"], m["id"]) not in
                                       {(c["field"], c["id"]) for c in current}])
        w.unmatched_objects = unmatched
        w.revision += 1
        w.save()
        window_event(w, EventKind.UPDATED, now=now, changes={"affects": [None, [m["label"] for m in matched]]},
               note="matched to the inventory after a change")
        found += len(matched)
    return found


# --------------------------------------------------------------------------- feed tokens


@transaction.atomic
def feed_token_create(
    *, name: str, site: Site | None = None, carrier: Carrier | None = None, user=None
) -> tuple[FeedToken, str]:
    """A new calendar-feed token (optionally limited to a site's or a carrier's feed); the secret is returned once."""
    if site is not None and carrier is not None:
        raise ValidationError({"site": ["a token is limited to a site or to a carrier, not both"]})
    token = secrets.token_urlsafe(FEED_TOKEN_BYTES)
    feed = FeedToken.objects.create(
        name=name.strip() or "calendar",
        token_hash=feed_token_hash(token),
        token_prefix=token[:FEED_TOKEN_PREFIX_LEN],
        site=site,
        carrier=carrier,
        created_by=user if user is not None and user.is_authenticated else None,
    )
    return feed, token


def feed_token_revoke(*, token: FeedToken, now: datetime | None = None) -> FeedToken:
    """Revoke a feed token at once: its URLs answer 404 from now on."""
    if token.revoked_at is None:
        token.revoked_at = now or timezone.now()
        token.save(update_fields=["revoked_at"])
    return token


def feed_token_mark_used(*, token: FeedToken, now: datetime | None = None) -> None:
    """Remember when a feed was last read (at most once a minute: calendar clients poll often)."""
    now = now or timezone.now()
    if token.last_used_at is None or (now - token.last_used_at).total_seconds() > 60:
        FeedToken.objects.filter(pk=token.pk).update(last_used_at=now)


def feed_urls(token: str, *, site: Site | None = None, carrier: Carrier | None = None) -> dict[str, str]:
    """The subscription URLs a token opens (https and webcal forms)."""
    base = f"{settings.WANMON_BASE_URL}/maintenance/feeds/{token}"
    if site is not None:
        url = f"{base}/site/{site.code}.ics"
    elif carrier is not None:
        url = f"{base}/carrier/{carrier.code}.ics"
    else:
        url = f"{base}/all.ics"
    return {"url": url, "webcal": "webcal://" + url.split("://", 1)[1]}
