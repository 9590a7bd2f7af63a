"""The incident page as the on-call engineer works from it: the onset first, links to every finding, both directions
of every path, every element, the maintenance and the raw data; subjects in their direction; the ranked suspects
with the far end of the suspect link; three first actions, each advice once; times in UTC.

The incident is built in the database as the alerting stores it (no replay): a bad port nordunet-cph:et-1/0/0
shared by NDGF->CERN and SARA->CERN, the far end of its link (geant-ham:et-3/0/0) counting CRC errors."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime, timedelta
from html import unescape
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth.models import Group
from django.utils import timezone

from wanmon.alerts.models import Incident, IncidentMember
from wanmon.diagnosis.models import Finding
from wanmon.diagnosis.services import subject_key
from wanmon.inventory.topology import topology_import
from wanmon.maintenance.services import maintenance_window_create

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 3, 1, 1, 16, tzinfo=UTC)
ONSET = datetime(2026, 2, 28, 13, 10, tzinfo=UTC)  # yesterday as seen at NOW: its date is shown
OPENED = datetime(2026, 3, 1, 0, 55, tzinfo=UTC)  # today: the clock alone

TOPOLOGY = {
    "carriers": [{"code": "NORDUNET", "name": "NORDUnet", "kind": "nren"},
                 {"code": "GEANT", "name": "GEANT", "kind": "backbone"}],
    "sites": [{"code": code, "name": code, "tier": 1} for code in ("CERN", "NDGF", "SARA", "FZK", "PIC", "RAL")],
    "equipment": [
        {"name": "cern-border", "site": "CERN", "role": "router"},
        {"name": "ndgf-border", "site": "NDGF", "role": "router"},
        {"name": "sara-border", "site": "SARA", "role": "router"},
        {"name": "fzk-border", "site": "FZK", "role": "router"},
        {"name": "pic-border", "site": "PIC", "role": "router"},
        {"name": "ral-border", "site": "RAL", "role": "router"},
        {"name": "nordunet-cph", "carrier": "NORDUNET", "role": "router"},
        {"name": "geant-ham", "carrier": "GEANT", "role": "router"},
    ],
    "interfaces": [{"equipment": "nordunet-cph", "name": "et-1/0/0", "speed_mbps": 100000},
                   {"equipment": "geant-ham", "name": "et-3/0/0", "speed_mbps": 100000}],
    # the suspect link: nordunet-cph transmits by et-1/0/0, geant-ham receives by et-3/0/0
    "circuits": [{"carrier": "NORDUNET", "cid": "NU-GEANT-HAM-1", "a_interface": "nordunet-cph:et-1/0/0",
                  "z_interface": "geant-ham:et-3/0/0", "capacity_mbps": 100000}],
    "paths": [
        {"src": "NDGF", "dst": "CERN", "hops": ["ndgf-border", "nordunet-cph:et-1/0/0", "geant-ham", "cern-border"]},
        {"src": "CERN", "dst": "NDGF", "hops": ["cern-border", "geant-ham", "nordunet-cph", "ndgf-border"]},
        {"src": "SARA", "dst": "CERN", "hops": ["sara-border", "nordunet-cph:et-1/0/0", "geant-ham", "cern-border"]},
        {"src": "CERN", "dst": "SARA", "hops": ["cern-border", "geant-ham", "nordunet-cph", "sara-border"]},
        {"src": "FZK", "dst": "CERN", "hops": ["fzk-border", "geant-ham", "cern-border"]},
        {"src": "CERN", "dst": "FZK", "hops": ["cern-border", "geant-ham", "fzk-border"]},
        {"src": "PIC", "dst": "CERN", "hops": ["pic-border", "geant-ham", "cern-border"]},
        {"src": "CERN", "dst": "PIC", "hops": ["cern-border", "geant-ham", "pic-border"]},
        {"src": "RAL", "dst": "CERN", "hops": ["ral-border", "geant-ham", "cern-border"]},
        {"src": "CERN", "dst": "RAL", "hops": ["cern-border", "geant-ham", "ral-border"]},
    ],
}

ASK = ("Ask the operator of {e} to check it for the direction(s) NDGF->CERN, SARA->CERN: interface errors, optical "
       "levels, patch panels, line cards.")
CONFIRM = "Confirm with tests to or from a point next to it (before/after the element) if available."


def loss_actions(path: str, hops: str, loss: str, gain: str) -> list[str]:
    return [f"Find where {path} loses packets (loss must fall from {loss} to below 2.3e-05): check interface errors "
            f"and discards on {hops}; run owamp/UDP tests towards intermediate points.",
            f"Meanwhile a loss-tolerant congestion control (CUBIC, H-TCP; BBR ignores random loss) or more parallel "
            f"streams (each adds ~{gain}) soften the impact."]


def receive_side(path: str) -> str:
    return (f"Check receive-side optical levels, CRC errors and discards on the interfaces carrying {path}; ask the "
            "carriers on the path to do the same.")


@pytest.fixture
def now(monkeypatch):
    """The page's "now" (and today's date) fixed, the way the view reads it."""
    monkeypatch.setattr(timezone, "now", lambda: NOW)
    return NOW


@pytest.fixture
def operator_client(client, django_user_model, now):
    user = django_user_model.objects.create_user("oncall", email="oncall@wanmon.test", password="pw-oncall-1")
    user.groups.add(Group.objects.get(name="operator"))
    client.force_login(user)
    return client


@pytest.fixture
def topology(db):
    return topology_import(TOPOLOGY)


def make_finding(code, subject, *, severity="critical", rank=None, onset=ONSET, evidence=None, actions=(),
                 explained_by=(), summary=None) -> Finding:
    return Finding.objects.create(
        code=code, severity=severity, status="open", subject=subject, subject_key=subject_key(subject), rank=rank,
        start=NOW - timedelta(hours=6), onset=onset, end=NOW - timedelta(minutes=1),
        summary=summary or f"{code} on {subject}", explanation=f"why {code}", evidence=evidence or {},
        actions=list(actions), explained_by=list(explained_by), first_seen_at=OPENED, last_seen_at=NOW,
    )


def make_incident(key, members, *, kind="element", paths=(), elements=(), sites=(), opened=OPENED) -> Incident:
    root = members[0][1]
    incident = Incident.objects.create(
        key=key, kind=kind, severity=root.severity, code=root.code, subject_text=key.split(":", 1)[1],
        title=f"{key}: {len(paths)} paths degraded", root_finding=root, sites=list(sites), paths=list(paths),
        elements=list(elements), opened_at=opened, changed_at=opened,
    )
    for role, finding in members:
        IncidentMember.objects.create(incident=incident, finding=finding, role=role, added_at=opened)
    return incident


@pytest.fixture
def incident(topology, now):
    """The bad port nordunet-cph:et-1/0/0: two degraded paths, a lower-ranked box, errors at the link's far end."""
    port = {"equipment": "nordunet-cph", "interface": "et-1/0/0"}
    members = [
        ("root", make_finding("SHARED_EQUIPMENT_SUSPECT", port, rank=1, evidence={
            "score": 2.0, "degraded_paths": ["NDGF->CERN", "SARA->CERN"], "healthy_same_direction": [],
            "healthy_other_ports": [], "healthy_reverse": ["CERN->NDGF", "CERN->SARA"], "coverage": 1.0,
            "endpoint": False, "corroboration": []}, actions=[ASK.format(e="nordunet-cph:et-1/0/0"), CONFIRM])),
        # the onset of the earliest member is the incident's
        ("symptom", make_finding("LOSS_LIMITED", {"src": "NDGF", "dst": "CERN"}, onset=ONSET - timedelta(minutes=5),
                                 actions=loss_actions("NDGF->CERN", "ndgf-border, nordunet-cph, geant-ham, "
                                                      "cern-border", "4.0e-02", "75.9 Mb/s"))),
        ("symptom", make_finding("LOSS_LIMITED", {"src": "SARA", "dst": "CERN"},
                                 actions=loss_actions("SARA->CERN", "sara-border, nordunet-cph, geant-ham, "
                                                      "cern-border", "6.8e-02", "68.6 Mb/s"))),
        ("symptom", make_finding("ASYMMETRIC_PATH", {"src": "NDGF", "dst": "CERN"},
                                 actions=[receive_side("NDGF->CERN")])),
        ("symptom", make_finding("ASYMMETRIC_PATH", {"src": "SARA", "dst": "CERN"},
                                 actions=[receive_side("SARA->CERN")])),
        ("related", make_finding("SHARED_EQUIPMENT_SUSPECT", {"equipment": "geant-ham"}, severity="warning", rank=2,
                                 evidence={"score": 1.0, "degraded_paths": ["NDGF->CERN", "SARA->CERN"],
                                           "healthy_same_direction": ["FZK->CERN"], "healthy_other_ports": [],
                                           "healthy_reverse": [], "endpoint": False, "corroboration": []},
                                 actions=[ASK.format(e="geant-ham"), CONFIRM])),
        ("related", make_finding("INTERFACE_ERRORS", {"equipment": "geant-ham", "interface": "et-3/0/0"},
                                 evidence={"intervals_with_errors": 12, "intervals": 72, "crc_error_fraction": 2e-4,
                                           "degraded_paths": ["NDGF->CERN", "SARA->CERN"]},
                                 summary="et-3/0/0: CRC/errors in 12 consecutive polls",
                                 actions=["Read the optical receive/transmit levels (DOM) of geant-ham:et-3/0/0 and "
                                          "its far end.", "Clean and re-seat the fibre connectors."])),
    ]
    return make_incident("element:nordunet-cph", members, paths=["NDGF->CERN", "SARA->CERN"],
                         elements=["nordunet-cph", "geant-ham"], sites=["CERN", "NDGF", "SARA"])


