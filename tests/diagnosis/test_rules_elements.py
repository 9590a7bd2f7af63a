"""Element rules: INTERFACE_ERRORS, LINK_CONGESTION, COUNTER_DISCONTINUITY, TRUNK_IMBALANCE."""

from __future__ import annotations

import pytest

from tests.diagnosis.builders import (
    NOW,
    MiB,
    at,
    bundle,
    eu_path,
    every,
    healthy_eu,
    iface,
    path,
    rate_row,
    run,
    tcp,
    udp,
)
from wanmon.diagnosis import codes
from wanmon.diagnosis.evidence import CounterDiscontinuity, InterfaceStatus, MaintenanceEvidence, TrunkEvidence
from wanmon.diagnosis.registry import rule_context
from wanmon.diagnosis.rules.interfaces import counter_discontinuity, interface_errors, link_congestion
from wanmon.diagnosis.rules.trunk import address_parity, trunk_imbalance

HOPS = ("cern-border", "geant-gva:xe-0/0/0", "geant-fra", "fzk-border")


def ctx(*paths, **kw):
    return rule_context(bundle(*paths, **kw), NOW)


# --------------------------------------------------------------------------- INTERFACE_ERRORS
def test_interface_errors_sustained_crc():
    rows = every(1, lambda m: rate_row(m, 5e8, 5e8, in_errors_per_s=0.5 if m >= 60 else 0.0, in_pkts_per_s=7e4))
    [f] = interface_errors(ctx(healthy_eu(hops=HOPS), interfaces=(iface("geant-gva", "xe-0/0/0", 10e9, rows),)))
    assert f.subject == {"equipment": "geant-gva", "interface": "xe-0/0/0"}
    assert f.evidence["intervals_with_errors"] == 301
    assert f.evidence["error_fraction"] == pytest.approx(0.5 / 7e4)
    assert f.severity == codes.WARNING  # no path through it is degraded
    assert "capped at" in f.explanation  # the loss is translated into a Mathis ceiling


@pytest.mark.parametrize(
    ("affects", "explained"), [("geant-gva:xe-0/0/0", True), ("geant-gva", True), ("geant-gva:xe-7/0/0", False)]
)
def test_errors_during_work_on_that_port_or_its_device_are_explained_not_during_work_on_another_port(
    affects, explained
):
    rows = every(1, lambda m: rate_row(m, 5e8, 5e8, in_errors_per_s=0.5 if m >= 60 else 0.0, in_pkts_per_s=7e4))
    work = MaintenanceEvidence("GEANT-CHG-7", at(55), at(365), "outage", (affects,))
    findings = run(
        bundle(healthy_eu(hops=HOPS), interfaces=(iface("geant-gva", "xe-0/0/0", 10e9, rows),), maintenance=(work,))
    )
    [f] = [f for f in findings if f.code == codes.INTERFACE_ERRORS]
    assert bool(f.explained_by) is explained


def test_crc_errors_growing_from_none_start_where_the_first_error_came():
    # a connector going bad: from minute 60 errors grow by 0.001/s a minute and pass 1e-6 of the 70 k packets/s
    # (0.07/s) at minute 130; the fault began with its first error, not where the share crossed the criterion
    rows = every(1, lambda m: rate_row(m, 5e8, 5e8, in_errors_per_s=max(0.0, 0.001 * (m - 60)), in_pkts_per_s=7e4))
    [f] = interface_errors(ctx(healthy_eu(hops=HOPS), interfaces=(iface("geant-gva", "xe-0/0/0", 10e9, rows),)))
    assert f.evidence["rows"][0]["time"] == at(130)  # the polls above the criterion
    assert f.start == at(61)


def test_a_single_error_burst_is_not_reported():
    rows = every(1, lambda m: rate_row(m, 5e8, 5e8, in_errors_per_s=20.0 if m == 100 else 0.0))
    assert interface_errors(ctx(interfaces=(iface("geant-gva", "xe-0/0/0", 10e9, rows),))) == []


def test_errors_at_a_discontinuity_do_not_count():
    rows = every(1, lambda m: rate_row(m, 5e8, 5e8, in_errors_per_s=1e6 if m in (100, 200, 300) else 0.0))
    gaps = tuple(CounterDiscontinuity(at(m), "sysuptime_reset") for m in (100, 200, 300))
    assert interface_errors(ctx(interfaces=(iface("geant-gva", "xe-0/0/0", 10e9, rows, discontinuities=gaps),))) == []


