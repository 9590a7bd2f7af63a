"""TRUNK_IMBALANCE: broken load sharing on a bundled link (LAG)."""

from __future__ import annotations

import bisect
import ipaddress
import math
import re
import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta

from wanmon.diagnosis import codes
from wanmon.diagnosis import constants as k
from wanmon.diagnosis.assessment import PathAssessment
from wanmon.diagnosis.context import RuleContext, finding
from wanmon.diagnosis.episodes import consecutive_runs
from wanmon.diagnosis.evidence import (
    EvidenceBundle,
    InterfaceEvidence,
    InterfaceRate,
    MaintenanceEvidence,
    PathEvidence,
    RuleFinding,
    TrunkEvidence,
)
from wanmon.diagnosis.rules.interfaces import valid_rows
from wanmon.diagnosis.rules.maintenance import covers, overlaps
from wanmon.diagnosis.rules.outage import DOWN_STATUSES, down_spans, status_samples

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


Span = tuple[datetime, datetime]


def _under_work(ctx: RuleContext, trunk: TrunkEvidence, member: InterfaceEvidence) -> list[MaintenanceEvidence]:
    """The maintenance windows naming the member, its bundle or its equipment."""
    names = {member.name, trunk.name, member.equipment}
    return [w for w in ctx.bundle.maintenance if names & set(w.affects)]


def in_service_rows(
    ctx: RuleContext,
    member: InterfaceEvidence,
    trunk: TrunkEvidence | None = None,
    out_of_service: Sequence[Span] = (),
) -> list[InterfaceRate]:
    """Valid rate rows of a member that was in service over the whole polling interval.

    A member shut for work or failed is out of the bundle: LACP hashes every flow over the members left, so it
    carries nothing by design and its zero says nothing about load sharing.  An interval is out of service
    when the poll that ends it or the poll that opened it saw the member down, when it overlaps announced
    work on the member (or its bundle or device): a member can be drained for work -- costed out of the
    bundle -- while its port stays up, whatever traffic impact the carrier announced --, or when it overlaps
    one of the spans in ``out_of_service`` (a member found out of the bundle by its idle counters).
    """
    status = {s.time: s.oper_status.lower() for s in member.status if s.oper_status}
    for r in member.rates:
        if r.oper_status:
            status.setdefault(r.time, r.oper_status.lower())
    times = sorted(status)
    work = [(w.start, w.end) for w in _under_work(ctx, trunk, member)] if trunk is not None else []
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
        if any((opened or r.time) < end and r.time > start for start, end in [*work, *out_of_service]):
            continue
        out.append(r)
    return out


# --------------------------------------------------------------------------- comparing members over one period


def _row_spans(rows: Sequence[InterfaceRate]) -> list[tuple[datetime, datetime, InterfaceRate]]:
    """Each rate row with the interval it averages, (time - interval_s, time]; a row of unknown interval covers the
    time since the member's previous row (the first such row covers nothing: its period is unknown)."""
    out = []
    previous: datetime | None = None
    for r in rows:
        begin = r.time - timedelta(seconds=r.interval_s) if r.interval_s else previous
        if begin is not None and begin < r.time:
            out.append((begin, r.time, r))
        previous = r.time
    return out


def _merge(spans: Sequence[Span]) -> list[Span]:
    out: list[list[datetime]] = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def _intersect(a: Sequence[Span], b: Sequence[Span]) -> list[Span]:
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        s, e = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if s < e:
            out.append((s, e))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def _seconds(spans: Sequence[Span]) -> float:
    return sum((e - s).total_seconds() for s, e in spans)


def _mean_over(spans: Sequence[tuple[datetime, datetime, InterfaceRate]], period: Sequence[Span], attr: str):
    """Time-weighted mean of a rate over ``period``: each row counts for the part of its interval inside it."""
    total = weight = 0.0
    for s, e, r in spans:
        value = getattr(r, attr)
        if value is None:
            continue
        for ps, pe in period:
            overlap = (min(e, pe) - max(s, ps)).total_seconds()
            if overlap > 0:
                total += value * overlap
                weight += overlap
    return total / weight if weight else None


def _clip(spans, start: datetime | None, end: datetime | None):
    if start is None or end is None:
        return spans
    return [x for x in spans if x[1] > start and x[0] < end]


