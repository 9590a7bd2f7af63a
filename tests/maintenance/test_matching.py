"""Matching through the topology and the diagnosis: case study 8 replayed with the window imported from the
carrier's BCOP calendar, and a reduced-redundancy window on a redundant trunk that must explain nothing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import yaml

from tests.maintenance.conftest import SCENARIOS
from wanmon.diagnosis import codes
from wanmon.diagnosis.replay import scenario_load, scenario_replay
from wanmon.diagnosis.selectors import maintenance_windows_overlapping
from wanmon.inventory.models import Carrier
from wanmon.inventory.topology import topology_import
from wanmon.maintenance.choices import Behaviour, Source
from wanmon.maintenance.imports import carrier_notice_import
from wanmon.maintenance.selectors import (
    maintenance_matches_for_element,
    maintenance_occurrence_list,
    maintenance_paths_skipped,
    maintenance_window_footprint,
    maintenance_windows_affecting_path,
)
from wanmon.maintenance.services import maintenance_window_create, maintenance_window_update

pytestmark = pytest.mark.django_db

CASE8 = SCENARIOS / "case8-maintenance-sara.yaml"
START = datetime(2026, 3, 10, 3, 0, tzinfo=UTC)
END = datetime(2026, 3, 10, 4, 30, tzinfo=UTC)


def utc(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


def bcop(objects: list[tuple[str, str | None]], impact: str, *, uid="surf-chg-17@surf.nl", sequence=0,
         status="CONFIRMED") -> bytes:
    """SURF's announcement of case 8 as the BCOP calendar it would send (local Amsterdam times)."""
    lines = [
        "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//SURF//maintenance//EN",
        "BEGIN:VTIMEZONE", "TZID:Europe/Amsterdam",
        "BEGIN:STANDARD", "DTSTART:19701025T030000", "TZOFFSETFROM:+0200", "TZOFFSETTO:+0100",
        "RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU", "END:STANDARD",
        "BEGIN:DAYLIGHT", "DTSTART:19700329T020000", "TZOFFSETFROM:+0100", "TZOFFSETTO:+0200",
        "RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU", "END:DAYLIGHT", "END:VTIMEZONE",
        "BEGIN:VEVENT",
        "SUMMARY:JunOS upgrade of surfnet-asd",
        "DTSTART;TZID=Europe/Amsterdam:20260310T040000",  # 03:00 UTC
        "DTEND;TZID=Europe/Amsterdam:20260310T053000",  # 04:30 UTC
        "DTSTAMP:20260224T120000Z",
        f"UID:{uid}", f"SEQUENCE:{sequence}",
        "X-MAINTNOTE-PROVIDER:surf.nl", "X-MAINTNOTE-ACCOUNT:CERN",
        "X-MAINTNOTE-MAINTENANCE-ID:SURF-CHG-2026-0310-017",
    ]
    for obj, own in objects:
        lines.append(f"X-MAINTNOTE-OBJECT-ID;X-MAINTNOTE-OBJECT-IMPACT={own}:{obj}" if own else
                     f"X-MAINTNOTE-OBJECT-ID:{obj}")
    lines += [f"X-MAINTNOTE-IMPACT:{impact}", f"X-MAINTNOTE-STATUS:{status}",
              "ORGANIZER;CN=SURF NOC:mailto:noc@surf.example", "END:VEVENT", "END:VCALENDAR"]
    return ("\r\n".join(lines) + "\r\n").encode()


def case8(tmp_path, mutate=None) -> tuple[object, dict]:
    """Case study 8 without its maintenance block (the window comes from the carrier's calendar instead)."""
    doc = yaml.safe_load(CASE8.read_text())
    doc.pop("maintenance")
    if mutate:
        mutate(doc)
    path = tmp_path / "case8.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    topology_import(doc["topology"], prefix="topology")
    return scenario_load(str(path)), doc


def found(result, code, **subject):
    return [f for f in result.findings if f.code == code and all(f.subject.get(k) == v for k, v in subject.items())]


