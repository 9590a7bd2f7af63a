"""TRUNK_IMBALANCE: broken load sharing on a bundled link (LAG)."""

from __future__ import annotations

import ipaddress
import re
import statistics
from collections import defaultdict

from wanmon.diagnosis import codes, text
from wanmon.diagnosis import constants as k
from wanmon.diagnosis.analysis import PathAssessment
from wanmon.diagnosis.context import RuleContext
from wanmon.diagnosis.evidence import EvidenceBundle, Finding, PathEvidence, TrunkEvidence
from wanmon.diagnosis.rules.interfaces import valid_rows

_TRAILING_DIGITS = re.compile(r"(\d+)$")


def address_parity(address: str | None) -> int | None:
    """1 for an odd last address octet (last bit of an IPv6 address), 0 for even; host names by trailing digits."""
    if not address:
        return None
    try:
        return int(ipaddress.ip_address(address)) & 1
    except ValueError:
        m = _TRAILING_DIGITS.search(address)
        return int(m.group(1)) & 1 if m else None


def trunk_association(bundle: EvidenceBundle, path: PathEvidence, trunk: TrunkEvidence) -> str | None:
    """'exact' when the trunk or a member is a hop, 'equipment' when only a member's equipment is."""
    hops = set(path.hops)
    if trunk.name in hops or any(m.name in hops for m in trunk.members):
        return "exact"
    if any(m.equipment in hops for m in trunk.members):
        return "equipment"
    return None


def member_imbalance(ctx: RuleContext, trunk: TrunkEvidence) -> dict | None:
    """Mean utilisation per member and direction; imbalanced when the least busy is below half the busiest."""
    per_dir: dict[str, dict[str, float]] = {"in": {}, "out": {}}
    for m in trunk.members:
        if not m.speed_bps:
            return None
        rows = valid_rows(ctx, m)
        for d, attr in (("in", "in_bps"), ("out", "out_bps")):
            vals = [getattr(r, attr) for r in rows if getattr(r, attr) is not None]
            if vals:
                per_dir[d][m.name] = statistics.fmean(vals) / m.speed_bps
    best = None
    for d, utils in per_dir.items():
        if len(utils) < 2 or len(utils) < len(trunk.members):
            continue
        busiest = max(utils.values())
        least = min(utils.values())
        if busiest >= k.TRUNK_MIN_BUSY_UTILISATION and least < k.TRUNK_MAX_MEMBER_RATIO * busiest:
            ratio = least / busiest
            if best is None or ratio < best["ratio"]:
                best = {"direction": d, "utilisation": utils, "ratio": ratio, "busiest": busiest, "least": least}
    return best


def host_bimodality(ctx: RuleContext, a: PathAssessment) -> dict | None:
    """TCP results split by odd/even host address: slower group median below half the faster one."""
    for field in ("dst_host", "src_host"):
        groups: dict[int, list[float]] = defaultdict(list)
        hosts: dict[int, set[str]] = defaultdict(set)
        for f in a.tcp:
            addr = getattr(f.test, field)
            parity = address_parity(addr)
            if parity is None or not f.test.throughput_bps:
                continue
            groups[parity].append(f.test.throughput_bps)
            hosts[parity].add(addr)
        if len(groups) < 2 or min(len(v) for v in groups.values()) < k.BIMODAL_MIN_TESTS_PER_GROUP:
            continue
        med = {p: statistics.median(v) for p, v in groups.items()}
        slow, fast = sorted(med, key=med.get)
        if med[slow] > k.BIMODAL_MAX_RATIO * med[fast]:
            continue
        cut = (med[slow] * med[fast]) ** 0.5
        below = sum(1 for v in groups[slow] if v < cut) / len(groups[slow])
        above = sum(1 for v in groups[fast] if v >= cut) / len(groups[fast])
        if below < 0.8 or above < 0.8:
            continue
        spread = statistics.pstdev(groups[slow]) / med[slow] if med[slow] else None
        return {
            "path": a.key,
            "address_field": field,
            "slow_parity": "odd" if slow else "even",
            "slow_median_bps": med[slow],
            "fast_median_bps": med[fast],
            "ratio": med[slow] / med[fast],
            "slow_hosts": sorted(hosts[slow]),
            "fast_hosts": sorted(hosts[fast]),
            "slow_tests": len(groups[slow]),
            "fast_tests": len(groups[fast]),
            "slow_variation": spread,
            "times": [f.test.time for f in a.tcp],
        }
    return None


