"""Maintenance windows held for review or rejected on the dashboard: a held window is listed, marked "held for
review", and turns no path blue nor marks any chart; a rejected one is shown nowhere."""

from __future__ import annotations

import pytest

from wanmon.dashboard import constants as k
from wanmon.maintenance.choices import Review
from wanmon.maintenance.models import MaintenanceWindow

pytestmark = pytest.mark.django_db
DURING = "2026-03-01T08:30:00Z"  # JANET-CHG-1001 (08:00-08:45, janet-lon) is running
AT = "2026-03-01T12:00:00Z"  # GEANT-CHG-2002 (2026-03-03) is upcoming


def _review(reference: str, review: str) -> None:
    assert MaintenanceWindow.objects.filter(reference=reference).update(review=review) == 1


def _chart_marks(response) -> str:
    marks = [t for t in response.context["figures"]["throughput"]["data"] if t.get("meta") == "maintenance"]
    return " ".join(str(t.get("text")) for t in marks)


def test_a_held_window_is_listed_as_held_and_is_no_maintenance_of_the_paths(ral_data, operator_client):
    _review("JANET-CHG-1001", Review.HELD)
    response = operator_client.get("/", {"at": DURING})
    data = response.context["data"]
    # Both directions cross janet-lon: accepted, the window would turn them blue (maintenance).
    assert data.cells[("CERN", "RAL")].health.status != k.MAINTENANCE
    assert data.cells[("RAL", "CERN")].health.status != k.MAINTENANCE
    assert data.cells[("CERN", "RAL")].observation.maintenance == ()
    assert [(m.reference, m.held) for m in data.maintenance_running] == [("JANET-CHG-1001", True)]
    html = response.content.decode()
    item = html[html.index('data-maintenance="JANET-CHG-1001"') :]
    item = item[: item.index("</li>")]
    assert 'data-review="held"' in item and "held for review" in item and ">running<" not in item

    path = operator_client.get("/paths/CERN/RAL/", {"range": "6h", "end": AT})
    assert "JANET-CHG-1001" not in _chart_marks(path)  # the chart marks maintenance in force only
    listed = [m for m in path.context["maintenance"] if m.reference == "JANET-CHG-1001"]
    assert [m.held for m in listed] == [True]
    page = path.content.decode()
    assert "held for review" in page[page.index("Maintenance on its elements") :]

    element = operator_client.get("/equipment/janet-lon/", {"range": "6h", "end": AT}).content.decode()
    assert "JANET-CHG-1001" in element and "held for review" in element


def test_an_accepted_window_still_turns_the_paths_blue_and_marks_the_chart(ral_data, operator_client):
    data = operator_client.get("/", {"at": DURING}).context["data"]
    assert data.cells[("CERN", "RAL")].health.status == k.MAINTENANCE
    assert [(m.reference, m.held) for m in data.maintenance_running] == [("JANET-CHG-1001", False)]
    path = operator_client.get("/paths/CERN/RAL/", {"range": "6h", "end": AT})
    assert "Maintenance JANET-CHG-1001" in _chart_marks(path)
    assert "held for review" not in path.content.decode()


def test_a_rejected_window_is_shown_nowhere(ral_data, operator_client):
    _review("JANET-CHG-1001", Review.REJECTED)
    _review("GEANT-CHG-2002", Review.REJECTED)
    during = operator_client.get("/", {"at": DURING})
    assert during.context["data"].cells[("CERN", "RAL")].health.status != k.MAINTENANCE
    assert during.context["data"].maintenance_running == []
    overview = operator_client.get("/", {"at": AT})
    assert overview.context["data"].maintenance_upcoming == []
    assert "GEANT-CHG-2002" not in overview.content.decode()
    path = operator_client.get("/paths/CERN/RAL/", {"range": "6h", "end": AT})
    assert "JANET-CHG-1001" not in path.content.decode()
    assert "JANET-CHG-1001" not in _chart_marks(path)
    assert path.context["maintenance"] == []
    element = operator_client.get("/equipment/janet-lon/", {"range": "6h", "end": AT}).content.decode()
    assert "JANET-CHG-1001" not in element


def test_a_held_upcoming_window_is_marked_on_the_overview(ral_data, operator_client):
    _review("GEANT-CHG-2002", Review.HELD)
    response = operator_client.get("/", {"at": AT})
    assert [(m.reference, m.held) for m in response.context["data"].maintenance_upcoming] == [("GEANT-CHG-2002", True)]
    html = response.content.decode()
    item = html[html.index('data-maintenance="GEANT-CHG-2002"') :]
    assert "held for review" in item[: item.index("</li>")]
