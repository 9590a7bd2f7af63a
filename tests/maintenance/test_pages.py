"""The calendar pages (month, week, list) with their filters, a window's page, manual entry, uploads, subscriptions."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from tests.maintenance.conftest import BCOP, CARRIERS
from wanmon.inventory.models import Carrier
from wanmon.maintenance.imports import maintenance_import_file
from wanmon.maintenance.models import FeedToken, MaintenanceWindow
from wanmon.maintenance.services import maintenance_window_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def march(topology):
    geant = maintenance_window_create(reference="GEANT-CHG-0042", carrier=Carrier.objects.get(code="GEANT"),
                                      start=datetime(2026, 3, 10, 3, 0, tzinfo=UTC),
                                      end=datetime(2026, 3, 10, 4, 30, tzinfo=UTC), affects=["geant-ams"],
                                      summary="Card swap", impact="degraded")
    janet = maintenance_window_create(reference="JANET-77", carrier=Carrier.objects.get(code="JANET"),
                                      start=datetime(2026, 3, 20, 22, 0, tzinfo=UTC),
                                      end=datetime(2026, 3, 21, 2, 0, tzinfo=UTC), impact="reduced-redundancy",
                                      affects=["circuit:JISC-RAL-LHCOPN-2"])
    return geant, janet


def test_pages_need_a_login(client, march):
    for url in ("/maintenance/", f"/maintenance/{march[0].pk}/", "/maintenance/new/", "/maintenance/import/"):
        response = client.get(url)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_month_view_with_filters(viewer_client, march):
    page = viewer_client.get("/maintenance/?view=month&date=2026-03-01").content.decode()
    assert "March 2026" in page and "GEANT-CHG-0042" in page and "JANET-77" in page
    assert "2 windows in this period" in page
    # a window crossing midnight shows on both days: 20 and 21 March
    assert page.count("JANET-77") == 2
    page = viewer_client.get("/maintenance/?view=month&date=2026-03-01&carrier=GEANT").content.decode()
    assert "GEANT-CHG-0042" in page and "JANET-77" not in page
    # RAL is touched by the LAG member only; SARA by geant-ams only; FZK by neither
    page = viewer_client.get("/maintenance/?date=2026-03-01&site=RAL").content.decode()
    assert "JANET-77" in page and "GEANT-CHG-0042" not in page
    page = viewer_client.get("/maintenance/?date=2026-03-01&site=FZK").content.decode()
    assert "0 windows in this period" in page
    page = viewer_client.get("/maintenance/?view=month&date=2026-04-01").content.decode()
    assert "April 2026" in page and "GEANT-CHG-0042" not in page


def test_week_and_list_views(viewer_client, march):
    page = viewer_client.get("/maintenance/?view=week&date=2026-03-11").content.decode()
    assert "Week of 2026-03-09" in page and "GEANT-CHG-0042" in page and "JANET-77" not in page
    assert "03:00" in page and "04:30" in page
    page = viewer_client.get("/maintenance/?view=list&date=2026-03-01").content.decode()
    assert "<caption" in page and "2026-03-10 03:00" in page and "CERN-&gt;SARA" in page
    assert "Reduced redundancy" in page
    # bad parameters fall back to sane defaults instead of failing
    assert viewer_client.get("/maintenance/?view=year&date=yesterday").status_code == 200


def test_window_page_shows_paths_mute_state_and_provenance(viewer_client, topology, operator):
    maintenance_import_file(path=CARRIERS / "zayo4.eml", carrier=Carrier.objects.get(code="ZAYO"), parser="zayo")
    window = MaintenanceWindow.objects.get()
    page = viewer_client.get(f"/maintenance/{window.pk}/").content.decode()
    assert "TTN-0002345678" in page and "circuit:/OGYX/123456/ /ZYO /" in page
    assert "circuit-maintenance-parser" in page
    assert "mr@zayo.com" not in page  # the carrier's address: operators only (docs/permissions.md)
    assert "No path crosses the affected objects." in page  # the Zayo circuit has no known ports
    assert "Edit" not in page  # viewers do not get the operator's buttons
    # the e-mail as received is the operators' (customer details): test_exposure.py
    assert viewer_client.get(f"/maintenance/notices/{window.carrier_notice_id}/raw/").status_code == 403
    viewer_client.force_login(operator)
    assert "mr@zayo.com" in viewer_client.get(f"/maintenance/{window.pk}/").content.decode()


def test_operator_creates_edits_cancels_and_comments(operator_client, topology):
    response = operator_client.post("/maintenance/new/", {
        "reference": "GEANT-CHG-0042", "carrier": "GEANT", "summary": "Card swap", "source_tz": "Europe/Zurich",
        "start": "2026-03-10T04:00", "end": "2026-03-10T05:30", "status": "confirmed", "impact": "degraded",
        "behaviour": "mute", "rrule": "", "affects": "geant-ams\ncircuit:JISC-RAL-LHCOPN-2 = reduced-redundancy",
    })
    assert response.status_code == 302
    window = MaintenanceWindow.objects.get()
    # 04:00 in Geneva is 03:00 UTC in March
    assert (window.start, window.end) == (datetime(2026, 3, 10, 3, 0, tzinfo=UTC),
                                          datetime(2026, 3, 10, 4, 30, tzinfo=UTC))
    assert [(a.label, a.impact) for a in window.affects.all()] == [
        ("geant-ams", ""), ("circuit:JISC-RAL-LHCOPN-2", "reduced-redundancy")]
    page = operator_client.get(f"/maintenance/{window.pk}/").content.decode()
    assert "expected: explained, not alerted" in page and "not expected: still alerted" in page
    form = operator_client.get(f"/maintenance/{window.pk}/edit/").content.decode()
    assert 'value="2026-03-10T04:00"' in form and "circuit:JISC-RAL-LHCOPN-2 = reduced-redundancy" in form

    response = operator_client.post(f"/maintenance/{window.pk}/edit/", {
        "reference": "GEANT-CHG-0042", "carrier": "GEANT", "summary": "Card swap", "source_tz": "Europe/Zurich",
        "start": "2026-03-10T04:00", "end": "2026-03-10T06:00", "status": "confirmed", "impact": "degraded",
        "behaviour": "mute", "rrule": "", "affects": "geant-ams",
    })
    assert response.status_code == 302
    window.refresh_from_db()
    assert window.end == datetime(2026, 3, 10, 5, 0, tzinfo=UTC) and window.affects.count() == 1
    operator_client.post(f"/maintenance/{window.pk}/comment/", {"text": "confirmed with GEANT NOC"})
    operator_client.post(f"/maintenance/{window.pk}/cancel/")
    window.refresh_from_db()
    assert window.status == "cancelled"
    page = operator_client.get(f"/maintenance/{window.pk}/").content.decode()
    assert "confirmed with GEANT NOC" in page and "Cancelled" in page


def test_form_errors_are_shown(operator_client, topology):
    response = operator_client.post("/maintenance/new/", {
        "reference": "X", "source_tz": "Mars/Base", "start": "2026-03-10T04:00", "end": "2026-03-10T03:00",
        "status": "confirmed", "impact": "outage", "behaviour": "mute", "affects": "no-such-box",
    })
    assert response.status_code == 200
    page = response.content.decode()
    assert "unknown time zone" in page
    response = operator_client.post("/maintenance/new/", {
        "reference": "X", "source_tz": "UTC", "start": "2026-03-10T04:00", "end": "2026-03-10T05:00",
        "status": "confirmed", "impact": "outage", "behaviour": "mute", "affects": "no-such-box",
    })
    assert "unknown element &#x27;no-such-box&#x27;" in response.content.decode()
    assert MaintenanceWindow.objects.count() == 0


def test_viewers_cannot_change_anything(viewer_client, march):
    assert viewer_client.get("/maintenance/new/").status_code == 403
    assert viewer_client.post(f"/maintenance/{march[0].pk}/cancel/").status_code == 403
    assert viewer_client.get("/maintenance/import/").status_code == 403
    assert viewer_client.get("/maintenance/feeds/").status_code == 403


def test_upload_page_and_subscription_page(operator_client, topology):
    upload = SimpleUploadedFile("notice.ics", (BCOP / "1-initial.ics").read_bytes(), content_type="text/calendar")
    page = operator_client.post("/maintenance/import/", {"file": upload}).content.decode()
    assert "Result: parsed" in page and "WorkOrder-31415" in page and "circuit:acme-widgets-as-a-service" in page
    page = operator_client.post("/maintenance/feeds/", {"name": "my outlook", "site": "CERN"}).content.decode()
    assert "webcal://" in page and "/site/CERN.ics" in page
    assert FeedToken.objects.get().site.code == "CERN"


def test_import_commands(topology, capsys, tmp_path):
    call_command("maintenance_import_file", str(BCOP / "1-initial.ics"), str(BCOP / "2-updated.ics"))
    out = capsys.readouterr().out
    assert "created   WorkOrder-31415 2015-10-10T08:00:00Z -> 2015-10-10T10:00:00Z tentative SEQUENCE 1" in out
    assert "updated   WorkOrder-31415 2015-10-12T08:00:00Z" in out
    call_command("maintenance_import_file", str(CARRIERS / "zayo5.eml"), "--carrier", "ZAYO", "--json")
    assert '"unmatched_objects": 3' in capsys.readouterr().out
    box = tmp_path / "box"
    box.mkdir()
    (box / "cancel.eml").write_bytes((CARRIERS / "eunetworks_cancel.eml").read_bytes())
    call_command("maintenance_import_maildir", str(box))
    assert "created   02345678" in capsys.readouterr().out
    with pytest.raises(Exception, match="nothing could be imported"):
        junk = tmp_path / "junk.eml"
        junk.write_bytes(b"Subject: x\r\nFrom: a@b.example\r\n\r\nhello\r\n")
        call_command("maintenance_import_file", str(junk))
    call_command("maintenance_notices", "--now", "2015-10-09T12:00:00Z")
    assert "0 sent, 0 failed" in capsys.readouterr().out
