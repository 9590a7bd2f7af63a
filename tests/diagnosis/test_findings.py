"""Findings lifecycle (dedup, update, auto-resolve, reopen, acknowledge) and the findings API."""

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import Group

from wanmon.diagnosis.evidence import RuleFinding
from wanmon.diagnosis.models import DiagnosisCycle, Finding
from wanmon.diagnosis.services import finding_acknowledge, findings_sync
from wanmon.diagnosis.shards import diagnosis_cycle_close

pytestmark = pytest.mark.django_db
T = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def engine_finding(code="ASYMMETRIC_PATH", subject=None, summary="FZK->CERN carries 3 %", severity="critical"):
    return RuleFinding(code=code, severity=severity, subject=subject or {"src": "FZK", "dst": "CERN"},
                         start=T - timedelta(hours=2), end=T, summary=summary, explanation="because",
                         evidence={"ratio": 0.03}, actions=("clean the patch panel",))


def test_same_code_and_subject_updates_the_open_finding():
    first = findings_sync(findings=[engine_finding()], now=T)
    second = findings_sync(findings=[engine_finding(summary="FZK->CERN carries 2 %")], now=T + timedelta(minutes=1))
    assert len(first.opened) == 1 and second.opened == [] and second.updated == first.opened
    finding = Finding.objects.get()
    assert finding.summary == "FZK->CERN carries 2 %" and finding.last_seen_at == T + timedelta(minutes=1)
    assert [e.kind for e in finding.events.all()] == ["opened", "updated"]


def test_cleared_evidence_resolves_after_three_misses_over_ten_minutes():
    down = engine_finding(code="PATH_DOWN", subject={"src": "CERN", "dst": "RAL"})
    findings_sync(findings=[engine_finding(), down], now=T)
    for minutes in (1, 2, 3, 9):  # four misses, but the last still 9 min after it was seen: it stays active
        result = findings_sync(findings=[engine_finding()], now=T + timedelta(minutes=minutes))
        finding = Finding.objects.get(code="PATH_DOWN")
        assert result.resolved == [] and finding.status == "open" and finding.resolved_at is None
        assert result.absent == [finding.id]
    assert finding.absent_evaluations == 4 and finding.last_seen_at == T
    result = findings_sync(findings=[engine_finding()], now=T + timedelta(minutes=10))
    finding.refresh_from_db()
    assert result.resolved == [finding.id] and finding.status == "resolved"
    assert finding.resolved_at == T + timedelta(minutes=10) and finding.absent_evaluations == 5
    assert [e.kind for e in finding.events.all()] == ["opened", "resolved"]
    assert Finding.objects.get(code="ASYMMETRIC_PATH").status == "open"


def test_a_finding_needs_three_misses_in_a_row_to_clear():
    down = engine_finding(code="PATH_DOWN", subject={"src": "CERN", "dst": "RAL"})
    findings_sync(findings=[down], now=T)
    findings_sync(findings=[], now=T + timedelta(minutes=15))
    findings_sync(findings=[], now=T + timedelta(minutes=16))  # two misses, 16 min: not yet
    findings_sync(findings=[down], now=T + timedelta(minutes=17))  # seen again: the count starts over
    finding = Finding.objects.get()
    assert finding.status == "open" and finding.absent_evaluations == 0
    for minutes in (30, 31):
        findings_sync(findings=[], now=T + timedelta(minutes=minutes))
    assert Finding.objects.get().status == "open"
    findings_sync(findings=[], now=T + timedelta(minutes=32))
    assert Finding.objects.get().status == "resolved"


def test_flapping_evidence_keeps_one_finding():
    down = engine_finding(code="PATH_DOWN", subject={"src": "CERN", "dst": "RAL"})
    for minutes in range(0, 120, 2):  # bad, good, bad, good ... every minute for two hours
        findings_sync(findings=[down], now=T + timedelta(minutes=minutes))
        findings_sync(findings=[], now=T + timedelta(minutes=minutes + 1))
    finding = Finding.objects.get()
    assert finding.status == "open" and finding.first_seen_at == T
    assert [e.kind for e in finding.events.all()] == ["opened"]


