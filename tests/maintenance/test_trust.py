"""A forged notice cannot silence a real outage: windows from an untrusted source are held for an operator's
review, act on nothing while held (diagnosis, alert inhibition, path matching, skipped tests, feeds, notices),
and act once accepted."""

from __future__ import annotations

import mailbox
from datetime import timedelta
from email.message import EmailMessage

import pytest
from django.utils import timezone

from tests.maintenance.conftest import CARRIERS
from wanmon.alerts.selectors import maintenance_inhibiting
from wanmon.diagnosis.selectors import maintenance_windows_overlapping
from wanmon.inventory.models import Carrier
from wanmon.maintenance.choices import EventKind, Review, Source
from wanmon.maintenance.imports import carrier_notice_import, maintenance_import_maildir
from wanmon.maintenance.models import MaintenanceSource, MaintenanceWindow
from wanmon.maintenance.selectors import (
    maintenance_matches_for_element,
    maintenance_paths_skipped,
    maintenance_windows_affecting_path,
)
from wanmon.maintenance.services import feed_token_create
from wanmon.maintenance.trust import authentication_results_parse, email_trust

pytestmark = pytest.mark.django_db


def _ics(*, uid: str, sequence: int, start, end, reference: str = "GEANT-CHG-9") -> bytes:
    fmt = "%Y%m%dT%H%M%SZ"
    return (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//GEANT//maint//EN\r\nBEGIN:VEVENT\r\n"
        f"UID:{uid}\r\nSEQUENCE:{sequence}\r\nDTSTAMP:{timezone.now().strftime(fmt)}\r\n"
        f"DTSTART:{start.strftime(fmt)}\r\nDTEND:{end.strftime(fmt)}\r\nSUMMARY:Router upgrade\r\n"
        f"X-MAINTNOTE-PROVIDER:geant.example\r\nX-MAINTNOTE-ACCOUNT:CERN\r\nX-MAINTNOTE-MAINTENANCE-ID:{reference}\r\n"
        "X-MAINTNOTE-OBJECT-ID:geant-ams\r\nX-MAINTNOTE-IMPACT:OUTAGE\r\nX-MAINTNOTE-STATUS:CONFIRMED\r\n"
        "END:VEVENT\r\nEND:VCALENDAR\r\n"
    ).encode()


def mail(*, sender: str = "noc@geant.example", auth: list[str] = (), sequence: int = 1, hours=(-1, 2),
         uid: str = "chg-9@geant.example") -> bytes:
    now = timezone.now().replace(microsecond=0)
    msg = EmailMessage()
    for header in auth:  # the receiving MTA's header comes first (topmost)
        msg["Authentication-Results"] = header
    msg["From"] = sender
    msg["To"] = "noc@cern.example"
    msg["Subject"] = "Planned work GEANT-CHG-9"
    msg["Message-ID"] = f"<{uid}.{sequence}.{'-'.join(auth)}@mail>"
    msg.set_content("Please find the maintenance attached.")
    msg.add_attachment(_ics(uid=uid, sequence=sequence, start=now + timedelta(hours=hours[0]),
                            end=now + timedelta(hours=hours[1])), maintype="text", subtype="calendar",
                       filename="maintenance.ics")
    return msg.as_bytes()


def act(window: MaintenanceWindow) -> dict[str, bool]:
    """Whether the window acts anywhere wanmon mutes or explains, now."""
    now = timezone.now()
    window.refresh_from_db()
    window.behaviour = "skip"
    window.save(update_fields=["behaviour"])
    paths = maintenance_windows_affecting_path("CERN->SARA", now - timedelta(minutes=5), now + timedelta(minutes=5))
    element = maintenance_matches_for_element("geant-ams", now)
    return {
        "path_mutes": any(m.mutes for m in paths),
        "element_mutes": any(m.mutes for m in element),
        "diagnosis": any(w.reference == window.reference for w in maintenance_windows_overlapping(
            now - timedelta(hours=6), now)),
        "alerts_inhibit": any(w.reference == window.reference
                              for w in maintenance_inhibiting(elements=["geant-ams"], at=now)),
        "tests_skipped": "CERN->SARA" in maintenance_paths_skipped(now),
    }


NOTHING = dict.fromkeys(("path_mutes", "element_mutes", "diagnosis", "alerts_inhibit", "tests_skipped"), False)
EVERYWHERE = dict.fromkeys(NOTHING, True)


