"""Notices to site contacts through a real SMTP server (aiosmtpd on loopback): each sent once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from icalendar import Calendar

from tests.processes import free_port
from wanmon.diagnosis.models import Finding
from wanmon.diagnosis.services import subject_key
from wanmon.inventory.models import Carrier
from wanmon.maintenance.choices import EventKind, SiteNoticeKind
from wanmon.maintenance.models import SiteNotice
from wanmon.maintenance.services import (
    maintenance_window_cancel,
    maintenance_window_create,
    maintenance_window_update,
)
from wanmon.maintenance.site_notices import site_notices_send

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 3, 8, 12, 0, tzinfo=UTC)
SARA_PEOPLE = ["maintenance@cern.example", "maintenance@sara.example"]


def window_on(equipment: str, start: datetime, hours: float = 2, **kw):
    return maintenance_window_create(
        reference=kw.pop("reference", "GEANT-CHG-0042"), carrier=Carrier.objects.get(code="GEANT"), start=start,
        end=start + timedelta(hours=hours), affects=[equipment], summary="Line card swap", **kw
    )


def by_recipient(messages) -> dict[str, list]:
    out: dict[str, list] = {}
    for m in messages:
        for r in m.rcpt_tos:
            out.setdefault(r, []).append(m)
    return out


def test_advance_change_and_cancellation_reach_each_contact_once(topology, smtp):
    window = window_on("geant-ams", NOW + timedelta(hours=30), impact="outage")

    # 30 h before the start, inside the 48 h lead: one advance notice per maintenance contact of CERN and SARA
    report = site_notices_send(now=NOW)
    assert sorted(r for _, _, r in report.sent) == SARA_PEOPLE and report.failed == []
    mails = by_recipient(smtp.all())
    assert sorted(mails) == SARA_PEOPLE and all(len(v) == 1 for v in mails.values())
    mail = mails["maintenance@cern.example"][0]
    assert mail.subject == "[wanmon] Maintenance notice: GEANT GEANT-CHG-0042 (outage) 2026-03-09 18:00-20:00 UTC"
    assert "2026-03-09 18:00 UTC - 2026-03-09 20:00 UTC" in mail.text
    assert "CERN->SARA: outage via geant-ams (expected to degrade; wanmon will not alert)" in mail.text
    assert "https://wanmon.example.org/maintenance/" in mail.text
    assert str(mail.message["Auto-Submitted"]) == "auto-generated"
    (event,) = Calendar.from_ical(mail.attachment("text/calendar")).walk("VEVENT")
    assert str(event["X-MAINTNOTE-MAINTENANCE-ID"]) == "GEANT-CHG-0042"
    assert event["DTSTART"].to_ical() == b"20260309T180000Z"

    # the next runs send nothing more
    smtp.clear()
    assert site_notices_send(now=NOW + timedelta(minutes=1)).sent == []
    assert site_notices_send(now=NOW + timedelta(hours=2)).sent == []
    assert smtp.all() == []

    # the carrier postpones by a day: those told hear of the change, once
    maintenance_window_update(window=window, start=window.start + timedelta(days=1),
                              end=window.end + timedelta(days=1))
    report = site_notices_send(now=NOW + timedelta(hours=3))
    assert sorted(r for k, _, r in report.sent if k == SiteNoticeKind.CHANGED) == SARA_PEOPLE
    assert len(report.sent) == 2
    mail = by_recipient(smtp.all())["maintenance@sara.example"][0]
    assert mail.subject.startswith("[wanmon] Maintenance CHANGED: GEANT GEANT-CHG-0042")
    assert "start: 2026-03-09T18:00:00Z -> 2026-03-10T18:00:00Z" in mail.text
    smtp.clear()
    assert site_notices_send(now=NOW + timedelta(hours=4)).sent == []

    # then cancels it: one cancellation each
    maintenance_window_cancel(window=window, note="carrier cancelled")
    report = site_notices_send(now=NOW + timedelta(hours=5))
    assert sorted((k, r) for k, _, r in report.sent) == [(SiteNoticeKind.CANCELLED, r) for r in SARA_PEOPLE]
    mails = smtp.all()
    assert len(mails) == 2 and all("CANCELLED" in m.subject and "no work will take place" in m.text for m in mails)
    smtp.clear()
    assert site_notices_send(now=NOW + timedelta(hours=6)).sent == []
    assert site_notices_send(now=NOW + timedelta(days=2)).sent == []
    assert smtp.all() == []

    # the sent-log and the audit trail say the same
    assert SiteNotice.objects.filter(sent_at__isnull=False).count() == 6
    assert window.events.filter(kind=EventKind.NOTICE).count() == 3


def test_lead_time_roles_and_late_announcements(topology, smtp, settings):
    settings.WANMON_MAINTENANCE_NOTICE_LEAD_HOURS = 24
    far = window_on("geant-fra", NOW + timedelta(hours=72), reference="GEANT-FAR")
    assert site_notices_send(now=NOW).sent == []  # 72 h ahead: not yet
    # 23 h before: CERN's maintenance contact and FZK's NOC (FZK has no maintenance contact)
    report = site_notices_send(now=far.start - timedelta(hours=23))
    assert sorted(r for _, _, r in report.sent) == ["maintenance@cern.example", "noc@fzk.example"]
    # announced when already running: still told (nobody should be surprised), not after its end
    running = window_on("janet-lon", NOW - timedelta(minutes=30), reference="JANET-NOW")
    assert {r for _, ref, r in site_notices_send(now=NOW).sent if ref == "JANET-NOW"} == {
        "maintenance@cern.example", "maintenance@ral.example"}
    window_on("geant-lon", NOW - timedelta(hours=5), hours=1, reference="GEANT-PAST")
    assert site_notices_send(now=NOW).sent == []
    assert running.site_notices.count() == 2


def test_window_ended_but_path_still_degraded(topology, smtp):
    window = window_on("geant-ams", NOW - timedelta(hours=2), hours=2, impact="degraded")  # ends at NOW
    site_notices_send(now=NOW - timedelta(hours=3))  # the advance notices
    smtp.clear()
    # the diagnosis still sees CERN->SARA degraded at the end of the work; SARA->CERN recovered
    Finding.objects.create(
        code="LOSS_LIMITED", severity="info", status="open", subject={"src": "CERN", "dst": "SARA"},
        subject_key=subject_key({"src": "CERN", "dst": "SARA"}), start=NOW - timedelta(hours=2),
        end=NOW - timedelta(minutes=2), summary="CERN->SARA loss-limited at 150 Mb/s", explained_by=[window.reference],
        first_seen_at=NOW - timedelta(hours=2), last_seen_at=NOW - timedelta(minutes=2),
    )
    Finding.objects.create(
        code="LOSS_LIMITED", severity="info", status="resolved", subject={"src": "SARA", "dst": "CERN"},
        subject_key=subject_key({"src": "SARA", "dst": "CERN"}), start=NOW - timedelta(hours=2),
        end=NOW - timedelta(minutes=40), first_seen_at=NOW - timedelta(hours=2), last_seen_at=NOW,
        resolved_at=NOW,
    )
    # before the end: nothing
    assert site_notices_send(now=NOW - timedelta(minutes=1)).sent == []
    # right after it: the contacts of the still-degraded path's sites, once
    report = site_notices_send(now=NOW + timedelta(minutes=1))
    assert sorted((k, r) for k, _, r in report.sent) == [(SiteNoticeKind.ENDED_DEGRADED, r) for r in SARA_PEOPLE]
    mail = smtp.all()[0]
    assert mail.subject.startswith("[wanmon] Maintenance ended, path still degraded: GEANT GEANT-CHG-0042")
    assert "CERN->SARA:" in mail.text and "LOSS_LIMITED" in mail.text and "SARA->CERN:\n" not in mail.text
    smtp.clear()
    assert site_notices_send(now=NOW + timedelta(minutes=2)).sent == []
    assert smtp.all() == []


def test_smtp_failure_is_retried_next_run_and_sent_once(topology, smtp, settings):
    window_on("geant-ams", NOW + timedelta(hours=1))
    port = settings.EMAIL_PORT
    settings.EMAIL_PORT = free_port()  # nobody listens there
    report = site_notices_send(now=NOW)
    assert report.sent == [] and len(report.failed) == 2
    assert SiteNotice.objects.count() == 0
    settings.EMAIL_PORT = port
    assert len(site_notices_send(now=NOW + timedelta(minutes=1)).sent) == 2
    assert len(smtp.all()) == 2


def test_a_window_whose_reference_holds_a_line_break_is_announced_once(topology, smtp, caplog):
    # Stored before references were kept to one line (or by hand): the header refused it at every run, so the
    # notice failed every minute forever, and its log line carried the break (a forged line).
    window = window_on("geant-ams", NOW + timedelta(hours=30), reference="GEANT-CHG-0043")
    type(window).objects.filter(pk=window.pk).update(reference="GEANT-CHG-0043\nX-Injected: yes\u2028more")
    report = site_notices_send(now=NOW)
    assert report.failed == [] and sorted(r for _, _, r in report.sent) == SARA_PEOPLE
    mail = by_recipient(smtp.all())["maintenance@cern.example"][0]
    assert str(mail.message["X-Wanmon-Maintenance"]) == "GEANT-CHG-0043 X-Injected: yes more"
    assert mail.message["X-Injected"] is None
    smtp.clear()
    assert site_notices_send(now=NOW + timedelta(minutes=1)).sent == [] and smtp.all() == []


@pytest.mark.parametrize("reference", ["CHG-1\nX", "CHG-1\r\nX", "CHG\u20281", "CHG\u00851", "CHG\x0b1"])
def test_a_reference_is_one_line_at_every_entry(topology, api_operator, reference):
    response = api_operator.post("/api/v1/maintenance/windows", {
        "reference": reference, "start": "2026-03-10T00:00:00Z", "end": "2026-03-10T02:00:00Z"}, format="json")
    assert response.status_code == 400, response.content
    assert "must be one line" in str(response.json()["reference"])
