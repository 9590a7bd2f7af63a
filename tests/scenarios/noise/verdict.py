"""Replay a case through the real ingest and diagnosis and judge the findings (needs Django and a database).

The replay gets the scenario without its ``expect`` block: a code the engine does not know yet (e.g.
MEASUREMENT_GAP) must count as a missed detection here, not make the whole file invalid.

The file is written as JSON, which is YAML (docs/scenario-format.md), and read with a JSON parser first: the same
document reaches the same validation and ingest, without libyaml's ~0.7 s per MB (a 7-day mesh is ~5 MB).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from wanmon.diagnosis.codes import SEVERITY_ORDER

from .corpus import Case


@dataclass
class Verdict:
    """What the engine said about one case and how that compares with the truth."""

    case: str
    healthy: bool
    seconds: float
    findings: list[dict]
    alarms: list[dict] = field(default_factory=list)  # above the allowed severity
    detected: list[dict] = field(default_factory=list)  # expected findings found
    missed: list[dict] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.alarms and not self.missed

    def lines(self) -> list[str]:
        out = [f"{self.case}: {len(self.findings)} finding(s) in {self.seconds:.1f} s"]
        out += [f"  false alarm: {a['severity']} {a['code']} {a['subject']} -- {a['summary']}" for a in self.alarms]
        out += [f"  missed: {m['code']} {m['subject']}" for m in self.missed]
        return out


def _matches(finding: dict, expected: dict) -> bool:
    """The matching of docs/scenario-format.md#expectations, plus ``also_accepted``: other codes that describe the
    same fault correctly."""
    if finding["code"] != expected["code"] and finding["code"] not in expected.get("also_accepted", ()):
        return False
    if any(finding["subject"].get(k) != v for k, v in (expected.get("subject") or {}).items()):
        return False
    return "rank" not in expected or finding.get("rank") == expected["rank"]


def judge(case: str, healthy: bool, seconds: float, findings: list[dict], expect: dict) -> Verdict:
    """Healthy: nothing above ``max_severity``. Faulty: each expected (code, subject[, rank]) present."""
    verdict = Verdict(case, healthy, seconds, findings)
    limit = expect.get("max_severity")
    if limit is not None:
        verdict.alarms = [f for f in findings if SEVERITY_ORDER[f["severity"]] > SEVERITY_ORDER[limit]]
    for e in expect.get("findings") or []:
        (verdict.detected if any(_matches(f, e) for f in findings) else verdict.missed).append(e)
    return verdict


@contextmanager
def json_first_parser() -> Iterator[None]:
    """Let the replay read a JSON scenario with the JSON parser (anything else still goes to PyYAML)."""
    from wanmon.diagnosis import replay

    real = replay.yaml

    class _JsonFirst:
        def __getattr__(self, name: str):
            return getattr(real, name)

        @staticmethod
        def load(text, Loader=None):  # noqa: N803 - PyYAML's keyword
            try:
                return json.loads(text)
            except ValueError:
                return real.load(text, Loader=Loader)  # noqa: S506 - the replay passes a safe loader

    replay.yaml = _JsonFirst()
    try:
        yield
    finally:
        replay.yaml = real


def replay_case(case: Case, directory: Path) -> Verdict:
    """Write the case (without expect) to ``directory``, replay it with a rollback, and judge the findings."""
    from wanmon.diagnosis.replay import scenario_load, scenario_replay

    doc = case.document()
    expect = doc.pop("expect")
    path = directory / f"{case.name}.json"
    path.write_text(json.dumps(doc))
    started = time.perf_counter()
    with json_first_parser():
        scenario = scenario_load(str(path))
    result = scenario_replay(scenario)
    seconds = time.perf_counter() - started
    findings = result.as_json()["findings"]
    return judge(case.name, case.healthy, seconds, findings, expect)