def test_a_forged_mail_is_held_and_mutes_nothing_until_accepted(topology, tmp_path, client, operator):
    # given a message claiming to be GEANT's, in the mailbox fetchmail fills, and no source lists the sender
    box = mailbox.Maildir(tmp_path / "mail", create=True)
    box.add(mail(sender="noc@geant.example"))
    report = maintenance_import_maildir(directory=tmp_path / "mail")
    (n,) = report.notices
    assert n.carrier == "GEANT"  # guessed from the names in the notice ...
    assert (n.trusted, n.trust) == (False, "sender noc@geant.example is on no carrier's sender list")
    assert report.totals()["held"] == 1
    window = MaintenanceWindow.objects.get()
    assert (window.review, window.review_note) == (Review.HELD, n.trust)
    # ... but the window explains and mutes nothing, anywhere
    assert act(window) == NOTHING
    _, secret = feed_token_create(name="noc")
    assert b"GEANT-CHG-9" not in client.get(f"/maintenance/feeds/{secret}/all.ics").content
    assert window.events.filter(kind=EventKind.HELD).count() == 1

    # when an operator accepts it on the review page (the calendar marks it held until then)
    client.force_login(operator)
    assert "(held for review)" in client.get("/maintenance/?view=week").content.decode()
    page = client.get("/maintenance/review/").content.decode()
    assert "GEANT-CHG-9" in page and "on no carrier&#x27;s sender list" in page and 'value="accept"' in page
    r = client.post(f"/maintenance/{window.pk}/review/", {"decision": "accept", "note": "checked with GEANT"})
    assert r.status_code == 302
    # then it acts everywhere
    assert act(window) == EVERYWHERE
    window.refresh_from_db()
    assert (window.review, window.reviewed_by) == (Review.ACCEPTED, operator)
    assert b"GEANT-CHG-9" in client.get(f"/maintenance/feeds/{secret}/all.ics").content
    assert "Nothing waits for review." in client.get("/maintenance/review/").content.decode()


@pytest.fixture
def geant_source(topology):
    return MaintenanceSource.objects.create(carrier=Carrier.objects.get(code="GEANT"), senders=["@geant.example"])


MTA = "mx.cern.example"


@pytest.mark.parametrize("auth, trusted, reason", [
    ([], True, "sender noc@geant.example on GEANT's list (no DKIM/SPF results to check)"),
    ([f"{MTA}; dkim=pass header.d=geant.example header.s=k1; spf=pass smtp.mailfrom=geant.example"], True,
     "sender noc@geant.example on GEANT's list, dkim=pass (geant.example)"),
    ([f"{MTA}; dkim=none; spf=pass (sender SPF authorized) smtp.mailfrom=bounce.geant.example"], True,
     "sender noc@geant.example on GEANT's list, spf=pass (bounce.geant.example)"),
    ([f"{MTA}; dkim=fail header.d=geant.example; spf=softfail smtp.mailfrom=geant.example; dmarc=fail"], False,
     "sender noc@geant.example on GEANT's list, but neither DKIM, SPF nor DMARC passed for geant.example "
     "(dkim=fail, spf=softfail, dmarc=fail)"),
    # signed, but by someone else's domain
    ([f"{MTA}; dkim=pass header.d=evil.example; spf=pass smtp.mailfrom=evil.example"], False,
     "sender noc@geant.example on GEANT's list, but neither DKIM, SPF nor DMARC passed for geant.example "
     "(dkim=pass, spf=pass)"),
    # Microsoft 365 writes no authserv-id: its first result is a result, not the server's name
    (["spf=pass (sender IP is 192.0.2.7) smtp.mailfrom=geant.example; dkim=none (message not signed) header.d=none;"
      "dmarc=bestguesspass action=none header.from=geant.example;compauth=pass reason=109"], True,
     "sender noc@geant.example on GEANT's list, spf=pass (geant.example)"),
    (["spf=fail (sender IP is 192.0.2.7) smtp.mailfrom=geant.example; dkim=none (message not signed) header.d=none"],
     False, "sender noc@geant.example on GEANT's list, but neither DKIM, SPF nor DMARC passed for geant.example "
     "(spf=fail, dkim=none)"),
    # the forger's own "pass" header sits below the MTA's: only the topmost counts
    ([f"{MTA}; spf=fail smtp.mailfrom=geant.example", "forged; dkim=pass header.d=geant.example"], False,
     "sender noc@geant.example on GEANT's list, but neither DKIM, SPF nor DMARC passed for geant.example "
     "(spf=fail)"),
])
def test_listed_senders_are_trusted_when_authentication_passes(geant_source, auth, trusted, reason):
    report = carrier_notice_import(raw=mail(auth=auth), source=Source.MAILDIR, origin="mailbox")
    assert (report.trusted, report.trust) == (trusted, reason)
    assert MaintenanceWindow.objects.get().review == (Review.ACCEPTED if trusted else Review.HELD)


