"""Alerting services: the processing run (findings -> incidents -> notifications), sending, acknowledging
(silences: ``silences.py``).

``alerts_process`` is the one service both the beat task (every ALERTS_PROCESS_INTERVAL_S) and
``manage.py replay --keep --notify`` (through ``alerts_process_now``) call. One run, in one transaction
under a PostgreSQL advisory lock:

1. read the active findings and group them by root cause (``grouping.group_findings``);
2. match the groups with the active incidents (one per group key): open new ones (or reopen the one resolved
   shortly before, whose findings the diagnosis reopened), move findings that changed group, clear and (after
   the resolve hold, longer for an incident that came back: ``policy.resolve_hold_s``) resolve the ones whose
   findings all cleared, close silently the ones whose findings all moved to another incident (merged);
3. mute what silences and maintenance windows cover;
4. decide by the timers (``policy.notification_due``) which incidents need an e-mail, and write one
   Notification row per recipient (the sent-log; unique per incident, kind, round and recipient);
5. remind the authors of silences about to end; re-enqueue notifications that were never sent.

After the commit every new Notification is sent by ``alerts_send_notification_task`` (Celery, with
retries); the synchronous path sends them in the calling process. Sending locks the row
(``SELECT ... FOR UPDATE SKIP LOCKED``) and marks it sent in the same transaction, so two deliveries
of the same task, or a task redelivered after a worker restart, send one e-mail.
"""

from __future__ import annotations

import logging
import smtplib
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from celery import current_app
from django.db import connection, transaction
from django.utils import timezone

from wanmon.alerts import emails, hooks
from wanmon.alerts.choices import (
    ACTIVE_INCIDENT_STATUSES,
    IncidentEventKind,
    IncidentKind,
    IncidentStatus,
    NotificationKind,
    NotificationStatus,
)
from wanmon.alerts.conf import AlertSettings, alert_settings
from wanmon.alerts.constants import PROCESS_LOCK_KEY, SEND_MAX_ATTEMPTS, SEND_TASK_NAME
from wanmon.alerts.grouping import FindingFacts, Group, group_findings, headline
from wanmon.alerts.hooks import carrier_links
from wanmon.alerts.models import Incident, IncidentEvent, IncidentMember, Notification, Silence
from wanmon.alerts.policy import (
    NotifyState,
    Operator,
    Timers,
    notification_due,
    resolve_due,
    resolve_hold_s,
    silence_matches,
)
from wanmon.alerts.selectors import (
    Recipient,
    TopologyIndex,
    finding_facts_list,
    incident_last_return,
    incident_resolution_notified,
    incident_resolved_holding,
    maintenance_inhibiting,
    maintenance_list_touching,
    operator_of_element,
    recipient_list_for_incident,
    recipient_list_notified,
    silence_list_active,
    topology_index_build,
)
from wanmon.core.lifecycle import lifecycle_acknowledge
from wanmon.core.times import format_utc
from wanmon.diagnosis import codes, text
from wanmon.diagnosis.choices import FindingStatus
from wanmon.diagnosis.services import finding_acknowledge

logger = logging.getLogger(__name__)

# How far around "now" maintenance is shown in an e-mail.
MAINTENANCE_CONTEXT_BEFORE = timedelta(hours=12)
MAINTENANCE_CONTEXT_AFTER = timedelta(hours=48)

SENT = "sent"
BUSY = "busy"
MISSING = "missing"


class NotificationSendError(Exception):
    """Delivering one notification failed; it is marked failed and retried."""


@dataclass
class ProcessResult:
    """What one alerts_process run did (ids)."""

    skipped: bool = False
    opened: list[int] = field(default_factory=list)
    reopened: list[int] = field(default_factory=list)
    resolved: list[int] = field(default_factory=list)
    merged: list[int] = field(default_factory=list)
    notifications: list[int] = field(default_factory=list)
    redispatched: list[int] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"skipped": self.skipped, "opened": self.opened, "reopened": self.reopened, "resolved": self.resolved,
                "merged": self.merged, "notifications": len(self.notifications),
                "redispatched": len(self.redispatched)}


