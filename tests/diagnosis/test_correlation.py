"""The pure correlation layer: direction-aware ranking of shared elements, load correlation."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.diagnosis.builders import NOW, T0, at, every, iface, rate_row, tcp
from wanmon.diagnosis.shared_elements import (
    DegradedPath,
    PathRoute,
    bundle_load_rise,
    edges_at,
    healthy_weight,
    interface_load_rise,
    load_at_test_bps,
    load_during_bps,
    load_verdict,
    path_load_rise,
    rank_shared_elements,
    throughput_step,
)

FZK_CERN = ("fzk-border", "dfn-fra", "geant-fra", "geant-gva", "cern-border")
CNAF_CERN = ("cnaf-border", "garr-mil", "geant-fra", "geant-gva", "cern-border")
IN2P3_CERN = ("in2p3-border", "renater-lyo", "geant-gva", "cern-border")


def degraded(src, dst, hops):
    return DegradedPath(src, dst, T0, NOW, tuple(hops))


def healthy(src, dst, hops):
    return PathRoute(src, dst, tuple(hops))


FZK_CASE_HEALTHY = [
    healthy("CERN", "FZK", reversed(FZK_CERN)),
    healthy("CERN", "CNAF", reversed(CNAF_CERN)),
    healthy("CERN", "IN2P3", reversed(IN2P3_CERN)),
    healthy("IN2P3", "CERN", IN2P3_CERN),
]


def test_fzk_case_geant_fra_ranks_first():
    ranked = rank_shared_elements(
        [degraded("FZK", "CERN", FZK_CERN), degraded("CNAF", "CERN", CNAF_CERN)], FZK_CASE_HEALTHY
    )
    assert [s.element for s in ranked][:1] == ["geant-fra"]
    fra = ranked[0]
    # two degraded paths; CERN->FZK and CERN->CNAF cross it only in the opposite direction (0.25 each)
    assert fra.score == pytest.approx(2 - 2 * 0.25)
    assert fra.healthy_reverse == ("CERN->CNAF", "CERN->FZK")
    gva = next(s for s in ranked if s.element == "geant-gva")
    assert gva.healthy_same_direction == ("IN2P3->CERN",)
    assert gva.score == pytest.approx(2 - 1.0 - 3 * 0.25)
    border = next(s for s in ranked if s.element == "cern-border")
    assert border.endpoint and border.rank > gva.rank  # same score; the end point ranks last
    assert {s.element for s in ranked} == {"geant-fra", "geant-gva", "cern-border"}  # not dfn-fra, garr-mil


def test_a_healthy_path_in_the_same_direction_clears_an_element():
    # a healthy path entering geant-fra from dfn-fra towards geant-gva, like FZK->CERN, exonerates it fully
    other = healthy("X", "CERN", ("x-border", "dfn-fra", "geant-fra", "geant-gva", "cern-border"))
    ranked = rank_shared_elements(
        [degraded("FZK", "CERN", FZK_CERN), degraded("CNAF", "CERN", CNAF_CERN)], [*FZK_CASE_HEALTHY, other]
    )
    fra = next(s for s in ranked if s.element == "geant-fra")
    assert fra.healthy_same_direction == ("X->CERN",)
    assert fra.score == pytest.approx(2 - 1.0 - 0.5)


def test_weights_by_direction():
    d_edges = edges_at(FZK_CERN, "geant-fra")
    assert d_edges == {("dfn-fra", "geant-fra"), ("geant-fra", "geant-gva")}
    assert healthy_weight(tuple(reversed(FZK_CERN)), "geant-fra", d_edges) == (0.25, "reverse")
    assert healthy_weight(("a", "geant-fra", "b"), "geant-fra", d_edges) == (0.5, "other")
    assert healthy_weight(("a", "geant-fra", "geant-gva"), "geant-fra", d_edges) == (1.0, "same")


def test_interface_hops_replace_their_equipment_and_carrier_breaks_ties():
    a = ("s1", "geant-par:xe-1/0/0", "core-1", "d1")
    b = ("s2", "geant-par:xe-1/0/0", "core-1", "d2")
    ranked = rank_shared_elements(
        [degraded("S1", "D1", a), degraded("S2", "D2", b)], [], carrier_elements=["geant-par"]
    )
    names = [s.element for s in ranked]
    assert "geant-par" not in names  # the interface is the more precise element
    assert names[0] == "geant-par:xe-1/0/0"


def test_two_directions_of_one_site_pair_do_not_correlate():
    ranked = rank_shared_elements([degraded("FZK", "CERN", FZK_CERN), degraded("CERN", "FZK", reversed(FZK_CERN))], [])
    assert ranked == []


def test_corroboration_lifts_an_element():
    ranked = rank_shared_elements(
        [degraded("FZK", "CERN", FZK_CERN), degraded("CNAF", "CERN", CNAF_CERN)],
        [healthy("X", "CERN", ("x", "dfn-fra", "geant-fra", "geant-gva", "cern-border"))],
        corroboration={"geant-gva": ["INTERFACE_ERRORS on geant-gva:xe-0/0/0"]},
    )
    assert ranked[0].element == "geant-gva"


def _fnal_step(drop_at: float = 180, before_bps: float = 5.0e9, after_bps: float = 3.2e9):
    """CERN->FNAL tested every 30 min, stepping down at ``drop_at`` (minutes)."""
    tests = every(30, lambda m: tcp(m, before_bps if m < drop_at else after_bps))
    return throughput_step(tests, at(drop_at), NOW, before_bps)


def test_interface_load_rise():
    rows = [rate_row(m, 1e8, 5.0e9 if m < 180 else 5.45e9) for m in range(0, 361)]
    link = iface("usl-chi", "so-1/0/0", 10e9, rows)
    rise = interface_load_rise(link, _fnal_step())
    assert rise["rise_bps"] == pytest.approx(4.5e8)
    assert rise["after_utilisation"] == pytest.approx(0.545)
    assert rise["spare_bps"] == pytest.approx(4.55e9)
    # a 50 Mb/s wobble is not a rise (below 100 Mb/s and 2 % of 10 Gb/s)
    flat = iface("usl-chi", "so-1/0/0", 10e9, [rate_row(m, 1e8, 5.0e9 + (5e7 if m >= 180 else 0)) for m in range(361)])
    assert interface_load_rise(flat, _fnal_step()) is None
    assert at(180) - T0 == timedelta(hours=3)


def test_load_moved_between_bundle_members_is_not_a_rise():
    # xe-1/2/1 is drained at minute 180 and its 1.1 Gb/s moves to xe-1/2/0: one member's load doubles,
    # the bundle's does not change
    survivor = iface("cph", "xe-1/2/0", 10e9, [rate_row(m, 5e8, 1.1e9 if m < 180 else 2.2e9) for m in range(361)])
    drained = iface(
        "cph", "xe-1/2/1", 10e9, [rate_row(m, 5e8 if m < 180 else 0.0, 1.1e9 if m < 180 else 0.0) for m in range(361)]
    )
    assert interface_load_rise(survivor, _fnal_step())["rise_bps"] == pytest.approx(1.1e9)
    assert bundle_load_rise((survivor, drained), _fnal_step()) == pytest.approx(0.0, abs=1.0)
    # new traffic on the bundle does show
    busier = iface("cph", "xe-1/2/1", 10e9, [rate_row(m, 5e8, 1.1e9 if m < 180 else 1.6e9) for m in range(361)])
    assert bundle_load_rise((survivor, busier), _fnal_step()) == pytest.approx(1.6e9)


# --------------------------------------------------------------------------- the load-rise branch's defects
def test_the_drop_starts_at_its_first_lower_result_not_where_the_episode_was_judged():
    # given 5 Gb/s, then from minute 150 results at 3.1-3.4 Gb/s that a path without a baseline took into its own
    # history (not yet "degraded"), and an episode judged from minute 270 on at 2.9 Gb/s
    values = {150: 3.11e9, 180: 3.39e9, 210: 3.16e9, 240: 3.11e9}
    tests = every(30, lambda m: tcp(m, 5.0e9 if m < 150 else values.get(m, 2.9e9)))
    step = throughput_step(tests, at(270), NOW, 4.9e9)
    # then the drop starts at minute 150, after the last result at 5 Gb/s (minute 120)
    assert step.start == at(150) and step.last_healthy.time == at(120)
    assert step.before_bps == pytest.approx(5.0e9) and step.after_bps == pytest.approx(3.0e9, rel=0.05)
    assert [t.time for t in step.before] == [at(m) for m in (30, 60, 90, 120)]  # the 2 hours before


def test_a_test_is_judged_by_the_polls_that_cover_its_seconds():
    # given a port at 2 Gb/s on average over 5 minutes, carrying a 60-second burst of 9 Gb/s in which a test ran
    rows = [rate_row(m, 0.0, 9.0e9 if m == 3 else 0.25e9) for m in range(1, 6)]
    port = iface("geant-gva", "et-1/0/0", 10e9, rows)
    test = tcp(2.1, 1.0e9)  # minute 2:06 to 2:16, inside the poll ending at minute 3
    # then its load is the burst's, not the 5-minute mean
    assert load_at_test_bps(port, test, "out") == pytest.approx(9.0e9)
    assert load_during_bps(port, at(0), at(5), "out")[0] == pytest.approx(2.0e9)
    # a test across two polls is judged by both, weighted by their length
    assert load_at_test_bps(port, tcp(2.9, 1.0e9, duration_s=20), "out") == pytest.approx((9.0e9 + 0.25e9) / 2)


def test_a_test_that_got_the_spare_capacity_of_a_full_link_is_the_load_not_a_fault():
    # given a 100G link at 84.6 % of other traffic and a test getting the last 16 Gb/s (it got 30 before)
    assert load_verdict(16e9, 30e9, spare_bps=100e9 - 84.6e9) == "spare"
    # a link with room above the path's level before: not congestion, equipment at its limits (case 5)
    assert load_verdict(3.0e9, 5.0e9, spare_bps=5.8e9) == "limits"
    # the load took part of the room, but the tests fell much further: the load does not explain them
    assert load_verdict(4e9, 30e9, spare_bps=20e9) is None
    assert load_verdict(3.0e9, 5.0e9, spare_bps=None) == "unknown"


def test_a_morning_ramp_does_not_start_with_a_drop():
    # given the load on a 100G port ramping from 20 to 80 Gb/s between 06:00 and 12:00 (minutes 0-360), and a
    # path's hourly tests stepping down from 30 to 24 Gb/s at minute 240
    rows = [rate_row(m, 0.0, 20e9 + 60e9 * m / 360) for m in range(1, 361)]
    port = iface("geant-fra", "et-2/0/0", 100e9, rows)
    tests = every(60, lambda m: tcp(m, 30e9 if m < 240 else 24e9))
    step = throughput_step(tests, at(240), NOW, 30e9)
    # then the load rose by 25 Gb/s between the tests of the 2 hours before and those after (45 -> 70), but
    # only 10 of it between the last test at 30 Gb/s and the first at 24: a ramp, not a load that started with
    # the drop
    ramp = interface_load_rise(port, step, "out")
    assert ramp["rise_bps"] == pytest.approx(25e9, rel=0.01) and ramp["step_bps"] == pytest.approx(10e9, rel=0.02)
    assert not ramp["stepped"]
    # the same rise in one step at the drop does start with it
    rows = [rate_row(m, 0.0, 30e9 if m < 235 else 60e9) for m in range(1, 361)]
    stepped = iface("geant-fra", "et-2/0/0", 100e9, rows)
    assert interface_load_rise(stepped, step, "out")["stepped"]


def test_a_path_tested_before_the_window_did_not_start_at_the_window_edge():
    from tests.diagnosis.builders import bundle, path
    from wanmon.diagnosis.assessment import assess_path
    from wanmon.diagnosis.evidence import summarise_path

    # given another path tested hourly at 8-9.5 Gb/s for days, whose first test in the window comes 10 min after
    # a drop elsewhere at the window's start
    earlier = [tcp(m, 8.0e9 + (m % 7) * 0.25e9) for m in range(-3 * 1440, 0, 60)]
    baseline = summarise_path(earlier, (), (), T0 - timedelta(days=3), T0)
    tests = every(60, lambda m: tcp(m + 10, 8.0e9 + (m % 7) * 0.25e9))
    q = path("NDGF", "CERN", 10e9, ("ndgf-border", "geant-gva", "cern-border"), tests, baseline=baseline)
    a = assess_path(q, bundle(q), NOW)
    # then its traffic did not "start (0 -> 8.28 Gb/s)": its history is its level, and it did not rise
    assert path_load_rise(a, at(0), NOW, at(-60)) is None
    # without any earlier result, a flow that appears with the drop did start
    fresh = path("NDGF", "CERN", 10e9, ("ndgf-border", "geant-gva", "cern-border"), tests)
    started = path_load_rise(assess_path(fresh, bundle(fresh), NOW), at(0), NOW, at(-60))
    assert started["started"] and started["before_bps"] == 0.0


def test_traffic_already_up_before_the_last_good_result_did_not_start_with_the_drop():
    from tests.diagnosis.builders import bundle, path
    from wanmon.diagnosis.assessment import assess_path

    # given another path whose flow appeared at minute 100, and a path whose last good result was at minute 120
    tests = every(30, lambda m: tcp(m + 10, 4e8), start=90)
    q = path("CERN", "CALTECH", 10e9, ("cern-border", "usl-gva:xe-0/0/0", "caltech-border"), tests)
    a = assess_path(q, bundle(q), NOW)
    # then the flow is no cause of a drop whose first lower result came at minute 150
    assert path_load_rise(a, at(150), NOW, at(0), last_healthy=at(120)) is None
    # and it is, when it appeared between the last good result and the first lower one
    assert path_load_rise(a, at(150), NOW, at(0), last_healthy=at(90))["started"]


def test_paths_watched_by_owamp_alone_do_not_clear_an_element_whose_fault_only_tcp_sees():
    from tests.diagnosis.builders import bundle, every, owamp, path, tcp
    from wanmon.diagnosis.registry import rule_context
    from wanmon.diagnosis.rules.correlation import shared_equipment_suspects

    tail = ("geant-fra", "dfn-fra", "fzk-border")

    def degraded(src, first):
        tests = every(30, lambda m: tcp(m, 3e8 if m >= 180 else 9.2e8, window_bytes=2_450_000, rtt_ms=9.8))
        return path(src, "FZK", 1e9, (first, *tail), tests, every(5, lambda m: owamp(m, 4.9)), baseline_end_min=150)

    def owamp_only(src, first):
        return path(src, "FZK", 1e9, (first, *tail), (), every(5, lambda m: owamp(m, 4.9)))

    # given CERN->FZK and CNAF->FZK losing 70 % of their TCP rate (a 1e-5 loss no owamp session can see), and
    # IN2P3->FZK and PIC->FZK crossing the same elements but measured only by owamp, clean
    paths = (
        degraded("CERN", "geant-gva"),
        degraded("CNAF", "garr-mil"),
        owamp_only("IN2P3", "renater-lyo"),
        owamp_only("PIC", "rediris-mad"),
    )
    found = shared_equipment_suspects(rule_context(bundle(*paths), NOW))
    # then the shared elements stay suspects: the owamp-only paths could not have seen the loss
    suspects = {f.subject.get("equipment") for f in found}
    assert {"geant-fra", "dfn-fra"} <= suspects
    assert all(not f.evidence.get("healthy_same_direction") for f in found)


def test_a_port_whose_own_counters_show_errors_outranks_an_ecmp_sibling_seen_in_traceroutes():
    # given three paths into FZK degraded, all arriving by fzk-border:et-0/0/0 (CRC errors there) and, by
    # traceroute, through the ECMP sibling geant-fra2; two healthy paths leave FZK by the same port
    port = "fzk-border:et-0/0/0"
    bad = [degraded(src, "FZK", (f"{src.lower()}-border", "geant-fra2", port)) for src in ("CERN", "SARA", "IN2P3")]
    ok = [healthy("FZK", dst, (port, "geant-fra", f"{dst.lower()}-border")) for dst in ("CERN", "SARA")]
    ranked = rank_shared_elements(bad, ok, corroboration={port: ["INTERFACE_ERRORS on " + port]})
    # then the port with errors is the first suspect (3 - 2 x 0.25 reverse + 1.0 corroboration = 3.5 > 3)
    assert [s.element for s in ranked[:2]] == [port, "geant-fra2"]
    assert ranked[0].score == pytest.approx(3.5)


def test_traffic_rising_the_other_way_through_a_port_does_not_compete_with_the_path():
    from tests.diagnosis.builders import MiB, bundle, every, owamp, path, tcp
    from wanmon.diagnosis.registry import rule_context
    from wanmon.diagnosis.rules.correlation import shared_equipment_suspects

    # given CERN->FNAL leaving usl-gva by so-1/0/0 (out) and degrading at minute 180, when the port's *inbound*
    # traffic rises from 0.2 to 6 Gb/s while its outbound stays at 1 Gb/s
    hops = ("cern-border", "usl-gva:so-1/0/0", "usl-chi", "fnal-border")
    tests = every(30, lambda m: tcp(m, 5.0e9 if m < 180 else 3.2e9, window_bytes=64 * MiB, rtt_ms=120, streams=8))
    p = path("CERN", "FNAL", 10e9, hops, tests, every(5, lambda m: owamp(m, 60.0)), baseline_end_min=120)
    port = iface("usl-gva", "so-1/0/0", 10e9, every(1, lambda m: rate_row(m, 2e8 if m < 180 else 6e9, 1e9)))
    found = shared_equipment_suspects(rule_context(bundle(p, interfaces=(port,)), NOW))
    # then the port is not suspected: the other direction's traffic uses the other fibre and queue
    assert [f for f in found if f.subject.get("interface") == "so-1/0/0"] == []


def test_tests_every_four_hours_are_not_traffic_that_started_at_an_onset():
    from tests.diagnosis.builders import bundle, every, path, tcp
    from wanmon.diagnosis.assessment import assess_path
    from wanmon.diagnosis.shared_elements import path_load_rise

    # given another path tested every 4 h at a steady 5 Gb/s: the 2-hour look-back before an onset at 12:10
    # holds none of its tests, and the next one falls 10 min after the onset
    q = path("CERN", "SARA", 10e9, ("cern-border", "sara-border"), every(240, lambda m: tcp(m + 10, 5e9), end=1440))
    a = assess_path(q, bundle(q), at(1440))
    # then nothing "started": its latest earlier results are its level, and they did not change
    assert path_load_rise(a, at(720), at(900), at(0)) is None


def test_a_healthy_path_sharing_only_the_way_in_does_not_clear_the_element():
    # FZK->CERN enters geant-fra from dfn-fra and leaves towards geant-gva; a healthy path enters the same way
    # but leaves towards geant-mil: the fault may be on the port towards Geneva
    d_edges = edges_at(FZK_CERN, "geant-fra")
    assert healthy_weight(("x-border", "dfn-fra", "geant-fra", "geant-mil"), "geant-fra", d_edges) == (0.5, "other")
    # leaving the same way clears it fully
    assert healthy_weight(("x-border", "garr-mil", "geant-fra", "geant-gva"), "geant-fra", d_edges) == (1.0, "same")