# --------------------------------------------------------------------------- LINK_CONGESTION
def congested_bundle(util_from, util_to, degraded=True, discards=0.0):
    def thr(m):
        return 3e8 if degraded and util_from <= m <= util_to else 9.2e8

    p = eu_path("CERN", "FZK", HOPS, thr, baseline_end_min=100)
    rows = every(
        1,
        lambda m: rate_row(
            m,
            1e9,
            9.6e9 if util_from <= m <= util_to else 4e9,
            out_discards_per_s=discards if util_from <= m <= util_to else 0.0,
        ),
    )
    return ctx(p, interfaces=(iface("geant-gva", "xe-0/0/0", 10e9, rows),))


def test_link_congestion_while_a_path_through_it_degrades():
    [f] = link_congestion(congested_bundle(180, 300))
    assert f.evidence["utilisation_median"] == pytest.approx(0.96)
    assert f.evidence["direction"] == "out"
    assert f.evidence["degraded_paths"] == ["CERN->FZK"]
    assert f.severity == codes.CRITICAL


def test_busy_link_without_degradation_or_drops_is_not_congestion():
    assert link_congestion(congested_bundle(180, 300, degraded=False)) == []


def test_busy_link_dropping_packets_is_congestion():
    [f] = link_congestion(congested_bundle(180, 300, degraded=False, discards=120.0))
    assert f.severity == codes.WARNING


def test_two_busy_polls_are_not_sustained():
    assert link_congestion(congested_bundle(200, 201)) == []


def test_implausible_rates_are_counter_artefacts():
    rows = every(1, lambda m: rate_row(m, 1e9, 3.0e10))  # 300 % of 10 Gb/s
    c = ctx(healthy_eu(hops=HOPS), interfaces=(iface("geant-gva", "xe-0/0/0", 10e9, rows),))
    assert link_congestion(c) == []


# --------------------------------------------------------------------------- COUNTER_DISCONTINUITY
def test_counter_discontinuity_names_the_device_restart():
    gaps = (CounterDiscontinuity(at(200), "sysuptime_reset", at(199)),)
    a = iface("geant-par", "xe-1/0/0", 10e9, discontinuities=gaps)
    b = iface("geant-par", "xe-1/0/1", 10e9, discontinuities=gaps)
    found = counter_discontinuity(ctx(interfaces=(a, b)))
    assert len(found) == 2
    assert all(f.severity == codes.INFO for f in found)
    assert "the device or its SNMP agent restarted" in found[0].explanation


def test_no_discontinuity_no_finding():
    assert counter_discontinuity(ctx(interfaces=(iface("geant-par", "xe-1/0/0", 10e9),))) == []


# --------------------------------------------------------------------------- TRUNK_IMBALANCE
def test_address_parity():
    assert address_parity("192.0.2.21") == 1
    assert address_parity("192.0.2.22") == 0
    assert address_parity("2001:db8::a") == 0
    assert address_parity("ral-dt03") == 1
    assert address_parity(None) is None


RAL = ("cern-border", "geant-lon", "uk-lon", "ral-border")


