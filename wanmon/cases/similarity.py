"""How much a new incident resembles a solved one (pure: plain values in, plain values out; no Django).

A :class:`Fingerprint` is what the case memory keeps of an incident: its finding codes, the kind of its root
element and who operates it, the shape of the paths it degrades, and the figures the physics explains it with.
:func:`case_match` compares two fingerprints feature by feature (``FEATURES``: each has a weight and says why it
matched, in words an engineer checks against the two incidents); the score is the matched weight over the weight
of every feature the two could share, 0 to 1. :func:`cases_rank` keeps the matches at or above ``threshold``, best
first. Names (sites, elements) weigh little on purpose: the same dirty patch panel on another carrier's router, met
by another site pair, is the same problem; a loss-limited path at CERN is not a trunk problem at CERN.
docs/cases.md lists the features, their weights and the threshold, with examples.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = [
    "FEATURES",
    "MECHANISM_CODES",
    "SUGGEST_THRESHOLD",
    "CaseMatch",
    "Feature",
    "Fingerprint",
    "case_match",
    "cases_rank",
    "limit_regime",
]

#: A case resembles an incident from this score on (0..1); below it nothing is suggested.
SUGGEST_THRESHOLD = 0.6

# Codes that describe the monitoring or a side effect rather than the problem: they neither make nor break a match
# (unless they are all an incident has).
INCIDENTAL_CODES = frozenset({"ROUTE_CHANGE", "MEASUREMENT_GAP", "COUNTER_DISCONTINUITY", "UNEXPLAINED_DEGRADATION"})
# Codes that name a mechanism (what is physically wrong), as opposed to the symptoms and the localisation that many
# problems share (ASYMMETRIC_PATH, LOSS_LIMITED, SHARED_EQUIPMENT_SUSPECT): a dirty fibre and a full link both make a
# shared element lose packets one way, and only INTERFACE_ERRORS or LINK_CONGESTION tells them apart.
MECHANISM_CODES = frozenset({
    "WINDOW_LIMITED", "TCP_ONLY_DEGRADATION", "TRUNK_IMBALANCE", "INTERFACE_ERRORS", "LINK_CONGESTION",
    "PERIODIC_LOSS", "DELAY_LEVEL_SHIFT", "ROUTE_CHANGE", "MTU_MISMATCH", "REORDERING", "CLOCK_UNSYNC",
    "COUNTER_DISCONTINUITY", "PATH_DOWN", "HOST_TCP_TUNING", "MAINTENANCE_EXPLAINED",
})  # fmt: skip


@dataclass(frozen=True)
class Fingerprint:
    """What the case memory keeps of an incident (JSON-able: ``as_dict`` / ``from_dict``).

    Figures are None when the evidence does not have them. ``limit`` says which ceiling binds the TCP tests
    (``window``, ``loss``, ``capacity``, ``none``: :func:`limit_regime`); ``direction`` is ``one-way`` (only one
    direction of a site pair degraded), ``both-ways`` or ``none`` (no path finding); ``converging`` says whether the
    degraded directions all end (or all start) at one site."""

    root_code: str
    codes: tuple[str, ...]
    incident_kind: str = ""
    root_element: str = ""
    root_element_kind: str = ""  # carrier equipment, carrier port, site equipment, trunk, host, site pair, ...
    root_operator: str = ""  # the carrier or site that operates the root element
    elements: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    direction: str = "none"
    converging: bool = False
    loss_fraction: float | None = None
    period_s: float | None = None
    rtt_ms: float | None = None
    mss_bytes: float | None = None
    throughput_bps: float | None = None
    capacity_bps: float | None = None
    window_limited_rate_bps: float | None = None
    mathis_ceiling_bps: float | None = None
    limit: str = "none"
    trunk_split: float | None = None  # the slower member's (or host group's) share of the faster one's rate
    hour_utc: int | None = None
    duration_s: float | None = None

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["codes"], data["elements"], data["paths"] = list(self.codes), list(self.elements), list(self.paths)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Fingerprint:
        known = {f for f in cls.__dataclass_fields__}
        values = {k: v for k, v in data.items() if k in known}
        for name in ("codes", "elements", "paths"):
            values[name] = tuple(values.get(name) or ())
        return cls(**values)

    @property
    def problem_codes(self) -> frozenset[str]:
        """The codes that describe the problem: without the incidental ones, unless they are all it has."""
        return frozenset(self.codes) - INCIDENTAL_CODES or frozenset(self.codes)


def limit_regime(
    *,
    throughput_bps: float | None,
    capacity_bps: float | None,
    window_limited_rate_bps: float | None,
    mathis_ceiling_bps: float | None,
) -> str:
    """Which ceiling binds a path's TCP tests: ``capacity`` (within 25 % of it), else ``window`` or ``loss`` (the
    measured rate within a factor 2 of that ceiling, the nearer one), else ``none``."""
    if not throughput_bps:
        return "none"
    if capacity_bps and throughput_bps >= 0.75 * capacity_bps:
        return "capacity"
    best, best_ratio = "none", math.inf
    for name, ceiling in (("window", window_limited_rate_bps), ("loss", mathis_ceiling_bps)):
        if ceiling and ceiling > 0:
            ratio = abs(math.log(throughput_bps / ceiling))
            if ratio <= math.log(2) and ratio < best_ratio:
                best, best_ratio = name, ratio
    return best


@dataclass(frozen=True)
class Contribution:
    """One feature's part in a match: the weight it earned of the weight it could earn, and why."""

    feature: str
    earned: float
    weight: float
    why: str


