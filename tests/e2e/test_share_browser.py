"""A carrier opens its share link in system Chromium without an account: the verdict per domain, the timeline from
the onset and its circuit IDs are there, nothing of the other carriers, no navigation to the internal pages, no
request leaving 127.0.0.1, and the print layout drops the page's header. A revoked link answers 410 in the site's
error layout. Every load fails on a script error or a refused request (``Browser.check``)."""

from __future__ import annotations

import pytest
from django.utils import timezone

from tests.alerts.test_pipeline import T
from tests.e2e.test_dashboard_browser import SHOTS, TIMEOUT_MS, VIEWPORT, Browser, browser  # noqa: F401 (fixture)
from tests.sharing.conftest import HIDDEN, shared_faults
from wanmon.alerts.models import Incident
from wanmon.alerts.services import alerts_process
from wanmon.inventory.models import Carrier
from wanmon.sharing.services import share_link_create, share_link_revoke

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


class AnonymousBrowser(Browser):
    """A tab with no account: what a carrier's NOC has (``Browser`` without its login)."""

    def __init__(self, chromium, base_url: str):  # noqa: D107 - Browser's, without the login
        self.base = base_url
        self.context = chromium.new_context(viewport=VIEWPORT, locale="en-GB", timezone_id="UTC")
        self.context.set_default_timeout(TIMEOUT_MS)
        self.context.set_default_navigation_timeout(TIMEOUT_MS)
        self.page = self.context.new_page()
        self.requests, self.errors, self.refused = [], [], []
        self.expected = {}
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on("pageerror", lambda error: self.errors.append(f"page error: {error}"))
        self.page.on("console", self._console)
        self.page.on("requestfailed", self._failed)
        self.page.on("response", self._response)


@pytest.fixture
def shared(live_server, settings):
    settings.ALERTS_DEFAULT_RECIPIENTS = []
    shared_faults()
    alerts_process(now=T, flush=True, dispatch=False)  # the sent-log rows; nothing leaves this machine
    fra = Incident.objects.get(key="element:geant-fra")
    now = timezone.now()
    _, url = share_link_create(incident=fra, carrier=Carrier.objects.get(code="GEANT"), days=7, now=now)
    _, revoked = share_link_create(incident=fra, carrier=Carrier.objects.get(code="GEANT"), days=7, now=now)
    share_link_revoke(incident=fra, url=revoked, now=now)
    path = url.split("://", 1)[1].split("/", 1)[1]
    return live_server, f"/{path}", "/" + revoked.split("://", 1)[1].split("/", 1)[1]


def test_a_carrier_opens_its_link_without_login_and_finds_the_verdict_the_timeline_and_its_circuits(browser, shared):  # noqa: F811
    server, path, revoked = shared
    tab = AnonymousBrowser(browser, server.url)
    try:
        page = tab.page
        tab.open(path, shot="share-geant")
        text = page.inner_text("main")
        # the verdict per domain: GEANT suspect, the sites cleared, GARR's box only "another carrier's segment"
        assert page.get_attribute('tr[data-domain="GEANT"]', "data-verdict") == "suspect"
        assert page.get_attribute('tr[data-domain="FZK"]', "data-verdict") == "cleared"
        assert page.get_attribute('tr[data-domain="CERN"]', "data-verdict") == "cleared"
        assert "The evidence points at GEANT." in text and "another carrier's segment" in text
        assert "errors in peak 2.5/s" in text  # the far end of the GEANT link counted the CRC errors
        # the timeline from the onset, and the circuit IDs as GEANT knows them
        timeline = page.inner_text("#timeline")
        assert "01 Mar 11:10 UTC onset: the network changed" in timeline
        assert "SHARED_EQUIPMENT_SUSPECT geant-fra began" in timeline
        assert page.locator("#circuits td.cid").all_inner_texts() == ["GEANT-FRA-GVA-100G", "GEANT-GVA-CERN"]
        for name in HIDDEN:
            assert name not in page.content(), name
        # no way into the internal pages, no login asked
        hrefs = page.eval_on_selector_all("a[href]", "els => els.map(e => e.getAttribute('href'))")
        assert hrefs == ["#main"] and page.locator("nav").count() == 0 and "/accounts/login" not in page.url
        # the print layout: no header, the verdict kept
        page.emulate_media(media="print")
        assert page.locator("header.topbar").is_hidden() and page.locator("#verdict").is_visible()
        page.screenshot(path=str(SHOTS / "share-geant-print.png"), full_page=True)
        page.emulate_media(media="screen")

        # a revoked link: 410 in the site's error layout, without navigation
        tab.expect_refusal(revoked, 410)
        response = page.goto(f"{server.url}{revoked}", wait_until="networkidle")
        assert response.status == 410 and page.get_attribute("#error-page", "data-status") == "410"
        assert "revoked" in page.inner_text("#error-message") and tab.refused == [(f"{server.url}{revoked}", 410)]
        tab.check("revoked link")
    finally:
        tab.close()