def test_authserv_ids_name_the_mta_whose_results_count(geant_source, settings):
    settings.WANMON_MAINTENANCE_AUTHSERV_IDS = [MTA]
    r = carrier_notice_import(raw=mail(auth=["evil.example; dkim=pass header.d=geant.example"]),
                                        source=Source.MAILDIR)
    assert not r.trusted and r.trust.endswith("but no Authentication-Results of the receiving MTA")
    r = carrier_notice_import(raw=mail(auth=[f"{MTA.upper()}; dmarc=pass header.from=geant.example"],
                                                  sequence=2), source=Source.MAILDIR)
    assert r.trusted and r.trust.endswith("dmarc=pass (geant.example)")


def test_a_forged_update_of_a_trusted_window_is_held_again(geant_source):
    # given GEANT's genuine window, accepted
    good = [f"{MTA}; dkim=pass header.d=geant.example"]
    carrier_notice_import(raw=mail(auth=good, sequence=1), source=Source.MAILDIR)
    window = MaintenanceWindow.objects.get()
    assert window.review == Review.ACCEPTED and act(window)["path_mutes"]
    # when a forged update (higher SEQUENCE, failing DKIM) moves it over a coming outage
    bad = [f"{MTA}; dkim=fail header.d=geant.example"]
    r = carrier_notice_import(raw=mail(auth=bad, sequence=2, hours=(-3, 5)), source=Source.MAILDIR)
    assert r.windows[0].action == "updated" and r.windows[0].review == Review.HELD
    # then the changed window mutes nothing until reviewed
    assert act(window) == NOTHING
    # and GEANT's next genuine update makes it act again
    carrier_notice_import(raw=mail(auth=good, sequence=3), source=Source.MAILDIR)
    assert act(window) == EVERYWHERE


def test_calendar_files_in_a_mailbox_are_held_but_an_operators_upload_is_not(topology, tmp_path, api_operator):
    (tmp_path / "drop").mkdir()
    now = timezone.now()
    (tmp_path / "drop" / "work.ics").write_bytes(_ics(uid="u1", sequence=1, start=now, end=now + timedelta(hours=1)))
    (n,) = maintenance_import_maildir(directory=tmp_path / "drop").notices
    assert (n.trusted, n.trust) == (False, "a calendar from no carrier's source URL")
    other = _ics(uid="u2", sequence=1, start=now, end=now + timedelta(hours=1), reference="GEANT-CHG-10")
    (tmp_path / "up.ics").write_bytes(other)
    with open(tmp_path / "up.ics", "rb") as fh:
        r = api_operator.post("/api/v1/maintenance/imports/file", {"file": fh})
    assert r.status_code == 200
    (n,) = r.json()["notices"]
    assert (n["trusted"], n["trust"], n["windows"][0]["review"]) == (True, "imported by op", "accepted")


def test_review_is_for_operators_page_api_and_admin(topology, tmp_path, api_operator, api_viewer, client, viewer,
                                                    django_user_model):
    box = mailbox.Maildir(tmp_path / "mail", create=True)
    box.add(mail())
    maintenance_import_maildir(directory=tmp_path / "mail")
    window = MaintenanceWindow.objects.get()
    # viewers see the queue but cannot decide
    client.force_login(viewer)
    page = client.get("/maintenance/review/").content.decode()
    assert "GEANT-CHG-9" in page and 'value="accept"' not in page
    assert client.post(f"/maintenance/{window.pk}/review/", {"decision": "accept"}).status_code == 403
    assert api_viewer.post(f"/api/v1/maintenance/windows/{window.pk}/review", {"decision": "accept"},
                           format="json").status_code == 403
    assert api_viewer.get(f"/api/v1/maintenance/windows/{window.pk}").json()["review"] == "held"
    # operators reject through the API ...
    r = api_operator.post(f"/api/v1/maintenance/windows/{window.pk}/review", {"decision": "maybe"}, format="json")
    assert r.status_code == 400 and "decision" in r.json()
    r = api_operator.post(f"/api/v1/maintenance/windows/{window.pk}/review", {"decision": "reject", "note": "fake"},
                          format="json")
    assert r.status_code == 200 and r.json()["review"] == "rejected" and act(window) == NOTHING
    # ... and accept through the admin's action
    staff = django_user_model.objects.create_user("admin", is_staff=True, is_superuser=True)
    client.force_login(staff)
    r = client.post("/admin/maintenance/maintenancewindow/",
                    {"action": "accept_windows", "_selected_action": [window.pk]})
    assert r.status_code == 302
    window.refresh_from_db()
    assert window.review == Review.ACCEPTED and window.reviewed_by == staff


def test_email_trust_without_a_listed_sender():
    verdict = email_trust(sender="", carrier_code=None, authentication_results=["mx; dkim=pass header.d=x.example"])
    assert verdict.trusted is False and verdict.reason == "sender (none) is on no carrier's sender list"