def _lock(*, wait: bool) -> bool:
    """One processing run at a time (transaction-scoped advisory lock)."""
    with connection.cursor() as cursor:
        if wait:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [PROCESS_LOCK_KEY])
            return True
        cursor.execute("SELECT pg_try_advisory_xact_lock(%s)", [PROCESS_LOCK_KEY])
        return bool(cursor.fetchone()[0])


_REFRESHED_FIELDS = ("cleared_at", "root_finding", "onset", "severity", "code", "subject_text", "title", "sites",
                     "paths", "elements", "carriers", "changed_at", "muted", "mute_reason", "muted_keys")


def _snapshot(incident: Incident) -> tuple:
    return tuple(getattr(incident, "root_finding_id" if f == "root_finding" else f) for f in _REFRESHED_FIELDS)


def _event(incident: Incident, kind: str, now: datetime, note: str = "", data: dict | None = None, user=None) -> None:
    IncidentEvent.objects.create(incident=incident, time=now, kind=kind, note=note, data=data or {}, user=user)


class _Run:
    """The state of one alerts_process run (see the module docstring for the steps)."""

    def __init__(self, *, now: datetime, flush: bool, cfg: AlertSettings):
        self.now = now
        self.flush = flush
        self.cfg = cfg
        self.timers = Timers(cfg.group_wait_s, cfg.group_interval_s, cfg.repeat_interval_s)
        self.result = ProcessResult()
        self._topology: TopologyIndex | None = None
        self.silences = silence_list_active(at=now)
        self.silences_in_use: dict[int, list[Incident]] = {}
        # Back after a resolved notice and not told yet: {incident id: (resolved at, back at)}.
        self.returned: dict[int, tuple[datetime, datetime]] = {}

    @property
    def topology(self) -> TopologyIndex:
        if self._topology is None:
            self._topology = topology_index_build(at=self.now)
        return self._topology

    # --- 1 + 2: grouping and incidents ------------------------------------------------------------------------

    def run(self) -> None:
        facts = finding_facts_list(at=self.now)
        by_id = {f.id: f for f in facts}
        groups = group_findings(facts, site_min_paths=self.cfg.site_incident_min_paths)
        active = {i.key: i for i in Incident.objects.select_for_update().filter(status__in=ACTIVE_INCIDENT_STATUSES)}
        previously_muted = {k for i in active.values() for k in (i.muted_keys or [])}
        moved_to: dict[int, int] = {}
        touched: set[int] = set()
        due: list[tuple[Incident, list[FindingFacts], frozenset[str], frozenset[str]]] = []
        for group in groups:
            members = [by_id[i] for i in group.roles]
            incident = active.get(group.key) or self._reopen(group) or self._open(group, members)
            active[group.key] = incident
            touched.add(incident.id)
            moved_to.update(self._sync_members(incident, group))
            visible, unmuted = self._refresh(incident, group, members, previously_muted)
            due.append((incident, members, visible, unmuted))
        # Merged and cleared incidents first, so that an e-mail can name the incidents it supersedes.
        for incident in active.values():
            if incident.id not in touched:
                self._close(incident, moved_to)
        for incident, members, visible, unmuted in due:
            self._decide(incident, members, visible, unmuted)
        self._remind_silences()

    def _open(self, group: Group, members: list[FindingFacts]) -> Incident:
        head = headline(group, members)
        incident = Incident.objects.create(
            key=group.key, kind=group.kind, status=IncidentStatus.OPEN, severity=head.severity, code=head.code,
            subject_text=head.subject_text, title=head.title, onset=head.onset, opened_at=self.now,
            changed_at=self.now,
        )
        _event(incident, IncidentEventKind.OPENED, self.now, head.title)
        self.result.opened.append(incident.id)
        return incident

    def _reopen(self, group: Group) -> Incident | None:
        """The resolved incident of a finding the diagnosis reopened: reopened too, not announced as new; if its
        resolution was e-mailed, ``_decide`` e-mails once that it returned. Its next resolve hold is longer."""
        if incident := incident_resolved_holding(key=group.key, finding_ids=list(group.roles), at=self.now):
            if incident_resolution_notified(incident=incident):
                self.returned[incident.id] = (incident.resolved_at, self.now)
            incident.reopen_count += 1
            _event(incident, IncidentEventKind.REOPENED, self.now, "a finding came back soon after the resolution",
                   {"reopen_count": incident.reopen_count, "resolved_at": incident.resolved_at.isoformat()})
            incident.status, incident.resolved_at, incident.cleared_at = IncidentStatus.OPEN, None, None
            incident.save(update_fields=["status", "resolved_at", "cleared_at", "reopen_count"])
            self.result.reopened.append(incident.id)
        return incident

    def _sync_members(self, incident: Incident, group: Group) -> dict[int, int]:
        """Make the incident's members the group's findings; returns {old incident id: this id} for moved ones."""
        existing = {m.finding_id: m for m in incident.members.all()}
        moved: dict[int, int] = {}
        for finding_id, role in group.roles.items():
            member = existing.get(finding_id)
            if member is None:
                others = IncidentMember.objects.filter(
                    finding_id=finding_id, incident__status__in=ACTIVE_INCIDENT_STATUSES
                ).exclude(incident=incident)
                for old_incident_id in others.values_list("incident_id", flat=True):
                    moved[old_incident_id] = incident.id
                others.delete()
                IncidentMember.objects.create(incident=incident, finding_id=finding_id, role=role, added_at=self.now)
            elif member.role != role:
                member.role = role
                member.save(update_fields=["role"])
        return moved

    def _refresh(
        self, incident: Incident, group: Group, members: list[FindingFacts], previously_muted: set
    ) -> tuple[frozenset[str], frozenset[str]]:
        """Headline, places and mutes of an incident from its group; returns the keys of the paging findings
        nobody mutes, and those of them that were muted at the previous run."""
        head = headline(group, members)
        before = _snapshot(incident)
        if incident.cleared_at is not None:
            _event(incident, IncidentEventKind.RECURRED, self.now, "a finding recurred during the resolve hold")
            incident.cleared_at = None
        changed = (incident.severity, incident.title) != (head.severity, head.title)
        incident.root_finding_id = group.root_id
        # An onset only moves earlier: a member that joins later began later, or was found late.
        incident.onset = min(filter(None, (incident.onset, head.onset)), default=None)
        incident.severity, incident.code = head.severity, head.code
        incident.subject_text, incident.title = head.subject_text, head.title
        incident.sites, incident.paths, incident.elements = list(head.sites), list(head.paths), list(head.elements)
        incident.carriers = sorted(self.topology.carriers_of(paths=head.paths, elements=head.elements))
        if changed and incident.id not in self.result.opened:
            incident.changed_at = self.now
            _event(incident, IncidentEventKind.CHANGED, self.now, head.title,
                   {"findings": sorted(f.key for f in members), "severity": head.severity})

        muted_keys, reasons = self._mutes(incident, group, members)
        # Unconfirmed findings wait for the next cycle: an e-mail never carries figures of a route no longer in force.
        paging = [f for f in members if f.severity_rank >= self.cfg.min_severity_rank and not f.unconfirmed]
        visible = frozenset(f.key for f in paging) - muted_keys
        was_muted = incident.muted
        incident.muted = bool(muted_keys) and not visible
        incident.mute_reason = "; ".join(reasons)[:500]
        incident.muted_keys = sorted(muted_keys)
        if incident.muted and not was_muted:
            _event(incident, IncidentEventKind.MUTED, self.now, incident.mute_reason)
        elif was_muted and not incident.muted:
            _event(incident, IncidentEventKind.UNMUTED, self.now, "no silence or maintenance mutes it any more")
        if _snapshot(incident) != before:  # most runs change nothing: no row rewritten every few seconds
            incident.save(update_fields=list(_REFRESHED_FIELDS))
        return visible, visible & previously_muted

    def _decide(self, incident: Incident, members: list[FindingFacts], visible: frozenset[str],
                unmuted: frozenset[str]) -> None:
        """Apply the timers; write the notifications the incident needs now."""
        if visible and incident.id not in self.returned and self._told_resolved(incident):
            # It came back muted (or below the paging severity): whoever read "resolved" hears now that it is back.
            self.returned[incident.id] = incident_last_return(incident=incident)
        paging = [f for f in members if f.key in visible]
        severity = max((f.severity for f in paging), key=codes.SEVERITY_ORDER.get, default=codes.INFO)
        state = NotifyState(
            opened_at=incident.opened_at,
            last_notified_at=incident.last_notified_at,
            last_notified_keys=frozenset(incident.last_notified_keys or []),
            last_notified_severity=incident.last_notified_severity or None,
            acknowledged=incident.status == IncidentStatus.ACKNOWLEDGED,
            returned=incident.id in self.returned,
        )
        kind = notification_due(state, visible_keys=visible, severity=severity, unmuted_keys=unmuted,
                                now=self.now, timers=self.timers, flush=self.flush)
        if kind is None:
            return
        note = ""
        if kind == NotificationKind.FIRING and unmuted:
            note = "The silence or maintenance window that muted this has ended and the problem persists."
        elif kind == NotificationKind.UPDATE:
            new = sorted(visible - state.last_notified_keys)
            note = "New since the last e-mail: " + ", ".join(k.replace("|", " ") for k in new) if new else (
                f"Severity raised to {severity}.")
        elif kind == NotificationKind.REPEAT:
            note = f"Still open since {format_utc(incident.opened_at, self.now)} and not acknowledged."
        elif kind == NotificationKind.RETURNED:
            resolved_at, back_at = self.returned[incident.id]
            hold_s = resolve_hold_s(base_s=self.cfg.resolve_hold_s, reopened=incident.reopen_count)
            note = (f"The problem is back {text.duration((back_at - resolved_at).total_seconds())} after it was "
                    f"reported resolved ({format_utc(resolved_at, self.now)})")
            if back_at < self.now:
                note += "; a silence or maintenance window muted it until now" if unmuted else "; it pages only now"
            note += f". It will be reported resolved again only {text.duration(hold_s)} after its findings clear."
        operator = self._operator(incident, members)
        recipients = recipient_list_for_incident(
            sites=incident.sites, carriers=incident.carriers, codes_={f.code for f in members},
            severity=severity, cfg=self.cfg, operator=operator,
        )
        if kind == NotificationKind.RETURNED:  # everyone told it was resolved hears that it is back
            routed = {r.email.lower() for r in recipients}
            told = [r for r in recipient_list_notified(incident=incident) if r.email.lower() not in routed]
            recipients = told + recipients
        self._notify(incident, kind, recipients, note, operator=operator)
        incident.last_notified_at = self.now
        incident.last_notified_keys = sorted(visible)
        incident.last_notified_severity = severity
        incident.save(update_fields=["notify_seq", "last_notified_at", "last_notified_keys", "last_notified_severity"])

    def _operator(self, incident: Incident, members: list[FindingFacts]) -> Operator | None:
        """The operator of an element incident's root element (with the suspect port's circuits)."""
        if incident.kind != IncidentKind.ELEMENT or not incident.elements:
            return None
        root = next((f for f in members if f.id == incident.root_finding_id), None)
        element = root.element if root is not None and root.element else incident.elements[0]
        interface = root.subject.get("interface") if root is not None else None
        return operator_of_element(element=element, interface=interface, paths=incident.paths, at=self.now)

    def _mutes(self, incident: Incident, group: Group, members: list[FindingFacts]) -> tuple[frozenset[str], list]:
        """Which member findings are muted, and why: maintenance inhibition first, then silences."""
        if group.kind == IncidentKind.MAINTENANCE:
            return frozenset(f.key for f in members), [f"inhibited by maintenance {group.key.split(':', 1)[1]}"]
        if group.kind == IncidentKind.ELEMENT:
            windows = maintenance_inhibiting(elements=incident.elements[:1], at=self.now)
            if windows:
                refs = ", ".join(f"{w.reference} on {', '.join(w.elements)}" for w in windows)
                return frozenset(f.key for f in members), [f"inhibited by maintenance {refs}"]
        muted: set[str] = set()
        by_silence: dict[int, Silence] = {}
        for f in members:
            for silence in self.silences:
                if silence_matches(silence.matchers, f, incident_elements=incident.elements[:1]):
                    muted.add(f.key)
                    by_silence[silence.id] = silence
        for silence in by_silence.values():
            self.silences_in_use.setdefault(silence.id, []).append(incident)
        reasons = [
            f"silence #{s.id} by {s.author.get_username() if s.author else 'unknown'} until "
            f"{s.end_time():%Y-%m-%d %H:%M} UTC: {s.comment}"
            for s in by_silence.values()
        ]
        return frozenset(muted), reasons

    def _close(self, incident: Incident, moved_to: dict[int, int]) -> None:
        """An incident no active finding belongs to: merged (its findings moved) or cleared -> resolved."""
        if incident.id in moved_to:
            incident.status = IncidentStatus.RESOLVED
            incident.resolved_at = self.now
            incident.merged_into_id = moved_to[incident.id]
            incident.save(update_fields=["status", "resolved_at", "merged_into"])
            _event(incident, IncidentEventKind.MERGED, self.now, f"findings now in incident #{moved_to[incident.id]}")
            self.result.merged.append(incident.id)
            return
        hold_s = resolve_hold_s(base_s=self.cfg.resolve_hold_s, reopened=incident.reopen_count)
        if incident.cleared_at is None:
            incident.cleared_at = self.now
            incident.save(update_fields=["cleared_at"])
            _event(incident, IncidentEventKind.CLEARED, self.now, "every finding cleared", {"hold_s": hold_s})
        if not resolve_due(cleared_at=incident.cleared_at, now=self.now, hold_s=hold_s, flush=self.flush):
            return
        incident.status = IncidentStatus.RESOLVED
        incident.resolved_at = self.now
        incident.save(update_fields=["status", "resolved_at"])
        # Its return was never e-mailed: for its recipients it is still resolved, a second notice would say so twice.
        told_resolved = self._told_resolved(incident)
        _event(incident, IncidentEventKind.RESOLVED, self.now, "the evidence cleared" + (
            "; no resolved e-mail: its last e-mail already said it was resolved" if told_resolved else ""))
        self.result.resolved.append(incident.id)
        if told_resolved or not self.cfg.send_resolved or (incident.muted and not self.cfg.send_resolved_when_muted):
            return
        recipients = recipient_list_notified(incident=incident)
        if recipients:
            note = f"All findings of this incident cleared; it lasted {text.duration(self._age(incident))}."
            if incident.reopen_count:
                note += (f" It had come back {incident.reopen_count} time(s): resolved {text.duration(hold_s)} after "
                         "its findings cleared.")
            self._notify(incident, NotificationKind.RESOLVED, recipients, note)
            incident.save(update_fields=["notify_seq"])

    @staticmethod
    def _told_resolved(incident: Incident) -> bool:
        """Whether the last e-mail about this (reopened) incident said it was resolved: it came back, and its
        return has not been e-mailed (muted, or below the paging severity)."""
        return bool(incident.reopen_count) and incident_resolution_notified(incident=incident)

    def _age(self, incident: Incident) -> float:
        return ((incident.resolved_at or self.now) - incident.opened_at).total_seconds()

    # --- 4: notifications ---------------------------------------------------------------------------------------

    def _notify(self, incident: Incident, kind: str, recipients: list[Recipient], note: str,
                operator: Operator | None = None) -> None:
        incident.notify_seq += 1
        seq = incident.notify_seq
        if not recipients:
            _event(incident, IncidentEventKind.NOTIFIED, self.now,
                   "nobody to notify: add NOC contacts to the sites, a routing rule or ALERTS_DEFAULT_RECIPIENTS",
                   {"kind": kind, "sequence": seq, "recipients": []})
            return
        members = list(incident.members.select_related("finding").order_by("id"))
        windows = maintenance_list_touching(
            equipment=self.topology.equipment_of(paths=incident.paths, elements=incident.elements),
            sites=incident.sites,
            start=self.now - MAINTENANCE_CONTEXT_BEFORE,
            end=self.now + MAINTENANCE_CONTEXT_AFTER,
        )
        context = emails.incident_mail_context(incident=incident, kind=kind, now=self.now, members=members,
                                               windows=windows, note=note, operator=operator)
        # a carrier's NOC cannot open the internal pages: its copy links to the evidence scoped to it
        shared = carrier_links(incident, [r.email for r in recipients], self.now)
        rows = []
        for recipient in recipients:
            subject, body_text, body_html = emails.render_incident_mail(context, recipient,
                                                                        shared=shared.get(recipient.email.lower()))
            rows.append(Notification(
                incident=incident, kind=kind, sequence=seq, recipient=recipient.email, reason=recipient.reason[:300],
                subject=subject, body_text=body_text, body_html=body_html, created_at=self.now,
                message_id=emails.message_id_for(incident_id=incident.id, silence_id=None, kind=kind, sequence=seq,
                                                 recipient=recipient.email),
            ))
        Notification.objects.bulk_create(rows, ignore_conflicts=True)
        hooks.notes_mailed(incident=incident, note_ids=[n["id"] for n in context["notes"]], now=self.now)
        ids = list(Notification.objects.filter(incident=incident, kind=kind, sequence=seq,
                                               status=NotificationStatus.PENDING).values_list("id", flat=True))
        self.result.notifications.extend(ids)
        _event(incident, IncidentEventKind.NOTIFIED, self.now, note,
               {"kind": kind, "sequence": seq, "recipients": [r.email for r in recipients]})

    # --- 5: silence reminders -------------------------------------------------------------------------------

    def _remind_silences(self) -> None:
        lead = timedelta(seconds=self.cfg.silence_reminder_s)
        for silence in self.silences:
            muted = self.silences_in_use.get(silence.id)
            if (not muted or silence.reminded_at or silence.expired_at
                    or silence.ends_at - silence.starts_at <= lead or silence.ends_at - self.now > lead):
                continue
            if silence.author and silence.author.email:
                recipients = [Recipient(silence.author.email, "author of the silence")]
            else:
                recipients = [Recipient(e, "ALERTS_DEFAULT_RECIPIENTS") for e in self.cfg.default_recipients]
            rows = []
            for recipient in recipients:
                subject, body_text, body_html = emails.render_silence_reminder(
                    silence=silence, now=self.now, muted=muted, recipient=recipient)
                rows.append(Notification(
                    silence=silence, kind=NotificationKind.SILENCE_REMINDER, recipient=recipient.email,
                    reason=recipient.reason, subject=subject, body_text=body_text, body_html=body_html,
                    created_at=self.now,
                    message_id=emails.message_id_for(incident_id=None, silence_id=silence.id,
                                                     kind=NotificationKind.SILENCE_REMINDER, sequence=0,
                                                     recipient=recipient.email),
                ))
            Notification.objects.bulk_create(rows, ignore_conflicts=True)
            Silence.objects.filter(pk=silence.pk).update(reminded_at=self.now)
            self.result.notifications.extend(Notification.objects.filter(
                silence=silence, kind=NotificationKind.SILENCE_REMINDER, status=NotificationStatus.PENDING,
            ).values_list("id", flat=True))