def page(client, incident) -> str:
    response = client.get(f"/incidents/{incident.id}")
    assert response.status_code == 200
    return response.content.decode()


def section(html: str, element_id: str) -> str:
    """The HTML of the element with id ``element_id`` up to the next section (enough for these pages)."""
    start = html.index(f'id="{element_id}"')
    end = html.find("<section", start)
    return html[start:end if end > 0 else None]


def hrefs(html: str) -> list[str]:
    return [unescape(h) for h in re.findall(r'href="([^"]+)"', html)]


def visible(html: str) -> str:
    return unescape(re.sub(r"<[^>]+>", " ", html[html.index("<main"):]))


def test_the_onset_is_at_the_top_in_utc_with_the_date_only_when_not_today(operator_client, incident):
    html = page(operator_client, incident)
    onset = section(html, "incident-onset")
    # the earliest member's onset (13:05, yesterday), 12 h 11 min before now, still going on
    assert "since 28 Feb 13:05 UTC, 12 h 11 min, ongoing as of 01:16 UTC" in unescape(onset)
    assert "opened 00:55 UTC" in onset  # today: no date
    assert html.index('id="incident-onset"') < html.index('id="incident-findings"')
    # the members' onsets, the history: the same form; no seconds anywhere on the page
    assert "28 Feb 13:05 UTC" in section(html, "incident-findings")
    assert not re.search(r"\d\d:\d\d:\d\d", visible(html))


