"""Each TCP result judged against the capacity the load left it on a polled port of its path (docs/diagnosis.md,
"Load on the path"): a test on a busy shared link that got what the other traffic left is no degradation, one
that got clearly less still is, and a path without a polled port is judged as before."""

from __future__ import annotations

from dataclasses import replace

from tests.diagnosis.builders import NOW, at, bundle, codes_of, every, iface, path, rate_row, run, settled_baseline, tcp
from wanmon.diagnosis.assessment import assess_path
from wanmon.diagnosis.episodes import DEGRADED, OK
from wanmon.diagnosis.evidence import ThroughputTest
from wanmon.diagnosis.shared_elements import polled_ports_on_path, tightest_spare

# PIC->FZK leaves PIC by its 10G uplink and arrives at FZK by FZK's, both polled
PIC_FZK = ("pic-border:et-0/0/0", "geant-mad", "geant-fra", "fzk-border:et-0/0/0")
SPEED_BPS = 10e9
LEVEL_BPS = 8e9  # what the hosts reach on an idle link


def _uplinks(pic_load_bps: float, fzk_load_bps: float = 1e9):
    """The two uplinks polled every minute, PIC's carrying ``pic_load_bps`` out, FZK's ``fzk_load_bps`` in."""
    return (
        iface("pic-border", "et-0/0/0", SPEED_BPS, every(1, lambda m: rate_row(m, out_bps=pic_load_bps))),
        iface("fzk-border", "et-0/0/0", SPEED_BPS, every(1, lambda m: rate_row(m, in_bps=fzk_load_bps))),
    )