def _redispatch_candidates(cfg: AlertSettings) -> list[int]:
    """Notifications never sent although they should have been by now (lost task, worker killed, SMTP down)."""
    stale_before = timezone.now() - timedelta(seconds=cfg.redispatch_after_s)
    qs = Notification.objects.select_for_update(skip_locked=True).filter(
        status__in=[NotificationStatus.PENDING, NotificationStatus.FAILED], dispatched_at__lte=stale_before
    )
    abandoned = qs.filter(attempts__gte=SEND_MAX_ATTEMPTS)
    abandoned.update(status=NotificationStatus.ABANDONED)
    return list(qs.filter(attempts__lt=SEND_MAX_ATTEMPTS).values_list("id", flat=True))


def _enqueue(ids: list[int], queue: str | None) -> None:
    # By name: the tasks module imports this one, and a service must not import its tasks back.
    for notification_id in ids:
        current_app.send_task(SEND_TASK_NAME, args=(notification_id,), queue=queue)


def alerts_process(*, now: datetime, flush: bool = False, dispatch: bool = True) -> ProcessResult:
    """One run of the pipeline as of ``now`` (see the module docstring).

    ``flush`` treats group_wait, group_interval and the resolve hold as elapsed (replay, tests) and waits for
    the lock instead of skipping the run when another one holds it. With ``dispatch`` the new and stale
    notifications are enqueued for Celery once the transaction commits.
    """
    cfg = alert_settings()
    with transaction.atomic():
        if not _lock(wait=flush):
            return ProcessResult(skipped=True)
        run = _Run(now=now, flush=flush, cfg=cfg)
        run.run()
        result = run.result
        if dispatch:
            result.redispatched = [i for i in _redispatch_candidates(cfg) if i not in result.notifications]
            to_send = result.notifications + result.redispatched
        else:
            to_send = result.notifications
        Notification.objects.filter(pk__in=to_send).update(dispatched_at=timezone.now())
        if dispatch and to_send:
            transaction.on_commit(lambda: _enqueue(to_send, cfg.celery_queue))
    return result


