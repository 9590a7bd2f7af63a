"""Dashboard pages over replayed data: what each page shows, with numbers, and who may act."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.db import connection
from django.urls import reverse

from wanmon.dashboard import constants as k
from wanmon.diagnosis.models import Finding
from wanmon.inventory.models import Agent, Site

pytestmark = pytest.mark.django_db
AT = "2026-03-01T12:00:00Z"

PAGES = [
    "/", "/map/", "/paths/CERN/RAL/", "/paths/CERN/RAL/both/", "/equipment/", "/equipment/janet-lon/",
    "/equipment/janet-lon/interfaces/xe-4/0/0/", "/trunks/ral-lag/", "/findings/", "/findings/1/",
    "/explore/", "/preferences/",
]


@pytest.mark.parametrize("url", PAGES)
def test_every_page_needs_a_login(client, url):
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_empty_inventory_pages_render(operator_client):
    for url in ("/", "/map/", "/equipment/", "/findings/", "/explore/"):
        response = operator_client.get(url)
        assert response.status_code == 200, url
    assert b"No path is defined yet" in operator_client.get("/").content
    assert operator_client.get("/paths/CERN/RAL/").status_code == 404
    assert operator_client.get("/equipment/nope/").status_code == 404


def test_overview_grid_as_of_the_scenario_time(ral_data, operator_client):
    response = operator_client.get("/", {"at": AT})
    data = response.context["data"]
    cern_ral = data.cells[("CERN", "RAL")]
    ral_cern = data.cells[("RAL", "CERN")]
    # CERN->RAL: 8.5 Gb/s of 20 Gb/s (42 %) and a LOSS_LIMITED warning; RAL->CERN: 12 Gb/s (60 %), clean.
    assert cern_ral.health.status == k.WARNING
    assert cern_ral.observation.latest_bps == pytest.approx(ral_data.TCP_CERN_RAL_BPS, rel=0.03)
    assert any("42 % of 20 Gb/s" in r for r in cern_ral.health.reasons)
    assert cern_ral.finding_count == 1  # LOSS_LIMITED; the ROUTE_CHANGE (info) does not count
    assert ral_cern.health.status == k.OK
    assert ral_cern.observation.loss_fraction == 0
    html = response.content.decode()
    assert 'data-src="CERN" data-dst="RAL" data-status="warning"' in html
    assert f'background: {k.STATUS_STYLE[k.WARNING][0]}' in html
    assert "GEANT-CHG-2002" in html  # announced for 2026-03-03: upcoming within 7 days
    findings = response.context["data"].findings
    assert {f.code for f in findings} == {"LOSS_LIMITED", "TRUNK_IMBALANCE", "INTERFACE_ERRORS", "ROUTE_CHANGE"}
    order = {"critical": 0, "warning": 1, "info": 2}
    assert [order[f.severity] for f in findings] == sorted(order[f.severity] for f in findings)  # worst first
    assert findings[-1].severity == "info"  # the route change and the uneven but harmless trunk come last
    assert "ROUTE_CHANGE" in {f.code for f in findings if f.severity == "info"}


def test_overview_during_maintenance_turns_the_paths_blue(ral_data, operator_client):
    data = operator_client.get("/", {"at": "2026-03-01T08:30:00Z"}).context["data"]
    # JANET-CHG-1001 (08:00-08:45) is on janet-lon, which both directions cross.
    assert data.cells[("CERN", "RAL")].health.status == k.MAINTENANCE
    assert data.cells[("RAL", "CERN")].health.status == k.MAINTENANCE
    assert [m.reference for m in data.maintenance_running] == ["JANET-CHG-1001"]


def test_overview_offers_the_time_of_the_data_when_nothing_is_recent(ral_data, operator_client):
    response = operator_client.get("/")
    assert response.context["gap_href"] == "/?at=2026-03-01T12%3A01%3A00Z"
    cells = response.context["data"].cells
    # no test in the last 2 days; CERN->RAL still has an open warning finding, which keeps its colour
    assert cells[("RAL", "CERN")].health.status == k.NODATA
    assert cells[("CERN", "RAL")].health.status == k.WARNING


def test_overview_json_fragments_for_the_auto_refresh(ral_data, operator_client):
    payload = operator_client.get("/", {"at": AT, "format": "json"}).json()
    assert set(payload["fragments"]) == {"grid", "findings", "incidents", "maintenance", "agents"}
    assert 'data-status="warning"' in payload["fragments"]["grid"]
    assert payload["generated_at"].endswith("Z")


def test_open_incidents_of_the_alerting_app_are_shown(ral_data, operator_client):
    from wanmon.alerts.models import Incident

    assert "No open incident." in operator_client.get("/", {"at": AT}).content.decode()
    finding = Finding.objects.get(code="TRUNK_IMBALANCE")
    incident = Incident.objects.create(
        key="element:ral-lag", kind="element", severity="warning", code=finding.code, subject_text="ral-lag",
        title="ral-lag: members unevenly loaded", root_finding=finding, paths=["CERN->RAL"],
        opened_at=finding.first_seen_at, changed_at=finding.first_seen_at,
    )
    html = operator_client.get("/", {"at": AT}).content.decode()
    assert f'data-incident="{incident.pk}"' in html
    assert f'href="/incidents/{incident.pk}"' in html
    assert "ral-lag: members unevenly loaded" in html


def test_silent_agents_are_listed(ral_data, operator_client):
    site = Site.objects.get(code="RAL")
    Agent.objects.create(site=site, name="ral-agent", token_hash="a" * 64, token_prefix="a" * 8)
    Agent.objects.create(site=site, name="ral-agent-2", token_hash="b" * 64, token_prefix="b" * 8,
                         last_seen_at=Finding.objects.first().last_seen_at + timedelta(days=3650))
    html = operator_client.get("/").content.decode()
    assert "1</strong> of 2 active agent(s) stopped reporting" in html
    assert 'data-agent="ral-agent"' in html and 'data-agent="ral-agent-2"' not in html


def _db_values(sql, params):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [r[0] for r in cursor.fetchall()]


def test_path_page_charts_are_the_measurements(ral_data, operator_client):
    response = operator_client.get("/paths/CERN/RAL/", {"range": "6h", "end": AT})
    figures = response.context["figures"]
    json.dumps(figures, allow_nan=False)
    tcp = next(t for t in figures["throughput"]["data"] if t["name"] == "CERN→RAL")
    stored = _db_values(
        """SELECT throughput_bps FROM measurements_throughputtest t JOIN inventory_site s ON s.id = t.src_id
           JOIN inventory_site d ON d.id = t.dst_id WHERE s.code = 'CERN' AND d.code = 'RAL' AND protocol = 'tcp'
           AND time >= '2026-03-01T06:00Z' AND time < '2026-03-01T12:00Z' ORDER BY time, t.id""", [])
    assert tcp["y"] == stored and len(stored) == 12
    # one marker per kind: the maintenance window, the findings and the route change at 10:02
    marks = {t["meta"]: t for t in figures["throughput"]["data"] if t.get("yaxis") == "y2"}
    assert "Maintenance JANET-CHG-1001" in marks["maintenance"]["text"]
    assert "2026-03-01 10:02:00" in marks["route"]["x"]
    assert "ROUTE_CHANGE" in marks["finding"]["text"]
    # egress utilisation of the trunk member the path leaves by: 7 Gb/s of 10 Gb/s
    util = next(t for t in figures["utilisation"]["data"] if t["name"] == "janet-lon:xe-4/0/0 out")
    assert 0.66 < max(v for v in util["y"] if v is not None) < 0.75
    assert figures["utilisation"]["layout"]["title"]["subtitle"]["text"].startswith(
        "source: measurements_interfacerate,")
    # janet-lon:xe-4/0/0 counts 2 CRC errors/s on receive: they hit RAL->CERN, which arrives by it, not
    # CERN->RAL, which leaves by it (its transmit side has none)
    errors = [t["name"] for t in figures["errors"]["data"] if t.get("yaxis") != "y2"]
    assert errors == []
    delay = next(t for t in figures["delay"]["data"] if t["name"] == "CERN→RAL minimum")
    assert delay["y"][0] == pytest.approx(9.8) and delay["y"][-1] == pytest.approx(10.8)
    derived = {label: value for label, value, _ in response.context["directions"][0]["derived"]}
    assert derived["Capacity"] == "20 Gb/s"
    assert derived["RTT"] == "20.2 ms"
    assert derived["Bandwidth-delay product"] == "50.5 MB"
    assert derived["Required window"] == "101 MB"


EVIL = '<a href="https://evil.example/x">x</a>'


def test_names_from_agents_and_carriers_are_text_in_the_path_charts(ral_data, operator_client):
    # The receiving host of a TCP test and the hops of a traceroute are what an agent reports, a maintenance
    # reference what a carrier sends: Plotly drew markup in them, a link on the chart.
    with connection.cursor() as cursor:
        cursor.execute("UPDATE measurements_throughputtest SET dst_host = %s", [EVIL])
        cursor.execute("UPDATE measurements_traceroute SET hops[3] = hops[3] || %s", [EVIL])
        cursor.execute("UPDATE maintenance_maintenancewindow SET reference = reference || %s", [EVIL])
    figures = operator_client.get("/paths/CERN/RAL/", {"range": "6h", "end": AT}).context["figures"]
    shown = '&lt;a href="https://evil.example/x"&gt;x&lt;/a&gt;'
    tcp = next(t for t in figures["throughput"]["data"] if t["name"] == "CERN→RAL")
    assert tcp["text"][0].endswith(f"to {shown}")
    marks = {t["meta"]: t for t in figures["throughput"]["data"] if t.get("yaxis") == "y2"}
    assert f"Maintenance JANET-CHG-1001{shown}" in marks["maintenance"]["text"]
    assert f"geant-par{shown}" in " ".join(marks["route"]["hovertext"])
    assert "<a " not in json.dumps(figures)


@pytest.mark.parametrize(("range_key", "table"), [("24h", "measurements_interfacerate_5m"),
                                                   ("7d", "measurements_interfacerate_1h"),
                                                   ("90d", "measurements_interfacerate_1d")])
def test_longer_ranges_read_the_rollups(ral_data, operator_client, range_key, table):
    response = operator_client.get("/paths/CERN/RAL/", {"range": range_key, "end": AT})
    figures = response.context["figures"]
    assert figures["utilisation"]["layout"]["title"]["subtitle"]["text"].startswith(f"source: {table},")
    util = next(t for t in figures["utilisation"]["data"] if t["name"] == "janet-lon:xe-4/0/0 out")
    assert max(v for v in util["y"] if v is not None) == pytest.approx(0.735, abs=0.01)  # max survives rollups
    tcp = next(t for t in figures["throughput"]["data"] if t["name"] == "CERN→RAL")
    if range_key != "24h":  # averaged per bucket with a min-max band
        assert tcp["y"][-1] == pytest.approx(ral_data.TCP_CERN_RAL_BPS, rel=0.03)


def test_path_page_charts_the_counters_of_its_direction_hop_by_hop(ral_data, operator_client):
    response = operator_client.get("/paths/RAL/CERN/", {"range": "6h", "end": AT})
    figures = response.context["figures"]
    # RAL->CERN leaves ral-border by the trunk and arrives at janet-lon by its members: their receive side
    errors = {t["name"]: t for t in figures["errors"]["data"] if t.get("yaxis") != "y2"}
    assert list(errors) == ["janet-lon:xe-4/0/0 in errors"]
    assert max(v for v in errors["janet-lon:xe-4/0/0 in errors"]["y"] if v is not None) == pytest.approx(2.0)
    sides = [(row["port"].label, row["port"].direction) for row in response.context["ports"]]
    # the exit of one box, then the entry of the next; geant-lon:et-1/0/0 is paired with janet-lon:et-1/0/0
    # by the reverse path (no circuit in the inventory)
    assert sides[:4] == [("ral-border:xe-0/0/0", "out"), ("ral-border:xe-0/1/0", "out"),
                         ("janet-lon:xe-4/0/0", "in"), ("janet-lon:xe-4/1/0", "in")]
    assert ("geant-lon:et-1/0/0", "in") in sides and ("geant-lon:et-1/1/0", "out") in sides
    assert ("janet-lon:xe-4/0/0", "out") not in sides
    util = {t["name"]: t for t in figures["utilisation"]["data"]}
    # geant-lon:et-1/0/0 receives 20 % of its 8.2 Gb/s egress: 1.64 Gb/s of 100 Gb/s
    assert max(v for v in util["geant-lon:et-1/0/0 in"]["y"] if v is not None) == pytest.approx(0.0172, abs=0.001)
    html = response.content.decode()
    assert 'data-port="janet-lon:xe-4/0/0" data-side="in"' in html


def test_both_directions_on_one_page(ral_data, operator_client):
    response = operator_client.get("/paths/CERN/RAL/both/", {"range": "6h", "end": AT})
    names = [t["name"] for t in response.context["figures"]["throughput"]["data"]]
    assert "CERN→RAL" in names and "RAL→CERN" in names
    assert [d["data"].src for d in response.context["directions"]] == ["CERN", "RAL"]


def test_equipment_page_paths_per_direction_and_trunk_side_by_side(ral_data, operator_client):
    response = operator_client.get("/equipment/janet-lon/", {"range": "6h", "end": AT})
    crossings = {(row["crossing"].path.src.code, row["crossing"].path.dst.code): row["crossing"]
                 for row in response.context["crossings"]}
    assert crossings[("CERN", "RAL")].interface == "xe-4/0/0"
    assert crossings[("CERN", "RAL")].towards == "ral-border"
    assert crossings[("RAL", "CERN")].towards == "geant-lon"
    bars = {t["name"]: t for t in response.context["figures"][next(
        name for name in response.context["figures"] if name.startswith("trunk-") and not name.endswith("lines"))
    ]["data"]}
    out = dict(zip(bars["out"]["x"], bars["out"]["y"], strict=True))
    assert out["janet-lon:xe-4/0/0"] == pytest.approx(0.70, abs=0.02)
    assert out["janet-lon:xe-4/1/0"] == pytest.approx(0.10, abs=0.01)
    assert {f.code for f, *_ in response.context["findings"]} >= {"INTERFACE_ERRORS", "TRUNK_IMBALANCE"}


def test_interface_and_trunk_pages(ral_data, operator_client):
    response = operator_client.get("/equipment/janet-lon/interfaces/xe-4/0/0/", {"range": "6h", "end": AT})
    assert response.status_code == 200
    assert [(r["crossing"].path.src.code, r["crossing"].path.dst.code) for r in response.context["by_port"]] == [
        ("CERN", "RAL")]
    errors = {t["name"]: t for t in response.context["figures"]["errors"]["data"]}
    assert max(v for v in errors["janet-lon:xe-4/0/0 in errors"]["y"] if v is not None) == pytest.approx(2.0)
    # the other end of the link (paired by the reverse path), charted beside it
    assert response.context["far_end"].equipment.name == "ral-border"
    assert response.context["far_end"].name == "xe-0/0/0"
    assert 'data-far-end="ral-border:xe-0/0/0"' in response.content.decode()
    assert any(t["name"] == "ral-border:xe-0/0/0 out" for t in response.context["figures"]["traffic"]["data"])
    assert response.context["latest"]["in_errors_per_s"] == pytest.approx(2.0)
    trunk = operator_client.get("/trunks/ral-lag/", {"range": "6h", "end": AT})
    assert [m["interface"].name for m in trunk.context["members"]] == ["xe-4/0/0", "xe-4/1/0", "xe-0/0/0", "xe-0/1/0"]
    assert {(p.src.code, p.dst.code) for p, _ in trunk.context["paths"]} == {("CERN", "RAL"), ("RAL", "CERN")}


def test_map_shows_sites_paths_and_shared_elements(ral_data, operator_client):
    response = operator_client.get("/map/", {"at": AT})
    figure = response.context["figures"]["map"]
    lines = {t["meta"]: t["line"]["color"] for t in figure["data"] if t.get("mode") == "lines"}
    assert lines == {"CERN->RAL": k.STATUS_STYLE[k.WARNING][0], "RAL->CERN": k.STATUS_STYLE[k.OK][0]}
    sites = next(t for t in figure["data"] if t.get("meta") == "sites")
    assert sites["x"] == [6.05, -1.31]
    elements = next(t for t in figure["data"] if t.get("meta") == "elements")
    assert "janet-lon" in " ".join(elements["hovertext"])


def test_findings_list_filters_and_detail(ral_data, operator_client):
    response = operator_client.get("/findings/", {"code": "INTERFACE_ERRORS"})
    rows = response.context["rows"]
    assert [f.code for f, *_ in rows] == ["INTERFACE_ERRORS"]
    finding = rows[0][0]
    assert rows[0][3].startswith("/equipment/janet-lon/interfaces/xe-4/0/0/?range=")  # subject link, its window
    detail = operator_client.get(f"/findings/{finding.pk}/").content.decode()
    assert finding.explanation[:60] in detail
    assert 'id="acknowledge"' in detail
    for action in finding.actions:
        assert action[:40] in detail
    assert operator_client.get("/findings/", {"site": "RAL", "status": "all"}).status_code == 200


def test_acknowledge_operator_yes_viewer_no(ral_data, client, operator, viewer):
    finding = Finding.objects.filter(code="TRUNK_IMBALANCE").get()
    url = reverse("dashboard-finding-acknowledge", kwargs={"pk": finding.pk})

    client.force_login(viewer)
    page = client.get(f"/findings/{finding.pk}/").content.decode()
    assert 'id="acknowledge"' not in page and "Acknowledging needs the operator role" in page
    assert client.post(url, {"note": "mine"}).status_code == 403
    finding.refresh_from_db()
    assert finding.status == "open"

    client.force_login(operator)
    response = client.post(url, {"note": "ticket NOC-42"})
    assert response.status_code == 302 and response["Location"] == f"/findings/{finding.pk}/"
    finding.refresh_from_db()
    assert finding.status == "acknowledged" and finding.acknowledged_by == operator
    assert finding.events.filter(kind="acknowledged", user=operator, note="ticket NOC-42").exists()
    assert client.get(url).status_code == 405


def test_explorer_runs_the_query_and_links_the_csv(ral_data, operator_client):
    response = operator_client.get("/explore/", {"metric": "out_utilisation", "aggregate": "max", "range": "6h",
                                                 "end": AT, "bucket": "1h", "equipment": "janet-lon"})
    result = response.context["result"]
    assert result.source == "measurements_interfacerate_1h"
    assert {s["key"]["interface"] for s in result.series} == {"xe-4/0/0", "xe-4/1/0"}
    csv = operator_client.get(response.context["csv_href"])
    assert csv.status_code == 200 and csv["Content-Type"].startswith("text/csv")
    lines = csv.content.decode().strip().splitlines()
    assert lines[0] == "time,equipment,interface,out_utilisation_max"
    assert len(lines) == 1 + 2 * 6
    bad = operator_client.get("/explore/", {"metric": "throughput_bps", "aggregate": "avg", "group_by": "interface"})
    assert "test metrics group by one of" in bad.content.decode()


def test_time_zone_preference(ral_data, operator_client):
    response = operator_client.post("/preferences/", {"time_zone": "Europe/Zurich", "next": "/map/"})
    assert response.status_code == 302 and response["Location"] == "/map/"
    page = operator_client.get("/paths/CERN/RAL/", {"range": "6h", "end": AT})
    assert "Times in Europe/Zurich" in page.content.decode()
    figure = page.context["figures"]["throughput"]
    assert figure["layout"]["xaxis"]["title"]["text"] == "time (Europe/Zurich)"
    assert figure["layout"]["xaxis"]["range"] == ["2026-03-01 07:00:00", "2026-03-01 13:00:00"]
    assert operator_client.post("/preferences/", {"time_zone": "Mars/Olympus"}).status_code == 200
    assert operator_client.get("/preferences/", {"next": "https://evil.example/"}).context["next"] == "/"
