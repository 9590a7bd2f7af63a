"""Maintenance REST API: manual entry, imports (file, mailbox, URL), matching, feed tokens, permissions."""

from __future__ import annotations

import mailbox
import threading
from datetime import UTC, datetime
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest
from rest_framework.test import APIClient

from tests.maintenance.conftest import BCOP, CARRIERS
from wanmon.maintenance.models import CarrierNotice, MaintenanceWindow

pytestmark = pytest.mark.django_db

WINDOW = {
    "reference": "GEANT-CHG-0042",
    "carrier": "GEANT",
    "summary": "Line card swap in Amsterdam",
    "start": "2026-03-10T04:00:00+01:00",
    "end": "2026-03-10T06:00:00+01:00",
    "source_tz": "Europe/Amsterdam",
    "impact": "outage",
    "affects": ["geant-ams", {"label": "circuit:JISC-RAL-LHCOPN-2", "impact": "reduced-redundancy"}],
}


def test_manual_entry_detail_update_cancel_and_comment(topology, api_operator):
    r = api_operator.post("/api/v1/maintenance/windows", WINDOW, format="json")
    assert r.status_code == 201, r.json()
    body = r.json()
    assert body["start"] == "2026-03-10T03:00:00Z" and body["end"] == "2026-03-10T05:00:00Z"
    assert body["source"] == "api" and body["author"] == "op" and body["sequence"] == 0
    assert [(a["label"], a["effective_impact"]) for a in body["affects"]] == [
        ("geant-ams", "outage"), ("circuit:JISC-RAL-LHCOPN-2", "reduced-redundancy")]
    paths = {p["path"]: (p["impact"], p["explains"]) for p in body["footprint"]["paths"]}
    assert paths == {"CERN->SARA": ("outage", True), "SARA->CERN": ("outage", True),
                     "CERN->RAL": ("reduced-redundancy", False), "RAL->CERN": ("reduced-redundancy", False)}
    assert body["footprint"]["sites"] == ["CERN", "RAL", "SARA"]
    pk = body["id"]

    r = api_operator.patch(f"/api/v1/maintenance/windows/{pk}", {"end": "2026-03-10T06:00:00Z", "note": "extended"},
                           format="json")
    assert r.status_code == 200 and r.json()["end"] == "2026-03-10T06:00:00Z" and r.json()["sequence"] == 1
    assert r.json()["events"][-1]["changes"] == {"end": ["2026-03-10T05:00:00Z", "2026-03-10T06:00:00Z"]}
    r = api_operator.post(f"/api/v1/maintenance/windows/{pk}/comments", {"text": "SURF confirmed by phone"},
                          format="json")
    assert r.status_code == 201 and r.json()["kind"] == "comment"
    r = api_operator.post(f"/api/v1/maintenance/windows/{pk}/cancel", {"note": "postponed"}, format="json")
    assert r.status_code == 200 and r.json()["status"] == "cancelled"
    kinds = [e["kind"] for e in r.json()["events"]]
    assert kinds == ["created", "updated", "comment", "cancelled"]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"end": "2026-03-10T02:00:00Z"}, "end"),
        ({"affects": ["no-such-router"]}, "affects"),
        ({"source_tz": "Mars/Olympus"}, "source_tz"),
        ({"rrule": "FREQ=SOMETIMES"}, "rrule"),
        ({"impact": "catastrophic"}, "impact"),
    ],
)
def test_invalid_windows_are_400_with_the_field(topology, api_operator, change, field):
    r = api_operator.post("/api/v1/maintenance/windows", {**WINDOW, **change}, format="json")
    assert r.status_code == 400 and field in r.json(), r.json()
    assert MaintenanceWindow.objects.count() == 0


