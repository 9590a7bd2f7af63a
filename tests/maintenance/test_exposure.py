"""What viewers do not get: carrier URLs with secrets, raw carrier notices (logs: tests/core/test_logfilters.py)."""

from __future__ import annotations

import http.server
import threading

import pytest

from tests.maintenance.conftest import BCOP
from wanmon.inventory.models import Carrier
from wanmon.maintenance.imports import maintenance_import_file, maintenance_sources_poll
from wanmon.maintenance.models import MaintenanceSource, MaintenanceWindow

pytestmark = pytest.mark.django_db


SECRET_URL = "https://noc:hunter2@cal.colt.example/maint.ics?token=s3cr3t"


def test_viewers_see_source_urls_without_secrets(topology, api_operator, api_viewer):
    src = MaintenanceSource.objects.create(carrier=Carrier.objects.get(code="COLT"), url=SECRET_URL)
    (seen,) = api_viewer.get("/api/v1/maintenance/sources").json()["results"]
    assert seen["url"] == "https://[hidden]@cal.colt.example/maint.ics?[hidden]"
    assert "hunter2" not in str(seen) and "s3cr3t" not in str(seen)
    assert api_viewer.get(f"/api/v1/maintenance/sources/{src.pk}").json()["url"] == seen["url"]
    (full,) = api_operator.get("/api/v1/maintenance/sources").json()["results"]
    assert full["url"] == SECRET_URL


class _Gone(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 - http.server API
        self.send_error(404)

    def log_message(self, *args):
        pass


def test_poll_errors_and_notice_origins_name_urls_without_secrets(topology, api_viewer, settings):
    settings.WANMON_FETCH_ALLOW_NETS = ["127.0.0.1/32"]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Gone)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/maint.ics?token=s3cr3t"
        src = MaintenanceSource.objects.create(carrier=Carrier.objects.get(code="COLT"), url=url)
        maintenance_sources_poll()
    finally:
        server.shutdown()
        server.server_close()
    src.refresh_from_db()
    assert "HTTP 404" in src.last_error and "s3cr3t" not in src.last_error and "?[hidden]" in src.last_error
    (seen,) = api_viewer.get("/api/v1/maintenance/sources").json()["results"]
    assert "s3cr3t" not in str(seen)


# The carrier notices' current path and the former one (kept for links and clients) answer the same.
NOTICE_PATHS = ["notices", "notifications"]


@pytest.mark.parametrize("path", NOTICE_PATHS)
def test_raw_carrier_notices_are_for_operators(topology, client, viewer, operator, api_viewer, api_operator, path):
    (n,) = maintenance_import_file(path=BCOP / "1-initial.ics").notices
    window = MaintenanceWindow.objects.get()
    client.force_login(viewer)
    assert client.get(f"/maintenance/{path}/{n.notice_id}/raw/").status_code == 403
    page = client.get(f"/maintenance/{window.pk}/").content.decode()
    assert all(f"/maintenance/{p}/{n.notice_id}/raw/" not in page for p in NOTICE_PATHS)
    assert api_viewer.get(f"/api/v1/maintenance/{path}/{n.notice_id}/raw").status_code == 403
    client.force_login(operator)
    raw = client.get(f"/maintenance/{path}/{n.notice_id}/raw/")
    assert raw.status_code == 200 and raw.content == (BCOP / "1-initial.ics").read_bytes()
    page = client.get(f"/maintenance/{window.pk}/").content.decode()
    assert f"/maintenance/notices/{n.notice_id}/raw/" in page  # the pages link the current address
    assert api_operator.get(f"/api/v1/maintenance/{path}/{n.notice_id}/raw").status_code == 200


@pytest.mark.parametrize("path", NOTICE_PATHS)
def test_viewers_neither_see_notice_senders_nor_probe_them_with_the_filter(topology, api_viewer, api_operator, path):
    maintenance_import_file(path=BCOP / "1-initial.ics")
    sender = api_operator.get(f"/api/v1/maintenance/{path}").json()["results"][0]["sender"]
    (seen,) = api_viewer.get(f"/api/v1/maintenance/{path}").json()["results"]
    assert "sender" not in seen
    assert api_viewer.get(f"/api/v1/maintenance/{path}", {"sender": sender}).status_code == 403
    assert api_operator.get(f"/api/v1/maintenance/{path}", {"sender": sender}).json()["count"] == 1