def test_a_resolved_incident_gives_its_span_and_duration(operator_client, incident):
    Incident.objects.filter(pk=incident.pk).update(status="resolved", resolved_at=NOW - timedelta(minutes=6))
    onset = unescape(section(page(operator_client, incident), "incident-onset"))
    assert "28 Feb 13:05 UTC – 01:10 UTC, 12 h 05 min" in onset and "ongoing" not in onset


def test_the_incident_list_gives_times_in_utc_with_the_date_only_when_not_today(operator_client, incident):
    older = make_finding("PATH_DOWN", {"src": "RAL", "dst": "CERN"}, onset=ONSET)
    make_incident("pair:CERN<->RAL", [("root", older)], kind="pair", paths=["RAL->CERN"],
                  opened=datetime(2026, 2, 27, 13, 10, tzinfo=UTC))
    response = operator_client.get("/incidents/?status=all")
    assert response.status_code == 200
    html = response.content.decode()
    assert '<td class="nowrap">00:55 UTC</td>' in html  # opened today
    assert '<td class="nowrap">27 Feb 13:10 UTC</td>' in html


def test_every_finding_both_directions_every_element_and_the_raw_data_are_linked(operator_client, incident):
    html = page(operator_client, incident)
    links = hrefs(html)
    findings = incident.members.values_list("finding_id", flat=True)
    assert {f"/findings/{pk}/" for pk in findings} <= set(links)
    # both directions of each member path, and the pair
    paths = {urlsplit(h).path for h in hrefs(section(html, "incident-paths"))}
    assert {"/paths/NDGF/CERN/", "/paths/CERN/NDGF/", "/paths/SARA/CERN/", "/paths/CERN/SARA/",
            "/paths/NDGF/CERN/both/"} <= paths
    # the elements: the suspect port and its box, the lower-ranked box, the far end's port
    elements = {urlsplit(h).path for h in hrefs(section(html, "incident-elements"))}
    assert {"/equipment/nordunet-cph/", "/equipment/nordunet-cph/interfaces/et-1/0/0/", "/equipment/geant-ham/",
            "/equipment/geant-ham/interfaces/et-3/0/0/"} <= elements
    # the hops of each direction link their pages too
    assert "/equipment/ndgf-border/" in paths | {urlsplit(h).path for h in hrefs(section(html, "incident-paths"))}
    # the raw tests in the explorer over a window around the onset (from 6 h before it to now)
    explore = [h for h in hrefs(section(html, "incident-paths")) if urlsplit(h).path == "/explore/"]
    query = {key: values[0] for key, values in parse_qs(urlsplit(explore[0]).query).items()}
    assert query == {"metric": "throughput_bps", "protocol": "tcp", "src": "NDGF", "dst": "CERN",
                     "start": "2026-02-28T07:05:00Z", "end": "2026-03-01T01:16:00Z"}
    assert any("metric=loss_fraction" in h and "src=CERN" in h and "dst=NDGF" in h for h in explore)


