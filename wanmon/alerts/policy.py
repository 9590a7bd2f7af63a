"""Pure alerting policy: silence matching, routing filters and the notification timers.

Timers follow Alertmanager: ``group_wait`` before the first e-mail of an incident, ``group_interval``
between e-mails about changes, ``repeat_interval`` before e-mailing an unchanged open incident
again. Three additions: when a silence or a maintenance window stops muting a finding that is still
active, the incident is e-mailed at once (the mute hid it, so nobody has been told recently); an
acknowledged incident is not repeated, but still updated and resolved; an incident that comes back after
its resolved notice is e-mailed at once as returned, and held longer before its next resolution
(``resolve_hold_s``), so that a flapping problem sends a few e-mails, not a pair every quarter of an hour.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from wanmon.alerts.choices import NotificationKind, SilenceMatcher
from wanmon.alerts.constants import REOPENED_RESOLVE_HOLD_MAX_S, REOPENED_RESOLVE_HOLD_S
from wanmon.alerts.grouping import FindingFacts
from wanmon.diagnosis import codes


def silence_matches(matchers: Mapping[str, str], finding: FindingFacts, *, incident_elements: Collection[str]) -> bool:
    """Whether a silence's matchers all match a finding (in its incident).

    ``code`` is the finding code; ``site`` a path end or the site of a site/host finding; ``path`` the
    direction ``SRC->DST`` (``A<->B``: both directions of the pair); ``equipment`` the finding's equipment
    or the root element of its incident, so that silencing a backbone element silences the paths it
    degrades with it.
    """
    if not matchers:
        return False
    for name, value in matchers.items():
        value = str(value)
        if name == SilenceMatcher.CODE:
            ok = finding.code == value
        elif name == SilenceMatcher.SITE:
            ok = value in finding.sites
        elif name == SilenceMatcher.PATH:
            ok = finding.path is not None and finding.path in _path_directions(value)
        elif name == SilenceMatcher.EQUIPMENT:
            ok = finding.equipment == value or value in incident_elements
        else:
            ok = False
        if not ok:
            return False
    return True


def _path_directions(value: str) -> set[str]:
    value = value.replace(" ", "")
    if "<->" in value:
        a, _, b = value.partition("<->")
        return {f"{a}->{b}", f"{b}->{a}"}
    return {value}


def filter_matches(
    *,
    sites: Collection[str],
    carriers: Collection[str],
    codes_: Collection[str],
    min_severity: str,
    incident_sites: Collection[str],
    incident_carriers: Collection[str],
    incident_codes: Collection[str],
    severity: str,
) -> bool:
    """Routing rules and subscriptions: every non-empty criterion must meet the incident."""
    if codes.SEVERITY_ORDER.get(severity, 0) < codes.SEVERITY_ORDER.get(min_severity, 1):
        return False
    if sites and not set(sites) & set(incident_sites):
        return False
    if carriers and not set(carriers) & set(incident_carriers):
        return False
    return not (codes_ and not set(codes_) & set(incident_codes))


@dataclass(frozen=True)
class NotifyState:
    """What was last e-mailed about an incident; ``returned``: its last e-mail said it was resolved and it is back
    (reopened just now, or its return was muted until now)."""

    opened_at: datetime
    last_notified_at: datetime | None
    last_notified_keys: frozenset[str]
    last_notified_severity: str | None
    acknowledged: bool
    returned: bool = False


@dataclass(frozen=True)
class Timers:
    group_wait_s: float
    group_interval_s: float
    repeat_interval_s: float


def notification_due(
    state: NotifyState,
    *,
    visible_keys: frozenset[str],
    severity: str,
    unmuted_keys: frozenset[str],
    now: datetime,
    timers: Timers,
    flush: bool = False,
) -> str | None:
    """The kind of e-mail an incident needs now, or None.

    ``visible_keys``: the incident's paging findings that no silence or inhibition mutes (empty: nothing to
    say). ``unmuted_keys``: those of them that were muted at the previous run. ``flush`` treats group_wait and
    group_interval as elapsed (replay --notify), never the repeat interval: replaying twice sends nothing new.
    A return is told at once: its findings passed the diagnosis's persistence again, and the people told it was
    resolved are acting on a wrong belief.
    """
    if not visible_keys:
        return None
    if state.returned:
        return NotificationKind.RETURNED
    if visible_keys & unmuted_keys:
        return NotificationKind.FIRING
    if state.last_notified_at is None:
        due = flush or now >= state.opened_at + timedelta(seconds=timers.group_wait_s)
        return NotificationKind.FIRING if due else None
    new_findings = visible_keys - state.last_notified_keys
    escalated = codes.SEVERITY_ORDER.get(severity, 0) > codes.SEVERITY_ORDER.get(state.last_notified_severity or "", 0)
    if new_findings or escalated:
        due = flush or now >= state.last_notified_at + timedelta(seconds=timers.group_interval_s)
        return NotificationKind.UPDATE if due else None
    if state.acknowledged:
        return None
    if now >= state.last_notified_at + timedelta(seconds=timers.repeat_interval_s):
        return NotificationKind.REPEAT
    return None


def resolve_hold_s(*, base_s: float, reopened: int) -> float:
    """How long an incident whose findings all cleared waits before it is resolved: ``base_s``
    (ALERTS_RESOLVE_HOLD_S) until it has been reopened; then REOPENED_RESOLVE_HOLD_S (at least ``base_s``),
    doubled at each further reopen, at most REOPENED_RESOLVE_HOLD_MAX_S (at least ``base_s``)."""
    if reopened <= 0:
        return base_s
    hold_s = max(base_s, REOPENED_RESOLVE_HOLD_S) * 2.0 ** min(reopened - 1, 32)
    return max(base_s, min(hold_s, REOPENED_RESOLVE_HOLD_MAX_S))


def resolve_due(*, cleared_at: datetime, now: datetime, hold_s: float, flush: bool = False) -> bool:
    """An incident whose findings all cleared is resolved after the hold (a recurrence in between cancels it)."""
    return flush or now >= cleared_at + timedelta(seconds=hold_s)


@dataclass(frozen=True)
class Recipient:
    """One address an incident e-mail goes to, and why (the sent-log keeps the reason)."""

    email: str
    reason: str


@dataclass(frozen=True)
class Route:
    """A routing rule or a subscription as plain values: its criteria (``filter_matches``) and its addresses."""

    label: str
    emails: tuple[str, ...]
    sites: tuple[str, ...] = ()
    carriers: tuple[str, ...] = ()
    finding_codes: tuple[str, ...] = ()
    min_severity: str = codes.WARNING
    replace_defaults: bool = False


@dataclass(frozen=True)
class Operator:
    """Who operates an incident's root element: a carrier's NOC, or the NOC of the site that owns it; and the
    carrier's circuit ids on the suspect link, for the ticket it will be asked to open."""

    element: str
    owner: str
    is_carrier: bool
    emails: tuple[str, ...]
    circuits: tuple[str, ...] = ()


