"""Who reads what (docs/permissions.md): viewers, and accounts in no role group, read the network but no contact
data (site contacts, carrier NOC addresses, alert recipients, the sent-mail logs); operators read it all."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import Group
from django.utils import timezone

from wanmon.alerts.models import Incident, Notification, RoutingRule
from wanmon.core.permissions import OPERATOR_GROUP, VIEWER_GROUP
from wanmon.inventory.models import Carrier, Site, SiteContact
from wanmon.maintenance.models import MaintenanceWindow, SiteNotice

pytestmark = pytest.mark.django_db

ADDRESSES = ("noc@cern.test", "noc@geant.test", "boss@cern.test", "changes@geant.test")


@pytest.fixture
def contacts(db):
    """A site contact, a carrier NOC address, a routing rule's recipient, an incident's and a window's sent-log."""
    now = timezone.now()
    cern = Site.objects.create(code="CERN", name="CERN")
    SiteContact.objects.create(site=cern, email="noc@cern.test", name="CERN NOC")
    geant = Carrier.objects.create(code="GEANT", name="GEANT", noc_email="noc@geant.test")
    rule = RoutingRule.objects.create(name="cern-boss", sites=["CERN"], carriers=[], codes=[],
                                      recipients=["boss@cern.test"])
    incident = Incident.objects.create(key="k", kind="equipment", severity="critical", code="CRC_ERRORS",
                                       subject_text="geant-gva", title="geant-gva: CRC errors", opened_at=now,
                                       changed_at=now)
    Notification.objects.create(incident=incident, kind="firing", recipient="noc@cern.test", subject="s",
                                body_text="b", message_id="<m@wanmon>", created_at=now)
    window = MaintenanceWindow.objects.create(reference="GEANT-1", carrier=geant, start=now + timedelta(days=1),
                                              end=now + timedelta(days=1, hours=2), organizer="changes@geant.test")
    SiteNotice.objects.create(window=window, kind="advance", recipient="noc@cern.test",
                              occurrence_start=window.start, sent_at=now)
    return {"incident": incident, "window": window, "rule": rule}


def _login(client, django_user_model, name: str, group: str | None):
    user = django_user_model.objects.create_user(name)
    if group:
        user.groups.add(Group.objects.get(name=group))
    client.force_login(user)
    return client


def _everything_a_caller_reads(client, contacts) -> str:
    """The bodies of the API answers and pages that hold contact data for operators."""
    urls = ["/api/v1/sites/", "/api/v1/carriers/", f"/api/v1/incidents/{contacts['incident'].pk}",
            f"/api/v1/maintenance/windows/{contacts['window'].pk}", f"/incidents/{contacts['incident'].pk}",
            f"/maintenance/{contacts['window'].pk}/"]
    bodies = []
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code)
        bodies.append(response.content.decode())
    return "\n".join(bodies)


@pytest.mark.parametrize("group", [VIEWER_GROUP, None])
def test_viewers_and_accounts_without_a_role_read_no_contact_data(client, django_user_model, contacts, group):
    client = _login(client, django_user_model, "partner", group)
    # the network they may see
    text = _everything_a_caller_reads(client, contacts)
    assert "CERN" in text and "GEANT" in text and "geant-gva: CRC errors" in text and "GEANT-1" in text
    # no address anywhere in it
    assert not [a for a in ADDRESSES if a in text]
    site = client.get("/api/v1/sites/").json()["results"][0]
    assert "contacts" not in site and "noc_email" not in client.get("/api/v1/carriers/").json()["results"][0]
    assert "notifications" not in client.get(f"/api/v1/incidents/{contacts['incident'].pk}").json()
    # and the lists of addresses are refused outright
    for url in ("/api/v1/site-contacts/", "/api/v1/notifications", "/api/v1/routing-rules",
                f"/api/v1/routing-rules/{contacts['rule'].pk}"):
        assert client.get(url).status_code == 403, url


def test_operators_read_the_contact_data(client, django_user_model, contacts):
    client = _login(client, django_user_model, "noc", OPERATOR_GROUP)
    text = _everything_a_caller_reads(client, contacts)
    assert [a for a in ADDRESSES if a not in text] == ["boss@cern.test"]  # a rule's: in the rules' API below
    assert client.get("/api/v1/sites/").json()["results"][0]["contacts"][0]["email"] == "noc@cern.test"
    assert client.get("/api/v1/site-contacts/").json()["results"][0]["email"] == "noc@cern.test"
    assert client.get("/api/v1/notifications").json()["results"][0]["recipient"] == "noc@cern.test"
    assert client.get("/api/v1/routing-rules").json()["results"][0]["recipients"] == ["boss@cern.test"]


def test_the_schema_says_contact_fields_may_be_absent(admin_client):
    schema = admin_client.get("/api/schema/?format=json").json()["components"]["schemas"]
    assert "contacts" not in schema["Site"].get("required", []) and "contacts" in schema["Site"]["properties"]
    assert "notifications" not in schema["IncidentDetail"].get("required", [])
    assert "operators only" in schema["Site"]["properties"]["contacts"]["description"]
