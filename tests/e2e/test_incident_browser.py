"""Two faults at once, as an on-call engineer sees them in system Chromium: each incident's page says since when,
which findings it gathers (both directions of its paths, the suspect first), who was e-mailed (the carrier that
operates the suspect, never the unrelated sites) and leads to the suspect element's page. Every load fails on a
script error, a refused request or a request leaving 127.0.0.1 (``Browser.check``)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group

from tests.alerts.test_pipeline import T, two_faults
from tests.e2e.test_dashboard_browser import PASSWORD, Browser, browser  # noqa: F401 (fixture)
from wanmon.alerts.models import Incident
from wanmon.alerts.services import alerts_process

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def incidents(live_server, django_user_model, settings):
    settings.ALERTS_DEFAULT_RECIPIENTS = []
    two_faults()
    alerts_process(now=T, flush=True, dispatch=False)  # the sent-log rows; nothing leaves this machine
    user = django_user_model.objects.create_user("oncall", password=PASSWORD)
    user.groups.add(Group.objects.get_or_create(name="operator")[0])
    return live_server, {i.key: i for i in Incident.objects.all()}


def test_each_incident_page_says_since_when_what_who_was_told_and_leads_to_the_suspect(browser, incidents):  # noqa: F811
    server, by_key = incidents
    assert set(by_key) == {"element:geant-fra", "trunk:canarie-lag"}
    tab = Browser(browser, server.url, "oncall")
    try:
        page = tab.page
        fra = by_key["element:geant-fra"]
        tab.open(f"/incidents/{fra.id}", shot="incident-two-faults-geant")
        text = page.inner_text("main") if page.locator("main").count() else page.inner_text("body")
        assert "01 Mar 11:10 UTC" in text  # the onset, in the one time form (another day: with its date)
        for member in ("FZK->CERN", "CNAF->CERN", "geant-fra", "geant-gva:et-1/0/0"):
            assert member in text, member
        assert "TRIUMF" not in text and "canarie" not in text.lower()
        # who was e-mailed: the sites whose paths cross geant-fra and GEANT, nobody else
        assert "noc@geant.test" in text and "operator of geant-fra (carrier GEANT)" in text
        assert "noc@triumf.test" not in text and "noc@canarie.test" not in text
        hrefs = set(page.eval_on_selector_all("a[href]", "els => els.map(e => e.getAttribute('href'))"))
        assert {"/paths/FZK/CERN/", "/paths/CERN/FZK/", "/equipment/geant-fra/"} <= {h.split("?")[0] for h in hrefs}
        page.locator('a[href^="/equipment/geant-fra/"]').first.click()
        page.wait_for_url(f"{server.url}/equipment/geant-fra/**")
        page.wait_for_load_state("networkidle")
        tab.check("suspect element page")

        lag = by_key["trunk:canarie-lag"]
        tab.open(f"/incidents/{lag.id}", shot="incident-two-faults-canarie")
        text = page.inner_text("body")
        assert "TRIUMF->CERN" in text and "canarie-lag" in text and "01 Mar 11:10 UTC" in text
        assert "noc@canarie.test" in text and "noc@triumf.test" in text
        assert "noc@geant.test" not in text and "noc@fzk.test" not in text
    finally:
        tab.close()
