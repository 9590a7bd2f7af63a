"""Measured retrieval on a small subset of the corpus (the whole corpus: ``scripts/bench diagnosis``): each problem
replayed on production's road and resolved with its cause, then a perturbed variant (other sites and elements of the
same kinds, other RTTs and rates, another time of day) must find its case first, and nothing of another problem."""

from __future__ import annotations

import pytest
import yaml

from tests.cases.retrieval import PROBLEMS, measure_retrieval, perturb

SUBSET = ("case6", "mtu", "path-down")  # loss-limited pair, jumbo frames lost on a hop, an outage: ~40 s in all


@pytest.mark.django_db
def test_perturbed_variants_find_their_own_case_and_no_other():
    result = measure_retrieval([p for p in PROBLEMS if p.name in SUBSET])
    print(result.line(), *result.rows, sep="\n")
    assert result.variants == len(SUBSET), result.without_incident
    assert result.top1_rate >= 0.9 and result.top3_rate >= result.top1_rate, result.rows
    assert result.false_rate <= 0.1, result.rows


def test_a_variant_moves_the_problem_elsewhere_with_other_numbers():
    case6 = next(p for p in PROBLEMS if p.name == "case6")
    doc = case6.build()
    variant = perturb(doc, seed="case6")
    sites = {s["code"] for s in doc["topology"]["sites"]}
    moved = {s["code"] for s in variant["topology"]["sites"]}
    assert len(moved) == len(sites) and not moved & sites
    text = yaml.safe_dump(variant["measurements"])
    assert not any(f"{code}\n" in text or f" {code}," in text for code in sites)
    first, again = doc["measurements"][0], variant["measurements"][0]
    assert first["time"] != again["time"] and first["time"][:10] < again["time"][:10]
    tcp = [(a, b) for a, b in zip(doc["measurements"], variant["measurements"], strict=True) if "rtt_ms" in a]
    ratio = tcp[0][1]["rtt_ms"] / tcp[0][0]["rtt_ms"]
    assert 1.1 <= ratio <= 1.3
    assert tcp[0][1]["throughput_bps"] == pytest.approx(tcp[0][0]["throughput_bps"] / ratio, rel=0.01)
    carrier_gear = {e["name"] for e in doc["topology"]["equipment"] if e.get("carrier")}
    assert {e["name"] for e in variant["topology"]["equipment"] if e.get("carrier")} == {f"{n}-b" for n in carrier_gear}
