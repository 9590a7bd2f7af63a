"""WINDOW_LIMITED, LOSS_LIMITED, TCP_ONLY_DEGRADATION with numbers."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.diagnosis.builders import (
    MiB,
    at,
    bundle,
    codes_of,
    every,
    find,
    host,
    iface,
    one,
    owamp,
    path,
    rate_row,
    settled_baseline,
    tcp,
    udp,
)
from wanmon.diagnosis import codes, physics
from wanmon.diagnosis import constants as k
from wanmon.diagnosis.evidence import ThroughputTest
from wanmon.diagnosis.registry import rule_context
from wanmon.diagnosis.rules.tcp import loss_limited, tcp_only_degradation, window_limited

HOPS = ("a-border", "carrier-x", "b-border")


def rule(fn, *paths, **kw):
    from tests.diagnosis.builders import NOW

    return fn(rule_context(bundle(*paths, **kw), NOW))


def transatlantic(thr, window=4 * MiB, streams=1, capacity=10e9, rtt=125.0, **kw):
    tests = every(30, lambda m: tcp(m, thr, window_bytes=window, rtt_ms=rtt, streams=streams, mss_bytes=1448, **kw))
    return path("CERN", "BNL", capacity, HOPS, tests, every(5, lambda m: owamp(m, rtt / 2)))


# --------------------------------------------------------------------------- WINDOW_LIMITED
def test_window_limited_4mib_at_125ms():
    [f] = rule(window_limited, transatlantic(2.55e8))
    assert f.evidence["window_limited_rate_bps"] == pytest.approx(268.4e6, rel=1e-3)
    assert f.evidence["ratio_to_window_limit"] == pytest.approx(0.95, rel=1e-2)
    assert f.evidence["recommended_window_bytes"] == pytest.approx(312.5e6)
    assert f.evidence["bdp_bytes"] == pytest.approx(156.25e6)
    assert "net.core.wmem_max = 313524224" in f.evidence["sysctl"]
    assert "268 Mb/s" in f.explanation and "156 MB" in f.explanation
    assert any("parallel streams" in a for a in f.actions)
    assert f.derived.required_window_bytes == pytest.approx(312.5e6)



def test_window_limited_with_tests_every_4_hours_counts_the_last_test_before_the_window():
    # a 6-hour window holds one test of a path tested every 4 h half of the time: the last test before the window
    # is the second (the finding must not come and go with the window), and its age is in the evidence
    tests = [tcp(m, 2.55e8, window_bytes=4 * MiB, rtt_ms=125.0, mss_bytes=1448) for m in (-100, 140)]
    p = path("CERN", "BNL", 10e9, HOPS, tests, every(5, lambda m: owamp(m, 62.5)))
    [f] = rule(window_limited, p)
    assert [t["time"] for t in f.evidence["tests"]] == [tests[0].time, tests[1].time]
    assert f.evidence["oldest_test_age_s"] == pytest.approx(460 * 60)
    assert f.start == tests[0].time

def _window_onset_case(good_min: float, report_mins: tuple[float, ...]):
    # a receiver reconfigured to 4 MiB: one fast test before (2 Gb/s), then tests at the window's limit
    kw = {"window_bytes": 64 * MiB, "rtt_ms": 125.0, "mss_bytes": 1448, "dst_host": "198.51.100.7"}
    tests = [tcp(good_min, 2.0e9, **kw), *(tcp(m, 2.55e8, **kw) for m in (60, 180, 300))]
    p = path("CERN", "BNL", 10e9, HOPS, tests, every(5, lambda m: owamp(m, 62.5)))
    reports = [host("BNL", "bnl-dt01", buf=512 * MiB, address="198.51.100.7", minute=-600)]
    reports += [host("BNL", "bnl-dt01", buf=4 * MiB, address="198.51.100.7", minute=m) for m in report_mins]
    [f] = rule(window_limited, p, hosts=tuple(reports))
    return f, tests


def test_window_limited_dates_from_the_host_report_that_first_showed_the_setting():
    # hosts report every few hours: the report at -200 min already showed the 4 MiB that holds every later test
    f, tests = _window_onset_case(-300, (-200, 240))
    assert f.start == at(-200)
    assert f.evidence["tests"][0]["time"] == tests[1].time


def test_window_limited_setting_reported_before_a_fast_test_did_not_limit_it():
    # the 4 MiB report at -350 came before a test that still ran at 2 Gb/s: the first slow test dates the limit
    f, tests = _window_onset_case(-300, (-350, 240))
    assert f.start == tests[1].time


def test_window_cut_found_from_the_first_test_at_the_new_limit():
    # tests every 3 hours: at -60 min a 400 MiB window ran at 2 Gb/s; at 120 the window is 4 MiB (268 Mb/s at
    # 125 ms) and the stream runs at 255 Mb/s. 2 Gb/s is 7.5 x what 4 MiB allows: the window was cut between the
    # two, and the first test since is held at the new limit; the second one would come only at 300 min.
    kw = {"rtt_ms": 125.0, "mss_bytes": 1448}
    before = tcp(-60, 2.0e9, window_bytes=400 * MiB, **kw)
    cut = tcp(120, 2.55e8, window_bytes=4 * MiB, **kw)
    owd = every(5, lambda m: owamp(m, 62.5))
    [f] = rule(window_limited, path("CERN", "BNL", 10e9, HOPS, [before, cut], owd))
    assert f.start == at(120)
    assert f.evidence["window_limited_rate_bps"] == pytest.approx(268.4e6, rel=1e-3)
    assert f.evidence["ratio_to_window_limit"] == pytest.approx(0.95, rel=1e-2)
    assert [t["time"] for t in f.evidence["tests"]] == [cut.time]
    # the test before ran no faster than the limit allows (slow for another reason): one test is not yet a limit
    slow = tcp(-60, 2.0e8, window_bytes=400 * MiB, **kw)
    assert rule(window_limited, path("CERN", "BNL", 10e9, HOPS, [slow, cut], owd)) == []
    # and a later test back above the limit: the one slow test was not the window's
    after = tcp(300, 2.0e9, window_bytes=400 * MiB, **kw)
    assert rule(window_limited, path("CERN", "BNL", 10e9, HOPS, [before, cut, after], owd)) == []


def test_window_limit_of_several_streams():
    [f] = rule(window_limited, transatlantic(1.0e9, streams=4))
    assert f.evidence["window_limited_rate_bps"] == pytest.approx(4 * 268.4e6, rel=1e-3)
    assert f.evidence["streams"] == 4


def test_not_window_limited_when_the_window_exceeds_the_bdp():
    assert rule(window_limited, transatlantic(9.0e9, window=400 * MiB)) == []


def test_not_window_limited_when_far_below_the_window_limit():
    # 40 Mb/s with a 268 Mb/s window limit: something else holds it back
    assert rule(window_limited, transatlantic(4.0e7)) == []


def test_not_window_limited_when_the_window_limit_is_near_capacity():
    # 1 Gb/s path, 2.45 MB at 9.8 ms allows 2 Gb/s: the capacity is the limit
    p = path("CERN", "FZK", 1e9, HOPS, every(30, lambda m: tcp(m, 9.3e8, window_bytes=2_450_000, rtt_ms=9.8)))
    assert rule(window_limited, p) == []


def test_requested_window_cut_by_the_receivers_rmem_max():
    p = path(
        "CERN",
        "BNL",
        10e9,
        HOPS,
        every(30, lambda m: tcp(m, 2.6e8, window_bytes=64 * MiB, rtt_ms=125, mss_bytes=1448, dst_host="198.51.100.7")),
    )
    receiver = host("BNL", "bnl-dt01", buf=4 * MiB, address="198.51.100.7")
    [f] = rule(window_limited, p, hosts=(receiver,))
    assert f.evidence["window_bytes"] == 4 * MiB
    assert f.evidence["requested_window_bytes"] == 64 * MiB
    assert "net.core.rmem_max of bnl-dt01" in f.explanation


# --------------------------------------------------------------------------- LOSS_LIMITED
def oc12(thr=8.7e7, udp_lost=5, retransmits=1, cc=None, **kw):
    tests = every(30, lambda m: tcp(m, thr, window_bytes=64 * MiB, rtt_ms=72, retransmits=retransmits)) + every(
        60, lambda m: udp(m + 15, 5e8, 78_110, udp_lost)
    )
    hosts = (host("A", "a-dt01", cc=cc, mtu=9000),) if cc else ()
    return path("A", "B", 622e6, HOPS, tests, every(5, lambda m: owamp(m, 36.0)), **kw), hosts


def test_loss_limited_matches_mathis():
    p, hosts = oc12()
    [f] = rule(loss_limited, p, hosts=hosts)
    assert f.evidence["mathis_conservative_bps"] == pytest.approx(87e6, rel=1e-2)
    assert f.evidence["mathis_reno_bps"] == pytest.approx(87e6 * 1.2247 / 0.7, rel=1e-2)
    # target 90 % of 622 Mb/s needs p below (0.7*8948*8/(0.072*560e6))^2
    assert f.evidence["loss_needed_for_target"] == pytest.approx(physics.loss_for_rate(0.9 * 622e6, 8948, 72), rel=1e-6)
    assert "1.5e-06" in f.summary


def test_loss_limited_with_reno_uses_the_reno_ceiling():
    p, hosts = oc12(cc="reno")
    [f] = rule(loss_limited, p, hosts=hosts)
    assert f.evidence["stack_ceiling_bps"] == pytest.approx(f.evidence["mathis_reno_bps"])


def test_no_loss_limited_for_bbr():
    p, hosts = oc12(cc="bbr")
    assert rule(loss_limited, p, hosts=hosts) == []


def test_no_loss_limited_without_loss():
    p, _ = oc12(udp_lost=0, retransmits=0)
    assert rule(loss_limited, p) == []


def test_no_loss_limited_when_far_below_even_the_conservative_figure():
    # 5 Mb/s where loss allows 87 Mb/s: loss does not explain this
    p, _ = oc12(thr=5e6)
    assert rule(loss_limited, p) == []


def test_unknown_retransmits_are_unknown_loss_not_zero():
    tests = every(30, lambda m: tcp(m, 8.7e7, window_bytes=64 * MiB, rtt_ms=72, retransmits=None))
    p = path("A", "B", 622e6, HOPS, tests)
    a = rule_context(bundle(p), tests[-1].time).assessment(p)
    assert a.loss.fraction is None
    assert a.derived().loss_fraction is None
    assert rule(loss_limited, p) == []


def test_retransmit_loss_alone_counts_when_no_probe_contradicts_it():
    # 10 s at 87 Mb/s with MSS 8948 is ~12150 segments; 1 retransmit per test -> ~8e-5
    tests = every(30, lambda m: tcp(m, 8.7e7, window_bytes=64 * MiB, rtt_ms=72, retransmits=1))
    p = path("A", "B", 622e6, HOPS, tests)
    [f] = rule(loss_limited, p)
    assert f.evidence["loss_source"] == "tcp_retransmits"
    assert f.evidence["loss_fraction"] == pytest.approx(1 / 12155, rel=2e-2)


def european_10g(thr, retransmits, hops=("a-border:et-0/0/0", "carrier-x", "b-border"), udp_tests=()):
    """A 10G path across Europe (11 ms, jumbo frames) whose tests lose ``retransmits`` segments each."""
    tests = every(30, lambda m: tcp(m, thr, window_bytes=64 * MiB, rtt_ms=11.0, retransmits=retransmits))
    return path("A", "B", 10e9, hops, [*tests, *udp_tests])


def uplink(out_bps):
    """The sender's polled uplink, carrying ``out_bps`` of other traffic every minute of the window."""
    return iface("a-border", "et-0/0/0", 10e9, [rate_row(m, in_bps=1e9, out_bps=out_bps) for m in range(-5, 366)])


