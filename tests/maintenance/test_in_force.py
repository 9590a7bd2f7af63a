"""One answer to "is maintenance in force here?": the diagnosis, the alerting and the dashboard read the same
occurrences (recurring windows expanded) and treat an informational window, or work announced without impact on
traffic, alike: shown, never explaining, muting or turning a path blue."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from wanmon.alerts.selectors import maintenance_inhibiting, maintenance_list_touching
from wanmon.dashboard.selectors.maintenance import maintenance_list
from wanmon.dashboard.selectors.overview import maintenance_running
from wanmon.diagnosis.rules.maintenance import impact_explains
from wanmon.diagnosis.selectors import maintenance_windows_overlapping
from wanmon.inventory.models import Carrier
from wanmon.maintenance.choices import Behaviour, Review
from wanmon.maintenance.selectors import maintenance_in_force
from wanmon.maintenance.services import maintenance_window_create

pytestmark = pytest.mark.django_db


def utc(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


def everyone(at: datetime, element: str = "geant-gva") -> dict[str, list[str]]:
    """The references each consumer sees at ``at`` on ``element``: explaining (diagnosis), muting (alerting),
    turning paths blue (dashboard), and listed (alert e-mails, dashboard lists)."""
    hour = (at - timedelta(minutes=30), at + timedelta(minutes=30))
    return {
        "diagnosis explains": [w.reference for w in maintenance_windows_overlapping(*hour)
                               if element in w.affects and w.start <= at < w.end
                               and impact_explains(w.impact_for(element))],
        "alerting mutes": [w.reference for w in maintenance_inhibiting(elements=[element], at=at)],
        "dashboard blue": [m.reference for m in maintenance_running(at)],
        "e-mail lists": [w.reference for w in maintenance_list_touching(equipment=[element], start=hour[0],
                                                                        end=hour[1])],
        "dashboard lists": [m.reference for m in maintenance_list(start=at, end=at + timedelta(seconds=1))],
    }


def test_every_occurrence_of_a_recurring_window_is_in_force_for_every_consumer(topology):
    # given: every Tuesday 02:00-03:00 UTC, four times, outage work on geant-gva
    maintenance_window_create(reference="GEANT-WEEKLY", carrier=Carrier.objects.get(code="GEANT"),
                              start=utc(2026, 3, 3, 2), end=utc(2026, 3, 3, 3), rrule="FREQ=WEEKLY;COUNT=4",
                              affects=["geant-gva"])
    # then: the third occurrence is in force for all, with the alerting muting what the diagnosis explains
    third = everyone(utc(2026, 3, 17, 2, 30))
    assert third == dict.fromkeys(third, ["GEANT-WEEKLY"])
    (occ,) = maintenance_in_force(start=utc(2026, 3, 17, 2, 30), end=utc(2026, 3, 17, 2, 31))
    assert (occ.start, occ.end, occ.acts, [t.label for t in occ.targets]) == (
        utc(2026, 3, 17, 2), utc(2026, 3, 17, 3), True, ["geant-gva"])
    (muting,) = maintenance_inhibiting(elements=["geant-gva"], at=utc(2026, 3, 17, 2, 30))
    assert (muting.start, muting.end, muting.elements) == (utc(2026, 3, 17, 2), utc(2026, 3, 17, 3), ("geant-gva",))
    # and between occurrences, and after the last, nobody sees maintenance
    for at in (utc(2026, 3, 18, 2, 30), utc(2026, 3, 31, 2, 30)):
        between = everyone(at)
        assert between == dict.fromkeys(between, [])


def test_an_informational_window_is_shown_but_neither_explains_nor_mutes(topology):
    # given: an outage announced on geant-gva, kept informational (behaviour 'run': test and alert as usual)
    maintenance_window_create(reference="GEANT-INFO", carrier=Carrier.objects.get(code="GEANT"),
                              start=utc(2026, 4, 7, 2), end=utc(2026, 4, 7, 4), affects=["geant-gva"],
                              behaviour=Behaviour.RUN)
    # then: the diagnosis does not explain by it, so the alerting does not mute by it; both lists show it
    assert everyone(utc(2026, 4, 7, 3)) == {
        "diagnosis explains": [],
        "alerting mutes": [],
        "dashboard blue": [],
        "e-mail lists": ["GEANT-INFO"],
        "dashboard lists": ["GEANT-INFO"],
    }
    (occ,) = maintenance_in_force(start=utc(2026, 4, 7, 3), end=utc(2026, 4, 7, 3, 1))
    assert (occ.informational, occ.acts, occ.skip_tests) == (True, False, False)


def test_reduced_redundancy_work_is_shown_but_neither_explains_mutes_nor_turns_paths_blue(topology):
    # the path's real status stays visible: the diagnosis alerts on a degradation under such work
    maintenance_window_create(reference="GEANT-RR", carrier=Carrier.objects.get(code="GEANT"),
                              start=utc(2026, 4, 10, 2), end=utc(2026, 4, 10, 4), affects=["geant-gva"],
                              impact="reduced-redundancy")
    assert everyone(utc(2026, 4, 10, 3)) == {
        "diagnosis explains": [],
        "alerting mutes": [],
        "dashboard blue": [],
        "e-mail lists": ["GEANT-RR"],
        "dashboard lists": ["GEANT-RR"],
    }


def test_held_and_rejected_windows_are_not_in_force(topology):
    for reference, review in (("HELD-1", Review.HELD), ("REJECTED-1", Review.REJECTED)):
        window = maintenance_window_create(reference=reference, start=utc(2026, 4, 8, 2), end=utc(2026, 4, 8, 4),
                                           affects=["geant-gva"])
        window.review = review
        window.save(update_fields=["review"])
    at = utc(2026, 4, 8, 3)
    assert everyone(at) == {
        "diagnosis explains": [],
        "alerting mutes": [],
        "dashboard blue": [],
        "e-mail lists": [],
        "dashboard lists": ["HELD-1"],  # marked "held for review"
    }
    assert [o.window.reference for o in maintenance_in_force(start=at, end=at + timedelta(seconds=1),
                                                             include_held=True)] == ["HELD-1"]


def test_a_completed_window_stays_in_force_for_its_span_for_the_diagnosis_and_the_alerting(topology):
    # the carrier's "completed" says the work is over, not when: what the diagnosis explained stays muted
    maintenance_window_create(reference="GEANT-DONE", carrier=Carrier.objects.get(code="GEANT"),
                              start=utc(2026, 4, 9, 2), end=utc(2026, 4, 9, 4), affects=["geant-gva"],
                              status="completed")
    seen = everyone(utc(2026, 4, 9, 3))
    assert seen == dict.fromkeys(seen, ["GEANT-DONE"])
