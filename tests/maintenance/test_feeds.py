"""iCalendar feeds at token-protected URLs: they validate, subscribe over real HTTP, and show the right windows."""

from __future__ import annotations

import urllib.error
import urllib.request
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone
from icalendar import Calendar

from tests.maintenance.conftest import BCOP
from wanmon.inventory.models import Carrier, Site
from wanmon.maintenance.ical import ical_parse
from wanmon.maintenance.imports import maintenance_import_file
from wanmon.maintenance.models import FeedToken
from wanmon.maintenance.services import (
    feed_token_create,
    feed_token_revoke,
    feed_urls,
    maintenance_window_cancel,
    maintenance_window_create,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def calendar_data(topology):
    """Three upcoming windows: GEANT on geant-ams (CERN, SARA), JANET on a LAG member (CERN, RAL), one cancelled."""
    soon = timezone.now().replace(microsecond=0) + timedelta(days=3)
    geant = maintenance_window_create(reference="GEANT-CHG-1", carrier=Carrier.objects.get(code="GEANT"), start=soon,
                                      end=soon + timedelta(hours=2), affects=["geant-ams"], summary="Card swap",
                                      source_tz="Europe/Amsterdam")
    janet = maintenance_window_create(reference="JANET-77", carrier=Carrier.objects.get(code="JANET"),
                                      start=soon + timedelta(days=1), end=soon + timedelta(days=1, hours=4),
                                      impact="reduced-redundancy", affects=["circuit:JISC-RAL-LHCOPN-2"])
    gone = maintenance_window_create(reference="GEANT-CHG-2", carrier=Carrier.objects.get(code="GEANT"),
                                     start=soon + timedelta(days=2), end=soon + timedelta(days=2, hours=1),
                                     affects=["geant-fra"])
    maintenance_window_cancel(window=gone)
    return geant, janet, gone


def events_of(body: bytes) -> dict[str, object]:
    calendar = Calendar.from_ical(body)
    return {str(e["X-MAINTNOTE-MAINTENANCE-ID"]): e for e in calendar.walk("VEVENT")}


def path_of(url: str) -> str:
    return url.split("wanmon.example.org", 1)[1]


def test_all_site_and_carrier_feeds(calendar_data, client, settings):
    settings.WANMON_BASE_URL = "https://wanmon.example.org"
    geant, janet, gone = calendar_data
    _, secret = feed_token_create(name="noc")
    urls = feed_urls(secret)
    assert urls["webcal"].startswith("webcal://wanmon.example.org/maintenance/feeds/")

    response = client.get(path_of(urls["url"]))  # no login: the token is the credential
    assert response.status_code == 200
    assert response["Content-Type"] == "text/calendar; charset=utf-8"
    assert "no-cache" in response["Cache-Control"] or "max-age=0" in response["Cache-Control"]
    events = events_of(response.content)
    assert set(events) == {"GEANT-CHG-1", "JANET-77", "GEANT-CHG-2"}
    e = events["GEANT-CHG-1"]
    assert e["DTSTART"].dt == geant.start and e["DTEND"].dt == geant.end
    assert str(e["X-MAINTNOTE-IMPACT"]) == "OUTAGE" and str(e["X-MAINTNOTE-STATUS"]) == "CONFIRMED"
    assert str(e["X-MAINTNOTE-OBJECT-ID"]) == "geant-ams" and str(e["UID"]) == geant.uid
    assert str(e["LOCATION"]) == "CERN, SARA" and "CERN->SARA (outage)" in str(e["DESCRIPTION"])
    assert str(events["GEANT-CHG-2"]["STATUS"]) == "CANCELLED"
    assert str(events["GEANT-CHG-2"]["X-MAINTNOTE-STATUS"]) == "CANCELLED"
    # BCOP form: our own parser reads every field back
    parsed = {w.reference: w for w in ical_parse(response.content).windows}
    assert parsed["JANET-77"].impact == "reduced-redundancy"
    assert [o.object_id for o in parsed["JANET-77"].objects] == ["circuit:JISC-RAL-LHCOPN-2"]

    site_feed = client.get(path_of(feed_urls(secret, site=Site.objects.get(code="RAL"))["url"]))
    assert set(events_of(site_feed.content)) == {"JANET-77"}  # the LAG member ends at RAL
    site_feed = client.get(path_of(feed_urls(secret, site=Site.objects.get(code="SARA"))["url"]))
    assert set(events_of(site_feed.content)) == {"GEANT-CHG-1"}
    carrier_feed = client.get(path_of(feed_urls(secret, carrier=Carrier.objects.get(code="GEANT"))["url"]))
    assert set(events_of(carrier_feed.content)) == {"GEANT-CHG-1", "GEANT-CHG-2"}
    assert FeedToken.objects.get().last_used_at is not None


def test_tokens_protect_and_limit_the_feeds(calendar_data, client):
    _, secret = feed_token_create(name="noc")
    sara = Site.objects.get(code="SARA")
    limited, limited_secret = feed_token_create(name="sara", site=sara)
    assert client.get(f"/maintenance/feeds/{'x' * 43}/all.ics").status_code == 404
    assert client.get("/maintenance/feeds/short/all.ics").status_code == 404
    assert client.get(f"/maintenance/feeds/{limited_secret}/site/SARA.ics").status_code == 200
    # a site token opens its site's feed only
    assert client.get(f"/maintenance/feeds/{limited_secret}/all.ics").status_code == 404
    assert client.get(f"/maintenance/feeds/{limited_secret}/site/CERN.ics").status_code == 404
    assert client.get(f"/maintenance/feeds/{secret}/site/NOWHERE.ics").status_code == 404
    feed_token_revoke(token=limited)
    assert client.get(f"/maintenance/feeds/{limited_secret}/site/SARA.ics").status_code == 404
    # only the hash is stored
    assert not FeedToken.objects.filter(token_hash=secret).exists()


def test_a_calendar_client_subscribes_over_http(calendar_data, live_server):
    """What Outlook/Thunderbird do: GET the URL (the webcal:// form is the same URL over http(s))."""
    _, secret = feed_token_create(name="thunderbird")
    url = f"{live_server.url}/maintenance/feeds/{secret}/all.ics"
    request = urllib.request.Request(url, headers={"User-Agent": "Mozilla/5.0 Thunderbird/115.0",
                                                   "Accept": "text/calendar"})
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 200 and response.headers.get_content_type() == "text/calendar"
        body = response.read()
    calendar = Calendar.from_ical(body)
    assert str(calendar["X-WR-CALNAME"]) == "wanmon maintenance"
    assert len(calendar.walk("VEVENT")) == 3
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(f"{live_server.url}/maintenance/feeds/{'y' * 43}/all.ics", timeout=10)
    assert err.value.code == 404


def test_imported_bcop_windows_reexport_with_the_carriers_identifiers(topology, client):
    maintenance_import_file(path=BCOP / "2-updated.ics")
    _, secret = feed_token_create(name="x")
    body = client.get(f"/maintenance/feeds/{secret}/all.ics").content
    # more than 90 days ago: only windows from 90 days back are in feeds
    assert events_of(body) == {}
    body_all = client.get(f"/maintenance/feeds/{secret}/carrier/EXAMPLE.ics").content
    assert events_of(body_all) == {}
    from wanmon.maintenance.feeds import maintenance_export_windows

    (w,) = maintenance_export_windows(now=datetime(2015, 10, 1, tzinfo=UTC))
    assert (w.uid, w.sequence, w.reference, w.provider, w.account) == (
        "42", 2, "WorkOrder-31415", "example.com", "137.035999173")
    assert w.organizer == "Example NOC <noone@example.com>"


def test_export_command_and_token_command(calendar_data, tmp_path, capsys):
    out = tmp_path / "all.ics"
    call_command("maintenance_export", "--site", "CERN", "-o", str(out))
    assert set(events_of(out.read_bytes())) == {"GEANT-CHG-1", "JANET-77", "GEANT-CHG-2"}
    call_command("maintenance_feed_token", "create", "outlook", "--carrier", "JANET")
    printed = capsys.readouterr().out
    assert "/maintenance/feeds/" in printed and "/carrier/JANET.ics" in printed and "webcal://" in printed
    call_command("maintenance_feed_token", "revoke", "outlook")
    assert FeedToken.objects.get(name="outlook").revoked_at is not None
    with pytest.raises(CommandError, match="unknown carrier 'NOPE'"):
        call_command("maintenance_export", "--carrier", "NOPE")
    with pytest.raises(CommandError, match="unknown site 'XYZ'"):
        call_command("maintenance_feed_token", "create", "x", "--site", "XYZ")