def test_viewers_read_operators_write(topology, api_operator, api_viewer):
    assert api_viewer.post("/api/v1/maintenance/windows", WINDOW, format="json").status_code == 403
    assert APIClient().get("/api/v1/maintenance/windows").status_code in (401, 403)
    api_operator.post("/api/v1/maintenance/windows", WINDOW, format="json")
    r = api_viewer.get("/api/v1/maintenance/windows?site=RAL&start=2026-03-01T00:00:00Z")
    assert r.status_code == 200 and [w["reference"] for w in r.json()["results"]] == ["GEANT-CHG-0042"]
    assert api_viewer.get("/api/v1/maintenance/windows?site=FZK").json()["results"] == []
    assert api_viewer.get("/api/v1/maintenance/windows?carrier=JANET").json()["results"] == []
    assert api_viewer.get("/api/v1/maintenance/windows?end=2026-03-01T00:00:00Z").json()["results"] == []
    assert api_viewer.get("/api/v1/maintenance/windows?start=tomorrow").status_code == 400
    with open(BCOP / "1-initial.ics", "rb") as fh:
        assert api_viewer.post("/api/v1/maintenance/imports/file", {"file": fh}).status_code == 403


def test_file_import_endpoint(topology, api_operator):
    with open(BCOP / "1-initial.ics", "rb") as a, open(BCOP / "2-updated.ics", "rb") as b, \
            open(CARRIERS / "colt3.eml", "rb") as c:
        r = api_operator.post("/api/v1/maintenance/imports/file", {"file": [a, b]})
        assert r.status_code == 200, r.json()
        assert r.json()["totals"]["created"] == 1 and r.json()["totals"]["updated"] == 1
        r = api_operator.post("/api/v1/maintenance/imports/file", {"file": c, "carrier": "COLT", "parser": "colt"})
    assert r.status_code == 200
    (n,) = r.json()["notices"]
    assert n["carrier"] == "COLT" and n["windows"][0]["matched"] == ["circuit:C-1234567"]
    assert n["windows"][0]["start"] == "2021-08-06T22:00:00Z"
    raw = api_operator.get(f"/api/v1/maintenance/notices/{n['notice_id']}/raw")
    assert raw.status_code == 200 and raw.content == (CARRIERS / "colt3.eml").read_bytes()
    listed = api_operator.get("/api/v1/maintenance/notices").json()["results"]
    assert len(listed) == 3 and listed[0]["parser"].endswith("(colt)")
    r = api_operator.post("/api/v1/maintenance/imports/file", {"file": []})
    assert r.status_code == 400


def test_carrier_notices_answer_under_their_former_names_too(topology, api_operator, api_viewer):
    # Carrier notices were "notifications": the former path and fields answer the same as the new ones.
    with open(CARRIERS / "colt3.eml", "rb") as fh:
        r = api_operator.post("/api/v1/maintenance/imports/file", {"file": fh, "carrier": "COLT", "parser": "colt"})
    body = r.json()
    assert r.status_code == 200 and body["notifications"] == body["notices"]
    assert body["totals"]["notifications"] == body["totals"]["notices"] == 1
    (n,) = body["notices"]
    notice_id = n["notice_id"]
    assert n["notification_id"] == notice_id == CarrierNotice.objects.get().pk
    for client in (api_operator, api_viewer):
        for name in ("list", "detail"):
            suffix = f"/{notice_id}" if name == "detail" else ""
            new = client.get(f"/api/v1/maintenance/notices{suffix}")
            former = client.get(f"/api/v1/maintenance/notifications{suffix}")
            assert new.status_code == former.status_code == 200, (name, new.content[:200])
            assert new.json() == former.json()
    detail = api_operator.get(f"/api/v1/maintenance/notices/{notice_id}").json()
    assert detail["id"] == notice_id and detail["parser"].endswith("(colt)") and detail["sender"]
    for path in ("notices", "notifications"):
        raw = api_operator.get(f"/api/v1/maintenance/{path}/{notice_id}/raw")
        assert raw.status_code == 200 and raw.content == (CARRIERS / "colt3.eml").read_bytes()
        assert api_viewer.get(f"/api/v1/maintenance/{path}/{notice_id}/raw").status_code == 403
        assert api_operator.get(f"/api/v1/maintenance/{path}", {"status": "failed"}).json()["count"] == 0
        assert api_operator.get(f"/api/v1/maintenance/{path}/{notice_id + 1}").status_code == 404
    # a window and its trail name the notice applied as carrier_notice, and as notification (the former name)
    window = api_operator.get(f"/api/v1/maintenance/windows/{n['windows'][0]['window_id']}").json()
    assert window["carrier_notice"] == window["notification"] == notice_id
    assert window["events"] and all(e["carrier_notice"] == e["notification"] == notice_id for e in window["events"])
    schema = api_operator.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    assert {f"/api/v1/maintenance/{path}{suffix}" for path in ("notices", "notifications")
            for suffix in ("", "/{id}", "/{id}/raw")} <= set(schema["paths"])
    assert {"carrier_notice", "notification"} <= set(schema["components"]["schemas"]["WindowDetail"]["properties"])
    assert {"notices", "notifications"} <= set(schema["components"]["schemas"]["ImportReport"]["properties"])