def trunk_imbalance(ctx: RuleContext) -> list[Finding]:
    """TRUNK_IMBALANCE on a bundle whose load sharing is broken.

    Evidence: (a) SNMP rates of the trunk's member interfaces; (b) TCP tests on
    paths crossing the trunk, grouped by the last bit of the host address.

    Criterion: (a) over the window the busiest member carries at least
    TRUNK_MIN_BUSY_UTILISATION of its speed and the least busy less than
    TRUNK_MAX_MEMBER_RATIO of the busiest; or (b) with at least
    BIMODAL_MIN_TESTS_PER_GROUP tests per group, the median of the slower
    (odd or even) group is below BIMODAL_MAX_RATIO of the faster one and 80 % of
    each group lies on its side of their geometric mean.

    Why: a LAG hashes each flow onto one member by addresses/ports.  A faulty
    member, or hashing that sends one half of the addresses over a bad member,
    shows as members with very different loads, or as TCP to odd addresses
    being slow and unstable while even ones are normal (RAL, LHC Service
    Challenge 2); UDP often looks fine because it does not react to loss.
    """
    out: list[Finding] = []
    for trunk in ctx.bundle.trunks:
        members = member_imbalance(ctx, trunk)
        splits = []
        for p in ctx.bundle.paths:
            if trunk_association(ctx.bundle, p, trunk):
                split = host_bimodality(ctx, ctx.assessment(p))
                if split:
                    splits.append(split)
        if not members and not splits:
            continue
        parts = []
        evidence: dict = {"members": [m.name for m in trunk.members]}
        times = []
        if members:
            utils = ", ".join(f"{name} {text.pct(u)}" for name, u in sorted(members["utilisation"].items()))
            parts.append(
                f"member utilisation ({members['direction']}) differs strongly: {utils} -- the least busy carries "
                f"{text.pct(members['ratio'])} of the busiest"
            )
            evidence["member_utilisation"] = members
            rows = [r.time for m in trunk.members for r in valid_rows(ctx, m)]
            times += rows
        for s in splits:
            parts.append(
                f"TCP on {s['path']} splits by host address: {s['slow_parity']} hosts "
                f"({', '.join(s['slow_hosts'])}) reach {text.rate(s['slow_median_bps'])}, the others "
                f"({', '.join(s['fast_hosts'])}) {text.rate(s['fast_median_bps'])} "
                f"({text.pct(s['ratio'])})"
                + (f", and the slow group varies by {text.pct(s['slow_variation'])}" if s["slow_variation"] else "")
            )
            times += s["times"]
        evidence["host_splits"] = splits
        start, end = (min(times), max(times)) if times else (ctx.now, ctx.now)
        summary = f"{trunk.name}: " + "; ".join(
            (["members unevenly loaded"] if members else [])
            + [f"{s['slow_parity']} hosts slow on {s['path']} ({text.pct(s['ratio'])})" for s in splits]
        )
        out.append(
            Finding(
                code=codes.TRUNK_IMBALANCE,
                severity=codes.WARNING,
                subject={"trunk": trunk.name},
                start=start,
                end=end,
                summary=summary,
                explanation=(
                    f"On the bundle {trunk.name} ({', '.join(m.name for m in trunk.members)}): "
                    + "; ".join(parts)
                    + ". A link aggregation hashes each flow onto one member by its addresses and ports; a bad member "
                    "or broken hashing hurts exactly the flows hashed onto it -- here one half of the host "
                    "addresses -- while UDP tests, which do not back off on loss, can look clean."
                ),
                evidence=evidence,
                actions=(
                    f"Check every member of {trunk.name}: errors, optical levels, speed/duplex and per-member "
                    "counters; take the suspect member out of the bundle to confirm.",
                    "Check the LAG hashing policy (layer 3+4 hashing) on both ends of the bundle.",
                ),
            )
        )
    return out