def _imbalance_of(
    trunk: TrunkEvidence,
    spans_of: Mapping[str, Sequence[tuple[datetime, datetime, InterfaceRate]]],
    start: datetime | None = None,
    end: datetime | None = None,
) -> dict | None:
    """Mean utilisation per member and direction over the same intervals; imbalanced when the least busy member
    carries less than TRUNK_MAX_MEMBER_RATIO of the busiest, which carries at least TRUNK_MIN_BUSY_UTILISATION.

    Members are compared within one end of the bundle (one piece of equipment) and one direction: the two
    ends of a LAG see the same traffic in opposite directions, so one end's "in" is the other's "out", and
    comparing across ends would call any asymmetric load (a big transfer one way) an imbalance.  Only
    members with rows (in service) take part; at least two per end are needed to compare.  And they are
    compared over one period, the intervals that every compared member was in service and polled in (within
    [start, end] when given): a member's average over the minutes before it failed is not comparable with its
    sibling's over the hours after, when the sibling carried the whole bundle -- nor is a 1-minute poll with a
    5-minute bucket of a ramping load.
    """
    per_end: dict[tuple[str, str], dict[str, list]] = defaultdict(dict)
    speed = {m.name: m.speed_bps for m in trunk.members}
    for m in trunk.members:
        spans = _clip(spans_of.get(m.name, []), start, end)
        for d, attr in (("in", "in_bps"), ("out", "out_bps")):
            mine = [x for x in spans if getattr(x[2], attr) is not None]
            if mine:
                per_end[(m.equipment, d)][m.name] = mine
    best = None
    for (equipment, d), members in per_end.items():
        cover = {}
        for name, spans in members.items():
            covered = _merge([(s, e) for s, e, _ in spans])
            cover[name] = _intersect(covered, [(start, end)]) if start is not None and end is not None else covered
        most = max(_seconds(c) for c in cover.values())
        taking = [n for n, c in cover.items() if most and _seconds(c) >= k.TRUNK_MIN_COVERAGE_SHARE * most]
        if len(taking) < 2:
            continue
        common = cover[taking[0]]
        for name in taking[1:]:
            common = _intersect(common, cover[name])
        if _seconds(common) < k.TRUNK_MIN_COMMON_S:
            continue
        attr = f"{d}_bps"
        utils = {n: _mean_over(members[n], common, attr) / speed[n] for n in taking}
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
                    "start": common[0][0],
                    "end": common[-1][1],
                    "compared_s": _seconds(common),
                }
    return best


def member_imbalance(
    ctx: RuleContext, trunk: TrunkEvidence, out_of_service: Mapping[str, Sequence[Span]] | None = None
) -> dict | None:
    """Member utilisation imbalance over the window, else over the longest sustained run of imbalanced bins.

    Only the intervals in which a member was in service and not under announced work count
    (``in_service_rows``; ``out_of_service`` adds the spans a member was found out of the bundle otherwise),
    and members are compared over the same intervals (``_imbalance_of``).  The window is checked first.  A
    hashing fault that started inside the window is diluted by the balanced time before it, so the window is
    also cut into TRUNK_BIN_S bins; consecutive imbalanced bins covering at least TRUNK_MIN_IMBALANCED_S are
    judged together (the longest such run).
    """
    if not trunk.members or any(not m.speed_bps for m in trunk.members):
        return None
    out_of_service = out_of_service or {}
    spans_of = {
        m.name: _row_spans(in_service_rows(ctx, m, trunk, out_of_service.get(m.name, ()))) for m in trunk.members
    }
    edges = [t for spans in spans_of.values() for s, e, _ in spans for t in (s, e)]
    if not edges:
        return None
    start, end = min(edges), max(edges)
    whole = _imbalance_of(trunk, spans_of)
    if whole:
        return whole
    bin_ = timedelta(seconds=k.TRUNK_BIN_S)
    n_bins = int((end - start) / bin_) + 1
    flags = [
        _imbalance_of(trunk, spans_of, start + i * bin_, start + (i + 1) * bin_) is not None for i in range(n_bins)
    ]
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
    found = _imbalance_of(trunk, spans_of, start + best_run[0] * bin_, start + (best_run[1] + 1) * bin_)
    if found is None or (found["end"] - found["start"]).total_seconds() + k.TRUNK_BIN_S / 2 < k.TRUNK_MIN_IMBALANCED_S:
        return None
    return found


