"""E-mail content: subject lines, the template context of an incident, rendering and the message itself."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string

from wanmon.alerts import hooks
from wanmon.alerts.choices import IncidentKind, MemberRole, NotificationKind
from wanmon.alerts.constants import INCIDENT_FIRST_ACTIONS, MAIL_SUBJECT_MAX_CHARS
from wanmon.alerts.hooks import CarrierLink
from wanmon.alerts.models import Incident, IncidentMember, Notification, Silence
from wanmon.alerts.page import MemberRow, advice_list, advice_texts, member_rows, subject_url
from wanmon.alerts.policy import Operator, Recipient
from wanmon.alerts.selectors import WindowInfo, finding_facts, incident_onset
from wanmon.core.times import format_since_utc, format_utc
from wanmon.diagnosis import codes, text
from wanmon.diagnosis.choices import ACTIVE_STATUSES

SUBJECT_SUFFIX = {
    NotificationKind.FIRING: "",
    NotificationKind.UPDATE: " (updated)",
    NotificationKind.REPEAT: " (still open)",
    NotificationKind.RESOLVED: "",
    NotificationKind.RETURNED: " (returned)",
}


def base_url() -> str:
    return str(settings.WANMON_BASE_URL).rstrip("/")


def incident_url(incident_id: int) -> str:
    """The dashboard page of an incident (WANMON_BASE_URL + /incidents/<id>)."""
    return f"{base_url()}/incidents/{incident_id}"


def _one_line(value: str, limit: int = MAIL_SUBJECT_MAX_CHARS) -> str:
    value = " ".join(str(value).split())
    return value if len(value) <= limit else value[: limit - 1].rstrip() + "…"


def incident_subject(*, severity: str, code: str, title: str, kind: str) -> str:
    """``[wanmon CRITICAL] SHARED_EQUIPMENT_SUSPECT geant-fra: 2 paths degraded (CNAF->CERN, FZK->CERN)``."""
    label = "RESOLVED" if kind == NotificationKind.RESOLVED else severity.upper()
    return _one_line(f"[wanmon {label}] {code} {title}{SUBJECT_SUFFIX.get(kind, '')}")


def figures_text(derived: dict | None) -> list[str]:
    """The path physics of a finding (evidence["derived"]) as short readable items."""
    if not derived:
        return []
    items = []
    if derived.get("capacity_bps"):
        items.append(f"capacity {text.rate(derived['capacity_bps'])}")
    if derived.get("rtt_ms") is not None:
        items.append(f"RTT {text.ms(derived['rtt_ms'])}")
    if derived.get("bdp_bytes"):
        items.append(f"BDP {text.size(derived['bdp_bytes'])}")
    if derived.get("required_window_bytes"):
        items.append(f"window needed {text.size(derived['required_window_bytes'])}")
    capacity = derived.get("capacity_bps") or float("inf")
    # The window only matters when it caps a stream below the capacity.
    if derived.get("window_bytes") and (derived.get("window_limited_rate_bps") or capacity) < capacity:
        cap = text.rate(derived["window_limited_rate_bps"])
        items.append(f"window {text.size(derived['window_bytes'])} caps a stream at {cap}")
    if derived.get("loss_fraction"):
        source = f" ({derived['loss_source']})" if derived.get("loss_source") else ""
        items.append(f"loss {text.loss(derived['loss_fraction'])}{source}")
    if derived.get("mathis_ceiling_bps"):
        items.append(f"Mathis ceiling {text.rate(derived['mathis_ceiling_bps'])}")
    if derived.get("responsiveness_s"):
        items.append(f"Reno recovery after one loss {text.duration(derived['responsiveness_s'])}")
    return items


def _when(moment: datetime | None, now: datetime) -> str:
    return format_utc(moment, now, empty="")


def _direction(path: str) -> dict[str, str]:
    src, _, dst = path.partition("->")
    return {"src": src, "dst": dst}


def _member_row(row: MemberRow, muted_keys: set[str], now: datetime) -> dict:
    member, f = row.member, row.finding
    return {
        "role": member.role,
        "code": f.code,
        "severity": f.severity,
        "subject": row.label,
        "summary": f.summary,
        "window": f"{_when(f.start, now)} - {_when(f.end, now)}",
        "onset": _when(f.onset or f.start, now),
        "url": f"{base_url()}{row.finding_url}",
        "status": f.status,
        "active": f.status in ACTIVE_STATUSES,
        "muted": f"{f.code}|{f.subject_key}" in muted_keys,
        "explained_by": list(f.explained_by or []),
        "figures": figures_text((f.evidence or {}).get("derived")),
    }


def incident_mail_context(
    *,
    incident: Incident,
    kind: str,
    now: datetime,
    members: Sequence[IncidentMember],
    windows: Sequence[WindowInfo],
    note: str = "",
    operator: Operator | None = None,
) -> dict:
    """Everything the incident e-mail templates show. First, in short: since when, what, where, who operates it,
    the first action and the links (the incident page, the path pages, the suspect element); then the root
    explanation with its numbers, the evidence of every finding, the actions, the maintenance around the elements."""
    muted_keys = set(incident.muted_keys or [])
    page_rows = member_rows(sorted(members, key=lambda m: (m.role != MemberRole.ROOT, m.id)))  # as the page lists them
    rows = [_member_row(r, muted_keys, now) for r in page_rows]
    root = next((m.finding for m in members if m.role == MemberRole.ROOT), members[0].finding if members else None)
    advice, _ = advice_list(page_rows, windows=windows, now=now)  # the incident page's advice
    actions = advice_texts(advice)
    resolved = kind == NotificationKind.RESOLVED
    duration_s = ((incident.resolved_at or now) - incident.opened_at).total_seconds()
    onset = incident_onset(incident)
    suspect = None  # the root element's page: an equipment, or a trunk
    if incident.elements and incident.kind == IncidentKind.ELEMENT:
        key = "trunk" if root is not None and "trunk" in (root.subject or {}) else "equipment"
        suspect = {"element": incident.elements[0], "url": base_url() + subject_url({key: incident.elements[0]})}
    return {
        "incident": incident,
        "kind": kind,
        "kind_label": NotificationKind(kind).label,
        "resolved": resolved,
        "severity": incident.severity.upper(),
        "title": incident.title,
        "code": incident.code,
        "code_meaning": codes.CODES[incident.code].meaning if codes.is_known(incident.code) else "",
        "root": root,
        "root_subject": finding_facts(root).label if root else "",
        "members": rows,
        "active_count": sum(1 for r in rows if r["active"]),
        "onset": format_since_utc(onset, now, end=incident.resolved_at if resolved else None),
        "where": ", ".join([*incident.elements[:3], *incident.paths[:6]]) or ", ".join(incident.sites),
        "operator": operator,
        "first_action": actions[0] if actions else "",
        "actions": actions[:INCIDENT_FIRST_ACTIONS],
        "more_actions": max(len(actions) - INCIDENT_FIRST_ACTIONS, 0),
        "path_links": [{"path": p, "url": base_url() + subject_url(_direction(p))} for p in incident.paths[:6]],
        "element_link": suspect,
        "windows": [
            {"info": w, "state": w.state_at(now), "start": _when(w.start, now), "end": _when(w.end, now),
             "elements": ", ".join(w.elements)}
            for w in windows
        ],
        "opened_at": _when(incident.opened_at, now),
        "resolved_at": _when(incident.resolved_at, now),
        "now": _when(now, now),
        "now_at": now,
        "duration": text.duration(max(duration_s, 0)),
        "note": note,
        "url": incident_url(incident.id),
        "supersedes": [i.id for i in incident.merged.all()] if incident.pk else [],
        "muted": incident.muted,
        "mute_reason": incident.mute_reason,
        # The case memory (above the alerting, through its hooks): the solved cases it resembles, and the notes
        # no e-mail of this thread carried yet.
        "similar_cases": [] if resolved else hooks.similar_cases(incident),
        "notes": hooks.notes_for_mail(incident),
    }


def render_incident_mail(context: dict, recipient: Recipient, *, shared: CarrierLink | None = None
                         ) -> tuple[str, str, str]:
    """Subject, plain text and HTML of one incident e-mail to one recipient. ``shared``: the recipient is a
    carrier's NOC, whose copy links to the evidence scoped to that carrier instead of the internal pages, and
    carries neither the case memory (other incidents, their causes and tickets, other carriers among them) nor the
    operators' notes, which are written for the people who run wanmon."""
    ctx = {**context, "recipient": recipient, "shared": shared,
           "shared_expires": _when(shared.expires_at, context["now_at"]) if shared else ""}
    if shared:
        ctx.update(similar_cases=[], notes=[])
    subject = incident_subject(
        severity=context["incident"].severity, code=context["code"], title=context["title"], kind=context["kind"]
    )
    body_text = render_to_string("email/alerts/incident.txt", ctx)
    body_html = render_to_string("email/alerts/incident.html", ctx)
    return subject, body_text, body_html


