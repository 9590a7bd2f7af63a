"""TRUNK_IMBALANCE: a member out of its bundle is a finding of its own, and members are compared over the same
intervals (pure: no database)."""

from __future__ import annotations

import pytest

from tests.diagnosis.builders import NOW, MiB, at, bundle, every, iface, path, rate_row, tcp
from wanmon.diagnosis import codes, text
from wanmon.diagnosis.evidence import InterfaceStatus, MaintenanceEvidence, TrunkEvidence
from wanmon.diagnosis.registry import rule_context
from wanmon.diagnosis.rules.trunk import trunk_imbalance

RAL = ("cern-border", "geant-lon", "uk-lon", "ral-border")
MEMBER = "uk-lon:ge-1/0/1"


def lag(members, tests=None, maintenance=()):
    """ral-lag: two 1 Gb/s members at uk-lon on CERN->RAL, with steady TCP tests at 880 Mb/s unless given."""
    if tests is None:
        tests = every(30, lambda m: tcp(m, 8.8e8, window_bytes=4 * MiB, rtt_ms=8.0, dst_host="192.0.2.22"))
    p = path("CERN", "RAL", 2e9, RAL, tests)
    return rule_context(bundle(p, trunks=(TrunkEvidence("ral-lag", tuple(members)),), maintenance=maintenance), NOW)


def member(i, row, *, status=True, step=1):
    """uk-lon:ge-1/0/<i> polled every ``step`` minutes; ``row(minute)`` gives (in_bps, out_bps, oper status)."""

    def rate(m):
        in_bps, out_bps, oper = row(m)
        return rate_row(m, in_bps, out_bps, interval_s=60.0 * step, oper_status=oper if status else None)

    rows = every(step, rate)
    samples = tuple(InterfaceStatus(r.time, r.oper_status) for r in rows) if status else ()
    return iface("uk-lon", f"ge-1/0/{i}", 1e9, rows, status=samples)


def member_down_from(minute, *, total_out=lambda m: 8e8, until=None, status=True):
    """ge-1/0/1 down from ``minute`` (to ``until``); ge-1/0/0 carries the bundle's ``total_out(m)`` alone then."""

    def down(m):
        return minute <= m < (until if until is not None else 10**6)

    def first(m):
        return 1e8, total_out(m) if down(m) else total_out(m) / 2, "up"

    def second(m):
        return (0.0, 0.0, "down") if down(m) else (1e8, total_out(m) / 2, "up")

    return member(0, first, status=status), member(1, second, status=status)


def by_subject(findings):
    return {tuple(sorted(f.subject.items())): f for f in findings}


def test_a_member_down_is_its_own_finding_naming_the_member_its_bundle_and_the_capacity_left():
    # given ge-1/0/1 oper down since 08:05 and the bundle's 800 Mb/s on ge-1/0/0 alone
    [f] = trunk_imbalance(lag(member_down_from(125)))
    # then one finding about the member, not a hashing imbalance of the bundle
    assert f.code == codes.TRUNK_IMBALANCE
    assert f.subject == {"trunk": "ral-lag", "member": MEMBER}
    assert text.subject_label(f.subject) == "ral-lag/uk-lon:ge-1/0/1"
    assert f.summary == "ral-lag: member uk-lon:ge-1/0/1 down since 08:05, 1 of 2 Gb/s left"
    assert f.start == at(125) and f.end == NOW
    down = f.evidence["member_down"]
    assert down["capacity_left_bps"] == 1e9 and down["capacity_bps"] == 2e9
    assert down["members_left"] == ["uk-lon:ge-1/0/0"] and down["ongoing"]
    assert down["load_bps"] == pytest.approx(8e8)
    # 800 Mb/s fits in the 1 Gb/s left and CERN->RAL keeps its rate: the redundancy is gone, traffic is not hurt
    assert f.severity == codes.WARNING
    assert "not a hashing fault" in f.explanation and "still fits" in f.explanation


def test_a_member_down_whose_load_no_longer_fits_in_what_is_left_is_critical():
    # 1.6 Gb/s through the bundle: the member left is full (its 1 Gb/s carried at line rate, the rest dropped)
    first, second = member_down_from(125, total_out=lambda m: 1.6e9 if m < 125 else 0.99e9 * 2)
    [f] = trunk_imbalance(lag((first, second)))
    assert f.subject == {"trunk": "ral-lag", "member": MEMBER}
    assert f.severity == codes.CRITICAL
    assert f.evidence["member_down"]["overloaded"]
    assert "no longer fits" in f.explanation


def test_a_member_down_while_a_path_across_the_bundle_degrades_is_critical():
    tests = every(30, lambda m: tcp(m, 8.8e8 if m < 125 else 2.5e8, window_bytes=4 * MiB, rtt_ms=8.0))
    [f] = trunk_imbalance(lag(member_down_from(125), tests=tests))
    assert f.severity == codes.CRITICAL
    assert f.evidence["member_down"]["degraded_paths"] == ["CERN->RAL"]


def test_a_member_back_in_service_is_reported_with_its_outage():
    [f] = trunk_imbalance(lag(member_down_from(125, until=200)))
    assert f.summary == "ral-lag: member uk-lon:ge-1/0/1 down from 08:05 to 09:20, 1 of 2 Gb/s left"
    assert not f.evidence["member_down"]["ongoing"]
    # back in service: shown while the window holds it, nothing left to do
    assert f.severity == codes.INFO


def test_one_poll_down_is_a_flap_not_a_member_down():
    assert trunk_imbalance(lag(member_down_from(125, until=126))) == []