def test_retransmits_alone_at_a_full_uplink_are_the_flows_own_congestion_not_path_loss():
    # 1.5 Gb/s for 10 s is ~210 000 segments: 21 retransmits each give 1e-4, whose CUBIC ceiling at 11 ms
    # (1.6 Gb/s) the tests match -- but the uplink carried 8.4 Gb/s of other traffic: with the test 99 % of it
    p = european_10g(1.5e9, 21)
    assert rule(loss_limited, p, interfaces=(uplink(8.4e9),)) == []
    # the same tests on an uplink with room: nothing of theirs filled a queue, the loss is the path's
    [f] = rule(loss_limited, p, interfaces=(uplink(1.0e9),))
    assert f.evidence["loss_source"] == "tcp_retransmits"


def test_retransmits_alone_do_not_match_a_flow_running_far_above_their_ceiling():
    # 6 Gb/s with 15 retransmits of ~840 000 segments (1.8e-5): 1.6 x CUBIC's ceiling of that loss, more than
    # LOSS_MATCH_MAX_RATIO above it; measured in these very flows, that loss does not hold them
    assert rule(loss_limited, european_10g(6e9, 15)) == []


def test_retransmits_alone_do_not_hold_a_cubic_flow_at_more_than_twice_its_reno_figure():
    # 6.2 Gb/s with 10 retransmits of ~866 000 segments (1.2e-5): Reno's figure 2.34 Gb/s, CUBIC's doubled
    # ceiling 4.67, and 6.2 is within LOSS_MATCH_MAX_RATIO of that ceiling -- the probes' tolerance, which a
    # healthy CUBIC mesh's own congestion retransmits met (RAL->SARA 6.22 Gb/s). At 11 ms CUBIC's response is
    # Reno's: the random-loss margin belongs on the Reno figure, which these flows run at 2.7 times.
    p = european_10g(6.2e9, 10)
    a = rule_context(bundle(p), p.throughput_tests[-1].time).assessment(p)
    reno = physics.mathis_rate_bps(a.mss_bytes, 11.0, a.loss.fraction, c=k.MATHIS_C_RENO)
    assert reno == pytest.approx(2.34e9, rel=0.02)
    assert a.mathis_ceiling_bps(a.loss.fraction) == pytest.approx(2 * reno, rel=1e-3)
    assert rule(loss_limited, p) == []
    # flows at 2.8 Gb/s with 10 retransmits of ~391 000 segments (2.6e-5): 1.8 x Reno's figure, within the
    # doubled ceiling (3.14 Gb/s) -- held by that loss
    [f] = rule(loss_limited, european_10g(2.8e9, 10))
    assert f.evidence["loss_source"] == "tcp_retransmits"


