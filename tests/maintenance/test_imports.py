"""Imports into the real database: BCOP update rules (SEQUENCE, DTSTAMP, cancellations), carrier e-mails,
inventory matching, mailboxes and URLs."""

from __future__ import annotations

import http.server
import mailbox
import shutil
import threading
from datetime import UTC, datetime

import pytest

from tests.maintenance.conftest import BCOP, CARRIERS
from wanmon.inventory.models import Carrier, Circuit
from wanmon.maintenance.choices import CarrierNoticeStatus, EventKind, Source, Status
from wanmon.maintenance.imports import (
    carrier_notice_import,
    maintenance_import_file,
    maintenance_import_maildir,
    maintenance_import_url,
    maintenance_sources_poll,
)
from wanmon.maintenance.models import CarrierNotice, MaintenanceSource, MaintenanceWindow
from wanmon.maintenance.services import maintenance_window_create, maintenance_window_rematch

pytestmark = pytest.mark.django_db


def utc(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


def imp(path, **kw):
    (report,) = maintenance_import_file(path=path, **kw).notices
    return report


@pytest.fixture
def example_source(topology):
    """The BCOP examples come from 'example.com': the EXAMPLE carrier announces itself with that name."""
    return MaintenanceSource.objects.create(carrier=Carrier.objects.get(code="EXAMPLE"), provider_names=["example.com"])


def test_bcop_workflow_sequence_rules(example_source):
    # 3.8.1 initial (SEQUENCE 1, tentative, 10 Oct 08:00-10:00 UTC)
    r = imp(BCOP / "1-initial.ics")
    assert (r.status, r.carrier, r.parser) == (CarrierNoticeStatus.PARSED, "EXAMPLE", "bcop-icalendar")
    (w,) = r.windows
    assert w.action == "created" and w.matched == ["circuit:acme-widgets-as-a-service"] and w.unmatched == []
    window = MaintenanceWindow.objects.get()
    assert (window.reference, window.uid, window.sequence, window.status) == ("WorkOrder-31415", "42", 1, "tentative")
    assert (window.start, window.end) == (utc(2015, 10, 10, 8), utc(2015, 10, 10, 10))
    assert window.affects.get().circuit.cid == "acme-widgets-as-a-service"
    assert (window.source, window.parser, window.provider) == (Source.ICAL_FILE, "bcop-icalendar", "example.com")

    # 3.8.2 update with a higher SEQUENCE: moved by two days and confirmed
    r = imp(BCOP / "2-updated.ics")
    assert r.windows[0].action == "updated"
    window.refresh_from_db()
    assert (window.sequence, window.status, window.start) == (2, "confirmed", utc(2015, 10, 12, 8))
    assert window.revision == 1

    # the initial notice re-sent late (lower SEQUENCE): ignored, and the trail says why
    raw = (BCOP / "1-initial.ics").read_bytes().replace(b"SUMMARY:Maint Note Example", b"SUMMARY:re-sent")
    r = carrier_notice_import(raw=raw, source=Source.EMAIL, origin="late copy")
    assert r.windows[0].action == "ignored" and "SEQUENCE 1 is older than the applied 2" in r.windows[0].reason
    window.refresh_from_db()
    assert (window.sequence, window.status, window.start, window.summary) == (
        2, "confirmed", utc(2015, 10, 12, 8), "Maint Note Example")
    assert window.events.filter(kind=EventKind.IGNORED).count() == 1

    # 3.8.3 cancellation (SEQUENCE 3)
    r = imp(BCOP / "3-cancelled.ics")
    assert r.windows[0].action == "updated"
    window.refresh_from_db()
    assert window.status == Status.CANCELLED and window.sequence == 3
    assert window.events.filter(kind=EventKind.CANCELLED).count() == 1

    # 3.8.4 "open" carries the same SEQUENCE 3 and DTSTAMP as the cancellation: not newer, nothing changes
    r = imp(BCOP / "4-open.ics")
    assert r.windows[0].action == "unchanged"
    window.refresh_from_db()
    assert window.status == Status.CANCELLED

    # 3.8.5 closed (SEQUENCE 4, with a stray space in its status)
    r = imp(BCOP / "5-closed.ics")
    window.refresh_from_db()
    assert (window.status, window.sequence, window.summary) == ("completed", 4, "Closed - Maint Note Example")
    assert MaintenanceWindow.objects.count() == 1 and CarrierNotice.objects.count() == 6


def test_same_bytes_twice_are_applied_once(example_source):
    first = imp(BCOP / "2-updated.ics")
    again = imp(BCOP / "2-updated.ics")
    assert again.duplicate and again.notice_id == first.notice_id
    assert again.windows[0].action == "created"  # the stored report of the first import
    assert CarrierNotice.objects.count() == 1 and MaintenanceWindow.objects.count() == 1


def test_carrier_from_circuits_when_nothing_else_says(topology):
    # no source names "example.com", no carrier is called so: the circuit belongs to EXAMPLE only
    r = imp(BCOP / "1-initial.ics")
    assert r.carrier == "EXAMPLE" and r.windows[0].matched == ["circuit:acme-widgets-as-a-service"]


def test_unmatched_objects_are_reported_kept_and_matched_later(topology):
    raw = (BCOP / "1-initial.ics").read_bytes().replace(b"acme-widgets-as-a-service", b"GEANT-CCT-0099")
    r = carrier_notice_import(raw=raw, source=Source.ICAL_FILE, origin="x.ics",
                                        carrier=Carrier.objects.get(code="GEANT"))
    assert r.status == CarrierNoticeStatus.PARTIAL and r.windows[0].unmatched == ["GEANT-CCT-0099"]
    window = MaintenanceWindow.objects.get()
    assert window.affects.count() == 0
    assert window.unmatched_objects == [{"object_id": "GEANT-CCT-0099", "impact": ""}]
    # the circuit is added to the inventory later: a rematch finds it
    Circuit.objects.create(carrier=Carrier.objects.get(code="GEANT"), cid="GEANT-CCT-0099")
    assert maintenance_window_rematch() == 1
    window.refresh_from_db()
    assert window.unmatched_objects == [] and window.affects.get().circuit.cid == "GEANT-CCT-0099"


def test_carrier_emails_with_sources_match_circuits(topology):
    colt, zayo = Carrier.objects.get(code="COLT"), Carrier.objects.get(code="ZAYO")
    MaintenanceSource.objects.create(carrier=colt, parser="colt", senders=["change@example.com"])
    MaintenanceSource.objects.create(carrier=zayo, parser="zayo", senders=["@zayo.com"])

    # Colt's notice: the sender is configured for COLT, its parser reads it (not the plain invitation)
    r = imp(CARRIERS / "colt3.eml")
    assert r.carrier == "COLT" and r.parser.endswith("(colt)") and r.status == CarrierNoticeStatus.PARSED
    (w,) = r.windows
    assert (w.reference, w.start, w.end, w.matched) == (
        "CRQ1-12345678", "2021-08-06T22:00:00Z", "2021-08-07T06:00:00Z", ["circuit:C-1234567"])
    window = MaintenanceWindow.objects.get(reference="CRQ1-12345678")
    assert window.source == Source.EMAIL and window.carrier == colt and window.stamp == utc(2021, 9, 4, 13, 2, 52)

    # its cancellation, forwarded by someone else: the carrier is told, the later e-mail date wins
    r = imp(CARRIERS / "colt5.eml", carrier=colt, parser="colt")
    assert r.windows[0].action == "updated"
    window.refresh_from_db()
    assert window.status == Status.CANCELLED
    assert (window.start, window.end) == (utc(2021, 12, 7, 23), utc(2021, 12, 8, 5))

    # the earlier notice once more (another copy): older e-mail date, ignored
    raw = (CARRIERS / "colt3.eml").read_bytes() + b"\n"
    r = carrier_notice_import(raw=raw, source=Source.EMAIL, carrier=colt, parser="colt")
    assert r.windows[0].action == "ignored" and "DTSTAMP" in r.windows[0].reason
    window.refresh_from_db()
    assert window.status == Status.CANCELLED

    # Zayo: circuit ids with odd spacing match the inventory's; an unknown second circuit is reported
    r = imp(CARRIERS / "zayo5.eml")
    assert r.carrier == "ZAYO" and [w.reference for w in r.windows] == [
        "TTN-0003456789", "TTN-0003456789 #2", "TTN-0003456789 #3"]
    for w in r.windows:
        assert w.matched == ["circuit:/OGYX/123456/ /ZYO /"] and w.unmatched == ["/OGYX/234567/   /ZYO /"]
    night2 = MaintenanceWindow.objects.get(reference="TTN-0003456789 #2")
    assert (night2.start, night2.end, night2.impact) == (utc(2021, 11, 2, 6, 1), utc(2021, 11, 2, 11), "no-impact")
    assert night2.aliases == ["TTN-0003456789"]


@pytest.mark.parametrize(
    ("name", "carrier", "parser", "windows"),
    [
        ("sparkle1.eml", "SPARKLE", "sparkle", [("1111111", utc(2021, 8, 10, 3), utc(2021, 8, 10, 11)),
                                                ("22222", utc(2021, 8, 11, 3), utc(2021, 8, 11, 11)),
                                                ("33333", utc(2021, 8, 12, 3), utc(2021, 8, 12, 11))]),
        ("gtt7.eml", "GTT", "gtt", [("65430585", utc(2021, 12, 2, 5), utc(2021, 12, 2, 10))]),
        ("cogent3.eml", "COGENT", "cogent", [("VN12345", utc(2022, 11, 4, 3), utc(2022, 11, 4, 10))]),
        ("zayo4.eml", "ZAYO", "zayo", [("TTN-0002345678", utc(2021, 11, 11, 5, 1), utc(2021, 11, 11, 11))]),
    ],
)
def test_more_carrier_emails_land_in_utc_with_their_circuits(topology, name, carrier, parser, windows):
    MaintenanceSource.objects.create(carrier=Carrier.objects.get(code=carrier), parser=parser)
    r = imp(CARRIERS / name, carrier=Carrier.objects.get(code=carrier))
    assert r.status == CarrierNoticeStatus.PARSED and r.carrier == carrier
    stored = MaintenanceWindow.objects.filter(carrier__code=carrier).order_by("start")
    assert [(w.reference, w.start, w.end) for w in stored] == windows
    for w in stored:
        (affect,) = w.affects.all()
        assert affect.circuit.carrier.code == carrier and w.unmatched_objects == [] and w.impact == "outage"


def test_cancellation_without_objects_keeps_the_window_objects(topology):
    eu = Carrier.objects.create(code="EUNET", name="euNetworks", noc_email="noc@eunetworks.com")
    Circuit.objects.create(carrier=eu, cid="EUN-1")
    raw = (CARRIERS / "eunetworks_cancel.eml").read_bytes()
    # the original announcement (SEQUENCE 1) with its circuit, built from the cancellation's calendar
    announce = raw.replace(b"SEQUENCE:2", b"SEQUENCE:1").replace(b"X-MAINTNOTE-STATUS:CANCELLED",
                                                                    b"X-MAINTNOTE-STATUS:CONFIRMED\nX-MAINTNOTE-OBJECT-ID:EUN-1")
    r = carrier_notice_import(raw=announce, source=Source.EMAIL)
    assert r.carrier == "EUNET" and r.windows[0].matched == ["circuit:EUN-1"]  # provider domain = NOC's domain
    r = carrier_notice_import(raw=raw, source=Source.EMAIL)
    assert r.windows[0].action == "updated"
    window = MaintenanceWindow.objects.get()
    assert window.status == Status.CANCELLED and window.affects.get().circuit.cid == "EUN-1"


def test_hand_made_window_yields_to_the_carrier(topology):
    colt = Carrier.objects.get(code="COLT")
    manual = maintenance_window_create(reference="CRQ1-12345678", carrier=colt, start=utc(2021, 8, 6, 20),
                                       end=utc(2021, 8, 6, 23), affects=["circuit:C-1234567"])
    r = imp(CARRIERS / "colt3.eml", carrier=colt, parser="colt")
    assert r.windows[0].action == "updated" and r.windows[0].window_id == manual.pk
    manual.refresh_from_db()
    assert (manual.start, manual.end, manual.source) == (utc(2021, 8, 6, 22), utc(2021, 8, 7, 6), Source.EMAIL)


def test_maildir_import_is_idempotent(topology, tmp_path):
    MaintenanceSource.objects.create(carrier=Carrier.objects.get(code="ZAYO"), parser="zayo", senders=["mr@zayo.com"])
    box = mailbox.Maildir(tmp_path / "Maildir", create=True)
    for name in ("zayo4.eml", "zayo5.eml", "eunetworks_cancel.eml"):
        box.add((CARRIERS / name).read_bytes())
    report = maintenance_import_maildir(directory=tmp_path / "Maildir")
    totals = report.totals()
    assert totals["notices"] == 3 and totals["created"] == 5 and totals["duplicates"] == 0
    assert {n.carrier for n in report.notices} == {"ZAYO", None}
    again = maintenance_import_maildir(directory=tmp_path / "Maildir").totals()
    assert again["duplicates"] == 3 and MaintenanceWindow.objects.count() == 5
    # a plain directory of files works too
    plain = tmp_path / "plain"
    plain.mkdir()
    shutil.copy(BCOP / "1-initial.ics", plain / "a.ics")
    assert maintenance_import_maildir(directory=plain).totals()["created"] == 1


class _Handler(http.server.BaseHTTPRequestHandler):
    files: dict[str, bytes] = {}

    def do_GET(self):  # noqa: N802 - http.server API
        body = self.files.get(self.path)
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/calendar; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def http_server(settings):
    settings.WANMON_FETCH_ALLOW_NETS = ["127.0.0.1/32"]  # loopback is refused unless allowed
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", _Handler.files
    finally:
        server.shutdown()
        server.server_close()
        _Handler.files.clear()


def test_url_import_and_source_polling(example_source, http_server):
    base, files = http_server
    files["/maint.ics"] = (BCOP / "1-initial.ics").read_bytes()
    r = maintenance_import_url(url=f"{base}/maint.ics").notices[0]
    assert r.windows[0].action == "created" and r.origin == f"{base}/maint.ics"
    assert MaintenanceWindow.objects.get().source == Source.ICAL_URL
    # the carrier publishes the update at the same URL; the source is polled
    files["/maint.ics"] = (BCOP / "2-updated.ics").read_bytes()
    example_source.url = f"{base}/maint.ics"
    example_source.save()
    report = maintenance_sources_poll()
    assert report.totals()["updated"] == 1
    example_source.refresh_from_db()
    assert example_source.last_polled_at is not None and example_source.last_error == ""
    assert MaintenanceWindow.objects.get().sequence == 2
    # a dead URL is noted on the source, not fatal
    example_source.url = f"{base}/gone.ics"
    example_source.save()
    maintenance_sources_poll()
    example_source.refresh_from_db()
    assert "HTTP 404" in example_source.last_error


def test_url_import_refuses_other_schemes(topology):
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError, match="only http"):
        maintenance_import_url(url="file:///etc/passwd")


def test_garbage_is_kept_and_reported_failed(topology):
    r = carrier_notice_import(raw=b"\x00\x01 not a notice", source=Source.API, origin="junk")
    assert r.status == CarrierNoticeStatus.FAILED and r.windows == [] and r.problems
    assert CarrierNotice.objects.get().status == CarrierNoticeStatus.FAILED