def alerts_process_now(*, now: datetime, flush: bool = True) -> ProcessResult:
    """The synchronous path (``replay --notify``): process and send at once. With ``flush`` the timers count as
    elapsed; without, they run in the caller's time (a replay that steps through a scenario minute by minute
    waits group_wait and group_interval as production does).

    A notification that cannot be sent stays failed in the sent-log; the beat's run retries it.
    """
    result = alerts_process(now=now, flush=flush, dispatch=False)
    for notification_id in result.notifications:
        try:
            notification_send(notification_id=notification_id)
        except NotificationSendError as exc:
            logger.warning("alert e-mail not sent", extra={"notification": notification_id, "error": str(exc)})
    return result


def notification_send(*, notification_id: int) -> str:
    """Send one notification unless it is sent already or another worker is sending it.

    Returns ``sent`` (now or before), ``busy`` (locked by another sender: try again later), ``abandoned``
    or ``missing``. Raises NotificationSendError after recording a failed attempt.
    """
    error: Exception | None = None
    with transaction.atomic():
        notification = Notification.objects.select_for_update(skip_locked=True).filter(pk=notification_id).first()
        if notification is None:
            return BUSY if Notification.objects.filter(pk=notification_id).exists() else MISSING
        if notification.status in (NotificationStatus.SENT, NotificationStatus.ABANDONED):
            return notification.status
        notification.attempts += 1
        try:
            emails.message_build(notification).send(fail_silently=False)
        except (smtplib.SMTPException, OSError) as exc:
            error = exc
            last_try = notification.attempts >= SEND_MAX_ATTEMPTS
            notification.status = NotificationStatus.ABANDONED if last_try else NotificationStatus.FAILED
            notification.last_error = f"{type(exc).__name__}: {exc}"[:2000]
        else:
            notification.status = NotificationStatus.SENT
            notification.sent_at = timezone.now()
            notification.last_error = ""
        notification.save(update_fields=["status", "attempts", "sent_at", "last_error"])
    if error is not None:
        raise NotificationSendError(f"notification {notification_id}: {error}") from error
    return SENT


# --- operator actions --------------------------------------------------------------------------------------------


def incident_acknowledge(*, incident: Incident, user, note: str = "", now: datetime) -> Incident:
    """An operator takes the incident in hand: no more repeat e-mails (updates and the resolved notice still go
    out); its open findings are acknowledged with it."""
    with transaction.atomic():
        incident = lifecycle_acknowledge(incident, user=user, now=now)
        _event(incident, IncidentEventKind.ACKNOWLEDGED, now, note, user=user)
        for member in incident.members.select_related("finding").filter(finding__status=FindingStatus.OPEN):
            finding_acknowledge(finding=member.finding, user=user, note=f"with incident #{incident.id}: {note}".strip(),
                                now=now)
    return incident