def test_case8_window_imported_from_the_carrier_explains_the_degradation(tmp_path):
    scenario, _ = case8(tmp_path)
    report = carrier_notice_import(raw=bcop([("surfnet-asd", None)], "DEGRADED"), source=Source.ICAL_FILE,
                                             carrier=Carrier.objects.get(code="SURFNET"), vouched_by="imported by op")
    (w,) = report.windows
    assert (w.start, w.end, w.matched) == ("2026-03-10T03:00:00Z", "2026-03-10T04:30:00Z", ["surfnet-asd"])

    # the matching service: both directions through surfnet-asd, degraded, muted; CERN<->FZK untouched
    (m,) = maintenance_windows_affecting_path("CERN->SARA", START, END)
    assert (m.impact, m.explains, m.mutes, m.elements) == ("degraded", True, True, ("surfnet-asd",))
    assert maintenance_windows_affecting_path(("CERN", "FZK"), START, END) == []
    footprint = maintenance_window_footprint(m.window)
    assert [t.path.key for t in footprint.touches] == ["CERN->SARA", "SARA->CERN"]
    assert footprint.site_codes == ("CERN", "SARA")
    (e,) = maintenance_matches_for_element("surfnet-asd", START + timedelta(minutes=30))
    assert e.window.reference == "SURF-CHG-2026-0310-017" and e.mutes
    assert maintenance_matches_for_element("surfnet-asd", END + timedelta(minutes=1)) == []

    # the diagnosis, through the real replay: known and expected, nothing left to alert on
    result = scenario_replay(scenario)
    assert result.problems == [], result.problems
    (explained,) = found(result, codes.MAINTENANCE_EXPLAINED, equipment="surfnet-asd")
    assert explained.evidence["reference"] == "SURF-CHG-2026-0310-017"
    assert set(explained.evidence["paths"]) == {"CERN->SARA", "SARA->CERN"}
    assert all(f.severity == codes.INFO for f in result.findings), [(f.code, f.severity) for f in result.findings]


def test_case8_scenario_block_still_goes_through_the_maintenance_models(tmp_path):
    # the corpus file as it is (its own maintenance block, written by the replay into these models)
    result = scenario_replay(scenario_load(str(CASE8)))
    assert result.problems == []
    assert found(result, codes.MAINTENANCE_EXPLAINED, equipment="surfnet-asd")


def _redundant_trunk(doc: dict) -> None:
    """surfnet-asd reaches sara-border over a 2-member LAG of two SURF circuits; the paths name member 1."""
    topo = doc["topology"]
    topo["interfaces"] = [
        {"equipment": "surfnet-asd", "name": n, "speed_mbps": 10000} for n in ("et-0/0/0", "et-0/0/1")
    ] + [{"equipment": "sara-border", "name": n, "speed_mbps": 10000} for n in ("et1", "et2")]
    topo["circuits"] = [
        {"carrier": "SURFNET", "cid": "SURF-LAG-1", "a_interface": "surfnet-asd:et-0/0/0",
         "z_interface": "sara-border:et1"},
        {"carrier": "SURFNET", "cid": "SURF-LAG-2", "a_interface": "surfnet-asd:et-0/0/1",
         "z_interface": "sara-border:et2"},
    ]
    topo["trunks"] = [{"name": "asd-sara-lag", "members": ["surfnet-asd:et-0/0/0", "surfnet-asd:et-0/0/1",
                                                           "sara-border:et1", "sara-border:et2"]}]
    for path in topo["paths"]:
        path["hops"] = ["surfnet-asd:et-0/0/0" if h == "surfnet-asd" and path["src"] == "CERN" else
                        "sara-border:et1" if h == "sara-border" and path["src"] == "SARA" else h
                        for h in path["hops"]]


def test_reduced_redundancy_on_a_redundant_trunk_explains_nothing(tmp_path):
    # the same collapse, but SURF announced only reduced redundancy on the second member of the LAG
    scenario, _ = case8(tmp_path, _redundant_trunk)
    report = carrier_notice_import(raw=bcop([("SURF-LAG-2", None)], "REDUCED-REDUNDANCY"),
                                             source=Source.ICAL_FILE, carrier=Carrier.objects.get(code="SURFNET"),
                                             vouched_by="imported by op")
    assert report.windows[0].matched == ["circuit:SURF-LAG-2"]

    (m,) = maintenance_windows_affecting_path("CERN->SARA", START, END)
    assert (m.impact, m.explains, m.mutes) == ("reduced-redundancy", False, False)
    (e,) = maintenance_matches_for_element("asd-sara-lag", START + timedelta(minutes=10))
    assert (e.impact, e.mutes) == ("reduced-redundancy", False)

    result = scenario_replay(scenario)
    assert not found(result, codes.MAINTENANCE_EXPLAINED)
    degraded = [f for f in result.findings if f.subject.get("src") == "CERN" and f.subject.get("dst") == "SARA"]
    assert degraded and any(f.severity != codes.INFO for f in degraded)
    assert not any(f.explained_by for f in result.findings)