def test_unreadable_upload_is_422_with_the_reason(topology, api_operator, tmp_path):
    junk = tmp_path / "junk.eml"
    junk.write_bytes(b"Subject: lunch\r\nFrom: chef@kitchen.example\r\n\r\nsoup today\r\n")
    with open(junk, "rb") as fh:
        r = api_operator.post("/api/v1/maintenance/imports/file", {"file": fh})
    assert r.status_code == 422
    assert "no parser for sender chef@kitchen.example" in r.json()["notices"][0]["problems"][0]
    assert CarrierNotice.objects.get().status == "failed"


def test_maildir_import_endpoint_only_under_allowed_roots(topology, api_operator, tmp_path, settings):
    (tmp_path / "mail").mkdir()
    box = mailbox.Maildir(tmp_path / "mail" / "carriers", create=True)
    box.add((CARRIERS / "eunetworks_cancel.eml").read_bytes())
    box.add((CARRIERS / "zayo4.eml").read_bytes())
    settings.WANMON_MAINTENANCE_MAILDIRS = []
    r = api_operator.post("/api/v1/maintenance/imports/maildir", {"path": str(tmp_path / "mail" / "carriers")},
                          format="json")
    assert r.status_code == 403
    settings.WANMON_MAINTENANCE_MAILDIRS = [str(tmp_path / "mail")]
    r = api_operator.post("/api/v1/maintenance/imports/maildir",
                          {"path": str(tmp_path / "mail" / "carriers" / ".." / ".." / "elsewhere")}, format="json")
    assert r.status_code == 403
    r = api_operator.post("/api/v1/maintenance/imports/maildir", {"path": str(tmp_path / "mail" / "carriers")},
                          format="json")
    assert r.status_code == 200 and r.json()["totals"]["notices"] == 2
    assert r.json()["totals"]["created"] == 2


def test_url_import_endpoint(topology, api_operator, tmp_path, settings):
    settings.WANMON_FETCH_ALLOW_NETS = ["127.0.0.1/32"]  # loopback is refused unless allowed
    (tmp_path / "feed.ics").write_bytes((BCOP / "1-initial.ics").read_bytes())

    class Handler(SimpleHTTPRequestHandler):
        def __init__(self, *a, **k):
            super().__init__(*a, directory=str(tmp_path), **k)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        r = api_operator.post("/api/v1/maintenance/imports/url", {"url": f"{base}/feed.ics"}, format="json")
        assert r.status_code == 200 and r.json()["totals"]["created"] == 1
        r = api_operator.post("/api/v1/maintenance/imports/url", {"url": f"{base}/missing.ics"}, format="json")
        assert r.status_code == 400 and "HTTP 404" in str(r.json())
        r = api_operator.post("/api/v1/maintenance/imports/url", {"url": "ftp://example.org/x.ics"}, format="json")
        assert r.status_code == 400
    finally:
        server.shutdown()
        server.server_close()