def render_silence_reminder(*, silence: Silence, now: datetime, muted: Sequence[Incident],
                            recipient: Recipient) -> tuple[str, str, str]:
    """Subject, text and HTML of the reminder that a silence is about to end."""
    matchers = ", ".join(f"{k}={v}" for k, v in sorted(silence.matchers.items()))
    remaining = text.duration(max((silence.ends_at - now).total_seconds(), 0))
    ctx = {
        "silence": silence,
        "matchers": matchers,
        "remaining": remaining,
        "ends_at": _when(silence.ends_at, now),
        "incidents": [{"incident": i, "url": incident_url(i.id)} for i in muted],
        "url": f"{base_url()}/silences/",
        "recipient": recipient,
    }
    subject = _one_line(f"[wanmon] silence #{silence.pk} ({matchers}) ends in {remaining}")
    return (
        subject,
        render_to_string("email/alerts/silence_reminder.txt", ctx),
        render_to_string("email/alerts/silence_reminder.html", ctx),
    )


def _domain() -> str:
    sender = str(settings.DEFAULT_FROM_EMAIL)
    return sender.rpartition("@")[2].strip("> ") or "localhost"


def message_id_for(*, incident_id: int | None, silence_id: int | None, kind: str, sequence: int, recipient: str) -> str:
    """A Message-ID fixed by what the e-mail is: a resend of the same notification carries the same id."""
    digest = hashlib.sha256(recipient.lower().encode()).hexdigest()[:12]
    about = f"incident.{incident_id}" if incident_id else f"silence.{silence_id}"
    return f"<wanmon.{about}.{kind}.{sequence}.{digest}@{_domain()}>"


def message_build(notification: Notification, *, connection=None) -> EmailMultiAlternatives:
    """The e-mail of a sent-log row: text with an HTML alternative, threaded per incident."""
    headers = {"Message-ID": notification.message_id, "Auto-Submitted": "auto-generated",
               "X-Wanmon-Notification": str(notification.pk), "X-Wanmon-Kind": notification.kind}
    if notification.incident_id:
        thread = f"<wanmon.incident.{notification.incident_id}@{_domain()}>"
        headers.update({"X-Wanmon-Incident": str(notification.incident_id), "References": thread,
                        "In-Reply-To": thread})
    message = EmailMultiAlternatives(
        subject=notification.subject,
        body=notification.body_text,
        from_email=settings.DEFAULT_FROM_EMAIL,
        to=[notification.recipient],
        headers=headers,
        connection=connection,
    )
    if notification.body_html:
        message.attach_alternative(notification.body_html, "text/html")
    return message
