"""docs/diagnosis.md#case-studies, case studies 1-9, as synthetic evidence."""

from __future__ import annotations

import json
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
    failed,
    find,
    healthy_eu,
    host,
    iface,
    one,
    owamp,
    path,
    rate_row,
    run,
    tcp,
    trace,
    udp,
)
from wanmon.diagnosis import codes
from wanmon.diagnosis.assessment import assess_path
from wanmon.diagnosis.evidence import (
    AgentSchedule,
    CounterDiscontinuity,
    EquipmentInfo,
    HostTcpEvidence,
    InterfaceEvidence,
    KnownHost,
    MaintenanceEvidence,
    TrunkEvidence,
)

CNAF_HOPS = ("cnaf-border", "garr-mil", "geant-fra", "geant-gva", "cern-border")
IN2P3_HOPS = ("in2p3-border", "renater-lyo", "geant-gva", "cern-border")


def lossy_eu(src, dst, hops, lost=lambda m: 40, thr=2.5e7, rtt=9.8, owd=4.9):
    tests = every(
        30, lambda m: tcp(m, thr * (0.8 + 0.4 * ((m // 30) % 2)), window_bytes=64 * MiB, rtt_ms=rtt, retransmits=6000)
    )
    sessions = every(5, lambda m: owamp(m, owd, lost=lost(m)))
    return path(src, dst, 1e9, hops, tests, sessions)


# --------------------------------------------------------------------------- case 1
def case1_bundle(with_counters: bool = True):
    errors = iface(
        "geant-fra",
        "xe-0/0/1",
        10e9,
        every(1, lambda m: rate_row(m, 2e8, 9e8, in_errors_per_s=0.8, in_discards_per_s=0.0)) if with_counters else (),
    )
    return bundle(
        healthy_eu("CERN", "FZK", EU_HOPS, thr=8.9e8),
        lossy_eu("FZK", "CERN", EU_HOPS_BACK),
        healthy_eu("CERN", "CNAF", tuple(reversed(CNAF_HOPS)), rtt=11.6, owd=5.8),
        lossy_eu("CNAF", "CERN", CNAF_HOPS, rtt=11.6, owd=5.8),
        healthy_eu("CERN", "IN2P3", tuple(reversed(IN2P3_HOPS)), rtt=4.1, owd=2.05),
        healthy_eu("IN2P3", "CERN", IN2P3_HOPS, rtt=4.1, owd=2.05),
        interfaces=(errors,),
        equipment=tuple(EquipmentInfo(n, carrier="GEANT") for n in ("geant-gva", "geant-fra")),
    )


def test_case1_reverse_path_loss_through_a_shared_carrier():
    findings = run(case1_bundle())
    asym = one(findings, codes.ASYMMETRIC_PATH, src="FZK", dst="CERN")
    assert asym.severity == codes.CRITICAL
    assert asym.evidence["throughput_bps"] / asym.evidence["reverse_throughput_bps"] < 0.1
    assert not find(findings, codes.ASYMMETRIC_PATH, src="CERN", dst="FZK")
    top = one(findings, codes.SHARED_EQUIPMENT_SUSPECT, equipment="geant-fra")
    assert top.rank == 1
    ranks = {f.subject["equipment"]: f.rank for f in find(findings, codes.SHARED_EQUIPMENT_SUSPECT)}
    assert ranks["geant-fra"] < ranks.get("geant-gva", 99) and ranks["geant-fra"] < ranks.get("cern-border", 99)
    errors = one(findings, codes.INTERFACE_ERRORS, equipment="geant-fra", interface="xe-0/0/1")
    assert errors.severity == codes.CRITICAL  # paths through it are degraded meanwhile
    assert "FZK->CERN" in errors.evidence["degraded_paths"]
    assert codes.WINDOW_LIMITED not in codes_of(findings)
    assert codes.MAINTENANCE_EXPLAINED not in codes_of(findings)


def test_case1_without_counters_still_names_the_backbone_element():
    findings = run(case1_bundle(with_counters=False))
    assert one(findings, codes.SHARED_EQUIPMENT_SUSPECT, equipment="geant-fra").rank == 1
    assert codes.INTERFACE_ERRORS not in codes_of(findings)


# --------------------------------------------------------------------------- case 2
def case2_bundle(schedule: bool = True, period_min: int = 30, host_period_min: int = 30):
    # owamp every 5 min; the receiving host's monitoring reads /proc/net/tcp every 30 min and the session
    # right after it loses 10-70 % of one second's packets.
    def lost(m):
        return 7 if m % period_min == 0 else 0

    fzk_cern = path(
        "FZK",
        "CERN",
        1e9,
        EU_HOPS_BACK,
        every(30, lambda m: tcp(m + 2, 8.8e8, window_bytes=2_450_000, rtt_ms=9.8, dst_host="192.0.2.10")),
        every(5, lambda m: owamp(m, 4.9, lost=lost(m))),
    )
    hosts = tuple(
        HostTcpEvidence(
            "CERN",
            "cern-dt01",
            at(m),
            64 * MiB,
            64 * MiB,
            (4096, 87380, 64 * MiB),
            (4096, 65536, 64 * MiB),
            "cubic",
            9000,
            "192.0.2.10",
        )
        for m in range(0, 361, host_period_min)
    )
    return bundle(
        healthy_eu("CERN", "FZK", EU_HOPS),
        fzk_cern,
        hosts=hosts,
        known_hosts=(KnownHost("CERN", "cern-dt01", "192.0.2.10"),),
        agent_schedules=(AgentSchedule("CERN", "host_tcp", 1800.0),) if schedule else (),
    )


def test_case2_periodic_receiver_loss_caused_by_monitoring():
    findings = run(case2_bundle())
    f = one(findings, codes.PERIODIC_LOSS, src="FZK", dst="CERN")
    assert f.evidence["period_s"] == pytest.approx(1800, rel=0.01)
    assert f.evidence["poll_matches"]
    assert "matches the agent poll interval" in f.explanation
    receiver = one(findings, codes.PERIODIC_LOSS, site="CERN")
    assert receiver.subject.get("host") == "cern-dt01"
    assert not find(findings, codes.PERIODIC_LOSS, src="CERN", dst="FZK")
    assert codes.SHARED_EQUIPMENT_SUSPECT not in codes_of(findings)
    assert codes.ASYMMETRIC_PATH not in codes_of(findings)  # the loss is periodic, the rates are symmetric
    assert codes.UNEXPLAINED_DEGRADATION not in codes_of(findings)


def test_case2_period_not_matching_the_schedule_is_said_so():
    findings = run(case2_bundle(schedule=False, period_min=20))
    f = one(findings, codes.PERIODIC_LOSS, src="FZK", dst="CERN")
    assert f.evidence["period_s"] == pytest.approx(1200, rel=0.01)
    assert not f.evidence["poll_matches"]
    assert "does not match" in f.explanation  # the host_tcp reports come every 30 min, the text says so


# --------------------------------------------------------------------------- case 3
RAL_HOPS = ("cern-border", "geant-gva", "geant-lon", "uk-lon", "ral-border")


def case3_bundle(member_rates: bool):
    def test(m):
        odd = (m // 30) % 2 == 0
        if odd:
            return tcp(
                m,
                (0.8 + 1.2 * ((m // 60) % 3) / 2) * 1e8,
                window_bytes=4 * MiB,
                rtt_ms=8.0,
                dst_host="192.0.2.21",
                retransmits=900,
            )
        return tcp(m, 9.1e8, window_bytes=4 * MiB, rtt_ms=8.0, dst_host="192.0.2.22", retransmits=2)

    tests = (
        every(30, test)
        + every(60, lambda m: udp(m + 10, 8e8, 69_000, 0, dst_host="192.0.2.21"))
        + every(60, lambda m: udp(m + 20, 8e8, 69_000, 0, dst_host="192.0.2.22"))
    )
    cern_ral = path("CERN", "RAL", 2e9, RAL_HOPS, tests, every(5, lambda m: owamp(m, 4.0)))
    rows0 = every(1, lambda m: rate_row(m, 1e8, 7.5e8)) if member_rates else ()
    rows1 = every(1, lambda m: rate_row(m, 1e8, 1.2e8)) if member_rates else ()
    trunk = TrunkEvidence("ral-lag", (iface("uk-lon", "ge-1/0/0", 1e9, rows0), iface("uk-lon", "ge-1/0/1", 1e9, rows1)))
    return bundle(cern_ral, trunks=(trunk,))


@pytest.mark.parametrize("member_rates", [True, False])
def test_case3_odd_even_hosts_behind_a_trunk(member_rates):
    findings = run(case3_bundle(member_rates))
    t = one(findings, codes.TRUNK_IMBALANCE, trunk="ral-lag")
    split = t.evidence["host_splits"][0]
    assert split["slow_parity"] == "odd"
    assert split["slow_hosts"] == ["192.0.2.21"]
    assert ("member_utilisation" in t.evidence) is member_rates
    only = one(findings, codes.TCP_ONLY_DEGRADATION, src="CERN", dst="RAL")
    assert only.evidence["slow_hosts"] == ["192.0.2.21"]
    assert "ral-lag" in only.evidence["trunks"]
    assert codes.LOSS_LIMITED not in codes_of(findings)  # UDP at 800 Mb/s is clean: the loss is TCP's own


# --------------------------------------------------------------------------- case 4
def test_case4_window_limited_transatlantic_flow_and_host_advice():
    hops = ("cern-border", "cern-ta", "usl-chi", "fnal-border")
    p = path(
        "CERN",
        "FNAL",
        10e9,
        hops,
        every(30, lambda m: tcp(m, 2.62e8, window_bytes=4 * MiB, rtt_ms=125, mss_bytes=1448)),
        every(5, lambda m: owamp(m, 62.5)),
    )
    r = path(
        "FNAL",
        "CERN",
        10e9,
        tuple(reversed(hops)),
        every(30, lambda m: tcp(m, 2.6e8, window_bytes=4 * MiB, rtt_ms=125, mss_bytes=1448)),
        every(5, lambda m: owamp(m, 62.5)),
    )
    findings = run(bundle(p, r, hosts=(host("CERN", "cern-dt01"), host("FNAL", "fnal-dt01", cc="reno"))))
    w = one(findings, codes.WINDOW_LIMITED, src="CERN", dst="FNAL")
    assert w.evidence["window_limited_rate_bps"] == pytest.approx(268.4e6, rel=1e-3)
    assert w.evidence["recommended_window_bytes"] == pytest.approx(312.5e6)
    assert "268 Mb/s" in w.summary and "312 MB" in w.summary
    cern = one(findings, codes.HOST_TCP_TUNING, site="CERN")
    assert "net.core.rmem_max = 313524224" in cern.evidence["sysctl"]  # 2 x BDP rounded up to 299 MiB
    assert "net.ipv4.tcp_rmem = 4096 87380 313524224" in cern.evidence["sysctl"]
    fnal = one(findings, codes.HOST_TCP_TUNING, site="FNAL")
    assert "net.ipv4.tcp_congestion_control = cubic" in fnal.evidence["sysctl"]
    assert "to regain full rate after one loss" in fnal.explanation
    assert codes.LOSS_LIMITED not in codes_of(findings)
    assert codes.UNEXPLAINED_DEGRADATION not in codes_of(findings)


# --------------------------------------------------------------------------- case 5
FNAL_HOPS = ("cern-border", "cern-ta", "usl-chi:so-1/0/0", "starlight", "fnal-border")
CALTECH_HOPS = ("cern-border", "cern-ta", "usl-chi:so-1/0/0", "starlight", "caltech-border")


def _fnal(m):
    return tcp(m, 5.0e9 if m < 180 else 3.2e9, window_bytes=64 * MiB, rtt_ms=120, streams=8, retransmits=None)


def case5_bundle(snmp: bool, caltech_tests: bool):
    fnal = path(
        "CERN", "FNAL", 10e9, FNAL_HOPS, every(30, _fnal), every(5, lambda m: owamp(m, 60.0)), baseline_end_min=120
    )
    caltech = path(
        "CERN",
        "CALTECH",
        10e9,
        CALTECH_HOPS,
        every(30, lambda m: tcp(m + 5, 4.0e8, window_bytes=64 * MiB, rtt_ms=170), start=180) if caltech_tests else (),
    )
    link = iface(
        "usl-chi", "so-1/0/0", 10e9, every(1, lambda m: rate_row(m, 2e8, 5.0e9 if m < 180 else 5.45e9)) if snmp else ()
    )
    equipment = (
        EquipmentInfo("usl-chi", carrier="USLHCNET"),
        EquipmentInfo("starlight", carrier="STARLIGHT"),
        EquipmentInfo("cern-ta", site="CERN"),
        EquipmentInfo("cern-border", site="CERN"),
    )
    return bundle(fnal, caltech, healthy_eu("CERN", "FZK"), interfaces=(link,), equipment=equipment)


@pytest.mark.parametrize(("snmp", "caltech_tests"), [(True, False), (False, True), (True, True)])
def test_case5_equipment_at_its_limits(snmp, caltech_tests):
    findings = run(case5_bundle(snmp, caltech_tests))
    top = one(findings, codes.SHARED_EQUIPMENT_SUSPECT, equipment="usl-chi")
    assert top.rank == 1
    assert top.subject == {"equipment": "usl-chi", "interface": "so-1/0/0"}
    assert top.evidence["degraded_path"] == "CERN->FNAL"
    if caltech_tests:
        assert top.evidence["other_paths"][0]["path"] == "CERN->CALTECH"
    if snmp:
        assert top.evidence["interface_rise"]["rise_bps"] == pytest.approx(4.5e8, rel=0.01)
        assert "far below its capacity" in top.explanation
    assert codes.LINK_CONGESTION not in codes_of(findings)  # 54.5 % of 10 Gb/s is not congestion
    cern_border = find(findings, codes.SHARED_EQUIPMENT_SUSPECT, equipment="cern-border")
    assert not cern_border or cern_border[0].rank > 1


def test_case5_names_only_the_elements_where_the_new_traffic_meets_the_path():
    # given CERN->CALTECH starting beside CERN->FNAL's drop (no SNMP): both leave usl-chi towards starlight, but
    # starlight sends one to fnal-border and the other to caltech-border
    findings = run(case5_bundle(snmp=False, caltech_tests=True))
    suspects = [f.subject for f in find(findings, codes.SHARED_EQUIPMENT_SUSPECT)]
    # then starlight is no suspect: their packets never share its output queue
    assert {"equipment": "starlight"} not in suspects
    assert suspects[0] == {"equipment": "usl-chi", "interface": "so-1/0/0"}


def test_case5_a_link_left_full_by_the_new_traffic_is_the_load_not_the_equipment():
    # given the Chicago link carrying 6.9 Gb/s of other traffic once CERN->CALTECH starts (3.1 Gb/s left, and
    # CERN->FNAL's tests get 3.2 Gb/s of it)
    fnal = path(
        "CERN", "FNAL", 10e9, FNAL_HOPS, every(30, _fnal), every(5, lambda m: owamp(m, 60.0)), baseline_end_min=120
    )
    caltech = path("CERN", "CALTECH", 10e9, CALTECH_HOPS, every(30, lambda m: tcp(m + 5, 2.0e9, rtt_ms=170), start=180))
    link = iface("usl-chi", "so-1/0/0", 10e9, every(1, lambda m: rate_row(m, 2e8, 4.9e9 if m < 180 else 6.8e9)))
    b = bundle(fnal, caltech, interfaces=(link,))
    findings = run(b)
    # then the tests got what the link left them: no degradation (docs/diagnosis.md, load on the path), so no
    # element is suspected above info and nothing is unexplained
    assert all(f.severity == codes.INFO for f in find(findings, codes.SHARED_EQUIPMENT_SUSPECT))
    assert codes.UNEXPLAINED_DEGRADATION not in codes_of(findings)
    # and the lower results name the link that held them
    lower = [o for o in assess_path(fnal, b, NOW).observations if o.kind == "tcp" and o.time >= at(180)]
    assert lower and all(o.state == "ok" and "usl-chi:so-1/0/0" in o.reason for o in lower)


# --------------------------------------------------------------------------- case 6
def case6_path(udp_lost=5, thr=8.7e7, retransmits=1):
    hops = ("site-a", "oc12-carrier", "site-b")
    tests = every(30, lambda m: tcp(m, thr, window_bytes=64 * MiB, rtt_ms=72, retransmits=retransmits)) + every(
        60, lambda m: udp(m + 15, 5e8, 78_110, udp_lost)
    )
    return path("A", "B", 622e6, hops, tests, every(5, lambda m: owamp(m, 36.0)))


def test_case6_loss_limited_path():
    findings = run(bundle(case6_path()))
    f = one(findings, codes.LOSS_LIMITED, src="A", dst="B")
    assert f.evidence["loss_fraction"] == pytest.approx(6.4e-5, rel=1e-2)
    assert f.evidence["loss_source"] == "udp"
    assert f.evidence["mathis_conservative_bps"] == pytest.approx(87e6, rel=1e-2)
    assert "87" in f.summary
    assert f.derived.mathis_ceiling_bps == pytest.approx(87e6, rel=1e-2)
    assert f.derived.bdp_bytes == pytest.approx(622e6 * 0.072 / 8)
    assert codes.WINDOW_LIMITED not in codes_of(findings)
    assert codes.TCP_ONLY_DEGRADATION not in codes_of(findings)


def test_case6_owamp_alone_cannot_see_this_loss():
    findings = run(bundle(case6_path(udp_lost=0, retransmits=None)))
    assert codes.LOSS_LIMITED not in codes_of(findings)
    # 73 x 600 owamp packets: the detection limit (3/43800 = 6.8e-5) is above the 6.4e-5 that limits TCP
    a_text = " ".join(f.explanation for f in findings)
    assert codes.LOSS_LIMITED not in a_text or "detection limit" in a_text


# --------------------------------------------------------------------------- case 7
def case7_bundle(route_changes: bool = False):
    def dmin(m):
        return 6.4 if (m // 60) % 2 == 1 else 4.9  # protection switch every hour

    hops = list(EU_HOPS)
    alt = ["cern-border", "geant-gva", "geant-par", "geant-fra", "dfn-fra", "fzk-border"]

    def tr(m):
        return trace(m + 1, alt if (route_changes and (m // 60) % 2 == 1) else hops)

    def back(m):  # the same route, walked the other way
        return trace(m + 1, reversed(tr(m).hops))

    fwd = eu_path("CERN", "FZK", EU_HOPS, lambda m: 9.2e8, dmin, traces=every(30, tr))
    rev = eu_path("FZK", "CERN", EU_HOPS_BACK, lambda m: 9.2e8, dmin, traces=every(30, back))
    return bundle(fwd, rev)


def test_case7_protection_switching():
    findings = run(case7_bundle())
    f = one(findings, codes.DELAY_LEVEL_SHIFT, src="CERN", dst="FZK")
    levels = [lv["median_ms"] for lv in f.evidence["levels"]]
    assert levels == pytest.approx([4.9, 6.4])
    assert f.evidence["step_ms"] == pytest.approx(1.5)
    assert f.evidence["extra_fibre_km"] == pytest.approx(300)
    # every jump bracketed by traceroutes showed the same hop list (the last one has no traceroute after it)
    assert sum(t["traceroute_confirmed"] for t in f.evidence["transitions"]) >= 5
    assert codes.ROUTE_CHANGE not in codes_of(findings)
    assert codes.CLOCK_UNSYNC not in codes_of(findings)


def test_case7_with_traceroute_changes_it_is_a_route_change_instead():
    findings = run(case7_bundle(route_changes=True))
    assert find(findings, codes.ROUTE_CHANGE, src="CERN", dst="FZK")
    assert codes.DELAY_LEVEL_SHIFT not in codes_of(findings)


# --------------------------------------------------------------------------- case 8
def case8_bundle(impact="outage", end_h=10, lossy=True):
    def thr(m):
        return 2.0e7 if 120 <= m <= 240 else 9.2e8

    def lost(m):
        return 200 if lossy and 120 <= m <= 240 else 0

    fwd, rev = (
        eu_path(src, dst, hops, thr, lost=lost, baseline_end_min=100, retransmits=None)
        for src, dst, hops in (("CERN", "FZK", EU_HOPS), ("FZK", "CERN", EU_HOPS_BACK))
    )
    window = MaintenanceEvidence(
        "GEANT-CHG-0042", T0 + timedelta(hours=2), T0.replace(hour=end_h), impact, ("geant-fra",), carrier="GEANT"
    )
    return bundle(fwd, rev, maintenance=(window,))


def test_case8_scheduled_intervention_is_explained_and_not_alerted():
    findings = run(case8_bundle())
    m = one(findings, codes.MAINTENANCE_EXPLAINED, equipment="geant-fra")
    assert m.severity == codes.INFO
    assert m.evidence["reference"] == "GEANT-CHG-0042"
    assert "CERN->FZK" in m.evidence["paths"]
    assert codes.UNEXPLAINED_DEGRADATION not in codes_of(findings)
    assert codes.SHARED_EQUIPMENT_SUSPECT not in codes_of(findings)
    # nothing left that would page anyone: every symptom is info and says which window explains it
    assert all(f.severity == codes.INFO for f in findings), [(f.code, f.severity) for f in findings]
    for f in findings:
        if f.code != codes.MAINTENANCE_EXPLAINED and f.subject.get("src") == "CERN":
            assert f.explained_by == ("GEANT-CHG-0042",)


@pytest.mark.parametrize("impact", ["reduced-redundancy", "no-impact"])
def test_case8_work_announced_without_impact_does_not_explain(impact):
    findings = run(case8_bundle(impact=impact))
    assert codes.MAINTENANCE_EXPLAINED not in codes_of(findings)
    symptoms = find(findings, codes.LOSS_LIMITED, src="CERN", dst="FZK")
    # it alerts (not info, not explained); the path has recovered by NOW, so it is a warning, not critical
    assert symptoms and symptoms[0].severity == codes.WARNING and not symptoms[0].explained_by
    assert "healthy results since" in symptoms[0].evidence["recovered"]


@pytest.mark.parametrize("impact", ["reduced-redundancy", "no-impact"])
def test_case8_collapse_without_loss_under_harmless_work_is_unexplained(impact):
    findings = run(case8_bundle(impact=impact, lossy=False))
    u = one(findings, codes.UNEXPLAINED_DEGRADATION, src="CERN", dst="FZK")
    assert "GEANT-CHG-0042" in u.evidence["ruled_out"][codes.MAINTENANCE_EXPLAINED]
    assert "should not affect traffic" in u.explanation


def test_case8_degradation_outlasting_the_window_is_not_explained():
    findings = run(case8_bundle(end_h=9, lossy=False))  # window ends at 09:00, collapse lasts until 10:00
    assert codes.MAINTENANCE_EXPLAINED not in codes_of(findings)
    u = one(findings, codes.UNEXPLAINED_DEGRADATION, src="CERN", dst="FZK")
    assert "extends beyond it" in u.evidence["ruled_out"][codes.MAINTENANCE_EXPLAINED]


# --------------------------------------------------------------------------- case 9
# The rates across the 2^64 wrap and the reboot come from the database's rate computation, replayed on
# production's road in tests/diagnosis/test_corpus_numbers.py (case9-counter-wrap-and-reboot) and
# tests/diagnosis/test_scenario_yaml.py; here the rules get what it yields: 6 Gb/s every minute, and the
# interval across a reboot dropped as a discontinuity.
@pytest.mark.parametrize("reboot_at", [None, 200])
def test_case9_counter_wrap_and_reset(reboot_at):
    rates = [rate_row(m, 6e9, 0.0) for m in range(1, 361) if m != reboot_at]
    gaps = (CounterDiscontinuity(at(reboot_at), "sysuptime_reset", at(reboot_at - 1)),) if reboot_at else ()
    link = InterfaceEvidence("geant-par", "xe-1/0/0", 10e9, tuple(rates), gaps)
    p = healthy_eu(hops=("cern-border", "geant-par:xe-1/0/0", "fzk-border"))
    findings = run(bundle(p, interfaces=(link,)))
    if reboot_at:
        f = one(findings, codes.COUNTER_DISCONTINUITY, equipment="geant-par", interface="xe-1/0/0")
        assert f.start == at(reboot_at)
        assert f.evidence["discontinuities"][0]["reason"] == "sysuptime_reset"
    else:
        assert codes.COUNTER_DISCONTINUITY not in codes_of(findings)
    assert codes.LINK_CONGESTION not in codes_of(findings)
    assert codes.INTERFACE_ERRORS not in codes_of(findings)


def test_case9_a_naive_reset_spike_never_becomes_congestion():
    # even if a rate computation let a reset through as an absurd rate, one interval is never congestion
    rows = every(1, lambda m: rate_row(m, 6e9, 1e8))
    rows[200] = rate_row(200, 2.4e17, 1e8)
    p = healthy_eu(hops=("cern-border", "geant-par:xe-1/0/0", "fzk-border"))
    findings = run(bundle(p, interfaces=(iface("geant-par", "xe-1/0/0", 10e9, rows),)))
    assert codes.LINK_CONGESTION not in codes_of(findings)


def test_findings_serialise_to_the_replay_json():
    for f in run(case1_bundle()) + run(case8_bundle()):
        d = f.to_dict()
        assert set(d) == {
            "code",
            "severity",
            "subject",
            "start",
            "end",
            "rank",
            "summary",
            "explanation",
            "evidence",
            "actions",
        }
        json.dumps(d)
        assert d["start"].endswith("Z") and d["end"].endswith("Z")


def test_everything_is_quiet_on_healthy_paths():
    b = bundle(
        healthy_eu(), healthy_eu("FZK", "CERN", EU_HOPS_BACK), hosts=(host("CERN", "dt", buf=64 * MiB, mtu=9000),)
    )
    assert run(b) == []
    assert NOW > T0


def test_failed_tests_make_path_down():
    tests = every(30, lambda m: tcp(m, 9e8, window_bytes=2_450_000, rtt_ms=9.8) if m < 240 else failed(m))
    sessions = every(5, lambda m: owamp(m, 4.9, lost=600 if m >= 240 else 0))
    findings = run(bundle(path("CERN", "FZK", 1e9, EU_HOPS, tests, sessions)))
    f = one(findings, codes.PATH_DOWN, src="CERN", dst="FZK")
    assert f.start == at(240) and f.evidence["ongoing"]
    assert codes.LOSS_LIMITED not in codes_of(findings)  # an outage is not a loss rate


def test_case3_healthy_reverse_direction_is_not_called_asymmetric():
    b = case3_bundle(True)
    rev = path(
        "RAL",
        "CERN",
        2e9,
        tuple(reversed(RAL_HOPS)),
        every(30, lambda m: tcp(m, 9.1e8, window_bytes=4 * MiB, rtt_ms=8.0)),
        every(5, lambda m: owamp(m, 4.0)),
    )
    findings = run(type(b)(**{**b.__dict__, "paths": b.paths + (rev,)}))
    assert codes.ASYMMETRIC_PATH not in codes_of(findings)
    assert codes.TRUNK_IMBALANCE in codes_of(findings)
