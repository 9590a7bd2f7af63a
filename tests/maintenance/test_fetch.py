"""Calendar URLs cannot reach inside the network: addresses checked after resolution, each redirect hop
checked, size and time limited, and the body never shown in an error."""

from __future__ import annotations

import http.server
import threading
import time

import pytest
from django.core.exceptions import ValidationError

from tests.maintenance.conftest import BCOP
from wanmon.inventory.models import Carrier
from wanmon.maintenance import constants
from wanmon.maintenance.fetch import FetchRefused, url_fetch
from wanmon.maintenance.imports import maintenance_import_url, maintenance_sources_poll
from wanmon.maintenance.models import MaintenanceSource, MaintenanceWindow

pytestmark = pytest.mark.django_db

SECRET_BODY = b"root:x:0:0:INTERNAL-SECRET\n"


class _Handler(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self):  # noqa: N802 - http.server API
        self.hits.append(self.path)
        port = self.server.server_address[1]
        if self.path == "/feed.ics":
            body = (BCOP / "1-initial.ics").read_bytes()
        elif self.path == "/to-feed":
            return self._redirect("/feed.ics")
        elif self.path == "/to-metadata":
            return self._redirect("http://169.254.169.254/latest/meta-data/iam/")
        elif self.path == "/to-localhost":
            return self._redirect(f"http://localhost:{port}/feed.ics")
        elif self.path.startswith("/loop"):
            return self._redirect(f"/loop{len(self.path)}")
        elif self.path == "/huge":
            self.send_response(200)
            self.send_header("Content-Type", "text/calendar")
            self.end_headers()  # no Content-Length: the size is found while reading
            chunk = b"X" * 65536
            try:
                for _ in range(constants.URL_MAX_BYTES // len(chunk) + 4):
                    self.wfile.write(chunk)
            except OSError:
                pass
            return None
        elif self.path == "/drip":
            self.send_response(200)
            self.send_header("Content-Type", "text/calendar")
            self.end_headers()
            try:
                for _ in range(100):
                    self.wfile.write(b"B")
                    self.wfile.flush()
                    time.sleep(0.1)
            except OSError:
                pass
            return None
        elif self.path == "/secret":
            self.send_response(500)
            self.send_header("Content-Length", str(len(SECRET_BODY)))
            self.end_headers()
            self.wfile.write(SECRET_BODY)
            return None
        else:
            self.send_error(404)
            return None
        self.send_response(200)
        self.send_header("Content-Type", "text/calendar")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        return None

    def _redirect(self, location: str) -> None:
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    _Handler.hits = []
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()


@pytest.fixture
def allow_loopback(settings):
    settings.WANMON_FETCH_ALLOW_NETS = ["127.0.0.1/32"]


@pytest.mark.parametrize("url, address", [
    ("http://169.254.169.254/latest/meta-data/", "169.254.169.254"),  # cloud metadata (link-local)
    ("http://10.1.2.3/feed.ics", "10.1.2.3"),
    ("http://192.168.0.1/", "192.168.0.1"),
    ("http://[::1]:8000/", "::1"),
    ("http://[fe80::1]/", "fe80::1"),
    ("http://[::ffff:127.0.0.1]/", "::ffff:127.0.0.1"),
    ("http://224.0.0.251/", "224.0.0.251"),
    ("http://240.0.0.1/", "240.0.0.1"),
    ("http://0.0.0.0:5432/", "0.0.0.0"),
    ("http://100.64.0.1/", "100.64.0.1"),
    ("https://localhost:6379/", "127.0.0.1"),
])
def test_non_public_destinations_are_refused_before_connecting(url, address, settings):
    settings.WANMON_FETCH_ALLOW_NETS = []
    began = time.monotonic()
    with pytest.raises(FetchRefused, match=f"resolves to .*{address}.*not a public address"):
        url_fetch(url)
    assert time.monotonic() - began < 2.0  # refused at once, no connection attempted


def test_loopback_needs_the_allow_list(server, settings):
    settings.WANMON_FETCH_ALLOW_NETS = []
    with pytest.raises(ValidationError, match="127.0.0.1, not a public address"):
        maintenance_import_url(url=f"{server}/feed.ics")
    assert _Handler.hits == []  # the server never heard of it
    settings.WANMON_FETCH_ALLOW_NETS = ["127.0.0.0/8"]
    fetched = url_fetch(f"{server}/feed.ics")
    assert fetched.body == (BCOP / "1-initial.ics").read_bytes() and fetched.content_type == "text/calendar"


def test_each_redirect_hop_is_checked(server, allow_loopback):
    assert url_fetch(f"{server}/to-feed").url == f"{server}/feed.ics"
    with pytest.raises(FetchRefused, match="169.254.169.254, not a public address"):
        url_fetch(f"{server}/to-metadata")
    with pytest.raises(FetchRefused, match=f"more than {constants.URL_MAX_REDIRECTS} redirects"):
        url_fetch(f"{server}/loop")
    assert len([h for h in _Handler.hits if h.startswith("/loop")]) == constants.URL_MAX_REDIRECTS + 1


def test_size_and_time_limits(server, allow_loopback, monkeypatch):
    with pytest.raises(FetchRefused, match=f"larger than {constants.URL_MAX_BYTES} bytes"):
        url_fetch(f"{server}/huge")
    monkeypatch.setattr(constants, "URL_TIMEOUT_S", 1.0)
    began = time.monotonic()
    with pytest.raises(FetchRefused, match="no complete answer within 1 s"):
        url_fetch(f"{server}/drip")  # 10 s of one byte every 0.1 s
    assert time.monotonic() - began < 4.0  # the server would drip for 10 s


def test_errors_never_carry_the_body(server, allow_loopback, api_operator):
    r = api_operator.post("/api/v1/maintenance/imports/url", {"url": f"{server}/secret"}, format="json")
    assert r.status_code == 400 and "HTTP 500" in str(r.json())
    assert b"INTERNAL-SECRET" not in r.content


def test_hourly_poll_refuses_internal_urls(topology, settings):
    settings.WANMON_FETCH_ALLOW_NETS = []
    src = MaintenanceSource.objects.create(carrier=Carrier.objects.get(code="EXAMPLE"),
                                           url="http://169.254.169.254/latest/meta-data/")
    maintenance_sources_poll()
    src.refresh_from_db()
    assert "not a public address" in src.last_error and src.last_polled_at is not None
    assert not MaintenanceWindow.objects.exists()


def test_a_malformed_allow_list_entry_is_reported(settings):
    from wanmon.maintenance.checks import fetch_allow_nets_check

    settings.WANMON_FETCH_ALLOW_NETS = ["127.0.0.1/32", "10.0.0.0/33"]
    (error,) = fetch_allow_nets_check(None)
    assert error.id == "maintenance.E001" and "'10.0.0.0/33' is not a network" in error.msg