def test_a_member_shut_for_announced_work_is_not_reported_whatever_the_impact():
    work = MaintenanceEvidence("JANET-CHG-7", at(110), at(250), "reduced-redundancy", (MEMBER,))
    assert trunk_imbalance(lag(member_down_from(125, until=240), maintenance=(work,))) == []
    # work announced on the bundle or on its device covers its members as well
    on_bundle = MaintenanceEvidence("JANET-CHG-8", at(110), at(250), "no-impact", ("ral-lag",))
    assert trunk_imbalance(lag(member_down_from(125, until=240), maintenance=(on_bundle,))) == []


def test_a_member_still_down_long_after_its_announced_work_is_reported_with_the_work():
    work = MaintenanceEvidence("JANET-CHG-7", at(110), at(180), "reduced-redundancy", (MEMBER,))
    [f] = trunk_imbalance(lag(member_down_from(125), maintenance=(work,)))
    assert f.subject == {"trunk": "ral-lag", "member": MEMBER}
    assert f.evidence["member_down"]["work"] == "JANET-CHG-7"
    assert "JANET-CHG-7 ended at 09:00 UTC and the member is still out" in f.explanation


def test_without_oper_status_a_member_carrying_nothing_while_its_sibling_carries_the_load_is_out():
    # an agent that reports no oper status: ge-1/0/1's counters stand still from 08:05, ge-1/0/0 carries 800 Mb/s
    [f] = trunk_imbalance(lag(member_down_from(125, status=False)))
    assert f.subject == {"trunk": "ral-lag", "member": MEMBER}
    assert f.evidence["member_down"]["source"] == "idle"
    # since the start of the first idle poll interval (08:04-08:05)
    assert "out of the bundle since 08:04" in f.summary


def test_a_quiet_bundle_without_oper_status_is_not_a_member_out():
    # both members idle at night (no sibling carries anything): nothing to say
    quiet = member(0, lambda m: (0.0, 0.0, None), status=False), member(1, lambda m: (0.0, 0.0, None), status=False)
    assert trunk_imbalance(lag(quiet)) == []


def test_members_are_compared_over_the_same_intervals_not_over_their_own_averaging_periods():
    # given a transfer through the bundle from 09:00 (2 % before, 60 % after on both members, shared evenly),
    # ge-1/0/1 polled every minute until 09:00, then its polls time out until a single poll at 12:00 that averages
    # the three busy hours (a 10 800 s interval)
    def load(m):
        return 0.6e9 if m >= 180 else 0.02e9

    steady = member(0, lambda m: (1e7, load(m), "up"))
    rows = [rate_row(m, 1e7, load(m), oper_status="up") for m in range(1, 180)]
    rows.append(rate_row(360, 1e7, 0.6e9, oper_status="up", interval_s=10800.0))
    patchy = iface("uk-lon", "ge-1/0/1", 1e9, rows, status=tuple(InterfaceStatus(r.time, "up") for r in rows))
    # then the two carry the same load over the same time: no imbalance (one poll of three hours against 180 of
    # one minute read as 2.3 % against 31 %, "the least busy carries 7 % of the busiest")
    assert trunk_imbalance(lag((steady, patchy))) == []


def test_a_member_down_for_most_of_the_window_is_not_compared_with_the_hours_its_sibling_carried_it_all():
    # given the daily ramp (100 -> 700 Mb/s over the window) and ge-1/0/1 down from 06:25: its 25 minutes in
    # service at night against ge-1/0/0's six hours, two of them carrying the whole bundle
    found = trunk_imbalance(lag(member_down_from(25, total_out=lambda m: 1e8 + 6e8 * m / 360)))
    # then the member down is reported, and no hashing imbalance
    assert [f.subject for f in found] == [{"trunk": "ral-lag", "member": MEMBER}]


def test_a_hashing_fault_on_the_members_in_service_is_still_found_beside_a_member_down():
    # three members: ge-1/0/2 down; of the two left, ge-1/0/0 carries 80 % and ge-1/0/1 10 % all along
    busy = member(0, lambda m: (1e8, 8e8, "up"))
    idle = member(1, lambda m: (1e8, 1e8, "up"))
    down = member(2, lambda m: (0.0, 0.0, "down"))
    found = by_subject(trunk_imbalance(lag((busy, idle, down))))
    assert set(found) == {(("trunk", "ral-lag"),), (("member", "uk-lon:ge-1/0/2"), ("trunk", "ral-lag"))}
    hashing = found[(("trunk", "ral-lag"),)].evidence["member_utilisation"]
    assert set(hashing["utilisation"]) == {"uk-lon:ge-1/0/0", "uk-lon:ge-1/0/1"}
    assert found[(("member", "uk-lon:ge-1/0/2"), ("trunk", "ral-lag"))].summary.endswith("2 of 3 Gb/s left")


def test_a_member_shut_for_outage_work_that_slows_the_path_is_explained_not_alerted():
    # given ge-1/0/1 shut 08:05-09:20 for announced outage work on it, and CERN->RAL slowed meanwhile
    from tests.diagnosis.builders import run

    work = MaintenanceEvidence("JANET-CHG-9", at(120), at(210), "outage", (MEMBER,))
    tests = every(10, lambda m: tcp(m, 2.5e8 if 125 <= m < 200 else 8.8e8, window_bytes=4 * MiB, rtt_ms=8.0))
    first, second = member_down_from(125, until=200)
    p = path("CERN", "RAL", 2e9, RAL, tests, baseline_end_min=120)
    findings = run(bundle(p, trunks=(TrunkEvidence("ral-lag", (first, second)),), maintenance=(work,)))
    # then the work explains it, shown as info, and nothing about the bundle pages anyone
    assert codes.MAINTENANCE_EXPLAINED in {f.code for f in findings}
    assert [f for f in findings if f.code == codes.TRUNK_IMBALANCE] == []
    assert all(f.severity == codes.INFO for f in findings), [(f.code, f.severity, f.summary) for f in findings]
