"""Wording of TRUNK_IMBALANCE: broken load sharing on a bundle, and a member out of its bundle."""

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


def _of(part_bps: float, whole_bps: float) -> str:
    """'10 of 20 Gb/s', '500 Mb/s of 2 Gb/s', 'nothing of 20 Gb/s'."""
    part, whole = text.rate(part_bps), text.rate(whole_bps)
    if not part_bps:
        return f"nothing of {whole}"
    if part.split()[-1] == whole.split()[-1]:
        return f"{part.rsplit(' ', 1)[0]} of {whole}"
    return f"{part} of {whole}"


def member_down(f: Mapping[str, Any]) -> tuple[str, str, list[str]]:
    """TRUNK_IMBALANCE about one member out of its bundle. Facts: ``trunk``, ``member`` (equipment:interface),
    ``equipment``, ``interface``, ``start``, ``end`` (None: still out), ``source`` ('oper_status' or 'idle'),
    ``capacity_bps`` and ``capacity_left_bps`` (the bundle at the member's end), ``members_left``, ``load_bps``
    (the most the members left carried since, per half hour), ``offered_bps`` (the bundle's load in the half hour
    before), ``overloaded``, ``degraded_paths``, ``work`` (announced work it outlasted: reference and end)."""
    trunk, member = f["trunk"], f["member"]
    state = "down" if f["source"] == "oper_status" else "out of the bundle"
    when = f"since {f['start']:%H:%M}" if f["end"] is None else f"from {f['start']:%H:%M} to {f['end']:%H:%M}"
    left = _of(f["capacity_left_bps"], f["capacity_bps"])
    summary = f"{trunk}: member {member} {state} {when}, {left} left"
    if f["source"] == "oper_status":
        seen = f"the agent reports {member} oper-down {when} UTC"
    else:
        seen = (
            f"{member} carries nothing either way {when} UTC while its siblings carry the load (its agent reports "
            "no oper status)"
        )
    parts = [
        f"On the bundle {trunk}, {seen}. A bundle hashes every flow over the members left, so this is not a "
        f"hashing fault: {', '.join(f['members_left']) or 'no member'} now carr"
        f"{'ies' if len(f['members_left']) == 1 else 'y'} the bundle, {left} at {f['equipment']}"
    ]
    load = f"the members left carried up to {text.rate(f['load_bps'])} (the busiest half hour) since"
    if f["offered_bps"]:
        load += f", the bundle {text.rate(f['offered_bps'])} in the half hour before"
    if f["overloaded"]:
        parts.append(f"{load}: the traffic no longer fits in what is left")
    else:
        parts.append(f"{load}, which still fits, but the bundle has lost its redundancy")
    if f["degraded_paths"]:
        parts.append(f"paths across the bundle degraded meanwhile: {', '.join(f['degraded_paths'])}")
    if f["work"]:
        parts.append(
            f"announced work {f['work']['reference']} ended at {f['work']['end']:%H:%M} UTC and the member is still out"
        )
    explanation = "; ".join(parts) + "."
    actions = [
        f"Check {member} on {f['equipment']} and at the far end of its link: oper and LACP state, optical "
        "levels, errors; ask the link's operator.",
        f"Until it is back, keep large transfers across {trunk} within {text.rate(f['capacity_left_bps'])}.",
    ]
    return summary, explanation, actions


def trunk_imbalance(f: Mapping[str, Any]) -> tuple[str, str, list[str]]:
    """TRUNK_IMBALANCE. Facts: ``member_down`` (a member out of its bundle: see ``member_down``), or ``trunk``,
    ``members`` (names), ``member_utilisation`` (the member imbalance of the evidence, None when the members are
    balanced), ``host_splits`` (the evidence's), ``hurt`` (a path across the bundle suffered meanwhile)."""
    if f.get("member_down"):
        return member_down(f["member_down"])
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