@dataclass
class CaseMatch:
    """How much a case resembles an incident: ``score`` (0..1) and the reasons, strongest first."""

    score: float
    contributions: list[Contribution] = field(default_factory=list)

    @property
    def why(self) -> list[str]:
        return [c.why for c in sorted(self.contributions, key=lambda c: -c.earned) if c.earned > 0 and c.why]


# A feature: (query, case) -> None (not comparable: neither has it) or (earned 0..1 of its weight, why).
Compare = Callable[[Fingerprint, Fingerprint], tuple[float, str] | None]


@dataclass(frozen=True)
class Feature:
    """A weighted comparison of one aspect of two fingerprints."""

    name: str
    weight: float
    compare: Compare


def _names(items: Iterable[str]) -> str:
    return ", ".join(sorted(items))


def _root_code(q: Fingerprint, c: Fingerprint) -> tuple[float, str]:
    if q.root_code == c.root_code:
        return 1.0, f"same headline finding {q.root_code}"
    if q.root_code in c.codes and c.root_code in q.codes:
        return 0.5, f"headline {q.root_code} here, {c.root_code} there, both found in each"
    return 0.0, ""


def _codes(q: Fingerprint, c: Fingerprint) -> tuple[float, str]:
    a, b = q.problem_codes, c.problem_codes
    if not a and not b:
        return 0.0, ""
    common = a & b
    share = len(common) / len(a | b)
    if not common:
        return 0.0, ""
    return share, f"findings in common: {_names(common)} ({len(common)} of {len(a | b)})"


def _mechanism(q: Fingerprint, c: Fingerprint) -> tuple[float, str] | None:
    a, b = q.problem_codes & MECHANISM_CODES, c.problem_codes & MECHANISM_CODES
    if not a and not b:
        return None
    common = a & b
    if not common:
        return 0.0, ""
    return len(common) / len(a | b), f"same mechanism: {_names(common)}"


def _element_kind(q: Fingerprint, c: Fingerprint) -> tuple[float, str] | None:
    if not q.root_element_kind and not c.root_element_kind:
        return None
    if q.root_element_kind != c.root_element_kind:
        return 0.0, ""
    if q.root_element and q.root_element == c.root_element:
        return 1.0, f"the same {q.root_element_kind}: {q.root_element}"
    return 0.8, f"root is a {q.root_element_kind} in both ({q.root_element or '?'} / {c.root_element or '?'})"


def _operator(q: Fingerprint, c: Fingerprint) -> tuple[float, str] | None:
    if not q.root_operator or not c.root_operator:
        return None
    if q.root_operator == c.root_operator:
        return 1.0, f"operated by {q.root_operator} in both"
    return 0.0, ""


def _direction(q: Fingerprint, c: Fingerprint) -> tuple[float, str] | None:
    if q.direction == "none" and c.direction == "none":
        return None
    if q.direction != c.direction:
        return 0.0, ""
    shape = " towards/from one site" if q.converging and c.converging else ""
    earned = 1.0 if q.converging == c.converging else 0.6
    return earned, f"{q.direction} degradation ({len(q.paths)} vs {len(c.paths)} path direction(s){shape})"


def _close_log(a: float | None, b: float | None, *, within: float) -> float | None:
    """1 when equal, falling linearly to 0 at a factor ``within`` apart; None when either is missing."""
    if a is None or b is None or a <= 0 or b <= 0:
        return None
    distance = abs(math.log(a / b)) / math.log(within)
    return max(0.0, 1.0 - distance)


def _pct(value: float) -> str:
    return f"{value * 100:.2g} %" if value >= 1e-3 else f"{value:.1e}"


def _loss(q: Fingerprint, c: Fingerprint) -> tuple[float, str] | None:
    if not q.loss_fraction and not c.loss_fraction:
        return None
    close = _close_log(q.loss_fraction, c.loss_fraction, within=30.0)
    if not close:
        return 0.0, ""
    return close, f"loss {_pct(q.loss_fraction)} vs {_pct(c.loss_fraction)}"