def incident_recipients(
    *,
    sites: Collection[str],
    carriers: Collection[str],
    codes_: Collection[str],
    severity: str,
    rules: Sequence[Route],
    subscriptions: Sequence[Route],
    site_nocs: Mapping[str, Sequence[str]],
    operator: Operator | None,
    default_recipients: Sequence[str],
) -> list[Recipient]:
    """Who gets an incident, one entry per address, in this order:

    1. the matching routing rules' recipients;
    2. unless a matching rule replaces them: the NOC contacts of the incident's sites (the ends of the paths that
       cross its root element, which are the only paths it gathers) and the operator of its root element (a
       carrier's NOC address: the one who can fix it; a site's NOC when the site owns the element);
    3. the matching subscriptions;
    4. nobody so far: the default recipients.
    """
    found: dict[str, Recipient] = {}

    def add(email: str, reason: str) -> None:
        email = email.strip()
        if email and email.lower() not in found:
            found[email.lower()] = Recipient(email, reason)

    def matches(route: Route) -> bool:
        return filter_matches(
            sites=route.sites, carriers=route.carriers, codes_=route.finding_codes, min_severity=route.min_severity,
            incident_sites=sites, incident_carriers=carriers, incident_codes=codes_, severity=severity,
        )

    replace_defaults = False
    for rule in rules:
        if matches(rule):
            replace_defaults |= rule.replace_defaults
            for email in rule.emails:
                add(email, rule.label)
    if not replace_defaults:
        for site in sorted(sites):
            for email in site_nocs.get(site, ()):
                add(email, f"NOC contact of {site}")
        if operator is not None:
            what = "carrier" if operator.is_carrier else "site"
            for email in operator.emails:
                add(email, f"operator of {operator.element} ({what} {operator.owner})")
    for sub in subscriptions:
        if matches(sub):
            for email in sub.emails:
                add(email, sub.label)
    if not found:
        for email in default_recipients:
            add(email, "ALERTS_DEFAULT_RECIPIENTS")
    return list(found.values())