def test_retransmits_alone_against_udp_that_lost_less():
    # UDP datagrams of the period: 0 of 3 x 700 000 lost (below 1.8e-6), where the retransmits say 1e-4
    udp_tests = [udp(m, 2e9, 700_000, 0) for m in (40, 160, 280)]
    assert rule(loss_limited, european_10g(1.5e9, 21, udp_tests=udp_tests)) == []


# --------------------------------------------------------------------------- TCP_ONLY_DEGRADATION
def duplex_mismatch(udp_lost=0, udp_rate=8e8):
    tests = every(30, lambda m: tcp(m, 6e7, window_bytes=4 * MiB, rtt_ms=8.0, retransmits=400)) + every(
        60, lambda m: udp(m + 10, udp_rate, 69_000, udp_lost)
    )
    return path("CERN", "RAL", 1e9, HOPS, tests, every(5, lambda m: owamp(m, 4.0)))


def test_tcp_only_degradation_when_udp_is_clean_at_13x_the_tcp_rate():
    [f] = rule(tcp_only_degradation, duplex_mismatch())
    assert f.evidence["slow_throughput_median_bps"] == pytest.approx(6e7)
    assert f.evidence["predicted_bps"] == pytest.approx(1e9)
    assert "duplex" in f.explanation


def test_no_tcp_only_when_udp_loses_enough_to_explain_tcp():
    # 2 % UDP loss: conservative Mathis at 8 ms is ~40 Mb/s, below twice the TCP rate
    assert rule(tcp_only_degradation, duplex_mismatch(udp_lost=1380)) == []


