"""The alerting API (/api/v1/incidents, silences, notifications, routing-rules, subscriptions) and the pages."""

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.alerts.conftest import FZK, NOC
from tests.alerts.test_pipeline import replay
from wanmon.alerts.models import Incident, Silence
from wanmon.diagnosis.models import Finding

pytestmark = pytest.mark.django_db


@pytest.fixture
def incident(smtp):
    replay(FZK, "--keep", "--notify")
    smtp.wait_for(1, 5)
    return Incident.objects.get()


def test_incidents_list_and_detail(client, operator, viewer, incident):
    client.force_login(viewer)
    listing = client.get("/api/v1/incidents?active=true&site=FZK").json()
    assert listing["count"] == 1
    row = listing["results"][0]
    assert row["title"] == "geant-fra: 2 paths degraded (CNAF->CERN, FZK->CERN)"
    assert (row["severity"], row["code"], row["status"]) == ("critical", "SHARED_EQUIPMENT_SUSPECT", "open")
    assert row["page"] == f"https://wanmon.example.org/incidents/{incident.id}"
    assert client.get("/api/v1/incidents?site=RAL").json()["count"] == 0
    detail = client.get(f"/api/v1/incidents/{incident.id}").json()
    assert [m["role"] for m in detail["members"]].count("root") == 1 and len(detail["members"]) == 7
    assert [e["kind"] for e in detail["events"]] == ["opened", "notified"]
    assert "notifications" not in detail  # the sent-log names its recipients: operators only
    client.force_login(operator)
    detail = client.get(f"/api/v1/incidents/{incident.id}").json()
    assert detail["notifications"][0]["recipient"] == NOC and detail["notifications"][0]["status"] == "sent"


def test_operators_acknowledge_viewers_cannot(client, operator, viewer, incident):
    client.force_login(viewer)
    assert client.post(f"/api/v1/incidents/{incident.id}/acknowledge", {"note": "x"}).status_code == 403
    client.force_login(operator)
    response = client.post(f"/api/v1/incidents/{incident.id}/acknowledge", {"note": "calling GEANT"},
                           content_type="application/json")
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "acknowledged" and response.json()["acknowledged_by"] == "op"
    assert set(Finding.objects.values_list("status", flat=True)) == {"acknowledged"}


