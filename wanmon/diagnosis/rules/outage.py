"""PATH_DOWN: tests cannot connect, probes lose everything, or an interface of the path is down."""

from __future__ import annotations

from datetime import datetime, timedelta

from wanmon.diagnosis import codes
from wanmon.diagnosis import constants as k
from wanmon.diagnosis.context import RuleContext, path_finding
from wanmon.diagnosis.episodes import DOWN, Observation, consecutive_down_runs, consecutive_runs, other_kinds_near
from wanmon.diagnosis.evidence import EvidenceBundle, InterfaceEvidence, PathEvidence, RuleFinding
from wanmon.diagnosis.loss import OWAMP, UDP
from wanmon.diagnosis.path_elements import interface_on_path, trunks_on_path

DOWN_STATUSES = k.DOWN_STATUSES


def status_samples(iface: InterfaceEvidence) -> list[tuple[datetime, str]]:
    """The interface's oper-status samples, lower case, by time (its status polls and the status its rates carry)."""
    samples = {s.time: s.oper_status.lower() for s in iface.status}
    for r in iface.rates:
        if r.oper_status:
            samples.setdefault(r.time, r.oper_status.lower())
    return sorted(samples.items())


def down_spans(samples: list[tuple[datetime, str]]) -> list[tuple[datetime, datetime, int]]:
    """Runs of consecutive down samples: at least INTERFACE_DOWN_MIN_SAMPLES long, or the latest sample."""
    spans = [[t for t, _ in run] for run in consecutive_runs(samples, lambda s: s[1] in DOWN_STATUSES)]
    ongoing = bool(samples) and samples[-1][1] in DOWN_STATUSES
    out = []
    for i, span in enumerate(spans):
        latest = ongoing and i == len(spans) - 1
        if len(span) >= k.INTERFACE_DOWN_MIN_SAMPLES or latest:
            out.append((span[0], span[-1], len(span)))
    return out


_DOWN_MEMO: dict[int, tuple[EvidenceBundle, dict[str, list]]] = {}


def _down_interfaces(bundle: EvidenceBundle) -> dict[str, list[tuple[datetime, datetime, int]]]:
    """Down spans of every interface that has one, computed once per bundle (almost every port is up: only
    those few are then placed on each path, instead of every interface on every path)."""
    hit = _DOWN_MEMO.get(id(bundle))
    if hit is None or hit[0] is not bundle:
        spans = {i.name: s for i in bundle.all_interfaces() if (s := down_spans(status_samples(i)))}
        _DOWN_MEMO.clear()  # holds the latest bundle only
        hit = _DOWN_MEMO[id(bundle)] = (bundle, spans)
    return hit[1]


def interfaces_down_on_path(bundle: EvidenceBundle, path: PathEvidence) -> list[tuple[str, datetime, datetime, int]]:
    """(element, start, end, samples) for ports the path is known to leave or arrive by that are down (a trunk
    member alone does not cut the path), and trunks whose members are all down."""
    members = {m.name for t in bundle.trunks for m in t.members}
    out = []
    for name, spans in _down_interfaces(bundle).items():
        if name not in members and interface_on_path(name, path, bundle) == "exact":
            out += [(name, s, e, n) for s, e, n in spans]
    for trunk in trunks_on_path(bundle, path):
        member_spans = [down_spans(status_samples(m)) for m in trunk.members]
        if not trunk.members or any(not spans for spans in member_spans):
            continue
        start = max(spans[0][0] for spans in member_spans)
        end = min(spans[-1][1] for spans in member_spans)
        if start <= end:
            out.append((trunk.name, start, end, min(len(s) for s in member_spans)))
    return out


def _lost_everything(o: Observation) -> bool:
    """A probe (owamp session, UDP test) that ran and lost all its packets; not a test that could not start."""
    return o.state == DOWN and o.kind in (OWAMP, UDP) and o.value == 1.0


