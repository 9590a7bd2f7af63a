"""Grafana annotation views (time, timeend, text, tags) and the parked-runs page."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth import get_user_model
from django.db import connection

from tests.perfsonar.conftest import load
from wanmon.inventory.models import Carrier
from wanmon.maintenance.models import MaintenanceWindow
from wanmon.perfsonar.choices import RunState
from wanmon.perfsonar.models import PerfsonarRun

pytestmark = pytest.mark.django_db


def annotations(view: str) -> list[dict]:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {view} ORDER BY time")
        names = [c.name for c in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def test_maintenance_windows_as_annotations(ps_topo):
    start = datetime(2026, 3, 1, 22, 0, tzinfo=UTC)
    geant = Carrier.objects.create(code="GEANT", name="GEANT")
    MaintenanceWindow.objects.create(reference="GEANT-1234", carrier=geant, start=start, end=start + timedelta(hours=4),
                                     impact="outage", summary="fibre repair Frankfurt")
    (row,) = annotations("wanmon_maintenance_annotations")
    assert (row["time"], row["timeend"]) == (start, start + timedelta(hours=4))
    assert row["text"] == "GEANT GEANT-1234 (outage, confirmed): fibre repair Frankfurt"
    assert row["tags"].split(",") == ["maintenance", "GEANT", "outage", "confirmed", "mute"]


def test_findings_and_incidents_as_annotations(ps_topo):
    from wanmon.alerts.models import Incident
    from wanmon.diagnosis.models import Finding

    seen = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    finding = Finding.objects.create(
        code="LOSS_LIMITED", severity="critical", subject={"src": "CERN", "dst": "FZK"}, subject_key="CERN->FZK",
        start=seen, end=seen + timedelta(hours=1), summary="0.3 % loss CERN->FZK", first_seen_at=seen,
        last_seen_at=seen + timedelta(hours=2),
    )
    (row,) = annotations("wanmon_finding_annotations")
    assert (row["time"], row["timeend"]) == (seen, seen + timedelta(hours=2))
    assert row["text"] == "LOSS_LIMITED (critical, open): 0.3 % loss CERN->FZK"
    assert row["tags"].split(",") == ["finding", "LOSS_LIMITED", "critical", "open", "src:CERN", "dst:FZK"]
    assert row["finding_id"] == finding.pk
    Incident.objects.create(key="k", kind="path", severity="critical", code="LOSS_LIMITED", subject_text="CERN->FZK",
                            title="Packet loss CERN->FZK", sites=["CERN", "FZK"], opened_at=seen,
                            changed_at=seen + timedelta(minutes=30), cleared_at=seen + timedelta(hours=3))
    (row,) = annotations("wanmon_incident_annotations")
    assert (row["time"], row["timeend"]) == (seen, seen + timedelta(hours=3))
    assert row["text"] == "Packet loss CERN->FZK [critical, open]"
    assert row["tags"].split(",") == ["incident", "LOSS_LIMITED", "critical", "open", "path", "site:CERN", "site:FZK"]


def test_parked_page_lists_the_endpoints_and_maps_them(client, ps_topo):
    body = load("pscheduler-archiver-http-trace-1.json")
    client.put("/api/v1/perfsonar/archive", data=json.dumps(body), content_type="application/json",
               HTTP_AUTHORIZATION=f"Bearer {ps_topo['cern_token']}")
    viewer = get_user_model().objects.create_user("viewer", password="pw")
    client.force_login(viewer)
    assert client.get("/perfsonar/").status_code == 403
    operator = get_user_model().objects.create_user("op", password="pw", is_staff=True)
    client.force_login(operator)
    page = client.get("/perfsonar/").content.decode()
    assert "lima-perfsonar-vm" in page and "1.1.1.1" in page and body["id"] in page
    client.post("/perfsonar/map", {"endpoint": "lima-perfsonar-vm", "site": "CERN/cern-ps01"})
    response = client.post("/perfsonar/map", {"endpoint": "1.1.1.1", "site": "FZK"}, follow=True)
    assert "1 run(s) ingested" in response.content.decode()
    assert PerfsonarRun.objects.get(run_id=body["id"]).state == RunState.INGESTED
    assert "No run is waiting" in client.get("/perfsonar/").content.decode()


@pytest.mark.django_db(transaction=True)
def test_the_readonly_role_reads_the_annotations(ps_topo, monkeypatch):
    import psycopg
    from django.core.management import call_command

    monkeypatch.setenv("WANMON_READONLY_PASSWORD", "ro-secret-2")
    call_command("create_readonly_role", "--name", "wanmon_ro_annotations")
    s = connection.settings_dict
    dsn = f"host={s['HOST']} port={s['PORT']} dbname={s['NAME']} user=wanmon_ro_annotations password=ro-secret-2"
    try:
        with psycopg.connect(dsn, autocommit=True) as ro:
            for view in ("finding", "incident", "maintenance"):
                assert ro.execute(f"SELECT count(*) FROM wanmon_{view}_annotations").fetchone() == (0,)
    finally:
        with connection.cursor() as c:
            c.execute("DROP OWNED BY wanmon_ro_annotations")
            c.execute("DROP ROLE wanmon_ro_annotations")