def test_a_path_subject_reads_in_its_direction(operator_client, incident):
    # the database keeps {"dst": "CERN", "src": "NDGF"}: printed in key order that reads CERN/NDGF
    assert list(Finding.objects.get(code="LOSS_LIMITED", subject__src="NDGF").subject) == ["dst", "src"]
    html = page(operator_client, incident)
    findings = section(html, "incident-findings")
    assert findings.count(">NDGF-&gt;CERN</a>") == 2 and findings.count(">SARA-&gt;CERN</a>") == 2
    assert ">nordunet-cph:et-1/0/0</a>" in findings and ">geant-ham:et-3/0/0</a>" in findings
    text = visible(html)
    assert "CERN/NDGF" not in text and "CERN/SARA" not in text


def test_suspects_are_ranked_with_their_evidence_and_the_far_end_of_the_link(operator_client, incident):
    html = page(operator_client, incident)
    rows = re.findall(r'<tr class="suspect" data-suspect="([^"]+)">(.*?)</tr>', section(html, "incident-suspects"),
                      re.S)
    assert [label for label, _ in rows] == ["nordunet-cph:et-1/0/0", "geant-ham"]
    first, second = (unescape(row) for _, row in rows)
    assert "crossed by every degraded direction: NDGF->CERN, SARA->CERN" in first
    # the CRC errors at geant-ham:et-3/0/0 are the far end of the suspect port's circuit: on its row
    assert 'data-tied="far end"' in first and "INTERFACE_ERRORS on geant-ham:et-3/0/0" in first
    assert "healthy only in the opposite direction (weighs little): CERN->NDGF, CERN->SARA" in first
    # the box that a healthy path crosses the same way is ranked second, and says why
    assert "healthy in the same direction: FZK->CERN" in second
    assert "INTERFACE_ERRORS" not in second