def test_outage_of_one_trunk_member_degrades_the_path_and_explains(tmp_path):
    scenario, _ = case8(tmp_path, _redundant_trunk)
    carrier_notice_import(raw=bcop([("SURF-LAG-2", None)], "OUTAGE"), source=Source.ICAL_FILE,
                                    carrier=Carrier.objects.get(code="SURFNET"), vouched_by="imported by op")
    (m,) = maintenance_windows_affecting_path("CERN->SARA", START, END)
    # one of two members down: the LAG carries on at half capacity
    assert (m.impact, m.explains, m.mutes) == ("degraded", True, True)
    # the diagnosis sees the circuit as its two end ports
    (dw,) = maintenance_windows_overlapping(START, END)
    assert set(dw.affects) == {"surfnet-asd:et-0/0/1", "sara-border:et2"}
    result = scenario_replay(scenario)
    assert found(result, codes.MAINTENANCE_EXPLAINED)


def test_behaviour_run_and_cancellation_stop_explaining(tmp_path):
    scenario, _ = case8(tmp_path)
    carrier = Carrier.objects.get(code="SURFNET")
    window = maintenance_window_create(reference="SURF-CHG-2026-0310-017", carrier=carrier, start=START, end=END,
                                       impact="degraded", affects=["surfnet-asd"], behaviour=Behaviour.RUN)
    (m,) = maintenance_windows_affecting_path("CERN->SARA", START, END)
    assert m.explains and not m.mutes
    assert maintenance_windows_overlapping(START, END) == []  # informational: the diagnosis ignores it
    maintenance_window_update(window=window, behaviour=Behaviour.SKIP)
    assert maintenance_paths_skipped(START + timedelta(minutes=5)) == ["CERN->SARA", "SARA->CERN"]
    assert len(maintenance_windows_overlapping(START, END)) == 1
    maintenance_window_update(window=window, status="cancelled")
    assert maintenance_windows_affecting_path("CERN->SARA", START, END) == []
    assert maintenance_windows_overlapping(START, END) == []
    assert maintenance_paths_skipped(START + timedelta(minutes=5)) == []


def test_recurring_window_occurrences_and_diagnosis_entries(topology):
    # every Tuesday 02:00-03:00 UTC, four times, on geant-gva
    window = maintenance_window_create(reference="GEANT-WEEKLY", carrier=Carrier.objects.get(code="GEANT"),
                                       start=utc(2026, 3, 3, 2), end=utc(2026, 3, 3, 3),
                                       rrule="FREQ=WEEKLY;COUNT=4", affects=["geant-gva"])
    assert window.recurrence_end == utc(2026, 3, 24, 3)
    occurrences = maintenance_occurrence_list(start=utc(2026, 3, 1), end=utc(2026, 4, 30))
    assert [o.start for o in occurrences] == [utc(2026, 3, d, 2) for d in (3, 10, 17, 24)]
    # the third occurrence explains a degradation on 17 March, not the day after
    assert maintenance_windows_affecting_path("CERN->FZK", utc(2026, 3, 17, 2, 10), utc(2026, 3, 17, 2, 20))
    assert not maintenance_windows_affecting_path("CERN->FZK", utc(2026, 3, 18, 2, 10), utc(2026, 3, 18, 2, 20))
    diag = maintenance_windows_overlapping(utc(2026, 3, 9), utc(2026, 3, 20))
    assert [(d.start, d.end) for d in diag] == [(utc(2026, 3, 10, 2), utc(2026, 3, 10, 3)),
                                                (utc(2026, 3, 17, 2), utc(2026, 3, 17, 3))]


