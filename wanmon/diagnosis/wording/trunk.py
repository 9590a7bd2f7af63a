"""Wording of TRUNK_IMBALANCE."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wanmon.diagnosis import text


def _split(s: Mapping[str, Any]) -> str:
    return (
        f"TCP on {s['path']} splits by host address: {s['slow_parity']} hosts "
        f"({', '.join(s['slow_hosts'])}) reach {text.rate(s['slow_median_bps'])}, the others "
        f"({', '.join(s['fast_hosts'])}) {text.rate(s['fast_median_bps'])} "
        f"({text.pct(s['ratio'])})"
        + (f", and the slow group varies by {text.pct(s['slow_variation'])}" if s["slow_variation"] else "")
    )


def trunk_imbalance(f: Mapping[str, Any]) -> tuple[str, str, list[str]]:
    """TRUNK_IMBALANCE. Facts: ``trunk``, ``members`` (names), ``member_utilisation`` (the member imbalance of
    the evidence, None when the members are balanced), ``host_splits`` (the evidence's), ``hurt`` (a path across
    the bundle suffered meanwhile)."""
    trunk, members, splits = f["trunk"], f["member_utilisation"], f["host_splits"]
    parts = []
    if members:
        utils = ", ".join(f"{name} {text.pct(u)}" for name, u in sorted(members["utilisation"].items()))
        parts.append(
            f"member utilisation on {members['equipment']} ({members['direction']}) differs strongly from "
            f"{members['start']:%H:%M} to {members['end']:%H:%M} UTC: {utils} -- the least busy carries "
            f"{text.pct(members['ratio'])} of the busiest"
        )
    parts += [_split(s) for s in splits]
    if not f["hurt"]:
        parts.append(
            "no path across the bundle is degraded meanwhile, so this may be one large flow, which a bundle "
            "carries on a single member by design"
        )
    summary = f"{trunk}: " + "; ".join(
        (["members unevenly loaded"] if members else [])
        + [f"{s['slow_parity']} hosts slow on {s['path']} ({text.pct(s['ratio'])})" for s in splits]
    )
    explanation = (
        f"On the bundle {trunk} ({', '.join(f['members'])}): "
        + "; ".join(parts)
        + ". A link aggregation hashes each flow onto one member by its addresses and ports; a bad member "
        "or broken hashing hurts exactly the flows hashed onto it -- here one half of the host "
        "addresses -- while UDP tests, which do not back off on loss, can look clean."
    )
    actions = [
        f"Check every member of {trunk}: errors, optical levels, speed/duplex and per-member "
        "counters; take the suspect member out of the bundle to confirm.",
        "Check the LAG hashing policy (layer 3+4 hashing) on both ends of the bundle.",
    ]
    return summary, explanation, actions