def test_no_tcp_only_when_udp_ran_at_a_much_lower_rate():
    assert rule(tcp_only_degradation, duplex_mismatch(udp_rate=8e7)) == []


def test_retransmit_loss_with_clean_udp_is_tcp_only_not_loss_limited():
    p = duplex_mismatch()
    assert rule(loss_limited, p) == []
    assert rule(tcp_only_degradation, p)


def test_engine_keeps_the_two_apart():
    from tests.diagnosis.builders import run

    found = codes_of(run(bundle(duplex_mismatch())))
    assert codes.TCP_ONLY_DEGRADATION in found and codes.LOSS_LIMITED not in found
    assert one(run(bundle(duplex_mismatch())), codes.TCP_ONLY_DEGRADATION).derived.bdp_bytes == pytest.approx(1e6)
    assert not find(run(bundle(duplex_mismatch())), codes.WINDOW_LIMITED)


def _duplex_without_udp_in_the_window(udp_before_min: float, earlier=()):
    """The duplex mismatch's TCP tests (every 30 min of the window, 60 Mb/s) without its UDP tests: the path's
    UDP runs every 12 h, its last one ``udp_before_min`` (before the window: negative) and clean at 800 Mb/s."""
    p = duplex_mismatch()
    return replace(
        p,
        throughput_tests=tuple(t for t in p.throughput_tests if t.protocol == "tcp"),
        udp_before=udp(udp_before_min, 8e8, 69_000, 0),
        earlier_tcp_results=tuple(earlier),
    )