def _pic_fzk(rate_bps: float):
    """A window of tests every 30 min at ``rate_bps``, after a history at the idle level."""
    history = every(30, lambda m: tcp(m, LEVEL_BPS * (1 + 0.01 * ((m // 30) % 3 - 1))))
    tests = every(30, lambda m: tcp(m, rate_bps * (1 + 0.01 * ((m // 30) % 3 - 1))))
    return path("PIC", "FZK", SPEED_BPS, PIC_FZK, tests, baseline=settled_baseline(history, (), (), 360))


def _states(rate_bps: float, interfaces=()) -> set[str]:
    p = _pic_fzk(rate_bps)
    a = assess_path(p, bundle(p, interfaces=interfaces), NOW)
    return {o.state for o in a.observations if o.kind == "tcp"}


def test_the_tightest_polled_port_of_the_path_sets_the_room_a_test_had():
    p = _pic_fzk(1.5e9)
    ports = polled_ports_on_path(p, bundle(p, interfaces=_uplinks(8.3e9, 2e9)))
    assert {(q.name, q.direction) for q in ports} == {("pic-border:et-0/0/0", "out"), ("fzk-border:et-0/0/0", "in")}
    spare, port = tightest_spare(ports, p.throughput_tests[3])
    assert port == "pic-border:et-0/0/0"
    assert spare == 10e9 - 8.3e9
    # a poll of the other direction is not the path's load, and no poll covering the test is no room known
    assert tightest_spare(ports, ThroughputTest(NOW.replace(year=2030), "tcp", 1e9, duration_s=10)) is None


def test_a_test_that_got_what_the_afternoon_load_left_it_is_no_degradation():
    # given the idle level 8 Gb/s, and an afternoon whose 8.3 Gb/s of other traffic leave the path 1.7 Gb/s
    # when the tests get 1.5 Gb/s, 19 % of the level
    # then with the uplink polled every result is as expected: it got what the other traffic left it
    assert _states(1.5e9, _uplinks(8.3e9)) == {OK}
    # and without the polls the same results are degraded against the level (nothing changes there)
    assert _states(1.5e9) == {DEGRADED}


def test_a_test_that_got_far_less_than_the_room_the_load_left_is_degraded_against_that_room():
    # given the same afternoon (1.7 Gb/s left) and tests at 0.8 Gb/s, less than half of that room
    p = _pic_fzk(0.8e9)
    a = assess_path(p, bundle(p, interfaces=_uplinks(8.3e9)), NOW)
    bad = [o for o in a.observations if o.kind == "tcp" and o.state == DEGRADED]
    # then they are degraded, judged against the room rather than the level
    assert len(bad) == len([o for o in a.observations if o.kind == "tcp"])
    assert all(o.reference == 10e9 - 8.3e9 for o in bad)
    assert "pic-border:et-0/0/0" in bad[0].reason


def test_with_room_for_the_level_the_usual_judgement_holds():
    # given a quiet uplink (1 Gb/s of other traffic: 9 Gb/s left, more than the level) and tests at half the level
    # then they are degraded against the level, as without polls
    assert _states(4e9, _uplinks(1e9)) == {DEGRADED}


def _diurnal_night(rate_bps: float, reached_bps: float) -> set[str]:
    """States of a night window's tests at ``rate_bps`` when the uplink leaves 7.5 Gb/s, on a path whose median
    level over its busy days is 6 Gb/s and whose tests reached ``reached_bps`` the night before (the room was
    larger then)."""
    history = every(30, lambda m: tcp(m, 6e9 * (1 + 0.01 * ((m // 30) % 3 - 1))))
    tests = every(30, lambda m: tcp(m, rate_bps * (1 + 0.01 * ((m // 30) % 3 - 1))))
    p = path("PIC", "FZK", SPEED_BPS, PIC_FZK, tests, baseline=settled_baseline(history, (), (), 360))
    p = replace(p, earlier_tcp_results=((at(-600), reached_bps), (at(-480), 6e9)))
    a = assess_path(p, bundle(p, interfaces=_uplinks(2.5e9)), NOW)
    return {o.state for o in a.observations if o.kind == "tcp"}


def test_a_night_room_above_the_level_that_the_path_reached_before_is_still_the_tests_ceiling():
    # given a diurnal path (median level 6 Gb/s) whose tests got 8 Gb/s of a night's room the night before,
    # and tonight's tests at 5.5 Gb/s, 73 % of the 7.5 Gb/s the load leaves: above the level, short of the room
    # then they are degraded against the room: its hosts carried more, the load did not stop them
    assert _diurnal_night(5.5e9, 8e9) == {DEGRADED}
    # and when they get the room they are as expected
    assert _diurnal_night(7.3e9, 8e9) == {OK}
    # and a path that never reached above its level (its hosts limit it, the room above is not its ceiling) is
    # judged against the level, as before
    assert _diurnal_night(5.5e9, 5.9e9) == {OK}


def test_a_busy_afternoon_opens_no_finding_on_the_path():
    # given the whole window at 1.5 Gb/s with the polls saying the link had 1.7 Gb/s left
    p = _pic_fzk(1.5e9)
    findings = run(bundle(p, interfaces=_uplinks(8.3e9)))
    # then no rule sees a degradation: no unexplained one, no shared element
    assert not codes_of(findings) & {"UNEXPLAINED_DEGRADATION", "SHARED_EQUIPMENT_SUSPECT"}
    # while the same results without polls are reported
    unpolled = run(bundle(_pic_fzk(1.5e9)))
    assert "UNEXPLAINED_DEGRADATION" in codes_of(unpolled)


def test_a_path_s_polled_ports_are_found_with_its_membership_worked_out_once(monkeypatch):
    from wanmon.diagnosis import assessment, path_elements

    # given PIC->FZK's two uplinks among 38 other polled ports of the same two routers (other sites' links)
    others = tuple(
        iface(eq, f"et-0/1/{i}", SPEED_BPS, every(1, lambda m: rate_row(m, out_bps=5e9)))
        for eq in ("pic-border", "fzk-border")
        for i in range(19)
    )
    p = _pic_fzk(1.5e9)
    b = bundle(p, interfaces=_uplinks(8.3e9, 2e9) + others)
    trunks_read = []
    real = path_elements.trunks_on_path
    monkeypatch.setattr(path_elements, "trunks_on_path", lambda *a: trunks_read.append(a) or real(*a))
    # then the path's ports are its two uplinks, each on its side, the others' ports left out
    ports = polled_ports_on_path(p, b)
    assert {(q.name, q.direction) for q in ports} == {("pic-border:et-0/0/0", "out"), ("fzk-border:et-0/0/0", "in")}
    # and the trunks the path crosses were worked out once for the 40 ports, not once a port (a cycle's paths cross
    # routers of tens of polled ports: worked out per port, it was a third of a shard's Python)
    assert len(trunks_read) == 1
    # and a path without a TCP result in the window does not look for them at all (the room is a TCP test's)
    looked = []
    monkeypatch.setattr(assessment, "polled_ports_on_path", lambda *a: looked.append(a) or polled_ports_on_path(*a))
    quiet = path("PIC", "FZK", SPEED_BPS, PIC_FZK)
    assess_path(quiet, bundle(quiet, interfaces=_uplinks(8.3e9, 2e9) + others), NOW)
    assert looked == []
    # while one with TCP results looks once, whatever their number
    a = assess_path(p, b, NOW)
    assert len(looked) == 1 and len(a.tcp) == 13
    assert {f.spare_bps for f in a.tcp} == {10e9 - 8.3e9}
