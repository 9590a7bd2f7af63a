"""The explanation layer: every finding code has its wording, rules hand over facts and never write prose."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from wanmon.diagnosis import codes
from wanmon.diagnosis.wording import WORDING, word

RULES = Path(__file__).resolve().parents[2] / "wanmon" / "diagnosis" / "rules"


def test_every_finding_code_has_its_wording():
    assert sorted(WORDING) == sorted(codes.CODES)


def test_a_code_without_wording_is_refused_by_name():
    with pytest.raises(LookupError, match="NOT_A_CODE"):
        word("NOT_A_CODE", {})


def test_no_rule_writes_a_summary_explanation_or_actions():
    """A rule returns facts; the sentences people read are the wording's (wanmon/diagnosis/wording/)."""
    offenders = []
    for path in sorted(RULES.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                offenders += [
                    f"{path.name}:{node.lineno} {kw.arg}="
                    for kw in node.keywords
                    if kw.arg in ("summary", "explanation", "actions")
                ]
    assert offenders == []


def test_the_wording_writes_the_rules_figures():
    words = word(
        codes.REORDERING,
        {
            "key": "TRIUMF->CERN",
            "reordered": 1234,
            "packets": 60000,
            "fraction": 1234 / 60000,
            "sessions": 12,
            "all_sessions": 100,
            "duplicates": 0,
            "ceiling_if_loss_bps": 2.5e8,
        },
    )
    assert words.summary == "TRIUMF->CERN: 2.06 % of owamp packets reordered in 12 sessions"
    assert "saw 1,234 of 60,000 packets out of order (2.06 %) in 12 of 100 sessions" in words.explanation
    assert "capping a stream near 250 Mb/s at this fraction" in words.explanation
    assert "duplicate packets too" not in words.explanation
    assert len(words.actions) == 1
