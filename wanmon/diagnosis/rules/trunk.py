"""TRUNK_IMBALANCE: broken load sharing on a bundled link (LAG)."""

from __future__ import annotations

import bisect
import ipaddress
import re
import statistics
from collections import defaultdict
from datetime import timedelta

from wanmon.diagnosis import codes
from wanmon.diagnosis import constants as k
from wanmon.diagnosis.assessment import PathAssessment
from wanmon.diagnosis.context import RuleContext, finding
from wanmon.diagnosis.evidence import (
    EvidenceBundle,
    InterfaceEvidence,
    InterfaceRate,
    PathEvidence,
    RuleFinding,
    TrunkEvidence,
)
from wanmon.diagnosis.rules.interfaces import valid_rows
from wanmon.diagnosis.rules.outage import DOWN_STATUSES

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


def _under_work(ctx: RuleContext, trunk: TrunkEvidence, member: InterfaceEvidence) -> list[tuple]:
    """(start, end) of the maintenance windows naming the member, its bundle or its equipment."""
    names = {member.name, trunk.name, member.equipment}
    return [(w.start, w.end) for w in ctx.bundle.maintenance if names & set(w.affects)]


def in_service_rows(
    ctx: RuleContext, member: InterfaceEvidence, trunk: TrunkEvidence | None = None
) -> list[InterfaceRate]:
    """Valid rate rows of a member that was in service over the whole polling interval.

    A member shut for work or failed is out of the bundle: LACP hashes every flow over the members left, so it
    carries nothing by design and its zero says nothing about load sharing.  An interval is out of service
    when the poll that ends it or the poll that opened it saw the member down, or when it overlaps announced
    work on the member (or its bundle or device): a member can be drained for work -- costed out of the
    bundle -- while its port stays up, whatever traffic impact the carrier announced.
    """
    status = {s.time: s.oper_status.lower() for s in member.status if s.oper_status}
    for r in member.rates:
        if r.oper_status:
            status.setdefault(r.time, r.oper_status.lower())
    times = sorted(status)
    work = _under_work(ctx, trunk, member) if trunk is not None else []
    out = []
    for r in valid_rows(ctx, member):
        if status.get(r.time) in DOWN_STATUSES:
            continue
        opened = r.time - timedelta(seconds=r.interval_s) if r.interval_s else None
        i = bisect.bisect_left(times, r.time)
        before = times[i - 1] if i > 0 else None
        if before is not None and (opened is None or before >= opened - timedelta(seconds=1)):
            if status[before] in DOWN_STATUSES:
                continue
        if any((opened or r.time) < end and r.time > start for start, end in work):
            continue
        out.append(r)
    return out


def _imbalance_of(trunk: TrunkEvidence, rows_of: dict[str, list]) -> dict | None:
    """Mean utilisation per member and direction over the given rows; imbalanced when the least busy member
    carries less than TRUNK_MAX_MEMBER_RATIO of the busiest, which carries at least TRUNK_MIN_BUSY_UTILISATION.

    Members are compared within one end of the bundle (one piece of equipment) and one direction: the two
    ends of a LAG see the same traffic in opposite directions, so one end's "in" is the other's "out", and
    comparing across ends would call any asymmetric load (a big transfer one way) an imbalance. Only
    members with rows (in service) take part; at least two per end are needed to compare.
    """
    per_end: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    for m in trunk.members:
        rows = rows_of.get(m.name, [])
        for d, attr in (("in", "in_bps"), ("out", "out_bps")):
            vals = [getattr(r, attr) for r in rows if getattr(r, attr) is not None]
            if vals:
                per_end[(m.equipment, d)][m.name] = statistics.fmean(vals) / m.speed_bps
    best = None
    for (equipment, d), utils in per_end.items():
        if len(utils) < 2:
            continue
        busiest = max(utils.values())
        least = min(utils.values())
        if busiest >= k.TRUNK_MIN_BUSY_UTILISATION and least < k.TRUNK_MAX_MEMBER_RATIO * busiest:
            ratio = least / busiest
            if best is None or ratio < best["ratio"]:
                best = {
                    "equipment": equipment,
                    "direction": d,
                    "utilisation": utils,
                    "ratio": ratio,
                    "busiest": busiest,
                    "least": least,
                }
    return best


