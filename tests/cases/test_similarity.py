"""The similarity of fingerprints (pure): explained scores, the threshold, generalisation across places and numbers."""

from __future__ import annotations

from dataclasses import replace

from wanmon.cases.fingerprint import path_shape
from wanmon.cases.similarity import SUGGEST_THRESHOLD, Fingerprint, case_match, cases_rank, limit_regime

DIRTY_PATCH = Fingerprint(
    root_code="SHARED_EQUIPMENT_SUSPECT",
    codes=("ASYMMETRIC_PATH", "INTERFACE_ERRORS", "LOSS_LIMITED", "SHARED_EQUIPMENT_SUSPECT"),
    incident_kind="element",
    root_element="geant-gva",
    root_element_kind="carrier port",
    root_operator="GEANT",
    paths=("CNAF->CERN", "FZK->CERN"),
    direction="one-way",
    converging=True,
    loss_fraction=0.037,
    rtt_ms=14.2,
    mss_bytes=8948,
    throughput_bps=3.7e7,
    capacity_bps=1e9,
    window_limited_rate_bps=9.4e9,
    mathis_ceiling_bps=1.8e7,
    limit="loss",
    hour_utc=8,
)
# The same fault met again: another GEANT router, other sites, other figures, later in the day.
AGAIN = replace(
    DIRTY_PATCH,
    root_element="geant-ams",
    paths=("NDGF->SARA", "RAL->SARA"),
    loss_fraction=0.02,
    rtt_ms=19.0,
    throughput_bps=2.5e7,
    hour_utc=13,
)
WINDOW = Fingerprint(
    root_code="WINDOW_LIMITED",
    codes=("HOST_TCP_TUNING", "WINDOW_LIMITED"),
    incident_kind="pair",
    root_element="CERN<->ASGC",
    root_element_kind="site pair",
    paths=("CERN->ASGC",),
    direction="one-way",
    rtt_ms=300.0,
    mss_bytes=8948,
    throughput_bps=1.1e8,
    capacity_bps=1e10,
    window_limited_rate_bps=1.12e8,
    limit="window",
    hour_utc=8,
)


def test_the_same_problem_elsewhere_matches_and_says_why():
    match = case_match(AGAIN, DIRTY_PATCH)
    assert match.score >= 0.85
    assert match.why[:3] == [
        "same headline finding SHARED_EQUIPMENT_SUSPECT",
        "same mechanism: INTERFACE_ERRORS",
        "findings in common: ASYMMETRIC_PATH, INTERFACE_ERRORS, LOSS_LIMITED, SHARED_EQUIPMENT_SUSPECT (4 of 4)",
    ]
    assert "root is a carrier port in both (geant-ams / geant-gva)" in match.why
    assert "TCP held by the same ceiling: loss limit" in match.why
    assert "operated by GEANT in both" in match.why


def test_the_mechanism_tells_a_dirty_fibre_from_a_full_link():
    # Both: a carrier port suspected on one-way loss; only the counters say errors here, congestion there.
    full_link = replace(
        AGAIN,
        codes=("ASYMMETRIC_PATH", "LINK_CONGESTION", "LOSS_LIMITED", "SHARED_EQUIPMENT_SUSPECT"),
        limit="none",
        loss_fraction=0.006,
        paths=("CERN->PIC",),
        converging=False,
    )
    match = case_match(full_link, DIRTY_PATCH)
    assert match.score < SUGGEST_THRESHOLD
    mechanism = next(c for c in match.contributions if c.feature == "mechanism")
    assert (mechanism.earned, mechanism.weight) == (0.0, 3.0)


def test_a_different_problem_stays_below_the_threshold():
    match = case_match(WINDOW, DIRTY_PATCH)
    assert match.score < SUGGEST_THRESHOLD / 2
    assert cases_rank(WINDOW, [(1, DIRTY_PATCH)]) == []


def test_ranking_is_best_first_and_limited():
    ranked = cases_rank(AGAIN, [(1, WINDOW), (2, DIRTY_PATCH), (3, replace(DIRTY_PATCH, limit="capacity"))], limit=2)
    assert [key for key, _ in ranked] == [2, 3]
    assert ranked[0][1].score > ranked[1][1].score >= SUGGEST_THRESHOLD


def test_fingerprints_survive_json():
    assert Fingerprint.from_dict(DIRTY_PATCH.as_dict()) == DIRTY_PATCH


def test_the_binding_ceiling_and_the_path_shape():
    assert (
        limit_regime(throughput_bps=9.3e8, capacity_bps=1e9, window_limited_rate_bps=None, mathis_ceiling_bps=None)
        == "capacity"
    )
    assert (
        limit_regime(throughput_bps=2.6e8, capacity_bps=1e10, window_limited_rate_bps=2.68e8, mathis_ceiling_bps=9e9)
        == "window"
    )
    assert (
        limit_regime(throughput_bps=8.7e7, capacity_bps=6.2e8, window_limited_rate_bps=1.8e9, mathis_ceiling_bps=9.0e7)
        == "loss"
    )
    assert (
        limit_regime(throughput_bps=1e6, capacity_bps=1e10, window_limited_rate_bps=1e9, mathis_ceiling_bps=1e9)
        == "none"
    )
    assert path_shape(["FZK->CERN", "CNAF->CERN"]) == ("one-way", True)
    assert path_shape(["CERN->TAU", "TAU->CERN"]) == ("both-ways", False)
    assert path_shape([]) == ("none", False)