def test_matches_endpoint(topology, api_operator, api_viewer):
    api_operator.post("/api/v1/maintenance/windows", WINDOW, format="json")
    r = api_viewer.get("/api/v1/maintenance/matches?path=CERN->RAL&start=2026-03-10T00:00:00Z"
                       "&end=2026-03-11T00:00:00Z")
    (m,) = r.json()["paths"]
    assert (m["reference"], m["impact"], m["explains"], m["mutes"]) == ("GEANT-CHG-0042", "reduced-redundancy",
                                                                         False, False)
    r = api_viewer.get("/api/v1/maintenance/matches?element=geant-ams&at=2026-03-10T03:30:00Z")
    (e,) = r.json()["elements"]
    assert (e["impact"], e["mutes"], e["via"]) == ("outage", True, ["geant-ams"])
    assert api_viewer.get("/api/v1/maintenance/matches").status_code == 400
    r = api_viewer.get("/api/v1/maintenance/skipped-paths?at=2026-03-10T03:30:00Z")
    assert r.status_code == 200 and r.json()["paths"] == []


def test_feed_token_endpoints(topology, api_operator, api_viewer, client):
    r = api_operator.post("/api/v1/maintenance/feed-tokens", {"name": "outlook", "site": "CERN"}, format="json")
    assert r.status_code == 201
    body = r.json()
    assert body["site"] == "CERN" and body["urls"]["url"].endswith(f"/maintenance/feeds/{body['token']}/site/CERN.ics")
    listed = api_viewer.get("/api/v1/maintenance/feed-tokens").json()["results"]
    assert "token" not in listed[0] and listed[0]["token_prefix"] == body["token"][:8]
    assert client.get(f"/maintenance/feeds/{body['token']}/site/CERN.ics").status_code == 200
    assert api_operator.post(f"/api/v1/maintenance/feed-tokens/{body['id']}/revoke").status_code == 200
    assert client.get(f"/maintenance/feeds/{body['token']}/site/CERN.ics").status_code == 404
    r = api_operator.post("/api/v1/maintenance/feed-tokens", {"name": "x", "site": "CERN", "carrier": "GEANT"},
                          format="json")
    assert r.status_code == 400


def test_sources_endpoint(topology, api_operator):
    r = api_operator.post("/api/v1/maintenance/sources",
                          {"carrier": "ZAYO", "parser": "zayo", "senders": ["MR@zayo.com"], "provider_names": []},
                          format="json")
    assert r.status_code == 201 and r.json()["senders"] == ["mr@zayo.com"]
    r = api_operator.post("/api/v1/maintenance/sources", {"carrier": "ZAYO", "parser": "nope", "senders": []},
                          format="json")
    assert r.status_code == 400 and "unknown parser" in str(r.json())


def test_openapi_schema_lists_the_maintenance_api(topology, api_viewer):
    r = api_viewer.get("/api/schema/", HTTP_ACCEPT="application/json")
    assert r.status_code == 200
    paths = r.json()["paths"]
    for p in ("/api/v1/maintenance/windows", "/api/v1/maintenance/imports/file", "/api/v1/maintenance/imports/maildir",
              "/api/v1/maintenance/imports/url", "/api/v1/maintenance/matches", "/api/v1/maintenance/feed-tokens"):
        assert p in paths, p


def test_times_are_utc(topology, api_operator):
    api_operator.post("/api/v1/maintenance/windows", WINDOW, format="json")
    w = MaintenanceWindow.objects.get()
    assert w.start == datetime(2026, 3, 10, 3, 0, tzinfo=UTC) and w.source_tz == "Europe/Amsterdam"
