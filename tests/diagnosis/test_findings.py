"""Findings lifecycle (dedup, update, auto-resolve, reopen, acknowledge) and the findings API."""

from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import Group

from wanmon.diagnosis.evidence import Finding as EngineFinding
from wanmon.diagnosis.models import Finding
from wanmon.diagnosis.services import finding_acknowledge, findings_sync

pytestmark = pytest.mark.django_db
T = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def engine_finding(code="ASYMMETRIC_PATH", subject=None, summary="FZK->CERN carries 3 %", severity="critical"):
    return EngineFinding(code=code, severity=severity, subject=subject or {"src": "FZK", "dst": "CERN"},
                         start=T - timedelta(hours=2), end=T, summary=summary, explanation="because",
                         evidence={"ratio": 0.03}, actions=("clean the patch panel",))


def test_same_code_and_subject_updates_the_open_finding():
    first = findings_sync(findings=[engine_finding()], now=T)
    second = findings_sync(findings=[engine_finding(summary="FZK->CERN carries 2 %")], now=T + timedelta(minutes=1))
    assert len(first.opened) == 1 and second.opened == [] and second.updated == first.opened
    finding = Finding.objects.get()
    assert finding.summary == "FZK->CERN carries 2 %" and finding.last_seen_at == T + timedelta(minutes=1)
    assert [e.kind for e in finding.events.all()] == ["opened", "updated"]


def test_cleared_evidence_resolves_and_recurrence_opens_a_new_finding():
    findings_sync(findings=[engine_finding(), engine_finding(code="PATH_DOWN", subject={"src": "CERN", "dst": "RAL"})],
                  now=T)
    result = findings_sync(findings=[engine_finding()], now=T + timedelta(minutes=5))
    down = Finding.objects.get(code="PATH_DOWN")
    assert result.resolved == [down.id] and down.status == "resolved" and down.resolved_at == T + timedelta(minutes=5)
    findings_sync(findings=[engine_finding(code="PATH_DOWN", subject={"src": "CERN", "dst": "RAL"})],
                  now=T + timedelta(minutes=10))
    assert Finding.objects.filter(code="PATH_DOWN").count() == 2
    assert Finding.objects.filter(code="PATH_DOWN", status="open").count() == 1


def test_acknowledged_stays_acknowledged_while_present(django_user_model):
    findings_sync(findings=[engine_finding()], now=T)
    noc = django_user_model.objects.create_user("noc")
    finding_acknowledge(finding=Finding.objects.get(), user=noc, note="on it", now=T + timedelta(minutes=1))
    findings_sync(findings=[engine_finding()], now=T + timedelta(minutes=2))
    finding = Finding.objects.get()
    assert finding.status == "acknowledged" and finding.acknowledged_by == noc
    assert finding.events.filter(kind="acknowledged", note="on it").exists()


def test_api_lists_filters_and_acknowledges_with_roles(client, django_user_model):
    findings_sync(findings=[engine_finding(), engine_finding(code="HOST_TCP_TUNING", severity="warning",
                                                             subject={"site": "ASGC", "host": "asgc-dt01"})], now=T)
    viewer = django_user_model.objects.create_user("viewer", password="pw-viewer-1")
    operator = django_user_model.objects.create_user("operator", password="pw-operator-1")
    operator.groups.add(Group.objects.get(name="operator"))
    assert client.get("/api/v1/findings").status_code in (401, 403)

    client.force_login(viewer)
    body = client.get("/api/v1/findings", {"site": "ASGC"}).json()
    assert [f["code"] for f in body["results"]] == ["HOST_TCP_TUNING"]
    asym = Finding.objects.get(code="ASYMMETRIC_PATH")
    detail = client.get(f"/api/v1/findings/{asym.id}").json()
    assert detail["actions"] == ["clean the patch panel"] and detail["events"][0]["kind"] == "opened"
    assert client.post(f"/api/v1/findings/{asym.id}/acknowledge", {"note": "x"}).status_code == 403

    client.force_login(operator)
    response = client.post(f"/api/v1/findings/{asym.id}/acknowledge", {"note": "calling GEANT"},
                           content_type="application/json")
    assert response.status_code == 200 and response.json()["status"] == "acknowledged"
    assert response.json()["acknowledged_by"] == "operator"