def member_imbalance(ctx: RuleContext, trunk: TrunkEvidence) -> dict | None:
    """Member utilisation imbalance over the window, else over the longest sustained run of imbalanced bins.

    Only the intervals in which a member was in service and not under announced work count
    (``in_service_rows``).  The window average is checked first.  A hashing fault that started inside the
    window is diluted by the balanced time before it, so the window is also cut into TRUNK_BIN_S bins;
    consecutive imbalanced bins covering at least TRUNK_MIN_IMBALANCED_S are judged together (the longest
    such run).
    """
    if not trunk.members or any(not m.speed_bps for m in trunk.members):
        return None
    rows_of = {m.name: in_service_rows(ctx, m, trunk) for m in trunk.members}
    times = [r.time for rows in rows_of.values() for r in rows]
    if not times:
        return None
    start, end = min(times), max(times)
    whole = _imbalance_of(trunk, rows_of)
    if whole:
        return {**whole, "start": start, "end": end}
    n_bins = int((end - start).total_seconds() // k.TRUNK_BIN_S) + 1
    bins: list[dict[str, list]] = [{m.name: [] for m in trunk.members} for _ in range(n_bins)]
    for name, rows in rows_of.items():
        for r in rows:
            bins[int((r.time - start).total_seconds() // k.TRUNK_BIN_S)][name].append(r)
    flags = [_imbalance_of(trunk, b) is not None for b in bins]
    best_run: tuple[int, int] | None = None
    i = 0
    while i < n_bins:
        if not flags[i]:
            i += 1
            continue
        j = i
        while j + 1 < n_bins and flags[j + 1]:
            j += 1
        if best_run is None or j - i > best_run[1] - best_run[0]:
            best_run = (i, j)
        i = j + 1
    if best_run is None:
        return None
    run_rows = {m.name: [r for b in bins[best_run[0] : best_run[1] + 1] for r in b[m.name]] for m in trunk.members}
    run_times = [r.time for rows in run_rows.values() for r in rows]
    run_start, run_end = min(run_times), max(run_times)
    if (run_end - run_start).total_seconds() + k.TRUNK_BIN_S / 2 < k.TRUNK_MIN_IMBALANCED_S:
        return None
    found = _imbalance_of(trunk, run_rows)
    return {**found, "start": run_start, "end": run_end} if found else None


def host_bimodality(ctx: RuleContext, a: PathAssessment) -> dict | None:
    """TCP results split by odd/even host address: slower group median below half the faster one.

    Judged over all TCP tests of the window, else over the tests since the path started to degrade (its first
    episode): tests to the odd hosts from before a hashing fault began are fast and would blur the split.
    """
    found = _bimodality(a.tcp)
    if found is None and a.episodes:
        onset = min(ep.start for ep in a.episodes)
        found = _bimodality([f for f in a.tcp if f.test.time >= onset])
    return {"path": a.key, **found} if found else None


def _bimodality(tests) -> dict | None:
    for field in ("dst_host", "src_host"):
        groups: dict[int, list[float]] = defaultdict(list)
        hosts: dict[int, set[str]] = defaultdict(set)
        for f in tests:
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
            "times": [f.test.time for f in tests],
        }
    return None


def trunk_imbalance(ctx: RuleContext) -> list[RuleFinding]:
    """TRUNK_IMBALANCE on a bundle whose load sharing is broken.

    Evidence: (a) SNMP rates of the trunk's member interfaces; (b) TCP tests on
    paths crossing the trunk, grouped by the last bit of the host address.

    Criterion: (a) over the window (or a sustained run of TRUNK_BIN_S bins) the
    busiest member carries at least TRUNK_MIN_BUSY_UTILISATION of its speed and
    the least busy less than TRUNK_MAX_MEMBER_RATIO of the busiest, counting only
    members in service (oper up, no announced work on them): a member shut or
    drained for work, or failed, is out of the bundle and carries nothing by
    design; or (b) with at least
    BIMODAL_MIN_TESTS_PER_GROUP tests per group, the median of the slower
    (odd or even) group is below BIMODAL_MAX_RATIO of the faster one and 80 % of
    each group lies on its side of their geometric mean.

    Why: a LAG hashes each flow onto one member by addresses/ports.  A faulty
    member, or hashing that sends one half of the addresses over a bad member,
    shows as members with very different loads, or as TCP to odd addresses
    being slow and unstable while even ones are normal (RAL, LHC Service
    Challenge 2); UDP often looks fine because it does not react to loss.
    Uneven member loads with no host split, no error or congestion finding on a
    member, and no path across the bundle degraded or losing significantly
    meanwhile are info only: one elephant flow looks the same.
    """
    out: list[RuleFinding] = []
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
        evidence: dict = {"members": [m.name for m in trunk.members]}
        times = []
        if members:
            evidence["member_utilisation"] = members
            times += [members["start"], members["end"]]
        for s in splits:
            times += s["times"]
        evidence["host_splits"] = splits
        start, end = (min(times), max(times)) if times else (ctx.now, ctx.now)
        # uneven member loads alone, with no path across the bundle hurt meanwhile, are what one elephant flow
        # does (a flow is hashed onto one member and cannot use two): worth showing, not a fault
        across = [ctx.assessment(p) for p in ctx.bundle.paths if trunk_association(ctx.bundle, p, trunk)]
        member_names = {m.name for m in trunk.members}
        faulty_member = any(
            f.code in (codes.INTERFACE_ERRORS, codes.LINK_CONGESTION)
            and f"{f.subject.get('equipment')}:{f.subject.get('interface')}" in member_names
            for f in ctx.findings
        )
        hurt = (
            splits
            or faulty_member
            or any(
                any(ep.overlaps(start, end, k.CORRELATION_SLACK_S) for ep in a.episodes)
                or (a.loss.fraction and a.loss_is_significant(a.loss.fraction))
                for a in across
            )
        )
        out.append(
            finding(
                codes.TRUNK_IMBALANCE,
                severity=codes.WARNING if hurt else codes.INFO,
                subject={"trunk": trunk.name},
                start=start,
                end=end,
                facts={
                    "trunk": trunk.name,
                    "members": [m.name for m in trunk.members],
                    "member_utilisation": members or None,
                    "host_splits": splits,
                    "hurt": bool(hurt),
                },
                evidence=evidence,
            )
        )
    return out
