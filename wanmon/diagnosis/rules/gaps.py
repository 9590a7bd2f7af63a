"""MEASUREMENT_GAP: the monitoring itself is blind on a path -- never a network fault."""

from __future__ import annotations

from datetime import datetime

from wanmon.diagnosis import codes
from wanmon.diagnosis import constants as k
from wanmon.diagnosis.assessment import PathAssessment
from wanmon.diagnosis.context import RuleContext, path_finding
from wanmon.diagnosis.episodes import DOWN
from wanmon.diagnosis.evidence import RuleFinding
from wanmon.diagnosis.rules.outage import consecutive_down_runs, other_kinds_near
from wanmon.diagnosis.stats import cadence_s


def measured_before(a: PathAssessment, kind: str) -> bool:
    """True when the baseline period (the days before the window) measured this kind on the path: GAP_MIN_HISTORY
    completed TCP tests, or owamp sessions that got packets through (only they give the baseline a minimum delay).
    UDP's packets are summed with owamp's there, so UDP has only the window's own results to go by."""
    b = a.path.baseline
    if b is None:
        return False
    if kind == "tcp":
        return b.tcp_tests >= k.GAP_MIN_HISTORY
    return kind == "owamp" and b.delay_min_ms is not None


def stopped_kinds(a: PathAssessment, now: datetime) -> list[dict]:
    """Measurement kinds of a path that ran regularly and then stopped arriving before ``now``.

    The history that makes a kind regular is the window's results, or the baseline period's when the window holds
    fewer than GAP_MIN_HISTORY: a kind run every hour leaves at most three results in a 6-hour window once three of
    its intervals are missing, and a rule counting only the window would never see an hourly test stop."""
    out = []
    for kind in sorted({o.kind for o in a.observations}):
        times = sorted(o.time for o in a.observations if o.kind == kind)
        cad = cadence_s(times)
        if cad is None or (len(times) < k.GAP_MIN_HISTORY and not measured_before(a, kind)):
            continue
        silent_s = (now - times[-1]).total_seconds()
        if silent_s > max(k.GAP_MISSING_INTERVALS * cad, k.GAP_MIN_SILENCE_S):
            out.append({"kind": kind, "last": times[-1], "interval_s": cad, "silent_s": silent_s})
    return out


def failing_for_other_reasons(a: PathAssessment) -> list[dict]:
    """Runs of consecutive failed measurements of one kind while another kind carried packets meanwhile."""
    out = []
    for run in consecutive_down_runs(a.observations):
        if len(run) < k.PATH_DOWN_MIN_OBSERVATIONS:
            continue
        through, failing = other_kinds_near(a, run)
        if through and not failing:
            out.append(
                {
                    "kind": run[0].kind,
                    "start": run[0].time,
                    "end": run[-1].time,
                    "failures": len(run),
                    "reasons": sorted({o.reason for o in run}),
                    "ids": [o.measurement_id for o in run],
                    "carried_by": sorted({o.kind for o in through}),
                    "carried_observations": len(through),
                }
            )
    return out


def measurement_gap(ctx: RuleContext) -> list[RuleFinding]:
    """MEASUREMENT_GAP: tests of a path stopped arriving, or keep failing while the path carries traffic.

    Evidence: the times of each measurement kind of the path (its cadence and the
    last one), and the failed measurements (errors, nothing transferred) with the
    other kinds' results around them.

    Criterion: a kind with at least GAP_MIN_HISTORY regular results and none for
    more than max(GAP_MISSING_INTERVALS intervals, GAP_MIN_SILENCE_S) before now;
    or PATH_DOWN_MIN_OBSERVATIONS consecutive failures of one kind while another
    kind got packets through within PATH_DOWN_CROSS_CHECK_S and nothing else
    failed (the case PATH_DOWN leaves out).  Never critical: the network is not
    blamed.

    Why: a refused or busy test server, an expired credential or a stopped agent
    makes the monitoring blind; calling that an outage sends people to the wrong
    place, and staying silent hides that a path is no longer watched.
    """
    out: list[RuleFinding] = []
    for a in ctx.assessments():
        stopped = stopped_kinds(a, ctx.now)
        failing = failing_for_other_reasons(a)
        if not stopped and not failing:
            continue
        still = sorted({o.kind for o in a.observations if o.state != DOWN} - {s["kind"] for s in stopped})
        starts = [s["last"] for s in stopped] + [f["start"] for f in failing]
        ends = [ctx.now for _ in stopped] + [f["end"] for f in failing]
        out.append(
            path_finding(
                a,
                codes.MEASUREMENT_GAP,
                start=min(starts),
                end=max(ends),
                facts={
                    "key": a.key,
                    "src": a.path.src,
                    "dst": a.path.dst,
                    "stopped": stopped,
                    "failing": failing,
                    "still_measured_by": still,
                },
                evidence={"stopped": stopped, "failing": failing, "still_measured_by": still},
            )
        )
    return out