def _period(q: Fingerprint, c: Fingerprint) -> tuple[float, str] | None:
    if not q.period_s and not c.period_s:
        return None
    close = _close_log(q.period_s, c.period_s, within=3.0)
    if not close:
        return 0.0, ""
    return close, f"loss recurs every {q.period_s:g} s vs {c.period_s:g} s"


def _limit(q: Fingerprint, c: Fingerprint) -> tuple[float, str] | None:
    if q.limit == "none" and c.limit == "none":
        return None
    if q.limit != c.limit:
        return 0.0, ""
    return 1.0, f"TCP held by the same ceiling: {q.limit} limit"


def _mss(q: Fingerprint, c: Fingerprint) -> tuple[float, str] | None:
    if not q.mss_bytes or not c.mss_bytes:
        return None
    jumbo_q, jumbo_c = q.mss_bytes > 2000, c.mss_bytes > 2000
    if jumbo_q != jumbo_c:
        return 0.0, ""
    return 1.0, f"{'jumbo' if jumbo_q else 'standard'} frames (MSS {q.mss_bytes:g} vs {c.mss_bytes:g})"


def _rtt(q: Fingerprint, c: Fingerprint) -> tuple[float, str] | None:
    close = _close_log(q.rtt_ms, c.rtt_ms, within=8.0)
    if close is None:
        return None
    return close, f"RTT {q.rtt_ms:.3g} vs {c.rtt_ms:.3g} ms" if close else ""


def _trunk(q: Fingerprint, c: Fingerprint) -> tuple[float, str] | None:
    if q.trunk_split is None and c.trunk_split is None:
        return None
    if q.trunk_split is None or c.trunk_split is None:
        return 0.0, ""
    return 1.0, f"trunk members split {q.trunk_split:.2f} vs {c.trunk_split:.2f} of the faster one"


def _hour(q: Fingerprint, c: Fingerprint) -> tuple[float, str] | None:
    if q.hour_utc is None or c.hour_utc is None:
        return None
    apart = min(abs(q.hour_utc - c.hour_utc), 24 - abs(q.hour_utc - c.hour_utc))
    if apart > 2:
        return 0.0, ""
    return 1.0, f"began at the same time of day ({q.hour_utc:02d}h vs {c.hour_utc:02d}h UTC)"


#: The features, strongest first. The problem (what was found, by which mechanism, and where it sits) carries 11 of
#: 16.5; the figures tell apart problems that produce the same codes; names and time of day only break ties.
FEATURES: tuple[Feature, ...] = (
    Feature("root_code", 3.0, _root_code),
    Feature("mechanism", 3.0, _mechanism),
    Feature("codes", 3.0, _codes),
    Feature("root_element_kind", 2.0, _element_kind),
    Feature("limit", 1.5, _limit),
    Feature("direction", 1.0, _direction),
    Feature("loss", 1.0, _loss),
    Feature("period", 1.0, _period),
    Feature("trunk_split", 1.0, _trunk),
    Feature("mss", 0.5, _mss),
    Feature("rtt", 0.5, _rtt),
    Feature("operator", 0.25, _operator),
    Feature("hour", 0.25, _hour),
)


def case_match(query: Fingerprint, case: Fingerprint, features: Sequence[Feature] = FEATURES) -> CaseMatch:
    """Score ``case`` against ``query``: the weight the features earned over the weight of those that apply."""
    contributions: list[Contribution] = []
    possible = 0.0
    for feature in features:
        outcome = feature.compare(query, case)
        if outcome is None:
            continue
        share, why = outcome
        possible += feature.weight
        contributions.append(Contribution(feature.name, feature.weight * share, feature.weight, why))
    score = sum(c.earned for c in contributions) / possible if possible else 0.0
    return CaseMatch(round(score, 3), contributions)


def cases_rank(
    query: Fingerprint,
    cases: Iterable[tuple[Any, Fingerprint]],
    *,
    threshold: float = SUGGEST_THRESHOLD,
    limit: int = 3,
) -> list[tuple[Any, CaseMatch]]:
    """The cases (``(key, fingerprint)`` pairs) that resemble ``query`` at ``threshold`` or more, best first (ties:
    the later key first, the most recent case), at most ``limit``."""
    scored = [(key, case_match(query, fp)) for key, fp in cases]
    kept = [(key, m) for key, m in scored if m.score >= threshold]
    kept.sort(key=lambda item: (-item[1].score, _desc(item[0])))
    return kept[:limit]


def _desc(key: Any) -> Any:
    return -key if isinstance(key, int | float) else 0
