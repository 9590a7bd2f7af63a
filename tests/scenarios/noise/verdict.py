"""Replay a case through the real ingest and production's diagnosis cycle, and judge what an operator would have
been shown (needs Django and a database).

The cycle runs at the case's shortest test interval (``shortest_test_interval``: every round of its most frequent
test is seen as the beat would see it) from ``since`` (default: the whole file) to the case's end; every finding
opened on the way counts, at the worst severity it reached.

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
from datetime import datetime, timedelta
from pathlib import Path

from wanmon.diagnosis.codes import CODES, SEVERITY_ORDER

from .corpus import Case
from .mesh import at


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
    steps: int = 0
    step_min: float = 0.0
    detect_min: list[float] = field(default_factory=list)  # per detected fault: onset -> first warning, minutes
    onset_error_min: list[float] = field(default_factory=list)  # per detected fault: reported onset - true onset
    # per detected fault: the interval of the tests that can show it on its subject (``onset_tolerances``)
    onset_interval_min: list[float] = field(default_factory=list)
    incidents: list[dict] = field(default_factory=list)  # opened by the alerting (``notify``), as replay lists them

    @property
    def detect_intervals(self) -> list[float]:
        """Time to detect in measurement intervals: the cycle's step is the case's shortest test interval."""
        return [m / self.step_min for m in self.detect_min] if self.step_min else []

    @property
    def onsets_within(self) -> list[bool]:
        """Per detected fault: its reported onset within one interval of the tests that can show it."""
        return [abs(m) <= i for m, i in zip(self.onset_error_min, self.onset_interval_min, strict=True)]

    @property
    def passed(self) -> bool:
        return not self.alarms and not self.missed

    def lines(self) -> list[str]:
        out = [
            f"{self.case}: {len(self.findings)} finding(s) opened in {self.steps} cycles every {self.step_min:g} min, "
            f"{self.seconds:.1f} s; detected after {self.detect_min} min, onsets off by {self.onset_error_min} min"
        ]
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


def _worst(finding: dict) -> str:
    return finding.get("worst_severity") or finding["severity"]


def _before(finding: dict, onset: datetime | None) -> bool:
    return onset is not None and bool(finding.get("first_seen_at")) and _time(finding["first_seen_at"]) < onset


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def judge(
    case: str,
    healthy: bool,
    seconds: float,
    findings: list[dict],
    expect: dict,
    onsets: dict[int, datetime] | None = None,
    onset_intervals: dict[int, float] | None = None,
) -> Verdict:
    """Healthy: nothing above ``max_severity`` at any step. Faulty: each expected (code, subject[, rank]) opened at
    some step; with ``onsets`` (the true start of expectation i), the minutes from it to the first warning or
    critical finding that matches (any severity for a code that is info by default), and how far the reported
    onset lies from it (``onset_intervals``: the interval, in minutes, it is judged against; default the step)."""
    verdict = Verdict(case, healthy, seconds, findings)
    limit = expect.get("max_severity")
    if limit is not None:
        verdict.alarms = [f for f in findings if SEVERITY_ORDER[_worst(f)] > SEVERITY_ORDER[limit]]
    for i, e in enumerate(expect.get("findings") or []):
        onset = (onsets or {}).get(i)
        # A finding opened before the fault began (a route change read into ECMP alternation) did not find it.
        found = [f for f in findings if _matches(f, e) and not _before(f, onset)]
        (verdict.detected if found else verdict.missed).append(e)
        # A code that is info by default (a route change, a maintenance) is detected when it is shown at all.
        shown = min(SEVERITY_ORDER["warning"], SEVERITY_ORDER[CODES[e["code"]].severity])
        paging = [f for f in found if SEVERITY_ORDER[_worst(f)] >= shown and f.get("first_seen_at")]
        if onset is not None and paging:
            first = min(paging, key=lambda f: f["first_seen_at"])
            verdict.detect_min.append((_time(first["first_seen_at"]) - onset).total_seconds() / 60)
            if first.get("onset"):
                verdict.onset_error_min.append((_time(first["onset"]) - onset).total_seconds() / 60)
                verdict.onset_interval_min.append((onset_intervals or {}).get(i, 0.0))
    return verdict


#: The tests each code is read from, where they are slower than the case's most frequent test: a fault is seen at
#: the first of them after it began (a duplex mismatch only by the next TCP test, four hours later at worst), so its
#: reported onset is judged against their interval on the fault's direction. Other codes: the case's step.
_SEEN_BY = {
    "TCP_ONLY_DEGRADATION": "tcp",
    "UNEXPLAINED_DEGRADATION": "tcp",
    "LOSS_LIMITED": "tcp",
    "WINDOW_LIMITED": "tcp",
    "MTU_MISMATCH": "tcp",
    "ROUTE_CHANGE": "traceroute",
}


def onset_tolerances(
    records: list, expect: dict, step_min: float, seen_by: dict[int, str] | None = None
) -> dict[int, float]:
    """Per expected finding (by index): the minutes its reported onset may lie from the true one, the larger of the
    replay's step and the median spacing of the tests it is read from on its subject's direction: those its
    fault names (``seen_by``, ``fault_seen_by``), else its code's (``_SEEN_BY``)."""
    out: dict[int, float] = {}
    for i, e in enumerate(expect.get("findings") or []):
        kind, subject = (seen_by or {}).get(i) or _SEEN_BY.get(e["code"]), e.get("subject") or {}
        times = sorted(
            r.time
            for r in records
            if kind is not None
            and getattr(r, "src", None) == subject.get("src")
            and getattr(r, "dst", None) == subject.get("dst")
            and (
                type(r).__name__ == "TracerouteRecord" if kind == "traceroute" else getattr(r, "protocol", None) == kind
            )
        )
        gaps = sorted((b - a).total_seconds() / 60 for a, b in zip(times, times[1:], strict=False) if b > a)
        out[i] = max(step_min, gaps[len(gaps) // 2] if gaps else 0.0)
    return out


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


def _expecting(case: Case) -> list:
    """The fault behind each expected finding of a faulty case, in the order of its expect block."""
    if not case.faulty:
        return []
    mesh = case.mesh()
    return [fault for fault in case.faulty.faults for _ in fault.expect(mesh)]


def fault_seen_by(case: Case) -> dict[int, str]:
    """The tests that show each expected finding of a faulty case, where its fault says (``Fault.seen_by``: a
    refused throughput test is a MEASUREMENT_GAP that only the next throughput test can show)."""
    return {i: fault.seen_by for i, fault in enumerate(_expecting(case)) if getattr(fault, "seen_by", None)}


def fault_onsets(case: Case) -> dict[int, datetime]:
    """The true start of each expected finding of a faulty case (the start of the fault that expects it)."""
    return {i: at(fault.start_h) for i, fault in enumerate(_expecting(case))}


def replay_case(
    case: Case, directory: Path, *, since_h: float | None = None, step: timedelta | None = None, notify: bool = False
) -> Verdict:
    """Write the case (without expect) to ``directory``, replay it on production's road with a rollback (cycles
    from ``since_h`` hours into the case, default from its start, every ``step``, default its shortest test
    interval), and judge every finding opened. With ``notify`` the alerting runs after every cycle, as the beat
    runs it (``replay --notify``), and the incidents it opened are in the verdict."""
    from wanmon.diagnosis.replay import scenario_load, scenario_replay, shortest_test_interval

    after_step = incidents = None
    if notify:
        from wanmon.alerts.selectors import incidents_of_findings
        from wanmon.alerts.services import alerts_process_now

        def after_step(moment: datetime) -> None:
            alerts_process_now(now=moment, flush=False)

        incidents = incidents_of_findings

    doc = case.document()
    expect = doc.pop("expect")
    path = directory / f"{case.name}.json"
    path.write_text(json.dumps(doc))
    started = time.perf_counter()
    with json_first_parser():
        scenario = scenario_load(str(path))
    since = at(since_h) if since_h is not None else None
    result = scenario_replay(
        scenario,
        step=step or shortest_test_interval(scenario.records),
        since=since,
        after_step=after_step,
        incidents=incidents,
    )
    seconds = time.perf_counter() - started
    doc = result.as_json()
    step_min = result.step_s / 60
    verdict = judge(
        case.name, case.healthy, seconds, doc["findings"], expect, fault_onsets(case),
        onset_tolerances(scenario.records, expect, step_min, fault_seen_by(case)),
    )  # fmt: skip
    verdict.steps, verdict.step_min = result.steps, step_min
    verdict.incidents = doc["incidents"]
    return verdict
