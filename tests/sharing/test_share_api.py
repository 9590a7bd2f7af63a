"""The carrier share link over HTTP: made and revoked by operators only, opened without a login, scoped to its
carrier (nothing of another carrier or of an unrelated path, in HTML or text), refused once expired or revoked,
every access logged (docs/sharing.md)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.alerts.test_pipeline import T
from tests.sharing.conftest import HIDDEN, shared_faults
from wanmon.alerts.models import Incident
from wanmon.alerts.services import alerts_process
from wanmon.sharing.models import ShareAccess, ShareLink

pytestmark = pytest.mark.django_db


@pytest.fixture
def incidents(settings):
    settings.ALERTS_DEFAULT_RECIPIENTS = []
    settings.WANMON_BASE_URL = "https://wanmon.example.org"
    shared_faults()
    alerts_process(now=T, flush=True, dispatch=False)
    return {i.key: i for i in Incident.objects.all()}


def share(client, incident, **body):
    return client.post(f"/api/v1/incidents/{incident.id}/share", body, content_type="application/json")


def local(url: str) -> str:
    return url.removeprefix("https://wanmon.example.org")


def test_an_operator_shares_the_geant_incident_and_geant_reads_it_without_login(client, operator, viewer, incidents):
    fra = incidents["element:geant-fra"]
    # anonymous and viewers may not make links
    assert share(client, fra, carrier="GEANT", days=7).status_code in (401, 403)
    client.force_login(viewer)
    assert share(client, fra, carrier="GEANT", days=7).status_code == 403
    client.force_login(operator)
    before = timezone.now()
    answer = share(client, fra, carrier="GEANT", days=7)
    assert answer.status_code == 201, answer.content
    body = answer.json()
    assert body["url"].startswith("https://wanmon.example.org/share/")
    token = body["url"].rsplit("/", 1)[1]
    assert len(token) >= 43  # 256 random bits
    # the alerting made links for the carriers' copies of its e-mails already (origin "email"): this one is the API's
    link = ShareLink.objects.get(origin="api")
    expires = link.expires_at
    assert timedelta(days=7) <= expires - before <= timedelta(days=7, minutes=1)
    assert body["expires_at"].startswith(expires.strftime("%Y-%m-%dT%H:%M"))
    # only the token's hash is stored
    assert token not in (link.token_hash, link.token_prefix) and link.token_hash != token

    client.logout()
    page = client.get(local(body["url"]), HTTP_USER_AGENT="GEANT NOC browser", REMOTE_ADDR="192.0.2.44")
    assert page.status_code == 200
    html = page.content.decode()
    # the verdict: GEANT suspect, the sites cleared, the other carrier on CNAF's path unnamed
    assert 'data-domain="GEANT" data-verdict="suspect"' in html
    assert 'data-domain="FZK" data-verdict="cleared"' in html and 'data-domain="CERN" data-verdict="cleared"' in html
    assert "another carrier&#x27;s segment" in html
    assert "The evidence points at GEANT." in html
    # the evidence: the suspect's, the far end's CRC errors, counters at both ends, the circuits GEANT knows
    assert "crossed by every degraded direction: FZK-&gt;CERN, CNAF-&gt;CERN" in html
    assert "far end: INTERFACE_ERRORS geant-gva:et-1/0/0" in html
    assert "geant-fra:et-1/1/0: no errors or discards counted | geant-gva:et-1/0/0: errors in peak 2.5/s" in html
    assert "GEANT-FRA-GVA-100G" in html and "GEANT-GVA-CERN" in html
    assert "healthy only in the opposite direction (weighs little): 1 not shown here" in html
    assert "host tests: no host or TCP tuning finding for the hosts of FZK" in html
    # RAL->CERN crosses cern-border and is healthy: counted, not named (TRIUMF->CERN is degraded)
    assert "healthy paths through cern-border: 1 other path (not named here)" in html and "RAL" not in html
    # the traceroute: when, how many hops answered, the path MTU; not the hop addresses
    assert "traceroute at 01 Mar 11:30 UTC: 4 hops, 3 answered, path MTU 9000 bytes" in html
    # the timeline from the onset (11:10 UTC on 1 March)
    assert "01 Mar 11:10 UTC" in html and "onset: the network changed" in html
    # no navigation to internal pages, no script
    assert "<nav" not in html and "<script" not in html and 'href="/' not in html.replace('href="/static/', "")
    assert page["Cache-Control"] == "no-store" and "script-src 'self'" in page["Content-Security-Policy"]
    for name in HIDDEN:
        assert name not in html, name

    text = client.get(local(body["url"]) + "?format=txt", REMOTE_ADDR="192.0.2.45")
    assert text.status_code == 200 and text["Content-Type"].startswith("text/plain")
    plain = text.content.decode()
    assert "- carrier GEANT: SUSPECT (geant-fra, geant-gva)" in plain
    assert "- site FZK: CLEARED" in plain and "- another carrier's segment: CLEARED" in plain
    assert "CNAF->CERN: CNAF (cleared) -> another carrier's segment (cleared) -> GEANT (suspect) -> CERN" in plain
    assert "- GEANT-FRA-GVA-100G (100 Gb/s): geant-fra:et-1/1/0 - geant-gva:et-1/0/0, active" in plain
    assert "01 Mar 11:10 UTC: onset" in plain
    for name in HIDDEN:
        assert name not in plain, name

    # every access logged, with its time and address
    accesses = list(ShareAccess.objects.order_by("id"))
    assert [(a.address, a.format, a.status) for a in accesses] == [("192.0.2.44", "html", 200),
                                                                    ("192.0.2.45", "txt", 200)]
    assert accesses[0].user_agent == "GEANT NOC browser" and before <= accesses[0].time <= timezone.now()
    client.force_login(operator)
    listed = client.get(f"/api/v1/incidents/{fra.id}/share").json()
    assert [(row["origin"], row["carrier"], len(row["accesses"])) for row in listed] == [
        ("api", "GEANT", 2), ("email", "GEANT", 0)]  # GARR operates no root element: not e-mailed
    assert "url" not in listed[0] and listed[0]["last_used_at"] and listed[0]["token_prefix"] == token[:8]


def test_links_are_refused_for_the_wrong_carrier_bad_lifetimes_and_unknown_incidents(client, operator, incidents):
    fra, lag = incidents["element:geant-fra"], incidents["trunk:canarie-lag"]
    client.force_login(operator)
    # CANARIE operates nothing on the GEANT incident's paths; GARR does (CNAF->CERN), and may be given one
    refused = share(client, fra, carrier="CANARIE", days=7)
    assert refused.status_code == 409
    assert refused.json()["errors"][0]["path"] == "carrier" and "CANARIE" in refused.json()["errors"][0]["message"]
    assert share(client, fra, carrier="GARR", days=7).status_code == 201
    assert share(client, lag, carrier="CANARIE", days=1).status_code == 201
    for days in (0, 91, "x", None):
        answer = share(client, fra, carrier="GEANT", days=days)
        assert answer.status_code == 400 and "days" in answer.content.decode(), days
    answer = share(client, fra, carrier="NOPE", days=3)
    assert answer.status_code == 400 and "carrier" in answer.content.decode()
    assert share(client, fra, days=3).status_code == 400
    assert client.post("/api/v1/incidents/999999/share", {"carrier": "GEANT", "days": 3},
                       content_type="application/json").status_code == 404


def test_a_garr_page_shows_garr_but_neither_geant_s_boxes_nor_its_circuits(client, operator, incidents):
    fra = incidents["element:geant-fra"]
    client.force_login(operator)
    url = share(client, fra, carrier="GARR", days=2).json()["url"]
    client.logout()
    plain = client.get(local(url) + "?format=txt").content.decode()
    assert "GARR-MIL-FRA-10G" in plain and "- carrier GARR: CLEARED (garr-mil)" in plain
    assert "another carrier's segment: SUSPECT" in plain
    # its own end of the link to GEANT with its counters, GEANT's end unnamed; the incident's other path is there
    assert "link: circuit GARR-MIL-FRA-10G: garr-mil:xe-0/1/0: no counters read | another carrier's segment" in plain
    assert "FZK->CERN: FZK (cleared) -> another carrier's segment (suspect) -> CERN (cleared)" in plain
    for name in ("GEANT", "geant-fra", "geant-gva", "GEANT-FRA-GVA-100G", "canarie", "TRIUMF"):
        assert name not in plain, name


def test_revoked_expired_and_wrong_links_are_refused_and_logged(client, operator, viewer, incidents):
    fra = incidents["element:geant-fra"]
    client.force_login(operator)
    url = share(client, fra, carrier="GEANT", days=3).json()["url"]
    other = share(client, fra, carrier="GEANT", days=3).json()["url"]
    # revoking: operators only, with the URL; a URL that is no link of this incident is a 404 naming url
    client.force_login(viewer)
    assert client.delete(f"/api/v1/incidents/{fra.id}/share", {"url": url},
                         content_type="application/json").status_code == 403
    client.force_login(operator)
    assert client.delete(f"/api/v1/incidents/{fra.id}/share", {}, content_type="application/json").status_code == 400
    wrong = client.delete(f"/api/v1/incidents/{fra.id}/share", {"url": url + "x"}, content_type="application/json")
    assert wrong.status_code == 404 and wrong.json()["errors"][0]["path"] == "url"
    assert client.delete(f"/api/v1/incidents/{fra.id}/share", {"url": url},
                         content_type="application/json").status_code == 204
    client.logout()
    gone = client.get(local(url))
    assert gone.status_code == 410 and 'data-status="410"' in gone.content.decode()
    assert "revoked" in gone.content.decode() and "<nav" not in gone.content.decode()
    assert client.get(local(url) + "?format=txt").status_code == 410
    # an expired link
    past = timezone.now() - timedelta(seconds=1)
    ShareLink.objects.filter(revoked_at__isnull=True, origin="api").update(expires_at=past)
    expired = client.get(local(other))
    assert expired.status_code == 410 and "expired" in expired.content.decode()
    # a token no link has, and a mangled one: 404 in the same layout, nothing logged for them
    for bad in ("/share/" + "A" * 43, "/share/x", local(url)[:-1]):
        answer = client.get(bad)
        assert answer.status_code == 404 and 'data-status="404"' in answer.content.decode(), bad
    assert [(a.link.expires_at < timezone.now() or a.link.revoked_at is not None, a.status)
            for a in ShareAccess.objects.order_by("id")] == [(True, 410), (True, 410), (True, 410)]