def test_three_first_actions_each_advice_once_the_rest_folded(operator_client, incident):
    html = page(operator_client, incident)
    actions = section(html, "incident-actions")
    first = re.findall(r"<li>(.*?)</li>", actions[actions.index('id="first-actions"'):actions.index("</ol>")], re.S)
    assert len(first) == 3
    assert unescape(first[0]).startswith(ASK.format(e="nordunet-cph:et-1/0/0"))
    assert "also for" in first[0] and ">geant-ham</a>" in first[0]  # the lower-ranked box's own variant
    assert unescape(first[1]).startswith(CONFIRM)  # given by both suspects: once
    assert unescape(first[2]).startswith("Find where NDGF->CERN loses packets") and ">SARA-&gt;CERN</a>" in first[2]
    assert html.count("Confirm with tests") == 1 and html.count("Find where") == 1
    # the rest folded; per-path variants that differ only in the path name both
    more = actions[actions.index('<details id="more-actions">'):]
    assert "<summary>4 more actions</summary>" in more
    assert "on the interfaces carrying NDGF-&gt;CERN and SARA-&gt;CERN;" in more
    assert html.count("Check receive-side") == 1


@pytest.fixture
def maintenance_incident(topology, now):
    """Work SURF-CHG-DEMO-0117 on geant-ham explained a degradation of FZK->CERN."""

    def make(*, window_end: datetime) -> Incident:
        window = maintenance_window_create(reference="SURF-CHG-DEMO-0117", start=NOW - timedelta(hours=5),
                                           end=window_end, affects=["geant-ham"], now=NOW - timedelta(days=1))
        ref = window.reference
        explained = make_finding("MAINTENANCE_EXPLAINED", {"equipment": "geant-ham"}, severity="info",
                                 onset=NOW - timedelta(hours=5),
                                 evidence={"reference": ref, "element": "geant-ham", "paths": ["FZK->CERN"]},
                                 actions=[f"None while {ref} runs; re-check FZK->CERN after "
                                          f"{window_end:%H:%M} UTC."])
        symptom = make_finding("LOSS_LIMITED", {"src": "FZK", "dst": "CERN"}, severity="info",
                               onset=NOW - timedelta(hours=5), explained_by=[ref],
                               actions=loss_actions("FZK->CERN", "fzk-border, geant-ham, cern-border", "3.3e-01",
                                                    "31 Mb/s"))
        return make_incident(f"maintenance:{ref}", [("root", explained), ("symptom", symptom)], kind="maintenance",
                             paths=["FZK->CERN"], elements=["geant-ham"], sites=["CERN", "FZK"])

    return make


def test_advice_of_maintenance_that_has_ended_is_not_shown_as_current(operator_client, maintenance_incident):
    incident = maintenance_incident(window_end=NOW - timedelta(hours=2, minutes=16))  # ended at 23:00 yesterday
    html = page(operator_client, incident)
    actions = section(html, "incident-actions")
    first = actions[actions.index('id="first-actions"'):actions.index("</ol>")]
    assert "None while SURF-CHG-DEMO-0117 runs" not in first
    stale = actions[actions.index('id="stale-actions"'):]
    assert "None while SURF-CHG-DEMO-0117 runs" in stale and "SURF-CHG-DEMO-0117 ended at 28 Feb 23:00 UTC" in stale
    assert html.count("None while SURF-CHG-DEMO-0117 runs") == 1
    # the window is linked, said to be over
    window = section(html, "incident-maintenance")
    assert 'data-window="SURF-CHG-DEMO-0117" data-state="ended"' in window and 'href="/maintenance/' in window


