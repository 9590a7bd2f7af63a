"""HOST_TCP_TUNING, MAINTENANCE_EXPLAINED, UNEXPLAINED_DEGRADATION and the per-path assessment."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.diagnosis.builders import (
    EU_HOPS,
    EU_HOPS_BACK,
    NOW,
    T0,
    MiB,
    at,
    bundle,
    codes_of,
    eu_path,
    every,
    find,
    healthy_eu,
    host,
    one,
    owamp,
    path,
    run,
    tcp,
    udp,
)
from wanmon.diagnosis import codes
from wanmon.diagnosis.episodes import DEGRADED
from wanmon.diagnosis.evidence import MaintenanceEvidence
from wanmon.diagnosis.loss import estimate_loss
from wanmon.diagnosis.registry import rule_context
from wanmon.diagnosis.rules.hosts import host_tcp_tuning
from wanmon.diagnosis.rules.maintenance import impact_explains


# --------------------------------------------------------------------------- HOST_TCP_TUNING
def asgc(rtt=298.0):
    tests = every(30, lambda m: tcp(m, 1.07e8, window_bytes=4 * MiB, rtt_ms=rtt, mss_bytes=1448))
    return path("CERN", "ASGC", 1e9, ("cern-border", "asgc-ams", "asgc-border"), tests)


def test_host_tuning_with_exact_sysctl_lines():
    c = rule_context(bundle(asgc(), healthy_eu(), hosts=(host("CERN", "cern-dt01", buf=16 * MiB),)), NOW)
    [f] = host_tcp_tuning(c)
    assert f.subject == {"site": "CERN", "host": "cern-dt01"}
    assert f.evidence["longest_path"] == "CERN->ASGC"
    assert f.evidence["bdp_bytes"] == pytest.approx(37.25e6)
    assert f.evidence["sysctl"] == [
        "net.core.rmem_max = 75497472",
        "net.core.wmem_max = 75497472",
        "net.ipv4.tcp_rmem = 4096 87380 75497472",
        "net.ipv4.tcp_wmem = 4096 65536 75497472",
    ]


def test_buffers_above_the_bdp_and_cubic_are_fine():
    c = rule_context(bundle(asgc(), hosts=(host("CERN", "cern-dt01", buf=128 * MiB),)), NOW)
    assert host_tcp_tuning(c) == []


def test_reno_is_flagged_with_its_responsiveness():
    c = rule_context(bundle(asgc(), hosts=(host("CERN", "cern-dt01", buf=128 * MiB, cc="reno"),)), NOW)
    [f] = host_tcp_tuning(c)
    assert f.evidence["sysctl"] == ["net.ipv4.tcp_congestion_control = cubic"]
    # 1 Gb/s, 298 ms, MSS 1448: 1e9 * 0.298^2 / (2 * 1448 * 8) = 3833 s
    assert "Reno needs 63.9 min to regain full rate" in f.explanation
    assert "Set the maxima" not in f.explanation  # its buffers are fine


def nordic(level_bps, now_bps):
    """CERN->NDGF, 10G at 40 ms with 1500-byte frames (Reno needs ~11 min to recover from one loss): its results
    settled at ``level_bps``, ``now_bps`` in the window."""
    tests = every(30, lambda m: tcp(m, level_bps if m < 150 else now_bps, window_bytes=64 * MiB, rtt_ms=40.0,
                                    mss_bytes=1448))
    return path("CERN", "NDGF", 10e9, ("cern-border", "ndgf-border"), tests, baseline_end_min=150)


def test_reno_whose_host_reaches_its_paths_rates_is_advice_not_a_warning():
    reno = (host("CERN", "cern-ps01", buf=64 * MiB, cc="reno", mtu=1500),)
    [f] = host_tcp_tuning(rule_context(bundle(nordic(9.4e9, 9.4e9), hosts=reno), NOW))
    assert f.evidence["sysctl"] == ["net.ipv4.tcp_congestion_control = cubic"]
    assert f.severity == codes.INFO and f.evidence["short_paths"] == []
    # the same host once its results fall to a fifth of the path's level: Reno costs, a warning
    [f] = host_tcp_tuning(rule_context(bundle(nordic(9.4e9, 1.9e9), hosts=reno), NOW))
    assert f.severity == codes.WARNING and f.evidence["short_paths"] == ["CERN->NDGF"]


def test_a_congestion_control_is_not_judged_without_a_path_of_its_site():
    # the cycle's elements shard holds every host and no path: what Reno costs is for the shards with its paths
    reno = (host("CERN", "cern-ps01", buf=64 * MiB, cc="reno", mtu=1500),)
    assert host_tcp_tuning(rule_context(bundle(hosts=reno), NOW)) == []


# --------------------------------------------------------------------------- maintenance impacts
@pytest.mark.parametrize(
    ("impact", "explains"),
    [
        ("outage", True),
        ("degraded", True),
        ("at-risk", True),
        ("reduced-redundancy", False),
        ("no-impact", False),
        ("something-new", True),
    ],
)
def test_impact_vocabulary(impact, explains):
    assert impact_explains(impact) is explains


def collapsing_during_work(hops=EU_HOPS):
    """CERN->FZK falls from 920 to 20 Mb/s from minute 120 to 240 (the work of the windows below: 110-250)."""
    return eu_path("CERN", "FZK", hops, lambda m: 2e7 if 120 <= m <= 240 else 9.2e8, baseline_end_min=100,
                   retransmits=None)  # fmt: skip


def test_per_element_impact_overrides_the_window():
    fwd = collapsing_during_work()
    w = MaintenanceEvidence(
        "CHG-1", at(110), at(250), "outage", ("geant-fra", "geant-gva"), element_impacts={"geant-fra": "no-impact"}
    )
    findings = run(bundle(fwd, maintenance=(w,)))
    m = one(findings, codes.MAINTENANCE_EXPLAINED)
    assert m.subject == {"equipment": "geant-gva"}


def _collapse_during_work(hops, affects):
    fwd = collapsing_during_work(hops)
    return run(bundle(fwd, maintenance=(MaintenanceEvidence("CHG-9", at(110), at(250), "outage", affects),)))


@pytest.mark.parametrize(
    ("hops", "affects", "explained"),
    [
        # work on the port the path leaves by, or on the whole device
        (("cern-border", "geant-gva:et-1/0/0", "geant-fra", "fzk-border"), ("geant-gva:et-1/0/0",), True),
        (("cern-border", "geant-gva:et-1/0/0", "geant-fra", "fzk-border"), ("geant-gva",), True),
        # a hop naming no port: the port is unknown, and work on some port of the device explains nothing
        # (it would hide a real fault for the length of the work; the maintenance app decides the same)
        (("cern-border", "geant-gva", "geant-fra", "fzk-border"), ("geant-gva:et-1/0/0",), False),
        # another port of a device the path leaves by a known port: not the path's, the fault is elsewhere
        (("cern-border", "geant-gva:et-1/0/0", "geant-fra", "fzk-border"), ("geant-gva:xe-9/0/0",), False),
    ],
)
def test_port_work_explains_a_path_through_that_port_only(hops, affects, explained):
    found = codes_of(_collapse_during_work(hops, affects))
    assert (codes.MAINTENANCE_EXPLAINED in found) is explained
    assert (codes.UNEXPLAINED_DEGRADATION in found) is not explained


def test_site_maintenance_explains_the_sites_paths():
    fwd = collapsing_during_work()
    w = MaintenanceEvidence("FZK-DC-7", at(110), at(250), "outage", ("site:FZK",))
    findings = run(bundle(fwd, maintenance=(w,)))
    assert codes.MAINTENANCE_EXPLAINED in codes_of(findings)
    assert codes.UNEXPLAINED_DEGRADATION not in codes_of(findings)


# --------------------------------------------------------------------------- UNEXPLAINED_DEGRADATION
def test_unexplained_drop_against_the_baseline_lists_what_was_ruled_out():
    def thr(m):
        return 3.5e8 if m >= 200 else 9.2e8

    fwd = eu_path("CERN", "FZK", EU_HOPS, thr, baseline_end_min=120)
    rev = eu_path("FZK", "CERN", EU_HOPS_BACK, thr, baseline_end_min=120)
    findings = run(bundle(fwd, rev))
    u = one(findings, codes.UNEXPLAINED_DEGRADATION, src="CERN", dst="FZK")
    assert u.start == at(210)
    ruled = u.evidence["ruled_out"]
    assert ruled[codes.WINDOW_LIMITED].startswith("350 Mb/s is 17.5 % of the window limit 2 Gb/s")
    assert "no loss measured (below" in ruled[codes.LOSS_LIMITED]
    assert set(ruled) >= {codes.PATH_DOWN, codes.SHARED_EQUIPMENT_SUSPECT, codes.MAINTENANCE_EXPLAINED}
    assert u.derived.bdp_bytes == pytest.approx(1.225e6)


def test_small_wobble_is_not_a_degradation():
    # +-2 % around 920 Mb/s with one test at 800 Mb/s
    tests = every(30, lambda m: tcp(m, 8.0e8 if m == 240 else 9.2e8, window_bytes=2_450_000, rtt_ms=9.8))
    fwd = path("CERN", "FZK", 1e9, EU_HOPS, tests, every(5, lambda m: owamp(m, 4.9)), baseline_end_min=120)
    assert run(bundle(fwd)) == []


def test_delay_rise_against_baseline_is_unexplained_without_a_cause():
    sessions = every(5, lambda m: owamp(m, 4.9, delay_median_ms=9.5 if m >= 240 else 5.2))
    fwd = path("CERN", "FZK", 1e9, EU_HOPS, (), sessions, baseline_end_min=120)
    u = one(run(bundle(fwd)), codes.UNEXPLAINED_DEGRADATION)
    assert u.evidence["delay"]["now_ms"] == pytest.approx(9.5)


# --------------------------------------------------------------------------- assessment
def test_loss_estimate_states_the_owamp_detection_limit():
    sessions = [owamp(m, 4.9) for m in range(0, 361, 5)]
    est = estimate_loss(sessions, (), ())
    assert est.fraction == 0.0
    assert est.detection_limit == pytest.approx(3 / 43_800)
    assert "detection limit" in est.describe()
    # one session alone: 600 packets at 10/s cannot see anything below 5e-3, let alone 1e-6
    assert estimate_loss(sessions[:1], (), ()).detection_limit == pytest.approx(5e-3)


def test_loss_estimate_prefers_the_probe_that_saw_loss():
    sessions = [owamp(m, 36.0) for m in range(0, 361, 5)]
    tests = [udp(m, 5e8, 78_110, 5) for m in range(0, 361, 60)]
    est = estimate_loss(sessions, tests, ())
    assert est.source == "udp"
    assert est.fraction == pytest.approx(6.4e-5, rel=1e-2)


def test_loss_estimate_unknown_without_measurements():
    tcp_unknown = [tcp(m, 9e8, retransmits=None) for m in range(0, 361, 30)]
    assert estimate_loss((), (), tcp_unknown).fraction is None


def test_episode_needs_two_bad_observations():
    tests = every(30, lambda m: tcp(m, 1e8 if m == 180 else 9.2e8, window_bytes=2_450_000, rtt_ms=9.8))
    p = path("CERN", "FZK", 1e9, EU_HOPS, tests, baseline_end_min=120)
    a = rule_context(bundle(p), NOW).assessment(p)
    assert [o.state for o in a.observations].count(DEGRADED) == 1
    assert a.episodes == ()
    assert NOW - T0 == timedelta(hours=6)
    assert not find([], codes.PATH_DOWN)


def test_one_direction_collapsing_without_loss_is_asymmetric_and_still_unexplained():
    def thr(m):
        return 1.0e8 if m >= 200 else 9.2e8

    fwd = eu_path("CERN", "FZK", EU_HOPS, thr, baseline_end_min=120)
    rev = healthy_eu("FZK", "CERN", EU_HOPS_BACK, baseline_end_min=120)
    findings = run(bundle(fwd, rev))
    assert one(findings, codes.ASYMMETRIC_PATH, src="CERN", dst="FZK").evidence["loss_asymmetric"] is False
    u = one(findings, codes.UNEXPLAINED_DEGRADATION, src="CERN", dst="FZK")
    assert "only this direction is worse" in u.evidence["ruled_out"][codes.ASYMMETRIC_PATH]


def test_a_window_naming_only_a_carrier_explains_nothing():
    # given GEANT announcing work without naming an element, and GEANT's geant-gva on the degraded path
    from wanmon.diagnosis.evidence import EquipmentInfo

    hops = ("cern-border", "geant-gva", "geant-fra", "fzk-border")
    fwd = eu_path("CERN", "FZK", hops, lambda m: 3e8 if 120 <= m <= 240 else 9.2e8, baseline_end_min=100,
                  retransmits=None)  # fmt: skip
    work = MaintenanceEvidence("GEANT-ANY", at(110), at(250), "outage", (), carrier="GEANT")
    findings = run(bundle(fwd, maintenance=(work,), equipment=(EquipmentInfo("geant-gva", carrier="GEANT"),)))
    # then the degradation stays unexplained
    assert codes.MAINTENANCE_EXPLAINED not in {f.code for f in findings}
    assert codes.UNEXPLAINED_DEGRADATION in {f.code for f in findings}


def test_work_that_explains_an_earlier_drop_does_not_downgrade_a_later_real_one():
    # a collapse during announced work (120-240), recovery, and a second collapse long after the work (420-540)
    def thr(m):
        return 2e7 if 120 <= m <= 240 or 420 <= m <= 540 else 9.2e8

    fwd = path(
        "CERN",
        "FZK",
        1e9,
        EU_HOPS,
        every(30, lambda m: tcp(m, thr(m), window_bytes=2_450_000, rtt_ms=9.8, retransmits=None), end=600),
        every(5, lambda m: owamp(m, 4.9), end=600),
        baseline_end_min=100,
    )
    w = MaintenanceEvidence("FZK-DC-8", at(110), at(250), "outage", ("site:FZK",))
    findings = run(bundle(fwd, maintenance=(w,)), at(600))
    # the work explains the first drop ...
    assert codes.MAINTENANCE_EXPLAINED in codes_of(findings)
    # ... and the second is still a fault of the path, not info
    symptoms = [f for f in findings if f.subject == {"src": "CERN", "dst": "FZK"} and f.severity != codes.INFO]
    assert symptoms, [(f.code, f.severity, f.start, f.end) for f in findings]
    assert all(f.start >= at(400) for f in symptoms)
