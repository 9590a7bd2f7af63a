"""Carriers' links (ALTREP) are kept and shown only as http(s) URLs: on import, on the page, in the API, in feeds."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from wanmon.inventory.models import Carrier
from wanmon.maintenance.choices import Source
from wanmon.maintenance.imports import carrier_notice_import
from wanmon.maintenance.models import MaintenanceAffect, MaintenanceWindow
from wanmon.maintenance.parsed import http_url
from wanmon.maintenance.services import feed_token_create

pytestmark = pytest.mark.django_db


def ics(altrep_colt: str, altrep_janet: str) -> bytes:
    start = (timezone.now() + timedelta(days=2)).strftime("%Y%m%dT%H0000Z")
    end = (timezone.now() + timedelta(days=2, hours=2)).strftime("%Y%m%dT%H0000Z")
    return (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Colt//maint//EN\r\nBEGIN:VEVENT\r\n"
        f"UID:xss-1\r\nSEQUENCE:1\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:{start}\r\nDTEND:{end}\r\n"
        "SUMMARY:Fibre works\r\nX-MAINTNOTE-PROVIDER:colt.net\r\nX-MAINTNOTE-ACCOUNT:42\r\n"
        "X-MAINTNOTE-MAINTENANCE-ID:CRQ-666\r\nX-MAINTNOTE-IMPACT:OUTAGE\r\nX-MAINTNOTE-STATUS:CONFIRMED\r\n"
        f'X-MAINTNOTE-OBJECT-ID;ALTREP="{altrep_colt}":C-1234567\r\n'
        f'X-MAINTNOTE-OBJECT-ID;ALTREP="{altrep_janet}":JISC-RAL-LHCOPN-2\r\n'
        "END:VEVENT\r\nEND:VCALENDAR\r\n"
    ).encode()


@pytest.mark.parametrize(
    "value, kept",
    [
        ("https://colt.example/c/1", True),
        ("http://colt.example/c/1?x=1", True),
        ("javascript:alert(document.cookie)", False),
        ("JaVaScRiPt:alert(1)", False),
        (" javascript:alert(1)", False),
        ("data:text/html;base64,PHNjcmlwdD4=", False),
        ("vbscript:msgbox(1)", False),
        ("//evil.example/x", False),
        ("https:/no-host", False),
        ('https://x.example/"onmouseover="alert(1)', False),
    ],
)
def test_only_http_urls_are_links(value, kept):
    assert http_url(value) == (value if kept else "")


def test_javascript_altrep_is_dropped_on_import_and_never_rendered(topology, operator, client):
    # given a carrier calendar with a javascript: link and an https link
    report = carrier_notice_import(
        raw=ics("javascript:fetch('/api/v1/inventory/agent-tokens',{method:'POST'})", "https://jisc.example/c/2"),
        source=Source.ICAL_FILE, origin="upload:colt.ics", carrier=Carrier.objects.get(code="COLT"), user=operator,
        vouched_by="imported by op",
    )
    # then the javascript link is not stored, and the problem is reported
    assert any("ALTREP of C-1234567 is not an http(s) URL" in p for p in report.problems)
    window = MaintenanceWindow.objects.get(reference="CRQ-666")
    altreps = {a.circuit.cid: a.altrep for a in window.affects.select_related("circuit")}
    assert altreps == {"C-1234567": "", "JISC-RAL-LHCOPN-2": "https://jisc.example/c/2"}

    # and a link stored before the check (bulk_create skips URLField validation) is not shown either
    MaintenanceAffect.objects.filter(window=window, circuit__cid="C-1234567").update(altrep="javascript:alert(1)")
    client.force_login(operator)
    page = client.get(f"/maintenance/{window.pk}/").content.decode()
    assert "javascript:" not in page.lower()
    assert 'href="https://jisc.example/c/2"' in page
    api = client.get(f"/api/v1/maintenance/windows/{window.pk}").json()
    assert sorted(a["altrep"] for a in api["affects"]) == ["", "https://jisc.example/c/2"]

    _, secret = feed_token_create(name="noc")
    body = client.get(f"/maintenance/feeds/{secret}/all.ics").content.decode()
    assert "CRQ-666" in body and "javascript" not in body.lower()
    assert 'ALTREP="https://jisc.example/c/2"' in body