def test_silence_an_incident_with_its_default_matchers(client, operator, incident):
    client.force_login(operator)
    endless = client.post(f"/api/v1/incidents/{incident.id}/silence", {"comment": "GEANT ticket 4711"},
                          content_type="application/json")
    assert endless.status_code == 400 and "ends_at" in endless.content.decode()
    response = client.post(f"/api/v1/incidents/{incident.id}/silence",
                           {"comment": "GEANT ticket 4711", "duration_s": 7200}, content_type="application/json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["matchers"] == {"equipment": "geant-fra"} and body["author"] == "op" and body["active"] is True
    assert body["incident"] == incident.id


def test_silences_crud(client, operator, viewer):
    client.force_login(operator)
    ends = timezone.now() + timedelta(hours=2)
    response = client.post("/api/v1/silences", {"matchers": {"site": "FZK", "code": "LOSS_LIMITED"},
                                                 "comment": "FZK works", "ends_at": ends.isoformat()},
                           content_type="application/json")
    assert response.status_code == 201, response.content
    silence_id = response.json()["id"]
    # bad input: 400 with the reason
    for body, field in (({"matchers": {"colour": "red"}, "comment": "x", "duration_s": 60}, "matchers"),
                        ({"matchers": {"site": "FZK"}, "comment": "x", "duration_s": 30 * 86400}, "duration_s"),
                        ({"matchers": {"site": "FZK"}, "comment": "x"}, "ends_at"),
                        ({"matchers": {"code": "NOPE"}, "comment": "x", "duration_s": 60}, "matchers")):
        bad = client.post("/api/v1/silences", body, content_type="application/json")
        assert bad.status_code == 400 and field in bad.json(), bad.content
    # extend, list, expire (the row stays)
    later = ends + timedelta(hours=1)
    patched = client.patch(f"/api/v1/silences/{silence_id}", {"ends_at": later.isoformat()},
                           content_type="application/json")
    assert patched.status_code == 200 and patched.json()["ends_at"].startswith(later.strftime("%Y-%m-%dT%H:%M"))
    assert client.get("/api/v1/silences?active=true").json()["count"] == 1
    assert client.delete(f"/api/v1/silences/{silence_id}").status_code == 200
    assert client.get("/api/v1/silences?active=true").json()["count"] == 0
    assert Silence.objects.get().expired_by.username == "op"
    client.force_login(viewer)
    assert client.get("/api/v1/silences").status_code == 200
    assert client.post("/api/v1/silences", {}, content_type="application/json").status_code == 403


def test_sent_log_routing_rules_and_own_subscriptions(client, operator, viewer, incident):
    client.force_login(viewer)
    # the sent-log and the routing rules hold people's addresses: operators only
    assert client.get(f"/api/v1/notifications?incident={incident.id}").status_code == 403
    assert client.get("/api/v1/routing-rules").status_code == 403
    assert client.post("/api/v1/routing-rules", {}, content_type="application/json").status_code == 403
    mine = client.post("/api/v1/subscriptions", {"sites": ["FZK"], "min_severity": "critical"},
                       content_type="application/json")
    assert mine.status_code == 201 and mine.json()["user"] == "viewer"
    assert client.post("/api/v1/subscriptions", {"codes": ["NOPE"]},
                       content_type="application/json").status_code == 400
    client.force_login(operator)
    log = client.get(f"/api/v1/notifications?incident={incident.id}").json()["results"]
    assert [(n["kind"], n["recipient"], n["status"]) for n in log] == [("firing", NOC, "sent")]
    assert "body_text" in client.get(f"/api/v1/notifications/{log[0]['id']}").json()
    assert client.get("/api/v1/subscriptions").json()["count"] == 0  # only one's own
    rule = client.post("/api/v1/routing-rules", {"name": "geant", "carriers": ["GEANT"],
                                                 "recipients": ["noc@geant.test"]}, content_type="application/json")
    assert rule.status_code == 201, rule.content
    bad = client.post("/api/v1/routing-rules", {"name": "x", "recipients": ["not-an-address"]},
                      content_type="application/json")
    assert bad.status_code == 400


def test_incident_pages_and_operator_forms(client, operator, viewer, incident):
    client.force_login(viewer)
    page = client.get("/incidents/")
    assert page.status_code == 200 and b"geant-fra: 2 paths degraded" in page.content
    detail = client.get(f"/incidents/{incident.id}")
    assert detail.status_code == 200
    assert b"noc@wanmon.test" not in detail.content and b"Acknowledge</button>" not in detail.content
    assert client.post(f"/incidents/{incident.id}/acknowledge", {"note": "x"}).status_code == 403

    client.force_login(operator)
    detail = client.get(f"/incidents/{incident.id}")
    assert b"Acknowledge</button>" in detail.content and b'value="geant-fra"' in detail.content
    assert b"noc@wanmon.test" in detail.content  # the sent-log, for operators
    response = client.post(f"/incidents/{incident.id}/silence",
                           {"equipment": "geant-fra", "duration_s": 3600, "comment": "ticket 4711"})
    assert response.status_code == 302
    assert Silence.objects.get().matchers == {"equipment": "geant-fra"}
    client.post(f"/incidents/{incident.id}/acknowledge", {"note": "on it"})
    incident.refresh_from_db()
    assert incident.status == "acknowledged"
    silences = client.get("/silences/")
    assert silences.status_code == 200 and b"ticket 4711" in silences.content
    client.post(f"/silences/{Silence.objects.get().id}/expire")
    assert Silence.objects.get().expired_at is not None
    assert client.get("/incidents/999999").status_code == 404
