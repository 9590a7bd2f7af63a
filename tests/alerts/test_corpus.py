"""`manage.py replay FILE --keep --notify` over the whole scenario corpus (tests/scenarios and the alerting
scenarios), the alerting after every cycle in the file's time as production's beat runs it: every paging incident
gets exactly one first notice, an info-only one none, and every e-mail is in the sent-log (replaying twice:
test_pipeline)."""

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
    # a cycle and an alerting run every 30 minutes (the corpus's tests run every 15-30): the suite's time
    call_command("replay", str(scenario), "--keep", "--notify", "--step", "30", stdout=StringIO(), stderr=StringIO())

    # an incident merged into another before its group wait ended is told through that one
    paging = Incident.objects.filter(severity__in=["warning", "critical"], muted=False, merged_into__isnull=True)
    sent = Notification.objects.filter(status="sent")
    messages = smtp.wait_for(sent.count() + 1, 0.2)  # sent synchronously: already delivered, or never
    assert sorted(m.subject for m in messages) == sorted(sent.values_list("subject", flat=True))
    firing = sent.filter(kind="firing")
    assert sorted(firing.values_list("incident_id", flat=True)) == sorted(paging.values_list("id", flat=True))
    # every active finding is in exactly one incident; every paging finding is in a paging (or muted) incident
    assert all(f.incident_memberships.count() == 1 for f in Finding.objects.exclude(status="resolved"))
    info_only = Incident.objects.filter(severity="info")
    assert not Notification.objects.filter(incident__in=info_only).exists()