def test_tcp_only_stays_when_its_udp_test_has_left_the_window_if_it_ran_during_the_slow_run():
    # the slow TCP began 3 h before the window (results of the day before it: 1 Gb/s, then 60 Mb/s from -180 min)
    earlier = [(at(m), 9.4e8) for m in range(-600, -180, 60)] + [(at(m), 6e7) for m in range(-180, 0, 60)]
    # and the last UDP test ran 2 h before the window, clean, while TCP was slow
    [f] = rule(tcp_only_degradation, _duplex_without_udp_in_the_window(-120, earlier))
    # then the finding holds on it (its time in the evidence) and starts with the slow run, not the window's edge
    [clean] = f.evidence["udp_clean_tests"]
    assert clean["before_window"] and clean["time"] == at(-120)
    assert f.start == at(-180)


def test_no_tcp_only_from_a_udp_test_that_ran_before_the_slow_run_began():
    # the slow TCP began in the window's first test; the last UDP test ran 3 h before it, when TCP was fast: it
    # says nothing of what UDP gets now (a loss that began with the run would be called TCP-only)
    earlier = [(at(m), 9.4e8) for m in range(-600, 0, 60)]
    assert rule(tcp_only_degradation, _duplex_without_udp_in_the_window(-180, earlier)) == []


def test_tcp_only_on_a_host_limited_path_starts_with_the_slow_run_not_with_its_ordinary_results():
    # the path's usual rate (its baseline) is 240 Mb/s on a 1G path, far below the prediction every day: its
    # earlier results at 240 Mb/s are not part of the 60 Mb/s run, which began 60 min before the window
    earlier = [(at(m), 2.4e8) for m in range(-600, -60, 60)] + [(at(-60), 6e7)]
    p = _duplex_without_udp_in_the_window(-30, earlier)
    baseline = replace(settled_baseline(p.throughput_tests, (), (), 360), tcp_throughput_median_bps=2.4e8)
    [f] = rule(tcp_only_degradation, replace(p, baseline=baseline))
    assert f.start == at(-60)


def test_udp_test_type_is_checked():
    t = ThroughputTest(
        time=duplex_mismatch().throughput_tests[0].time, protocol="udp", throughput_bps=None, error="timeout"
    )
    p = duplex_mismatch()
    p2 = path(p.src, p.dst, p.capacity_bps, p.hops, p.throughput_tests + (t,), p.owamp_tests)
    assert rule(tcp_only_degradation, p2)


def test_autotuned_window_limited_by_the_hosts_tcp_rmem():
    # no explicit window: Linux autotuning stops at tcp_rmem max = 4 MiB and advertises about half of it
    tests = every(30, lambda m: tcp(m, 1.45e8, rtt_ms=125, mss_bytes=1448))
    p = path("CERN", "BNL", 10e9, HOPS, tests)
    hosts = (host("CERN", "cern-dt01"), host("BNL", "bnl-dt01"))
    [f] = rule(window_limited, p, hosts=hosts)
    assert f.evidence["window_bytes"] == 4 * MiB
    assert "net.ipv4.tcp_rmem max of bnl-dt01" in f.evidence["window_caps"]
    # without host reports nothing is known about the window
    assert rule(window_limited, p) == []


def test_window_advice_never_goes_beyond_linuxs_cap():
    # 100G to the US (125 ms): 2 x BDP = 3.1 GB, beyond the 2^31-1 bytes Linux grants one socket; a 256 MiB
    # window gives 17 Gb/s
    [f] = rule(window_limited, transatlantic(16.5e9, window=256 * MiB, capacity=100e9))
    assert f.evidence["recommended_window_bytes"] == pytest.approx(3.125e9)
    window_action = f.actions[0]
    # the advice is the cap and as many streams as hold 2 x BDP between them (3.1 GB / 2 GiB: 2)
    assert "2147483647 bytes" in window_action and "-w2047m" in window_action
    assert "with 2 parallel streams" in window_action
    assert "-w2981m" not in window_action and "3125" not in window_action
    assert "net.core.rmem_max = 2147483647" in f.evidence["sysctl"]


def test_window_advice_fills_the_member_a_flow_rides_not_the_whole_bundle():
    from tests.diagnosis.builders import iface
    from wanmon.diagnosis.evidence import TrunkEvidence

    # a 2 x 10G bundle on the path: one stream hashes onto one 10G member
    members = (iface("b-border", "ae0-m1", 10e9), iface("b-border", "ae0-m2", 10e9))
    p = transatlantic(2.55e8, capacity=20e9)
    p = path(p.src, p.dst, p.capacity_bps, (*HOPS[:-1], "b-border:ae0-m1"), p.throughput_tests, p.owamp_tests)
    [f] = rule(window_limited, p, trunks=(TrunkEvidence("ae0", members),))
    # then 2 x BDP of 10G at 125 ms, not of 20G
    assert f.evidence["recommended_window_bytes"] == pytest.approx(312.5e6)
