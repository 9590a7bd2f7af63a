"""The "Test now" button of the finding, incident and path pages: operators ask from the page (the same service as
the API), the page lists the test with its status, its reason when refused, and its result once the agent sent it;
viewers see the tests but get no form and are refused if they post."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from tests.ondemand.test_api import ingest, throughput
from wanmon.alerts.models import Incident, IncidentMember
from wanmon.diagnosis.models import Finding
from wanmon.diagnosis.services import subject_key
from wanmon.ondemand.models import Job

pytestmark = pytest.mark.django_db


@pytest.fixture
def finding(pair):
    now = timezone.now()
    subject = {"src": "CERN", "dst": "FZK"}
    return Finding.objects.create(
        code="LOSS_LIMITED", severity="critical", status="open", subject=subject, subject_key=subject_key(subject),
        start=now - timedelta(hours=1), end=now, summary="CERN->FZK loss-limited at 150 Mb/s",
        first_seen_at=now - timedelta(hours=1), last_seen_at=now,
    )  # fmt: skip


def rows(html: str) -> list[tuple[str, str]]:
    """(status, result) of each test the page lists."""
    return re.findall(r'data-job="\d+" data-status="(\w+)">.*?<td class="job-result">([^<]*)</td>', html, re.S)


def test_an_operator_asks_from_the_finding_page_and_sees_the_result_there(client, operator, api_agent, finding):
    client.force_login(operator)
    page = client.get(f"/findings/{finding.pk}/").content.decode()
    assert 'id="test-now-button"' in page and '<option value="CERN-&gt;FZK" selected>' in page
    assert "No test asked for yet." in page
    # when: the operator asks for a 10 s UDP test at 900 Mb/s from the page
    answer = client.post("/tests/now", {"pair": "CERN->FZK", "kind": "throughput", "protocol": "udp",
                                        "duration_s": "10", "rate_mbps": "900", "finding": finding.pk,
                                        "next": f"/findings/{finding.pk}/"})  # fmt: skip
    assert answer.status_code == 302 and answer["Location"] == f"/findings/{finding.pk}/"
    (job,) = Job.objects.all()
    assert (job.finding_id, job.protocol, job.rate_bps, job.requested_by, job.status) == (
        finding.pk, "udp", 9e8, operator, "queued")  # fmt: skip
    page = client.get(f"/findings/{finding.pk}/").content.decode()
    assert f"Test {job.pk} (throughput CERN-&gt;FZK) queued" in page
    assert rows(page) == [("queued", "")]
    # then: the agent fetches it and sends its result; the page shows the figures
    api_agent.get("/api/v1/agent/jobs")
    record = throughput(job.pk, protocol="udp", throughput_bps=8.95e8, offered_bps=9e8, packets_sent=100_000,
                        packets_lost=250)  # fmt: skip
    assert ingest(api_agent, record).status_code == 200
    page = client.get(f"/findings/{finding.pk}/").content.decode()
    assert rows(page) == [("done", "895.0 Mb/s, 250/100000 lost")]


def test_a_refusal_is_said_on_the_page_with_its_rule(client, operator, pair):
    client.force_login(operator)
    answer = client.post("/tests/now", {"pair": "CERN->FZK", "kind": "throughput", "duration_s": "300",
                                        "next": "/paths/CERN/FZK/"}, follow=True)  # fmt: skip
    page = answer.content.decode()
    assert "refused: duration_cap: 300 s is longer than the 30 s a test on demand may last" in page
    assert rows(page) == [("refused", "")]


def test_the_incident_page_offers_its_paths_and_lists_the_tests_of_its_findings(client, operator, finding):
    now = timezone.now()
    incident = Incident.objects.create(
        key="pair:CERN<->FZK", kind="pair", severity="critical", code="LOSS_LIMITED", subject_text="CERN<->FZK",
        title="CERN<->FZK degraded", root_finding=finding, sites=["CERN", "FZK"], paths=["CERN->FZK", "FZK->CERN"],
        opened_at=now, changed_at=now,
    )  # fmt: skip
    IncidentMember.objects.create(incident=incident, finding=finding, role="root", added_at=now)
    client.force_login(operator)
    client.post("/tests/now", {"pair": "CERN->FZK", "kind": "tracepath", "finding": finding.pk, "next": "/"})
    page = client.get(f"/incidents/{incident.pk}").content.decode()
    assert '<option value="CERN-&gt;FZK" selected>' in page and '<option value="FZK-&gt;CERN">' in page
    assert rows(page) == [("queued", "")]


def test_viewers_see_the_tests_but_cannot_ask(client, django_user_model, pair):
    from django.contrib.auth.models import Group

    viewer = django_user_model.objects.create_user("viewer")
    viewer.groups.add(Group.objects.get(name="viewer"))
    client.force_login(viewer)
    page = client.get("/paths/CERN/FZK/").content.decode()
    assert 'id="test-now-form"' not in page and "Asking for a test needs the operator role." in page
    assert client.post("/tests/now", {"pair": "CERN->FZK", "kind": "throughput"}).status_code == 403
    assert not Job.objects.exists()
