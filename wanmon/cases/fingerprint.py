"""An incident's fingerprint from its findings (pure: the selector reads the rows, this computes).

The figures come from the evidence the rules store (``evidence["derived"]``: RTT, MSS, loss, window and Mathis
ceilings; ``throughput_bps``; ``period_s`` of PERIODIC_LOSS; a trunk's ``member_utilisation`` and
``host_splits``), taken from the root finding first, then from the members in their order: the figure of the
finding the incident is about, not an average over unrelated paths.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from wanmon.cases.similarity import Fingerprint, limit_regime

__all__ = ["MemberFacts", "fingerprint_build", "path_shape"]


@dataclass(frozen=True)
class MemberFacts:
    """What the fingerprint needs of one finding of the incident."""

    code: str
    role: str
    subject: Mapping[str, Any]
    evidence: Mapping[str, Any]


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _first(members: Sequence[MemberFacts], *keys: str) -> float | None:
    """The first number found under ``keys`` (a path into the evidence) in the members' order."""
    for member in members:
        value: Any = member.evidence
        for key in keys:
            value = value.get(key) if isinstance(value, Mapping) else None
        number = _number(value)
        if number is not None:
            return number
    return None


def _trunk_split(members: Sequence[MemberFacts]) -> float | None:
    """The slower half's rate over the faster one's: a LAG member's utilisation, or the host group's TCP rate."""
    for member in members:
        split = member.evidence.get("member_utilisation")
        if isinstance(split, Mapping) and _number(split.get("ratio")) is not None:
            return float(split["ratio"])
        for row in member.evidence.get("host_splits") or ():
            if isinstance(row, Mapping) and _number(row.get("ratio")) is not None:
                return float(row["ratio"])
    return None


def path_shape(paths: Sequence[str]) -> tuple[str, bool]:
    """(``one-way`` | ``both-ways`` | ``none``, whether every degraded direction ends, or every one starts, at one
    site) of the path directions ``SRC->DST``."""
    pairs = [tuple(p.split("->", 1)) for p in paths if "->" in p]
    if not pairs:
        return "none", False
    directed = set(pairs)
    both = any((dst, src) in directed for src, dst in directed)
    converging = len(pairs) > 1 and (len({d for _, d in pairs}) == 1 or len({s for s, _ in pairs}) == 1)
    return ("both-ways" if both else "one-way"), converging


def fingerprint_build(
    *,
    root_code: str,
    incident_kind: str,
    members: Sequence[MemberFacts],
    elements: Sequence[str],
    paths: Sequence[str],
    root_element: str,
    root_element_kind: str,
    root_operator: str,
    onset: datetime | None,
    end: datetime | None,
) -> Fingerprint:
    """The fingerprint of an incident whose members (root first) are ``members``."""
    ordered = sorted(members, key=lambda m: m.role != "root")
    derived = [MemberFacts(m.code, m.role, m.subject, m.evidence.get("derived") or {}) for m in ordered]
    throughput = _first(ordered, "throughput_bps")
    capacity = _first(derived, "capacity_bps")
    window_rate = _first(derived, "window_limited_rate_bps")
    mathis = _first(derived, "mathis_ceiling_bps")
    direction, converging = path_shape(paths)
    duration = (end - onset).total_seconds() if onset and end and end >= onset else None
    return Fingerprint(
        root_code=root_code,
        codes=tuple(sorted({m.code for m in members})),
        incident_kind=incident_kind,
        root_element=root_element,
        root_element_kind=root_element_kind,
        root_operator=root_operator,
        elements=tuple(elements),
        paths=tuple(sorted(paths)),
        direction=direction,
        converging=converging,
        loss_fraction=_first(derived, "loss_fraction"),
        period_s=_first(ordered, "period_s"),
        rtt_ms=_first(derived, "rtt_ms"),
        mss_bytes=_first(derived, "mss_bytes"),
        throughput_bps=throughput,
        capacity_bps=capacity,
        window_limited_rate_bps=window_rate,
        mathis_ceiling_bps=mathis,
        limit=limit_regime(
            throughput_bps=throughput,
            capacity_bps=capacity,
            window_limited_rate_bps=window_rate,
            mathis_ceiling_bps=mathis,
        ),
        trunk_split=_trunk_split(ordered),
        hour_utc=onset.hour if onset else None,
        duration_s=duration,
    )