def test_advice_of_maintenance_in_progress_is_current(operator_client, maintenance_incident):
    incident = maintenance_incident(window_end=NOW + timedelta(hours=1))
    html = page(operator_client, incident)
    actions = section(html, "incident-actions")
    first = actions[actions.index('id="first-actions"'):actions.index("</ol>")]
    assert "None while SURF-CHG-DEMO-0117 runs; re-check FZK-&gt;CERN after 02:16 UTC." in first
    assert 'id="stale-actions"' not in html
    assert 'data-state="in progress"' in section(html, "incident-maintenance")


def test_the_charts_show_both_directions_of_the_first_pairs_with_the_onset(operator_client, incident, topology):
    # two more degraded pairs: four in all, three charted, the fourth linked
    for src in ("FZK", "PIC"):
        extra = make_finding("LOSS_LIMITED", {"src": src, "dst": "CERN"})
        IncidentMember.objects.create(incident=incident, finding=extra, role="symptom", added_at=OPENED)
    html = page(operator_client, incident)
    charts = section(html, "incident-charts")
    assert f'data-figures-url="/incidents/{incident.id}/charts/"' in charts and "3 of 4 site pairs" in charts
    assert "/paths/PIC/CERN/" in {urlsplit(h).path for h in hrefs(section(html, "incident-paths"))}
    response = operator_client.get(f"/incidents/{incident.id}/charts/?format=json")
    assert response.status_code == 200
    payload = response.json()
    assert sorted(payload["figures"]) == sorted(f"pair-{i}-{m}" for i in range(3) for m in ("throughput", "loss"))
    throughput = payload["figures"]["pair-0-throughput"]
    names = {trace.get("name") for trace in throughput["data"]}
    assert {"NDGF→CERN", "CERN→NDGF"} <= names  # both directions, through the charts' text escaping
    onset_lines = [s for s in throughput["layout"]["shapes"] if s["type"] == "line" and s["line"]["dash"] == "solid"]
    assert [line["x0"] for line in onset_lines] == ["2026-02-28 13:05:00"]  # the onset, in UTC
    assert throughput["layout"]["xaxis"]["title"]["text"] == "time (UTC)"
    fragment = payload["fragments"]["charts"]
    assert [urlsplit(unescape(h)).path for h in re.findall(r'<h3><a href="([^"]+)"', fragment)] == [
        "/paths/NDGF/CERN/both/", "/paths/SARA/CERN/both/", "/paths/FZK/CERN/both/"]
    # on their own, the charts are a page
    assert operator_client.get(f"/incidents/{incident.id}/charts/").status_code == 200


def timed(client, url: str) -> tuple[object, float]:
    started = time.monotonic()
    response = client.get(url)
    return response, time.monotonic() - started


def test_the_page_and_its_charts_answer_fast_in_a_fixed_number_of_queries(operator_client, incident,
                                                                           django_assert_max_num_queries):
    for url in (f"/incidents/{incident.id}", f"/incidents/{incident.id}/charts/?format=json"):
        operator_client.get(url)  # the first request of a process loads the URLs and compiles the templates
    with django_assert_max_num_queries(25) as page_queries:
        response, elapsed = timed(operator_client, f"/incidents/{incident.id}")
    assert response.status_code == 200 and elapsed < 1.0, f"{elapsed:.2f} s"
    with django_assert_max_num_queries(60):
        response, elapsed = timed(operator_client, f"/incidents/{incident.id}/charts/?format=json")
    assert response.status_code == 200 and elapsed < 2.0, f"{elapsed:.2f} s"
    print(f"incident page: {len(page_queries.captured_queries)} queries")


def test_viewers_see_the_page_without_the_sent_log_and_forms(client, django_user_model, incident):
    viewer = django_user_model.objects.create_user("watcher", email="w@wanmon.test", password="pw-watcher-1")
    client.force_login(viewer)
    html = page(client, incident)
    assert 'id="incident-sent-log"' not in html and "Acknowledge</button>" not in html
    assert 'id="first-actions"' in html and 'id="incident-history"' in html
