"""Timers, silence matching and routing filters (pure, no database)."""

from datetime import UTC, datetime, timedelta

import pytest

from wanmon.alerts.grouping import FindingFacts
from wanmon.alerts.policy import (
    NotifyState,
    Timers,
    filter_matches,
    notification_due,
    resolve_due,
    resolve_hold_s,
    silence_matches,
)

T = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
TIMERS = Timers(group_wait_s=30, group_interval_s=300, repeat_interval_s=4 * 3600)
A, B = "LOSS_LIMITED|dst=CERN;src=FZK", "ASYMMETRIC_PATH|dst=CERN;src=FZK"


def state(last=None, keys=(), severity=None, acknowledged=False, returned=False):
    return NotifyState(opened_at=T, last_notified_at=last, last_notified_keys=frozenset(keys),
                       last_notified_severity=severity, acknowledged=acknowledged, returned=returned)


def due(st, at, visible=(A,), severity="critical", unmuted=(), flush=False):
    return notification_due(st, visible_keys=frozenset(visible), severity=severity, unmuted_keys=frozenset(unmuted),
                            now=at, timers=TIMERS, flush=flush)


def test_group_wait_delays_the_first_email():
    assert due(state(), T + timedelta(seconds=29)) is None
    assert due(state(), T + timedelta(seconds=30)) == "firing"
    assert due(state(), T, flush=True) == "firing"


def test_changes_wait_for_the_group_interval_and_unchanged_incidents_for_the_repeat_interval():
    sent = state(last=T, keys=[A], severity="warning")
    assert due(sent, T + timedelta(seconds=299), visible=(A, B)) is None
    assert due(sent, T + timedelta(seconds=300), visible=(A, B)) == "update"
    assert due(sent, T + timedelta(seconds=300), severity="critical") == "update"  # escalation
    assert due(sent, T + timedelta(hours=3), severity="warning") is None
    assert due(sent, T + timedelta(hours=4), severity="warning") == "repeat"
    assert due(sent, T + timedelta(hours=4), severity="warning", flush=True) == "repeat"
    assert due(sent, T + timedelta(hours=1), severity="warning", flush=True) is None  # flush never repeats early


def test_acknowledged_incidents_are_not_repeated_but_still_updated():
    acked = state(last=T, keys=[A], severity="critical", acknowledged=True)
    assert due(acked, T + timedelta(days=2)) is None
    assert due(acked, T + timedelta(minutes=6), visible=(A, B)) == "update"


def test_a_finding_unmuted_while_still_active_is_sent_at_once():
    sent = state(last=T, keys=[A], severity="critical")
    assert due(sent, T + timedelta(minutes=1), unmuted=(A,)) == "firing"
    assert due(state(), T + timedelta(seconds=1), unmuted=(A,)) == "firing"  # no group wait either


def test_nothing_visible_nothing_sent():
    assert due(state(), T + timedelta(days=1), visible=()) is None


def test_resolve_hold():
    assert not resolve_due(cleared_at=T, now=T + timedelta(seconds=179), hold_s=180)
    assert resolve_due(cleared_at=T, now=T + timedelta(seconds=180), hold_s=180)
    assert resolve_due(cleared_at=T, now=T, hold_s=180, flush=True)


def test_a_return_is_emailed_at_once_unless_nothing_pages():
    # reopened 1 s after a resolved notice that came 1 min after the last e-mail about changes, and acknowledged
    back = state(last=T, keys=[A], severity="critical", acknowledged=True, returned=True)
    assert due(back, T + timedelta(seconds=1)) == "returned"  # neither group wait nor group interval
    assert due(back, T + timedelta(seconds=1), visible=(A, B), unmuted=(B,)) == "returned"
    assert due(back, T + timedelta(seconds=1), visible=()) is None  # muted: the end of the mute tells it


def test_each_return_doubles_the_resolve_hold_up_to_an_hour():
    assert [resolve_hold_s(base_s=180, reopened=n) for n in range(5)] == [180, 1800, 3600, 3600, 3600]
    assert [resolve_hold_s(base_s=2400, reopened=n) for n in range(4)] == [2400, 2400, 3600, 3600]
    assert [resolve_hold_s(base_s=7200, reopened=n) for n in range(3)] == [7200, 7200, 7200]  # never below the base


FZK_CERN = FindingFacts(id=1, code="LOSS_LIMITED", severity="critical", subject={"src": "FZK", "dst": "CERN"},
                        subject_key="dst=CERN;src=FZK")
FRA_IF = FindingFacts(id=2, code="INTERFACE_ERRORS", severity="warning",
                      subject={"equipment": "geant-fra", "interface": "xe-1/0/0"},
                      subject_key="equipment=geant-fra;interface=xe-1/0/0")


@pytest.mark.parametrize(("matchers", "finding", "elements", "expected"), [
    ({"code": "LOSS_LIMITED"}, FZK_CERN, (), True),
    ({"code": "PATH_DOWN"}, FZK_CERN, (), False),
    ({"site": "FZK"}, FZK_CERN, (), True),
    ({"site": "CNAF"}, FZK_CERN, (), False),
    ({"path": "FZK->CERN"}, FZK_CERN, (), True),
    ({"path": "CERN->FZK"}, FZK_CERN, (), False),
    ({"path": "CERN<->FZK"}, FZK_CERN, (), True),
    ({"equipment": "geant-fra"}, FZK_CERN, ("geant-fra",), True),  # the incident's root element
    ({"equipment": "geant-fra"}, FZK_CERN, (), False),
    ({"equipment": "geant-fra"}, FRA_IF, (), True),
    ({"equipment": "geant-fra", "code": "LOSS_LIMITED"}, FRA_IF, (), False),  # all matchers must match
    ({}, FZK_CERN, (), False),
])
def test_silence_matchers(matchers, finding, elements, expected):
    assert silence_matches(matchers, finding, incident_elements=elements) is expected


def test_routing_filters():
    incident = {"incident_sites": ["FZK", "CERN"], "incident_carriers": ["GEANT"],
                "incident_codes": ["LOSS_LIMITED"], "severity": "warning"}
    assert filter_matches(sites=[], carriers=[], codes_=[], min_severity="warning", **incident)
    assert filter_matches(sites=["FZK"], carriers=["GEANT"], codes_=[], min_severity="warning", **incident)
    assert not filter_matches(sites=["RAL"], carriers=[], codes_=[], min_severity="warning", **incident)
    assert not filter_matches(sites=[], carriers=["DFN"], codes_=[], min_severity="warning", **incident)
    assert not filter_matches(sites=[], carriers=[], codes_=["PATH_DOWN"], min_severity="warning", **incident)
    assert not filter_matches(sites=[], carriers=[], codes_=[], min_severity="critical", **incident)