def test_element_matching_through_circuits_trunks_and_sites(topology):
    janet = Carrier.objects.get(code="JANET")
    at = utc(2026, 5, 1, 1, 30)
    maintenance_window_create(reference="JISC-1", carrier=janet, start=utc(2026, 5, 1, 1), end=utc(2026, 5, 1, 3),
                              affects=["circuit:JISC-RAL-LHCOPN-2"])
    # the circuit's own ports, its box (degraded: one port), the LAG (degraded: one member of two), RAL
    assert [m.impact for m in maintenance_matches_for_element("janet-lon:xe-4/1/0", at)] == ["outage"]
    assert [m.impact for m in maintenance_matches_for_element("janet-lon", at)] == ["degraded"]
    assert [m.impact for m in maintenance_matches_for_element("ral-lag", at)] == ["degraded"]
    assert [m.impact for m in maintenance_matches_for_element("site:RAL", at)] == ["degraded"]
    assert maintenance_matches_for_element("janet-lon:xe-4/0/0", at) == []
    assert maintenance_matches_for_element("geant-fra", at) == []
    # CERN->RAL leaves janet-lon by member 1, but the LAG spreads flows over member 2 too
    (m,) = maintenance_windows_affecting_path("CERN->RAL", utc(2026, 5, 1), utc(2026, 5, 2))
    assert (m.impact, m.elements, m.mutes) == ("degraded", ("circuit:JISC-RAL-LHCOPN-2",), True)


def test_a_path_affect_touches_that_direction_only(topology):
    # a window on one path direction touches that direction only
    maintenance_window_create(reference="OPS-1", start=utc(2026, 6, 1, 8), end=utc(2026, 6, 1, 9),
                              affects=["path:CERN->RAL"], impact="degraded")
    assert maintenance_windows_affecting_path("CERN->RAL", utc(2026, 6, 1), utc(2026, 6, 2))
    assert maintenance_windows_affecting_path("RAL->CERN", utc(2026, 6, 1), utc(2026, 6, 2)) == []


def test_maintenance_matching_the_dashboard_and_the_inventory_agree_on_what_a_path_crosses(topology):
    from wanmon.dashboard.selectors import maintenance_for_paths
    from wanmon.inventory.models import Equipment, Interface
    from wanmon.inventory.selectors import path_current, path_list_through_element

    # given another customer's ports on routers that CERN->SARA leaves by a known port (geant-ams:xe-1/0/0)
    # and that CERN->FZK crosses without naming a port (geant-fra)
    for box in ("geant-ams", "geant-fra"):
        Interface.objects.create(equipment=Equipment.objects.get(name=box), name="xe-9/0/0", speed_mbps=10000)
    start, end = utc(2026, 7, 1, 8), utc(2026, 7, 1, 9)
    cern_sara, cern_fzk = path_current("CERN", "SARA", at=start), path_current("CERN", "FZK", at=start)

    def touched(label: str) -> dict[str, bool]:
        window = maintenance_window_create(reference=f"W-{label}", start=start, end=end, affects=[label])
        out = {
            key: (
                bool(maintenance_windows_affecting_path(key, start, end)),
                any(m.reference == window.reference for m in maintenance_for_paths([path], start=start, end=end)),
            )
            for key, path in (("CERN->SARA", cern_sara), ("CERN->FZK", cern_fzk))
        }
        window.delete()
        return out

    # then work on the port the path names touches it everywhere; work on another port of the same box nowhere
    assert touched("geant-ams:xe-1/0/0")["CERN->SARA"] == (True, True)
    assert touched("geant-ams:xe-9/0/0")["CERN->SARA"] == (False, False)
    assert _names(path_list_through_element(equipment="geant-ams", interface="xe-9/0/0", at=start)) == []
    # a port of a box the path names without a port is unknown: not counted (by matching nor by the dashboard)
    assert touched("geant-fra:xe-9/0/0")["CERN->FZK"] == (False, False)
    # the far end of the circuit CERN->SARA leaves geant-ams by is where the path arrives at surfnet-asd
    assert touched("surfnet-asd:xe-0/0/0")["CERN->SARA"] == (True, True)
    # the box itself is on both paths
    assert touched("geant-gva") == {"CERN->SARA": (True, True), "CERN->FZK": (True, True)}


def _names(paths) -> list[str]:
    return sorted(f"{p.src.code}->{p.dst.code}" for p in paths)