# --------------------------------------------------------------------------- a member out of the bundle


def _status_outages(member: InterfaceEvidence) -> list[dict]:
    """Spans a member's agent saw it down in at least INTERFACE_DOWN_MIN_SAMPLES consecutive polls: from the first
    down sample to the first sample up again (None: still down at its last poll)."""
    samples = status_samples(member)
    out = []
    for first, last, n in down_spans(samples):
        if n < k.INTERFACE_DOWN_MIN_SAMPLES:
            continue
        back = next((t for t, status in samples if t > last and status not in DOWN_STATUSES), None)
        out.append({"start": first, "end": back, "samples": n, "source": "oper_status"})
    return out


def _idle_outages(ctx: RuleContext, trunk: TrunkEvidence, member: InterfaceEvidence) -> list[dict]:
    """For a member whose agent reports no oper status: runs of at least INTERFACE_DOWN_MIN_SAMPLES consecutive polls
    carrying nothing either way (below TRUNK_IDLE_MEMBER_UTILISATION of its speed) while a sibling at its end
    carries at least TRUNK_IDLE_SIBLING_UTILISATION: the member is out of the bundle (LACP left it, or it is dark)."""
    if not member.speed_bps or status_samples(member):
        return []
    limit = k.TRUNK_IDLE_MEMBER_UTILISATION * member.speed_bps
    spans = _row_spans(valid_rows(ctx, member))
    siblings = [
        (m.speed_bps or math.inf, _row_spans(valid_rows(ctx, m)))
        for m in trunk.members
        if m.equipment == member.equipment and m is not member
    ]
    out = []
    for run in consecutive_runs(spans, lambda x: (x[2].in_bps or 0.0) < limit and (x[2].out_bps or 0.0) < limit):
        if len(run) < k.INTERFACE_DOWN_MIN_SAMPLES or not siblings:
            continue
        period = [(run[0][0], run[-1][1])]
        carried = max(
            (_mean_over(sib, period, attr) or 0.0) / speed for speed, sib in siblings for attr in ("in_bps", "out_bps")
        )
        if carried < k.TRUNK_IDLE_SIBLING_UTILISATION:
            continue
        after = next((x for x in spans if x[1] > run[-1][1]), None)
        out.append({"start": run[0][0], "end": after[1] if after else None, "samples": len(run), "source": "idle"})
    return out


def member_outages(ctx: RuleContext, trunk: TrunkEvidence) -> dict[str, list[dict]]:
    """The spans each member of the bundle was out of it: oper status down, or, when its agent reports no status,
    idle counters while a sibling carries the load (``_status_outages``, ``_idle_outages``)."""
    return {m.name: _status_outages(m) or _idle_outages(ctx, trunk, m) for m in trunk.members}


def _load_bps(ctx: RuleContext, members: Sequence[InterfaceEvidence], start: datetime, end: datetime) -> float:
    """The busiest direction of what these members carried together over [start, end], per TRUNK_BIN_S bin at most
    (a peak of the day is not averaged away by the night)."""
    spans = [_row_spans(valid_rows(ctx, m)) for m in members]
    bin_ = timedelta(seconds=k.TRUNK_BIN_S)
    best = 0.0
    t = start
    while t < end:
        period = [(t, min(end, t + bin_))]
        for attr in ("in_bps", "out_bps"):
            best = max(best, sum(_mean_over(x, period, attr) or 0.0 for x in spans))
        t += bin_
    return best