def ral(odd_bps, even_bps=9.1e8, member_out=(7.5e8, 1.2e8)):
    tests = every(
        30,
        lambda m: tcp(
            m,
            odd_bps if (m // 30) % 2 == 0 else even_bps,
            window_bytes=4 * MiB,
            rtt_ms=8.0,
            dst_host="192.0.2.21" if (m // 30) % 2 == 0 else "192.0.2.22",
        ),
    )
    tests += every(60, lambda m: udp(m + 10, 8e8, 69_000, 0, dst_host="192.0.2.21"))
    p = path("CERN", "RAL", 2e9, RAL, tests)
    members = tuple(
        iface("uk-lon", f"ge-1/0/{i}", 1e9, every(1, lambda m, o=out: rate_row(m, 1e8, o)))
        for i, out in enumerate(member_out)
    )
    return ctx(p, trunks=(TrunkEvidence("ral-lag", members),))


def test_trunk_imbalance_from_members_and_hosts():
    [f] = trunk_imbalance(ral(1.2e8))
    assert f.subject == {"trunk": "ral-lag"}
    assert f.evidence["member_utilisation"]["ratio"] == pytest.approx(0.16)
    assert f.evidence["host_splits"][0]["ratio"] == pytest.approx(1.2e8 / 9.1e8)


def test_balanced_trunk_and_even_hosts_are_fine():
    assert trunk_imbalance(ral(8.8e8, member_out=(4.0e8, 3.6e8))) == []


def test_lightly_loaded_members_do_not_count():
    # 5 % vs 1 %: too little traffic for the hashing to show
    assert trunk_imbalance(ral(8.8e8, member_out=(5e7, 1e7))) == []


def both_ends(ral_in=(4.0e8, 3.6e8)):
    """ral-lag listed at both ends: uk-lon sends CERN->RAL traffic out, ral-border receives it; little comes back."""
    uk = tuple(iface("uk-lon", f"ge-1/0/{i}", 1e9, every(1, lambda m, o=o: rate_row(m, 3e7, o)))
               for i, o in enumerate((4.0e8, 3.6e8)))
    ral_end = tuple(iface("ral-border", f"ge-0/0/{i}", 1e9, every(1, lambda m, b=b: rate_row(m, b, 3e7)))
                    for i, b in enumerate(ral_in))
    tests = every(30, lambda m: tcp(m, 8.8e8, window_bytes=4 * MiB, rtt_ms=8.0, dst_host="192.0.2.22"))
    return ctx(path("CERN", "RAL", 2e9, RAL, tests), trunks=(TrunkEvidence("ral-lag", uk + ral_end),))


def test_one_way_load_on_a_bundle_listed_at_both_ends_is_not_an_imbalance():
    # uk-lon's members are 40 % busy outbound and 3 % inbound, ral-border's the other way round: balanced
    assert trunk_imbalance(both_ends()) == []


def test_an_imbalance_at_one_end_of_a_bundle_names_that_end():
    [f] = trunk_imbalance(both_ends(ral_in=(7.5e8, 1.2e8)))
    found = f.evidence["member_utilisation"]
    assert (found["equipment"], found["direction"]) == ("ral-border", "in")
    assert found["ratio"] == pytest.approx(0.16)
    assert "on ral-border (in)" in f.explanation


def drained_member(carries_nothing_while_up: bool, maintenance=()):
    """ge-1/0/1 carries nothing from minute 120 to 240 and ge-1/0/0 carries the bundle's 7.6e8 alone."""

    def rows(i):
        def row(m):
            idle = 120 <= m < 240
            status = "up" if carries_nothing_while_up or not idle else "down"
            if i == 1:
                return rate_row(m, 0.0 if idle else 1e8, 0.0 if idle else 3.6e8, oper_status=status)
            return rate_row(m, 1e8, 7.6e8 if idle else 4.0e8, oper_status="up")

        return every(1, row)

    members = tuple(
        iface(
            "uk-lon",
            f"ge-1/0/{i}",
            1e9,
            rows(i),
            status=tuple(InterfaceStatus(r.time, r.oper_status) for r in rows(i)),
        )
        for i in range(2)
    )
    tests = every(
        30, lambda m: tcp(m, 8.8e8, window_bytes=4 * MiB, rtt_ms=8.0, dst_host=f"192.0.2.{21 + (m // 30) % 2}")
    )
    return ctx(
        path("CERN", "RAL", 2e9, RAL, tests), trunks=(TrunkEvidence("ral-lag", members),), maintenance=maintenance
    )


def test_a_member_down_is_not_broken_load_sharing():
    # oper down for two hours: LACP hashes every flow over the member left, which carries the bundle's load; the
    # member down is a finding of its own (tests/diagnosis/test_rules_trunk.py), never a hashing imbalance
    [f] = trunk_imbalance(drained_member(carries_nothing_while_up=False))
    assert f.subject == {"trunk": "ral-lag", "member": "uk-lon:ge-1/0/1"}
    assert "member_utilisation" not in f.evidence


def test_a_member_up_but_carrying_nothing_is_broken_load_sharing():
    # oper up, so in the bundle, yet hashing gives it nothing: flows crowd onto the other member
    [f] = trunk_imbalance(drained_member(carries_nothing_while_up=True))
    assert f.evidence["member_utilisation"]["ratio"] < 0.5


def test_a_member_drained_for_announced_work_is_not_broken_load_sharing():
    # costed out of the bundle with its port up, during work announced on it (whatever the traffic impact)
    work = MaintenanceEvidence("JANET-CHG-1", at(115), at(245), "reduced-redundancy", ("uk-lon:ge-1/0/1",))
    assert trunk_imbalance(drained_member(carries_nothing_while_up=True, maintenance=(work,))) == []


def test_a_bundle_listed_at_both_ends_has_the_capacity_of_one_end():
    ends = [iface(eq, f"xe-0/0/{i}", 10e9) for eq in ("janet-lon", "ral-border") for i in range(2)]
    assert TrunkEvidence("ral-lag", tuple(ends)).aggregate_bps == 20e9
    assert TrunkEvidence("ral-lag", tuple(ends[:2])).aggregate_bps == 20e9


def test_another_customers_congested_port_on_a_router_of_the_path_is_not_this_paths_congestion():
    # given CERN->FZK leaving geant-gva by xe-0/0/0 and degrading, while port xe-9/0/0 of the same router
    # (another customer's) runs at 96 % and drops packets
    c = congested_bundle(180, 300, discards=120.0)
    other = iface("geant-gva", "xe-9/0/0", 10e9, c.bundle.interfaces[0].rates)
    findings = run(bundle(*c.bundle.paths, interfaces=(other,)))
    # then the port is congested (a warning for its own owner), but not the tight link of CERN->FZK
    [f] = [f for f in findings if f.code == codes.LINK_CONGESTION]
    assert f.subject == {"equipment": "geant-gva", "interface": "xe-9/0/0"}
    assert f.severity == codes.WARNING
    assert f.evidence["degraded_paths"] == []
    # and CERN->FZK's drop from 920 to 300 Mb/s is still reported, not "explained" by it
    [u] = [f for f in findings if f.code == codes.UNEXPLAINED_DEGRADATION]
    assert u.subject == {"src": "CERN", "dst": "FZK"}


def test_errors_on_another_port_of_a_router_of_the_path_name_no_path():
    rows = every(1, lambda m: rate_row(m, 5e8, 5e8, in_errors_per_s=0.5 if m >= 60 else 0.0, in_pkts_per_s=7e4))
    [f] = interface_errors(ctx(healthy_eu(hops=HOPS), interfaces=(iface("geant-gva", "xe-9/0/0", 10e9, rows),)))
    assert f.evidence["paths"] == []


# ------------------------------------------------------------------ INTERFACE_ERRORS is relative and persistent
def test_a_few_input_discards_a_minute_on_a_busy_100g_port_are_normal():
    # 30 Gb/s of 9000-byte frames (~420 k packets/s) and 0.03 input discards/s in every poll: 7e-8 of the packets
    rows = every(1, lambda m: rate_row(m, 30e9, 28e9, in_discards_per_s=0.03, in_pkts_per_s=4.2e5,
                                       out_pkts_per_s=3.9e5))
    assert interface_errors(ctx(healthy_eu(hops=HOPS), interfaces=(iface("geant-gva", "xe-0/0/0", 100e9, rows),))) == []


def test_a_low_crc_rate_on_a_quiet_port_is_a_large_share_of_its_packets():
    # 0.005 CRC errors/s (below any absolute floor) of 1000 packets/s: 5e-6 of the frames are corrupted
    rows = every(1, lambda m: rate_row(m, 1.2e7, 1e6, in_errors_per_s=0.005, in_pkts_per_s=1000))
    [f] = interface_errors(ctx(healthy_eu(hops=HOPS), interfaces=(iface("geant-gva", "xe-0/0/0", 10e9, rows),)))
    assert f.evidence["crc_error_fraction"] == pytest.approx(5e-6)
    assert f.evidence["intervals_with_errors"] == 361


def test_output_discards_at_moderate_load_are_micro_burst_drops():
    # case study 5: 45 % of 10 Gb/s, and 6 output discards/s of ~600 k packets/s (1e-5) in every poll
    rows = every(1, lambda m: rate_row(m, 1e9, 4.5e9, out_discards_per_s=6.0, out_pkts_per_s=6e5, in_pkts_per_s=1e5))
    [f] = interface_errors(ctx(healthy_eu(hops=HOPS), interfaces=(iface("geant-gva", "xe-0/0/0", 10e9, rows),)))
    assert f.evidence["discard_fraction"] == pytest.approx(1e-5)
    assert f.evidence["out_discards_per_s_median"] == pytest.approx(6.0)
    assert "micro-burst" in f.explanation


def test_errors_in_scattered_polls_are_not_persistent():
    # errors in every other poll: never three consecutive polls with errors
    rows = every(1, lambda m: rate_row(m, 5e8, 5e8, in_errors_per_s=0.5 if int(m) % 2 else 0.0, in_pkts_per_s=7e4))
    assert interface_errors(ctx(healthy_eu(hops=HOPS), interfaces=(iface("geant-gva", "xe-0/0/0", 10e9, rows),))) == []


def test_a_counter_artefact_inside_a_congested_period_does_not_split_it():
    # 95 %, 95 %, an impossible 106 %, 95 %, 95 %: four congested polls, not two runs of two
    util = {200: 0.95, 201: 0.95, 202: 1.06, 203: 0.95, 204: 0.95}
    rows = every(1, lambda m: rate_row(m, 1e9, util.get(int(m), 0.4) * 10e9, out_discards_per_s=50.0 if m in util
                                        else 0.0))
    [f] = link_congestion(ctx(healthy_eu(hops=HOPS), interfaces=(iface("geant-gva", "xe-0/0/0", 10e9, rows),)))
    assert f.evidence["intervals"] == 4 and f.evidence["implausible_intervals"] == 1


def test_one_elephant_flow_on_a_bundle_is_shown_but_not_a_warning():
    # one member carries a single large flow, the other little, and no path across the bundle suffers
    [f] = trunk_imbalance(drained_member(carries_nothing_while_up=True))
    assert f.severity == codes.INFO
    assert "one large flow" in f.explanation
