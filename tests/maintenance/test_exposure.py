"""What viewers and logs do not get: carrier URLs with their secrets, raw notifications, feed tokens."""

from __future__ import annotations

import http.server
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.e2e.chain_harness import database_url_for_subprocesses
from tests.maintenance.conftest import BCOP
from tests.processes import free_port
from wanmon.inventory.models import Carrier
from wanmon.maintenance.imports import maintenance_import_file, maintenance_sources_poll
from wanmon.maintenance.logfilters import secrets_mask
from wanmon.maintenance.models import MaintenanceSource, MaintenanceWindow

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]
TOKEN = "Zq3kV9xJp2Lr8Tn4Bw6Yc1Hd5Mf7Gs0Ua2Ie9Ko3Pl8"


@pytest.mark.parametrize("text, masked", [
    (f"GET /maintenance/feeds/{TOKEN}/all.ics HTTP/1.1", "GET /maintenance/feeds/[masked]/all.ics HTTP/1.1"),
    (f"Not Found: /maintenance/feeds/{TOKEN}/site/CERN.ics", "Not Found: /maintenance/feeds/[masked]/site/CERN.ics"),
    ("/cal.ics?user=noc&token=s3cr3t&x=1", "/cal.ics?user=noc&token=[masked]&x=1"),
    ("https://noc:hunter2@portal.colt.example/feed.ics", "https://[masked]@portal.colt.example/feed.ics"),
    ("GET /maintenance/ HTTP/1.1", "GET /maintenance/ HTTP/1.1"),
])
def test_secrets_are_masked(text, masked):
    assert secrets_mask(text) == masked


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


def test_poll_errors_and_notification_origins_name_urls_without_secrets(topology, api_viewer, settings):
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


def test_raw_notifications_are_for_operators(topology, client, viewer, operator, api_viewer, api_operator):
    (n,) = maintenance_import_file(path=BCOP / "1-initial.ics").notifications
    window = MaintenanceWindow.objects.get()
    client.force_login(viewer)
    assert client.get(f"/maintenance/notifications/{n.notification_id}/raw/").status_code == 403
    page = client.get(f"/maintenance/{window.pk}/").content.decode()
    assert f"/maintenance/notifications/{n.notification_id}/raw/" not in page
    assert api_viewer.get(f"/api/v1/maintenance/notifications/{n.notification_id}/raw").status_code == 403
    client.force_login(operator)
    raw = client.get(f"/maintenance/notifications/{n.notification_id}/raw/")
    assert raw.status_code == 200 and raw.content == (BCOP / "1-initial.ics").read_bytes()
    page = client.get(f"/maintenance/{window.pk}/").content.decode()
    assert f"/maintenance/notifications/{n.notification_id}/raw/" in page
    assert api_operator.get(f"/api/v1/maintenance/notifications/{n.notification_id}/raw").status_code == 200


def test_feed_tokens_stay_out_of_gunicorns_access_log_and_djangos_request_log(tmp_path):
    # given the centre served by gunicorn with its access log on
    port = free_port()
    access_log, app_log = tmp_path / "access.log", tmp_path / "app.log"
    env = {**os.environ, "WANMON_SECRET_KEY": os.environ.get("WANMON_SECRET_KEY") or "k" * 50,
           "DATABASE_URL": database_url_for_subprocesses()}
    with app_log.open("wb") as out:
        process = subprocess.Popen(  # noqa: S603 - fixed argv
            [sys.executable, "-m", "gunicorn", "wanmon.wsgi:application", "--bind", f"127.0.0.1:{port}",
             "--workers", "1", "--access-logfile", str(access_log)],
            cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 90  # a loaded machine boots Django slowly
        url = f"http://127.0.0.1:{port}/maintenance/feeds/{TOKEN}/all.ics?token=s3cr3t"
        while True:
            try:
                urllib.request.urlopen(url, timeout=5)  # noqa: S310 - loopback
            except urllib.error.HTTPError as exc:
                assert exc.code == 404  # an unknown token: logged by gunicorn and by django.request
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.2)
        while "all.ics" not in (access_log.read_text() if access_log.exists() else ""):
            assert time.monotonic() < deadline, "gunicorn wrote no access log line"
            time.sleep(0.1)  # written after the response went out
        time.sleep(0.3)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=20)
    # then the request is in the logs, its secrets are not
    logged = access_log.read_text()
    assert "GET /maintenance/feeds/[masked]/all.ics?token=[masked]" in logged and " 404 " in logged
    app = app_log.read_text()
    assert "/maintenance/feeds/[masked]/all.ics" in app  # Django's "Not Found: ..." warning
    assert TOKEN not in logged + app and "s3cr3t" not in logged + app
