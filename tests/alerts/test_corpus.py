"""`manage.py replay FILE --keep --notify` over the whole scenario corpus (tests/scenarios and the alerting
scenarios): every paging incident is e-mailed exactly once and nothing else is (replaying twice: test_pipeline)."""

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from tests.alerts.conftest import HERE, SCENARIOS
from wanmon.alerts.models import Incident, Notification
from wanmon.diagnosis.models import Finding

pytestmark = pytest.mark.django_db
CORPUS = sorted([*SCENARIOS.glob("*.yaml"), *(HERE / "scenarios").glob("*.yaml")])


@pytest.mark.parametrize("scenario", CORPUS, ids=[p.stem for p in CORPUS])
def test_replay_notify_emails_each_paging_incident_once(scenario: Path, smtp):
    call_command("replay", str(scenario), "--keep", "--notify", "--step", "auto", stdout=StringIO(), stderr=StringIO())

    paging = Incident.objects.filter(severity__in=["warning", "critical"], muted=False)
    messages = smtp.wait_for(paging.count() + 1, 0.2)  # sent synchronously: already delivered, or never
    assert sorted(m.subject for m in messages) == sorted(
        Notification.objects.filter(status="sent").values_list("subject", flat=True))
    assert len(messages) == paging.count()
    # every active finding is in exactly one incident; every paging finding is in a paging (or muted) incident
    assert all(f.incident_memberships.count() == 1 for f in Finding.objects.exclude(status="resolved"))
    info_only = Incident.objects.filter(severity="info")
    assert not Notification.objects.filter(incident__in=info_only).exists()