def _reverse_lost_everything(ctx: RuleContext, a, run: list[Observation]) -> bool:
    """A run of probes (owamp, UDP) that lost all their packets, and a probe of the reverse direction that lost
    all its packets too between this direction's last observation that got through before the run and its first
    one after it (or now): since a packet last crossed one way, none crossed the other.  Probes only: a test
    refused by a busy server in each direction proves nothing."""
    if not all(_lost_everything(o) for o in run):
        return False
    r = ctx.assessment_of(a.path.dst, a.path.src)
    if r is None:
        return False
    before = [o.time for o in a.observations if o.state != DOWN and o.time < run[0].time]
    after = [o.time for o in a.observations if o.state != DOWN and o.time > run[-1].time]
    since, until = max(before, default=None), min(after, default=None)
    return any(
        _lost_everything(o)
        and (since is None or o.time > since)
        and (until is None or o.time < until)
        for o in r.observations
    )


def path_down(ctx: RuleContext) -> list[RuleFinding]:
    """PATH_DOWN: the path direction is out of service.

    Evidence: throughput tests that failed (error, nothing transferred), owamp
    sessions and UDP tests that lost 100 % of their packets, and the oper status
    of ports the path is known to cross (or of all members of a trunk on it).

    Criterion: PATH_DOWN_MIN_OBSERVATIONS consecutive failed observations of one
    kind (any success of that kind in between breaks the run), or a single one
    corroborated by another kind (a 100 %-loss session or failed test of another
    kind, or a port of the path down, within PATH_DOWN_CROSS_CHECK_S); in either
    case not contradicted by another kind that got packets through in that time
    and nothing failing with it (owamp carrying packets while throughput tests are
    refused is the test host, not the path: MEASUREMENT_GAP says so). Or a port of
    the path down in INTERFACE_DOWN_MIN_SAMPLES consecutive polls.

    Why: one failed test can be a busy server; repeated failures, or total loss
    of 600 probe packets over a minute, mean the path does not carry traffic.  Two probe streams sent from
    opposite ends by different hosts that both lose everything while neither direction gets a packet through
    are the pair of sites cut off from each other: no busy server refuses probes, and waiting for the next
    hourly session of each direction only adds an hour to an outage already measured twice.
    Loss figures of these periods are excluded from loss estimates: an outage is
    not a loss rate.
    """
    out: list[RuleFinding] = []
    for a in ctx.assessments():
        ifaces = interfaces_down_on_path(ctx.bundle, a.path)
        ifaces = [i for i in ifaces if (ctx.bundle.window_start is None or i[2] >= ctx.bundle.window_start)]
        kept: list[list[Observation]] = []
        for run in consecutive_down_runs(a.observations):
            through, failing = other_kinds_near(a, run)
            if through and not failing:
                continue  # another measurement carried packets meanwhile: not an outage of the path
            iface_down = any(
                s - timedelta(seconds=k.PATH_DOWN_CROSS_CHECK_S) <= run[-1].time
                and run[0].time <= e + timedelta(seconds=k.PATH_DOWN_CROSS_CHECK_S)
                for _, s, e, _ in ifaces
            )
            if (
                len(run) >= k.PATH_DOWN_MIN_OBSERVATIONS
                or failing
                or iface_down
                or _reverse_lost_everything(ctx, a, run)
            ):
                kept.append(run)
        if not kept and not ifaces:
            continue
        times = [o.time for run in kept for o in run] + [t for i in ifaces for t in (i[1], i[2])]
        start, end = min(times), max(times)
        failed = [o for run in kept for o in run]
        reasons = sorted({o.reason for o in failed})
        ongoing = not [o for o in a.observations if o.time > end and o.state != DOWN]
        out.append(
            path_finding(
                a,
                codes.PATH_DOWN,
                start=start,
                end=end,
                facts={
                    "key": a.key,
                    "dst": a.path.dst,
                    "hops": a.path.hops,
                    "start": start,
                    "end": end,
                    "ongoing": ongoing,
                    "failed": len(failed),
                    "reasons": reasons,
                    "interfaces_down": ifaces,
                },
                evidence={
                    "failed": [
                        {"time": o.time, "kind": o.kind, "reason": o.reason, "id": o.measurement_id} for o in failed
                    ],
                    "interfaces_down": [{"element": n, "start": s, "end": e, "samples": c} for n, s, e, c in ifaces],
                    "ongoing": ongoing,
                },
            )
        )
    return out
