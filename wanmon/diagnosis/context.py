"""The read-only context every rule receives: the evidence, ``now``, cached path assessments and earlier findings."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

from wanmon.diagnosis import codes
from wanmon.diagnosis.assessment import PathAssessment, assess_path
from wanmon.diagnosis.evidence import EvidenceBundle, InterfaceEvidence, PathEvidence, RuleFinding, path_subject
from wanmon.diagnosis.loss import LossEstimate
from wanmon.diagnosis.wording import Facts, word
from wanmon.diagnosis.wording.physics import path_figures

# Conclusions several rules share (the untrusted delay pairs of rules/clock.py, the maintenance matches of
# rules/maintenance.py) are worked out by those rule modules; the registry hands them to the context it builds
# (registry.rule_context, registry.SHARED_CONCLUSIONS): rules import the context, never the reverse.
SharedConclusions = Mapping[str, Callable[["RuleContext"], Any]]


class RuleContext:
    """Evidence of one diagnosis run plus memoised, pure derived data.

    Rules never mutate it; the engine appends each rule's findings to
    ``findings`` before running the next rule, so later rules (correlation,
    maintenance, unexplained degradation) can see what earlier ones concluded.
    """

    def __init__(
        self,
        bundle: EvidenceBundle,
        now: datetime,
        findings: Iterable[RuleFinding] = (),
        *,
        conclusions: SharedConclusions,
    ) -> None:
        self.bundle = bundle
        self._conclusions = conclusions
        self.now = now
        self.findings: list[RuleFinding] = list(findings)
        self._assessments: dict[tuple[str, str], PathAssessment] = {}
        self._untrusted: set[tuple[str, str]] | None = None
        self._maintenance: Any = None
        self._interfaces: tuple[InterfaceEvidence, ...] | None = None
        self._paths = {(p.src, p.dst): p for p in reversed(bundle.paths)}  # the first of a direction, as bundle.path

    # -- paths
    def assessment(self, path: PathEvidence) -> PathAssessment:
        key = (path.src, path.dst)
        if key not in self._assessments:
            self._assessments[key] = assess_path(path, self.bundle, self.now)
        return self._assessments[key]

    def assessments(self) -> list[PathAssessment]:
        return [self.assessment(p) for p in self.bundle.paths]

    def assessment_of(self, src: str, dst: str) -> PathAssessment | None:
        p = self.path(src, dst)
        return self.assessment(p) if p else None

    def path(self, src: str, dst: str) -> PathEvidence | None:
        """The bundle's path direction src -> dst (``EvidenceBundle.path``, looked up in a dict: rules ask it of
        every path of a shard)."""
        return self._paths.get((src, dst))

    def all_interfaces(self) -> tuple[InterfaceEvidence, ...]:
        """The bundle's interfaces including trunk members (``EvidenceBundle.all_interfaces``), worked out once."""
        if self._interfaces is None:
            self._interfaces = self.bundle.all_interfaces()
        return self._interfaces

    @property
    def trunk_names(self) -> set[str]:
        return {t.name for t in self.bundle.trunks}

    # -- shared conclusions
    def _shared(self, name: str) -> Callable[[RuleContext], Any]:
        try:
            return self._conclusions[name]
        except KeyError:
            raise LookupError(f"{name}: not among the shared conclusions this context was given") from None

    def untrusted_delay_pairs(self) -> set[tuple[str, str]]:
        """Path directions whose one-way delays must not be used (clock not synchronised)."""
        if self._untrusted is None:
            self._untrusted = self._shared("untrusted_delay_pairs")(self)
        return self._untrusted

    def maintenance_matches(self):
        """Degradation episodes explained by maintenance windows (see rules.maintenance.match_episodes)."""
        if self._maintenance is None:
            self._maintenance = self._shared("maintenance_matches")(self)
        return self._maintenance

    def findings_with(self, code: str) -> list[RuleFinding]:
        return [f for f in self.findings if f.code == code]


def path_finding(
    a: PathAssessment,
    code: str,
    *,
    start: datetime,
    end: datetime,
    facts: Facts,
    evidence: Mapping[str, Any],
    severity: str | None = None,
    loss: LossEstimate | None = None,
    subject: Mapping[str, str] | None = None,
) -> RuleFinding:
    """A path-direction finding: the rule's verdict (``facts``, see ``wanmon.diagnosis.wording``) in words, with
    the derived figures, its explanation ending with the path physics (``wording.physics.path_figures``)."""
    words = word(code, facts)
    derived = a.derived(loss)
    figures = path_figures(a.key, derived, rtt_source=a.rtt_source, mss_source=a.mss_source)
    return RuleFinding(
        code=code,
        severity=severity or codes.default_severity(code),
        subject=dict(subject) if subject else path_subject(a.path.src, a.path.dst),
        start=start,
        end=max(start, end),
        rank=None,
        summary=words.summary,
        explanation=f"{words.explanation} {figures}",
        evidence=dict(evidence),
        actions=words.actions,
        derived=derived,
    )


def finding(
    code: str,
    *,
    subject: Mapping[str, str],
    start: datetime,
    end: datetime,
    facts: Facts,
    evidence: Mapping[str, Any],
    severity: str | None = None,
    rank: int | None = None,
) -> RuleFinding:
    """A finding of an element, host, site or trunk: the rule's verdict (``facts``) in words."""
    words = word(code, facts)
    return RuleFinding(
        code=code,
        severity=severity or codes.default_severity(code),
        subject=dict(subject),
        start=start,
        end=end,
        rank=rank,
        summary=words.summary,
        explanation=words.explanation,
        evidence=dict(evidence),
        actions=words.actions,
    )