def test_a_recurrence_soon_after_the_resolution_reopens_the_same_finding():
    down = engine_finding(code="PATH_DOWN", subject={"src": "CERN", "dst": "RAL"})
    findings_sync(findings=[down], now=T)
    for minutes in (5, 10, 15):
        findings_sync(findings=[], now=T + timedelta(minutes=minutes))
    finding = Finding.objects.get()
    assert finding.status == "resolved" and finding.resolved_at == T + timedelta(minutes=15)
    result = findings_sync(findings=[down], now=T + timedelta(minutes=40))  # 25 min later: the same problem
    finding.refresh_from_db()
    assert result.reopened == [finding.id] and result.opened == []
    assert finding.status == "open" and finding.resolved_at is None and finding.first_seen_at == T
    assert [e.kind for e in finding.events.all()] == ["opened", "resolved", "reopened"]
    assert finding.events.last().note == "reported again 25 min after it was resolved"
    # resolved again, then back 2 h later: a new problem, a new finding
    for minutes in (50, 55, 60):
        findings_sync(findings=[], now=T + timedelta(minutes=minutes))
    result = findings_sync(findings=[down], now=T + timedelta(hours=3))
    assert len(result.opened) == 1 and result.reopened == []
    assert Finding.objects.filter(code="PATH_DOWN").count() == 2
    assert Finding.objects.filter(code="PATH_DOWN", status="open").count() == 1


def test_the_sharded_cycle_counts_misses_the_same_way():
    """Path findings count a miss in the shard that evaluates their path (``resolve_ids``), element findings when
    a cycle closes without anyone seeing them: both are resolved after three misses over 10 min."""
    errors = engine_finding(code="INTERFACE_ERRORS", subject={"equipment": "geant-fra", "interface": "et-1/0/0"})
    findings_sync(findings=[errors, engine_finding()], now=T)
    path_id = Finding.objects.get(code="ASYMMETRIC_PATH").id
    for minutes in (1, 2, 11):
        at = T + timedelta(minutes=minutes)
        shard = findings_sync(findings=[], now=at, resolve_ids=[path_id])
        closed = diagnosis_cycle_close(cycle=DiagnosisCycle.objects.create(at=at))
        statuses = dict(Finding.objects.values_list("code", "status"))
        if minutes < 11:
            assert shard.resolved == closed == [] and set(statuses.values()) == {"open"}
    assert shard.resolved == [path_id] and closed == [Finding.objects.get(code="INTERFACE_ERRORS").id]
    assert set(statuses.values()) == {"resolved"}


def test_acknowledged_stays_acknowledged_while_present(django_user_model):
    findings_sync(findings=[engine_finding()], now=T)
    noc = django_user_model.objects.create_user("noc")
    finding_acknowledge(finding=Finding.objects.get(), user=noc, note="on it", now=T + timedelta(minutes=1))
    findings_sync(findings=[engine_finding()], now=T + timedelta(minutes=2))
    finding = Finding.objects.get()
    assert finding.status == "acknowledged" and finding.acknowledged_by == noc
    assert finding.events.filter(kind="acknowledged", note="on it").exists()


def test_a_resolved_finding_cannot_be_acknowledged(django_user_model):
    findings_sync(findings=[engine_finding()], now=T)
    Finding.objects.update(status="resolved", resolved_at=T)
    with pytest.raises(ValueError, match="a resolved finding cannot be acknowledged"):
        finding_acknowledge(finding=Finding.objects.get(), user=None, now=T + timedelta(minutes=1))
    assert Finding.objects.get().acknowledged_at is None


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
    Finding.objects.filter(code="HOST_TCP_TUNING").update(status="resolved", resolved_at=T)
    active = client.get("/api/v1/findings", {"active": "true"}).json()["results"]
    resolved = client.get("/api/v1/findings", {"active": "false"}).json()["results"]
    assert [f["code"] for f in active] == ["ASYMMETRIC_PATH"] and [f["code"] for f in resolved] == ["HOST_TCP_TUNING"]


def test_the_onset_stays_at_the_episodes_first_bad_result_as_the_window_slides():
    # given an episode first reported from 10:00, then seen by windows that start later and later
    first = engine_finding()
    findings_sync(findings=[first], now=T)
    for hours in (1, 3, 7):
        window_start = T + timedelta(hours=hours - 6)  # the engine sees the episode from the window's edge on
        start = max(window_start, T - timedelta(hours=2))
        later = replace(engine_finding(), start=start, end=T + timedelta(hours=hours))
        findings_sync(findings=[later], now=T + timedelta(hours=hours))
    # then its onset is still 10:00, while the evidence window has moved on
    finding = Finding.objects.get()
    assert finding.onset == T - timedelta(hours=2) and finding.end == T + timedelta(hours=7)
