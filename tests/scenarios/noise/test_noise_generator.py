"""The noise corpus generator itself: deterministic, valid records, physically possible numbers, real noise.

No database: these tests check the yardstick, not the engine (test_noise_corpus.py replays it).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import defaultdict
from dataclasses import replace
from datetime import datetime

import pytest

from collectors.records import decode_records

from . import physics
from .__main__ import main as cli_main
from .cases.faulty import THIN_FAULTS
from .cases.healthy import THIN
from .corpus import CASES, case_named, scenario_yaml
from .faults import RateCap
from .mesh import Mesh

# docs/diagnosis.md#finding-codes: the closed vocabulary of finding codes.
CATALOGUE = {
    "WINDOW_LIMITED", "LOSS_LIMITED", "ASYMMETRIC_PATH", "TCP_ONLY_DEGRADATION", "TRUNK_IMBALANCE",
    "SHARED_EQUIPMENT_SUSPECT", "INTERFACE_ERRORS", "LINK_CONGESTION", "PERIODIC_LOSS", "DELAY_LEVEL_SHIFT",
    "ROUTE_CHANGE", "MTU_MISMATCH", "REORDERING", "CLOCK_UNSYNC", "COUNTER_DISCONTINUITY", "PATH_DOWN",
    "HOST_TCP_TUNING", "MAINTENANCE_EXPLAINED", "UNEXPLAINED_DEGRADATION", "MEASUREMENT_GAP",
}  # fmt: skip
HEALTHY = [c for c in CASES.values() if c.healthy]
FAULTY = [c for c in CASES.values() if not c.healthy]
# The thin spots' faults share their meshes' physics, checked record by record on the meshes themselves, over
# their first two days (the same code paths at a third of the time).
CHECKED = [name for name, c in CASES.items() if c.faulty not in THIN_FAULTS]
THIN_NAMES = {spec.name for spec in THIN}


def _digest(doc: dict) -> str:
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def _t(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def test_the_corpus_has_eight_healthy_week_long_meshes_and_a_fault_for_every_code():
    assert len([c for c in HEALTHY if c.spec.days == 7]) >= 8
    # A week, or a new deployment's first two days.
    assert {c.spec.days for c in CASES.values()} == {7, 2}
    assert {s for c in HEALTHY for s in (c.spec.capacity_mbps,)} == {10_000, 100_000}
    assert {c.spec.mtu for c in HEALTHY} == {1500, 9000}
    ccs = {c.spec.cc(site) for c in HEALTHY for site in c.spec.sites}
    assert {"cubic", "bbr", "reno"} <= ccs
    expected_codes = {e["code"] for c in FAULTY for fault in c.faulty.faults for e in fault.expect(c.mesh())}
    assert expected_codes == CATALOGUE
    # Every fault starts after the replay's baseline (the first third of the timeline).
    assert all(fault.start_h > c.spec.days * 24 / 3 for c in FAULTY for fault in c.faulty.faults)
    assert sum(c.path_days for c in HEALTHY) >= 1500


@pytest.mark.parametrize("name", ["noise-eu-10g-reno-mtu1500", "fault-tcp-only-duplex-pic"])
def test_generation_is_deterministic(name):
    case = case_named(name)
    assert _digest(case.document()) == _digest(case.document())


def test_another_seed_gives_other_numbers_with_the_same_shape():
    from dataclasses import replace

    case = case_named("noise-eu-10g-reno-mtu1500")
    a, b = Mesh(case.spec).document(), Mesh(replace(case.spec, seed=case.spec.seed + 1)).document()
    assert len(a["measurements"]) == pytest.approx(len(b["measurements"]), rel=0.02)
    assert _digest(a) != _digest(b)


@pytest.mark.parametrize("name", CHECKED)
def test_every_record_is_valid_and_physically_possible(name):
    case = CASES[name]
    if name in THIN_NAMES:
        case = replace(case, spec=replace(case.spec, days=min(case.spec.days, 2)))
    doc = case.document()
    records = decode_records(doc["measurements"], path="measurements")  # raises RecordError listing problems
    assert len(records) == len(doc["measurements"]) > 3000 * case.spec.days / 7
    capacity = {(p["src"], p["dst"]): p["capacity_mbps"] * 1e6 for p in doc["topology"]["paths"]}
    speed = {(i["equipment"], i["name"]): i["speed_mbps"] * 1e6 for i in doc["topology"]["interfaces"]}
    mtu = case.spec.mtu
    mesh = case.mesh()
    snmp = defaultdict(list)
    for m in doc["measurements"]:
        if m["type"] == "throughput" and m.get("throughput_bps") is not None:
            c = capacity[(m["src"], m["dst"])]
            if m["protocol"] == "tcp":
                # A single stream never exceeds min(C, W * 8 / RTT).
                limit = min(c, m["window_bytes"] * 8 / (m["rtt_ms"] / 1e3))
                assert m["throughput_bps"] <= limit, m
                assert m["mss_bytes"] <= physics.mss_bytes(mtu) and m["retransmits"] >= 0
                # The reported RTT is at least the propagation delay of the route (plus queueing).
                path = mesh.topology.paths[(m["src"], m["dst"])]
                back = mesh.topology.paths[(m["dst"], m["src"])]
                assert m["rtt_ms"] >= path.owd_ms + back.owd_ms - 1e-3
            else:
                assert m["throughput_bps"] <= m["offered_bps"] <= c
                assert 0 <= m["packets_lost"] <= m["packets_sent"]
        elif m["type"] == "owamp" and m.get("delay_min_ms") is not None and "clock" not in name:
            # Nothing arrives faster than light in fibre along the great circle (clock offsets stay inside
            # the reported error).
            route = mesh.topology.paths[(m["src"], m["dst"])]
            floor = route.route_km / physics.ROUTE_FACTOR / physics.FIBRE_KM_PER_MS
            assert m["delay_min_ms"] + m["clock_error_ms"] >= floor * 0.9, m
            assert m["delay_min_ms"] <= m["delay_median_ms"] <= m["delay_max_ms"]
        elif m["type"] == "traceroute":
            assert m["pmtu_bytes"] <= mtu
        elif m["type"] == "snmp":
            snmp[(m["equipment"], m["interface"])].append(m)
    for key, polls in snmp.items():
        for prev, cur in zip(polls, polls[1:], strict=False):
            dt = (_t(cur["time"]) - _t(prev["time"])).total_seconds()
            assert 280 <= dt <= 320 or cur["counter_discontinuity_ticks"] != prev["counter_discontinuity_ticks"]
            for counter in ("hc_in_octets", "hc_out_octets"):
                delta = cur["counters"][counter] - prev["counters"][counter]
                if delta >= 0:  # a reset interval is discarded by the rate code
                    assert delta * 8 / dt <= speed[key] * 1.01, (key, cur["time"], delta * 8 / dt)


def test_healthy_meshes_carry_the_noise_of_real_data():
    """The noise docs/diagnosis.md#what-the-rules-tolerate lists is in the healthy corpus, in realistic amounts."""
    docs = {c.name: c.document() for c in HEALTHY if c.name in ("noise-lhcopn-100g-bbr", "noise-eu-10g-cubic-jumbo")}
    bbr, eu = docs["noise-lhcopn-100g-bbr"], docs["noise-eu-10g-cubic-jumbo"]
    # 100G single streams host-limited at 20-40 Gb/s, varying 20-30 % run to run, hundreds of retransmits.
    by_path = defaultdict(list)
    for m in bbr["measurements"]:
        if m["type"] == "throughput" and m.get("throughput_bps"):
            by_path[(m["src"], m["dst"])].append(m)
    for tests in by_path.values():
        rates = sorted(t["throughput_bps"] for t in tests)
        median = rates[len(rates) // 2]
        assert 14e9 <= median <= 40e9
        spread = (rates[int(len(rates) * 0.9)] - rates[int(len(rates) * 0.1)]) / median
        assert 0.12 <= spread <= 0.5
    cubic_100g = case_named("noise-eu-100g-flaky-hosts").document()
    retrans = [m["retransmits"] for m in cubic_100g["measurements"] if m["type"] == "throughput" and "retransmits" in m]
    assert sorted(retrans)[len(retrans) // 2] >= 100
    # A test failing once between successes, never twice in a row from noise alone.
    sequences = defaultdict(list)
    for m in eu["measurements"]:
        if m["type"] == "throughput":
            sequences[(m["src"], m["dst"])].append("error" in m)
    failures = sum(sum(s) for s in sequences.values())
    assert failures >= 5
    assert not any(a and b for s in sequences.values() for a, b in zip(s, s[1:], strict=False))
    # owamp: single lost packets now and then, clock error estimates of 0.2-1 ms.
    sessions = [m for m in eu["measurements"] if m["type"] == "owamp"]
    single = sum(1 for m in sessions if m["packets_lost"] == 1) / len(sessions)
    assert 0.01 <= single <= 0.06
    assert all(0.2 <= m["clock_error_ms"] <= 1.0 for m in sessions)
    # ECMP alternation and a last hop that never answers.
    to_fzk = {tuple(m["hops"]) for m in eu["measurements"] if m["type"] == "traceroute" and m["dst"] == "FZK"}
    assert any("geant-fra2" in h for h in to_fzk) and any("geant-fra" in h for h in to_fzk)
    last = {m["hops"][-1] for m in eu["measurements"] if m["type"] == "traceroute" and m["dst"] == "RAL"}
    assert last == {"*"}
    # SNMP poll times jitter by seconds; 100G ports count a few input discards per minute.
    polls = [m for m in bbr["measurements"] if m["type"] == "snmp" and m["equipment"] == "cern-border"]
    gaps = {(_t(b["time"]) - _t(a["time"])).total_seconds() for a, b in zip(polls, polls[1:], strict=False)}
    assert len(gaps) > 5 and min(gaps) < 298 and max(gaps) > 302
    per_min = (polls[-1]["counters"]["in_discards"] - polls[0]["counters"]["in_discards"]) / (7 * 24 * 60)
    assert 1 <= per_min <= 6


def test_data_challenge_fills_the_link_it_targets():
    case = case_named("noise-lhcopn-100g-bbr")
    mesh = case.mesh()
    dc = case.spec.data_challenges[0]
    during = mesh.iface_state(dc.interface, dc.start_h + dc.duration_h / 2)
    before = mesh.iface_state(dc.interface, dc.start_h - 2)
    assert during.util_out == pytest.approx(0.93, abs=0.03)
    assert before.util_out < 0.6


def test_physics_oracle_reproduces_the_documented_examples():
    # docs/diagnosis.md#the-physics.
    assert physics.bdp_bytes(1e9, 330) == pytest.approx(41.25e6)
    assert physics.window_limit_bps(4 * 2**20, 125, autotuned=False) == pytest.approx(268e6, rel=0.01)
    assert physics.mathis_bps(8948, 72, 6.4e-5, "reno") == pytest.approx(152e6, rel=0.01)
    # CUBIC about twice Reno at 0.11 % on 100 ms (8.5 vs 4.1-4.7 Mb/s); BBR ignores that loss.
    assert physics.mathis_bps(1448, 100, 0.0011, "cubic") == pytest.approx(8.5e6, rel=0.05)
    assert physics.mathis_bps(1448, 100, 0.0011, "reno") == pytest.approx(4.3e6, rel=0.05)
    assert physics.mathis_bps(1448, 100, 0.0011, "bbr") == math.inf
    assert physics.counter32_wrap_s(10e9) == pytest.approx(3.4, abs=0.05)
    assert physics.loss_for_rate(8948, 72, physics.mathis_bps(8948, 72, 6.4e-5, "reno")) == pytest.approx(6.4e-5)


def test_faults_change_what_they_claim():
    # The 0.01 % loss on the ~100 ms path holds a CUBIC stream near its Mathis ceiling, far below 10G.
    loss = case_named("fault-loss-limited-1e-4-at-100ms").document()
    tcp = [m for m in loss["measurements"] if m["type"] == "throughput" and m["protocol"] == "tcp"
           and (m["src"], m["dst"]) == ("CERN", "FNAL") and m.get("throughput_bps")]  # fmt: skip
    before = [m["throughput_bps"] for m in tcp if _t(m["time"]).day < 5]
    after = [m["throughput_bps"] for m in tcp if _t(m["time"]).day >= 5]
    ceiling = physics.mathis_bps(8948, tcp[-1]["rtt_ms"], 1e-4, "cubic")
    assert min(before) > 5e9 and max(after) <= ceiling * 1.01 and max(after) < 0.3e9
    # The 6-hour collapse: at least two tests see ~120 Mb/s, the ones around it see the usual level.
    collapse = case_named("fault-collapse-6h-fzk-cern")
    fault = next(f for f in collapse.faulty.faults if isinstance(f, RateCap))
    rows = [m for m in collapse.document()["measurements"] if m["type"] == "throughput" and m["protocol"] == "tcp"
            and (m["src"], m["dst"]) == ("FZK", "CERN") and m.get("throughput_bps")]  # fmt: skip
    start = _t(rows[0]["time"]).replace(day=1, hour=0, minute=0, second=0)
    inside = [m["throughput_bps"] for m in rows
              if fault.start_h <= (_t(m["time"]) - start).total_seconds() / 3600 < fault.end_h]  # fmt: skip
    assert len(inside) >= 2 and max(inside) <= 120e6
    assert sorted(m["throughput_bps"] for m in rows)[len(rows) // 2] > 20e9


def test_healthy_expectation_allows_info_only_and_faulty_ones_name_code_and_subject():
    healthy = case_named("noise-eu-10g-8-sites").document()["expect"]
    assert healthy == {"findings": [], "absent": [], "max_severity": "info"}
    faulty = case_named("fault-crc-patch-panel-fzk").document()["expect"]
    assert faulty["findings"] == [
        {"code": "INTERFACE_ERRORS", "subject": {"equipment": "fzk-border", "interface": "et-0/0/0"}}
    ]


def test_written_yaml_is_the_document(tmp_path):
    import yaml

    assert cli_main(["--write", str(tmp_path), "--case", "fault-tcp-only-duplex-pic"]) == 0
    written = yaml.load((tmp_path / "fault-tcp-only-duplex-pic.yaml").read_text(), Loader=yaml.CSafeLoader)
    doc = case_named("fault-tcp-only-duplex-pic").document()
    assert written == json.loads(json.dumps(doc))
    assert scenario_yaml(doc).count("\n- {type: ") == len(doc["measurements"])
    assert cli_main(["--case", "no-such-case"]) == 2


def test_verdict_counts_alarms_above_info_and_accepts_only_named_codes():
    from .verdict import judge

    def finding(code, severity, **subject):
        return {"code": code, "severity": severity, "subject": subject, "summary": "", "rank": None}

    healthy = judge(
        "h",
        True,
        1.0,
        [finding("ROUTE_CHANGE", "info", src="A", dst="B"), finding("PATH_DOWN", "critical", src="A", dst="B")],
        {"findings": [], "absent": [], "max_severity": "info"},
    )
    assert [a["code"] for a in healthy.alarms] == ["PATH_DOWN"] and not healthy.passed
    expected = {"code": "UNEXPLAINED_DEGRADATION", "subject": {"src": "B", "dst": "A"}}
    asym = [finding("ASYMMETRIC_PATH", "critical", src="B", dst="A")]
    assert judge("f", False, 1.0, asym, {"findings": [expected]}).missed == [expected]
    accepted = {**expected, "also_accepted": ["ASYMMETRIC_PATH"]}
    assert judge("f", False, 1.0, asym, {"findings": [accepted]}).passed
    other_path = [finding("ASYMMETRIC_PATH", "critical", src="A", dst="B")]
    assert judge("f", False, 1.0, other_path, {"findings": [accepted]}).missed == [accepted]


def _tcp_rates(mesh: Mesh, src: str, dst: str) -> list[float]:
    records = mesh.throughput_records(mesh.topology.paths[(src, dst)])
    return sorted(r["throughput_bps"] for r in records if "error" not in r)


def test_thin_spots_results_pile_up_at_line_rate_with_a_tail_below():
    """What the rules tolerate (docs/diagnosis.md): most results within a few % of 97 % of the 10G line, the rest
    spread below it."""
    mesh = case_named("noise-10g-bbr-capped-at-line-rate").mesh()
    rates = _tcp_rates(mesh, "NDGF", "CERN")
    median = rates[len(rates) // 2]
    line = 10e9 * physics.goodput_fraction(9000)
    assert 0.94 * line <= median <= line and rates[-1] <= line
    assert sum(r < 0.9 * median for r in rates) / len(rates) >= 0.1  # the tail below the pile
    assert sum(r >= 0.97 * median for r in rates) / len(rates) >= 0.5  # the pile


def test_thin_spots_diurnal_load_reaches_85_percent_and_tests_get_only_the_spare_capacity():
    case = case_named("noise-10g-diurnal-85pct-spare-only")
    mesh = case.mesh()
    peaks = {name: max(mesh.iface_state(name, h / 4).util_out for h in range(4 * 24)) for name in case.spec.polled}
    nights = {name: min(mesh.iface_state(name, h / 4).util_out for h in range(4 * 24)) for name in case.spec.polled}
    assert max(peaks.values()) == pytest.approx(0.85, abs=0.005) and max(nights.values()) < 0.3
    path = mesh.topology.paths[("PIC", "FZK")]
    for t_h in (4.0, 14.0, 16.0):  # a night and an afternoon: the spare capacity of the busiest crossing
        state = mesh.path_state(path, t_h)
        spare = min(
            mesh.speed_bps[name] * (1 - (st.util_in if way == "in" else st.util_out))
            for name, way in path.crossings
            for st in (mesh.iface_state(name, t_h),)
        )
        assert state.available_bps == pytest.approx(spare)
    rates = _tcp_rates(mesh, "PIC", "FZK")
    assert rates[len(rates) // 10] < 0.5 * rates[-1]  # the results follow the load


def test_thin_spots_short_histories():
    new_site = case_named("noise-eu-10g-new-site-joins").mesh()
    joined_h = dict(new_site.spec.joined_h)["NDGF"]
    for path in (new_site.topology.paths[("NDGF", "CERN")], new_site.topology.paths[("CERN", "NDGF")]):
        first = min(r["time"] for r in new_site.owamp_records(path) + new_site.throughput_records(path))
        assert 0 <= (_t(first) - _t("2026-06-01T00:00:00Z")).total_seconds() / 3600 - joined_h < 1.5
    assert all(_t(r["time"]).day >= 6 for r in new_site.host_records() if r["site"] == "NDGF")
    assert _tcp_rates(new_site, "FZK", "CERN")  # the other paths keep their week
    assert case_named("noise-new-deployment-2-days").spec.days == 2


def test_thin_spots_ecmp_alternates_are_of_equal_length_in_every_traceroute():
    mesh = case_named("noise-10g-ecmp-alternates-30min-traceroutes").mesh()
    routes = mesh.traceroute_records(mesh.topology.paths[("CERN", "FZK")])
    assert len(routes) >= 7 * 24 * 2 - 2  # every 30 minutes
    assert len({len(r["hops"]) for r in routes}) == 1
    assert len({tuple(h for h in r["hops"] if h != "*") for r in routes}) >= 3  # alternates seen


def test_verdict_times_detection_from_the_onset_to_the_first_finding_shown():
    """Warning or critical for a paging code; any severity for a code that is info by default (a route change)."""
    from .verdict import judge

    onset = _t("2026-06-05T10:00:00Z")

    def finding(code, severity, first_seen, onset_at, **subject):
        return {"code": code, "severity": severity, "subject": subject, "summary": "", "rank": None,
                "first_seen_at": first_seen, "onset": onset_at}  # fmt: skip

    route = {"code": "ROUTE_CHANGE", "subject": {"src": "A", "dst": "B"}}
    drop = {"code": "UNEXPLAINED_DEGRADATION", "subject": {"src": "A", "dst": "B"}}
    found = [
        finding("ROUTE_CHANGE", "info", "2026-06-05T10:30:00Z", "2026-06-05T10:05:00Z", src="A", dst="B"),
        {**finding("UNEXPLAINED_DEGRADATION", "info", "2026-06-05T11:00:00Z", None, src="A", dst="B"),
         "worst_severity": "info"},
        finding("UNEXPLAINED_DEGRADATION", "warning", "2026-06-05T12:00:00Z", "2026-06-05T09:50:00Z", src="A", dst="B"),
    ]  # fmt: skip
    verdict = judge("f", False, 1.0, found, {"findings": [route, drop]}, {0: onset, 1: onset})
    verdict.step_min = 60.0
    assert verdict.detect_min == [30.0, 120.0] and verdict.detect_intervals == [0.5, 2.0]
    assert verdict.onset_error_min == [5.0, -10.0]

    early = [finding("ROUTE_CHANGE", "info", "2026-06-05T09:00:00Z", "2026-06-05T08:55:00Z", src="A", dst="B")]
    assert judge("f", False, 1.0, early, {"findings": [route]}, {0: onset}).missed == [route]