def _member_down_finding(
    ctx: RuleContext, trunk: TrunkEvidence, member: InterfaceEvidence, outage: dict, outages: Mapping[str, list[dict]]
) -> RuleFinding | None:
    """TRUNK_IMBALANCE about one member out of its bundle: what is left of the bundle at the member's end and
    whether the traffic still fits (see ``trunk_imbalance``); None when announced work on the member, its bundle
    or its device covers the outage (shut or drained by design)."""
    start, end = outage["start"], outage["end"]
    until = end or ctx.now
    work = _under_work(ctx, trunk, member)
    if any(covers(w, start, until) for w in work):
        return None
    overran = next((w for w in work if overlaps(w, start, until)), None)
    end_members = [m for m in trunk.members if m.equipment == member.equipment]

    def out_at(m: InterfaceEvidence, t: datetime) -> bool:
        return any(o["start"] <= t <= (o["end"] or ctx.now) for o in outages.get(m.name, ()))

    moment = until if end is None else max(start, end - timedelta(seconds=1))
    left = [m for m in end_members if not out_at(m, moment)]
    capacity_bps = sum(m.speed_bps or 0.0 for m in end_members)
    left_bps = sum(m.speed_bps or 0.0 for m in left)
    load_bps = _load_bps(ctx, left, start, until) if left else 0.0
    before = start - timedelta(seconds=k.TRUNK_BIN_S)
    opened = ctx.bundle.window_start
    offered_bps = _load_bps(ctx, end_members, before, start) if opened is not None and before >= opened else 0.0
    congested = any(
        f.code == codes.LINK_CONGESTION
        and f"{f.subject.get('equipment')}:{f.subject.get('interface')}" in {m.name for m in left}
        for f in ctx.findings
    )
    overloaded = left_bps <= 0 or congested or max(load_bps, offered_bps) >= k.CONGESTION_UTILISATION * left_bps
    degraded = sorted(
        a.key
        for p in ctx.bundle.paths
        if trunk_association(ctx.bundle, p, trunk)
        for a in [ctx.assessment(p)]
        if any(ep.overlaps(start, until, k.CORRELATION_SLACK_S) for ep in a.episodes)
    )
    facts = {
        "trunk": trunk.name,
        "member": member.name,
        "equipment": member.equipment,
        "interface": member.interface,
        "start": start,
        "end": end,
        "source": outage["source"],
        "capacity_bps": capacity_bps,
        "capacity_left_bps": left_bps,
        "members_left": [m.name for m in left],
        "load_bps": load_bps,
        "offered_bps": offered_bps,
        "overloaded": overloaded,
        "degraded_paths": degraded,
        "work": {"reference": overran.reference, "end": overran.end} if overran else None,
    }
    if end is not None:
        severity = codes.INFO  # back in service: worth knowing while the window holds it, nothing left to do
    else:
        severity = codes.CRITICAL if overloaded or degraded else codes.WARNING
    return finding(
        codes.TRUNK_IMBALANCE,
        severity=severity,
        subject={"trunk": trunk.name, "member": member.name},
        start=start,
        end=until,
        facts={"member_down": facts},
        evidence={
            "member_down": {
                **{key: v for key, v in facts.items() if key not in ("work",)},
                "samples": outage["samples"],
                "ongoing": end is None,
                "work": overran.reference if overran else None,
            },
            "members": [m.name for m in trunk.members],
        },
    )


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

    A member out of the bundle is a finding of its own, about ``{trunk, member}``, never an imbalance of the
    members left: its oper status down in INTERFACE_DOWN_MIN_SAMPLES consecutive polls (or, when its agent
    reports no status, its counters idle while a sibling carries the load), outside announced work on the member,
    its bundle or its device (a member shut or drained for work is out by design: nothing is reported).  It
    says what is left of the bundle at the member's end; critical when the traffic no longer fits (the load
    carried since, or offered in the half hour before, reaches CONGESTION_UTILISATION of what is left, or a
    member left is congested) or a path across the bundle degrades meanwhile, else a warning: the paths are
    still up (not PATH_DOWN) but the redundancy is gone; info once the member is back in service.
    """
    out: list[RuleFinding] = []
    for trunk in ctx.bundle.trunks:
        outages = member_outages(ctx, trunk)
        for m in trunk.members:
            # the member's latest outage not covered by announced work: one finding per member
            found = (_member_down_finding(ctx, trunk, m, o, outages) for o in reversed(outages[m.name]))
            latest = next((f for f in found if f is not None), None)
            if latest is not None:
                out.append(latest)
        idle = {
            name: [(o["start"], o["end"] or ctx.now) for o in spans if o["source"] == "idle"]
            for name, spans in outages.items()
        }
        members = member_imbalance(ctx, trunk, idle)
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