def test_the_carriers_own_mailbox_is_trusted(topology, tmp_path):
    # given GEANT's own mailbox (fetchmail delivers only GEANT's notices there), from any sender
    own = tmp_path / "geant"
    MaintenanceSource.objects.create(carrier=Carrier.objects.get(code="GEANT"), mailbox=str(own))
    box = mailbox.Maildir(own, create=True)
    box.add(mail(sender="planned-works@ticketing.example"))
    (n,) = maintenance_import_maildir(directory=tmp_path / "geant" / ".." / "geant").notices
    assert (n.trusted, n.trust, n.carrier) == (
        True, "mailbox of GEANT's maintenance source (no DKIM/SPF results to check)", "GEANT")
    assert act(MaintenanceWindow.objects.get()) == EVERYWHERE
    # a message there that the MTA found forged is still held
    box.add(mail(sender="planned-works@ticketing.example", sequence=2, hours=(-2, 3),
                 auth=[f"{MTA}; dkim=fail header.d=ticketing.example; spf=fail smtp.mailfrom=ticketing.example"]))
    report = maintenance_import_maildir(directory=own)
    (held,) = [n for n in report.notices if not n.duplicate]
    assert not held.trusted and held.trust.startswith("mailbox of GEANT's maintenance source, but neither DKIM")
    assert act(MaintenanceWindow.objects.get()) == NOTHING
    # and another directory is not the carrier's mailbox
    other = mailbox.Maildir(tmp_path / "other", create=True)
    other.add(mail(sender="planned-works@ticketing.example", uid="other@x", sequence=1))
    (n,) = maintenance_import_maildir(directory=tmp_path / "other").notices
    assert not n.trusted and "on no carrier's sender list" in n.trust


@pytest.mark.parametrize("value, expected", [
    # RFC 8601 appendix B
    ("example.com; none", ("example.com", [])),
    ("example.com; spf=pass smtp.mailfrom=example.net",
     ("example.com", [("spf", "pass", {"smtp.mailfrom": "example.net"})])),
    ("example.com 1; auth=pass (cram-md5) smtp.auth=sender@example.net; spf=pass smtp.mailfrom=example.net",
     ("example.com", [("auth", "pass", {"smtp.auth": "sender@example.net"}),
                      ("spf", "pass", {"smtp.mailfrom": "example.net"})])),
    ("example.com; sender-id=fail header.from=example.com; dkim=pass (good signature) header.d=example.com",
     ("example.com", [("sender-id", "fail", {"header.from": "example.com"}),
                      ("dkim", "pass", {"header.d": "example.com"})])),
    # white space around '=' and '.', nested comments, a quoted reason holding ';' and '=', a quoted authserv-id
    ('"mx; 1" ; dkim = pass (signed (by key k1)) reason="a; b=c" header . d=Geant.Example',
     ("mx; 1", [("dkim", "pass", {"header.d": "geant.example"})])),
    # Microsoft 365: no authserv-id
    ("spf=pass (sender IP is 11.22.33.244) smtp.mailfrom=cogentco.com; dkim=none (message not signed) header.d=none;"
     "dmarc=bestguesspass action=none header.from=cogentco.com;compauth=pass reason=109",
     ("", [("spf", "pass", {"smtp.mailfrom": "cogentco.com"}), ("dkim", "none", {"header.d": "none"}),
           ("dmarc", "bestguesspass", {"action": "none", "header.from": "cogentco.com"}), ("compauth", "pass", {})])),
])
def test_authentication_results_per_rfc_8601(value, expected):
    serv, results = authentication_results_parse(value)
    assert (serv, [(r.method, r.result, r.properties) for r in results]) == expected


def test_a_real_microsoft_365_header_passes_for_the_listed_sender(topology, tmp_path):
    # Cogent's notice came through Microsoft 365 (SPF pass for cogentco.com): it was held, the SPF result read as
    # the server's name
    MaintenanceSource.objects.create(carrier=Carrier.objects.get(code="COGENT"), parser="cogent",
                                     senders=["@cogentco.com"])
    box = mailbox.Maildir(tmp_path / "mail", create=True)
    box.add((CARRIERS / "cogent3.eml").read_bytes())
    (n,) = maintenance_import_maildir(directory=tmp_path / "mail").notices
    assert (n.trusted, n.trust) == (
        True, "sender Cogent-NoReply@cogentco.com on COGENT's list, spf=pass (cogentco.com)")
    assert [(w.start, w.end, w.review) for w in n.windows] == [
        ("2022-11-04T03:00:00Z", "2022-11-04T10:00:00Z", Review.ACCEPTED)]
