"""Interface rules from SNMP rates: INTERFACE_ERRORS, LINK_CONGESTION, COUNTER_DISCONTINUITY."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from wanmon.diagnosis import codes
from wanmon.diagnosis import constants as k
from wanmon.diagnosis.assessment import PathAssessment
from wanmon.diagnosis.context import RuleContext, finding
from wanmon.diagnosis.episodes import consecutive_runs, run_max_gap_s
from wanmon.diagnosis.evidence import InterfaceEvidence, InterfaceRate, RuleFinding
from wanmon.diagnosis.path_elements import interface_on_path
from wanmon.diagnosis.stats import median


def _finding(code: str, iface: InterfaceEvidence, degraded: Sequence, **fields: Any) -> RuleFinding:
    """A finding on ``iface`` (``fields``: the rest of the verdict's): critical when paths through it were
    ``degraded`` meanwhile, else the code's own severity."""
    return finding(
        code,
        severity=codes.CRITICAL if degraded else codes.default_severity(code),
        subject={"equipment": iface.equipment, "interface": iface.interface},
        **fields,
    )


def _in_window(ctx: RuleContext, t: datetime) -> bool:
    start = ctx.bundle.window_start
    return (start is None or t >= start) and t <= ctx.now


def valid_rows(ctx: RuleContext, iface: InterfaceEvidence) -> list[InterfaceRate]:
    """Rate rows of the window, minus any row that coincides with a counter discontinuity."""
    bad = {d.time for d in iface.discontinuities}
    return sorted((r for r in iface.rates if _in_window(ctx, r.time) and r.time not in bad), key=lambda r: r.time)


def paths_through(ctx: RuleContext, iface: InterfaceEvidence) -> list[tuple[PathAssessment, str]]:
    """Paths whose hops contain the interface ('exact') or its equipment ('equipment')."""
    out = []
    for p in ctx.bundle.paths:
        how = interface_on_path(iface.name, p, ctx.bundle)
        if how:
            out.append((ctx.assessment(p), how))
    return out


def degraded_through(
    ctx: RuleContext, iface: InterfaceEvidence, start: datetime, end: datetime
) -> list[tuple[PathAssessment, str]]:
    """Paths through the interface with a degradation episode overlapping [start, end]."""
    return [
        (a, how)
        for a, how in paths_through(ctx, iface)
        if any(ep.overlaps(start, end, k.CORRELATION_SLACK_S) for ep in a.episodes)
    ]


def _packets_per_s(pkts: float | None, bps: float | None) -> float | None:
    if pkts:
        return pkts
    if bps:
        return bps / 8.0 / k.INTERFACE_ASSUMED_FRAME_BYTES
    return None


def _fraction(events: Sequence[tuple[float | None, float | None]]) -> float:
    """Largest of events/packets over the directions given as (events per s, packets per s)."""
    worst = 0.0
    for rate, pkts in events:
        if not rate:
            continue
        if pkts:
            worst = max(worst, rate / pkts)
        elif rate > k.INTERFACE_ERRORS_MIN_PER_S:
            worst = math.inf  # events and no traffic known: count them (absolute floor)
    return worst


@dataclass(frozen=True)
class PollErrors:
    """One valid poll: errors (CRC, in and out) and discards (in and out), per second and as packet fractions."""

    row: InterfaceRate
    errors_per_s: float
    discards_per_s: float
    error_fraction: float
    discard_fraction: float

    @property
    def time(self) -> datetime:
        return self.row.time

    @property
    def bad(self) -> bool:
        return (
            self.error_fraction >= k.INTERFACE_ERROR_FRACTION or self.discard_fraction >= k.INTERFACE_DISCARD_FRACTION
        )


def poll_errors(r: InterfaceRate, speed_bps: float | None) -> PollErrors:
    """Errors and discards of one poll; discards of a direction running at CONGESTION_UTILISATION or more are
    congestion drops (LINK_CONGESTION's evidence), not a fault of the interface, and are left out."""
    in_pkts = _packets_per_s(r.in_pkts_per_s, r.in_bps)
    out_pkts = _packets_per_s(r.out_pkts_per_s, r.out_bps)

    def below_full(bps: float | None) -> bool:
        return not speed_bps or bps is None or bps < k.CONGESTION_UTILISATION * speed_bps

    in_disc = r.in_discards_per_s if below_full(r.in_bps) else None
    out_disc = r.out_discards_per_s if below_full(r.out_bps) else None
    return PollErrors(
        row=r,
        errors_per_s=(r.in_errors_per_s or 0.0) + (r.out_errors_per_s or 0.0),
        discards_per_s=(in_disc or 0.0) + (out_disc or 0.0),
        error_fraction=_fraction(((r.in_errors_per_s, in_pkts), (r.out_errors_per_s, out_pkts))),
        discard_fraction=_fraction(((in_disc, in_pkts), (out_disc, out_pkts))),
    )


def any_errors_or_discards(iface: InterfaceEvidence) -> bool:
    """Any poll with errors or discards at all (else every poll is clean: the fractions are zero)."""
    return any(
        r.in_errors_per_s or r.out_errors_per_s or r.in_discards_per_s or r.out_discards_per_s for r in iface.rates
    )


def reaches_utilisation(iface: InterfaceEvidence, utilisation: float) -> bool:
    """Any poll carrying ``utilisation`` of the interface's speed or more, in or out."""
    limit = utilisation * (iface.speed_bps or 0.0)
    return any((r.in_bps or 0.0) >= limit or (r.out_bps or 0.0) >= limit for r in iface.rates)


def persistent_error_runs(rows: Sequence[InterfaceRate], speed_bps: float | None = None) -> list[list[PollErrors]]:
    """Runs of at least INTERFACE_ERRORS_MIN_INTERVALS consecutive bad polls (a clean poll or a gap ends a run)."""
    polls = [poll_errors(r, speed_bps) for r in rows]
    runs = consecutive_runs(polls, lambda pe: pe.bad, max_gap_s=run_max_gap_s([r.time for r in rows]))
    return [run for run in runs if len(run) >= k.INTERFACE_ERRORS_MIN_INTERVALS]


def error_lead_in_start(rows: Sequence[InterfaceRate], run: Sequence[PollErrors]) -> datetime:
    """Where a run of CRC errors began: its first poll, or earlier when the polls just before it already counted
    errors below INTERFACE_ERROR_FRACTION (a clean optical link counts none: a connector going bad makes a few
    errors first, then more, and the errors before the fraction was reached are the same fault growing).
    Walks back over consecutive valid polls with errors; a clean poll or a counter gap stops it. Discards are
    no lead-in: a busy port counts a few all along."""
    start = run[0].time
    if not any(pe.errors_per_s and pe.error_fraction >= k.INTERFACE_ERROR_FRACTION for pe in run):
        return start  # a run of discards
    earlier = [r for r in rows if r.time < start]
    max_gap_s = run_max_gap_s([r.time for r in rows])
    for r in reversed(earlier):
        if (start - r.time).total_seconds() > max_gap_s or not ((r.in_errors_per_s or 0) + (r.out_errors_per_s or 0)):
            break
        start = r.time
    return start


def _finite_median(values) -> float | None:
    return median(v for v in values if v is not None and math.isfinite(v))


def interface_errors(ctx: RuleContext) -> list[RuleFinding]:
    """INTERFACE_ERRORS: CRC errors or discards keep coming on an interface, as a share of its packets.

    Evidence: the interface's valid rate rows (in/out errors and in/out discards per
    second, in/out packets per second; packets estimated from the bit rate with
    INTERFACE_ASSUMED_FRAME_BYTES frames when not polled), and the paths crossing it.

    Criterion: errors above INTERFACE_ERROR_FRACTION of the packets, or discards
    above INTERFACE_DISCARD_FRACTION (in a direction below CONGESTION_UTILISATION:
    drops of a full link are congestion), in at least INTERFACE_ERRORS_MIN_INTERVALS
    consecutive valid polls of this interface.  A single poll, or scattered ones,
    are ignored (a counter artefact or a one-off event); intervals dropped for a
    counter reset never count.  Critical when a path known to cross the interface
    is degraded at the same time.

    Why: a clean optical link shows no CRC errors at all; errors that keep coming
    mean a dirty or misaligned fibre end, a bad patch panel, a failing optic.
    Output discards at moderate load are micro-burst drops.  Both are losses that
    TCP pays for with the Mathis formula -- but a few input discards a minute on a
    busy 100G port (1e-8 of its packets) are not, so the rule counts shares, not events.
    """
    out: list[RuleFinding] = []
    for iface in ctx.all_interfaces():
        if not any_errors_or_discards(iface):
            continue  # no poll can be bad: most interfaces of a shard, skipped before sorting their rows
        rows = valid_rows(ctx, iface)
        runs = persistent_error_runs(rows, iface.speed_bps)
        if not runs:
            continue
        polls = [pe for run in runs for pe in run]
        bad = [pe.row for pe in polls]
        start, end = error_lead_in_start(rows, runs[0]), bad[-1].time
        rate = median(pe.errors_per_s + pe.discards_per_s for pe in polls) or 0.0
        in_err = median((r.in_errors_per_s or 0.0) for r in bad) or 0.0
        disc = median((r.in_discards_per_s or 0.0) for r in bad) or 0.0
        out_disc = median((r.out_discards_per_s or 0.0) for r in bad) or 0.0
        err_frac = _finite_median(pe.error_fraction for pe in polls if pe.errors_per_s)
        disc_frac = _finite_median(pe.discard_fraction for pe in polls if pe.discards_per_s)
        pkts = median(r.in_pkts_per_s for r in bad if r.in_pkts_per_s)
        frac = max((f for f in (err_frac, disc_frac) if f), default=None)
        degraded = degraded_through(ctx, iface, start, end)
        through = paths_through(ctx, iface)
        capped = (None, None, None)  # the longest path through it, its RTT and one stream's ceiling at that loss
        if frac:
            rtts = [(a, a.rtt_ms) for a, _ in through if a.rtt_ms]
            if rtts:
                a, rtt = max(rtts, key=lambda x: x[1])
                ceiling = a.mathis_ceiling_bps(min(frac, 1.0))
                if ceiling:
                    capped = (a.key, rtt, ceiling)
        out.append(
            _finding(
                codes.INTERFACE_ERRORS,
                iface,
                degraded,
                start=start,
                end=end,
                facts={
                    "name": iface.name,
                    "polls": len(bad),
                    "intervals": len(rows),
                    "start": start,
                    "end": end,
                    "events_per_s": rate,
                    "in_errors_per_s": in_err,
                    "in_discards_per_s": disc,
                    "out_discards_per_s": out_disc,
                    "error_fraction": frac,
                    "crc_error_fraction": err_frac,
                    "discard_fraction": disc_frac,
                    "packets_per_s": pkts,
                    "capped_path": capped[0],
                    "capped_path_rtt_ms": capped[1],
                    "capped_rate_bps": capped[2],
                    "degraded_paths": [a.key for a, _ in degraded],
                    "paths": [a.key for a, _ in through],
                },
                evidence={
                    "intervals_with_errors": len(bad),
                    "intervals": len(rows),
                    "errors_per_s_median": rate,
                    "in_errors_per_s_median": in_err,
                    "in_discards_per_s_median": disc,
                    "out_discards_per_s_median": out_disc,
                    "error_fraction": frac,
                    "crc_error_fraction": err_frac,
                    "discard_fraction": disc_frac,
                    "rows": [
                        {
                            "time": r.time,
                            "in_errors_per_s": r.in_errors_per_s,
                            "out_errors_per_s": r.out_errors_per_s,
                            "in_discards_per_s": r.in_discards_per_s,
                            "out_discards_per_s": r.out_discards_per_s,
                        }
                        for r in bad
                    ],
                    "degraded_paths": [a.key for a, _ in degraded],
                    "paths": [a.key for a, _ in through],
                },
            )
        )
    return out


def _utilisation(r: InterfaceRate, speed_bps: float) -> tuple[float | None, str]:
    ins = (r.in_bps or 0.0) / speed_bps if r.in_bps is not None else None
    outs = (r.out_bps or 0.0) / speed_bps if r.out_bps is not None else None
    if ins is None and outs is None:
        return None, ""
    if outs is None or (ins is not None and ins >= outs):
        return ins, "in"
    return outs, "out"


def congested_runs(rows: Sequence[InterfaceRate], speed_bps: float) -> tuple[list[list[InterfaceRate]], int]:
    """Runs of consecutive valid intervals at >= CONGESTION_UTILISATION; also the count of implausible rows."""

    def utilisation(r: InterfaceRate) -> float:
        return _utilisation(r, speed_bps)[0] or 0.0  # no rate at all: not congested

    # a counter artefact is a missing reading, not a quiet one: it neither counts nor ends the run
    plausible = [r for r in rows if utilisation(r) <= k.IMPLAUSIBLE_UTILISATION]
    runs = consecutive_runs(
        plausible,
        lambda r: utilisation(r) >= k.CONGESTION_UTILISATION,
        max_gap_s=run_max_gap_s([r.time for r in rows]),
    )
    return [run for run in runs if len(run) >= k.CONGESTION_MIN_INTERVALS], len(rows) - len(plausible)


def link_congestion(ctx: RuleContext) -> list[RuleFinding]:
    """LINK_CONGESTION: an interface runs above ~90 % of its speed while paths through it degrade.

    Evidence: the interface's valid rate rows (in/out bit/s, out-discards), its
    speed, and the degradation episodes of the paths crossing it.

    Criterion: at least CONGESTION_MIN_INTERVALS consecutive valid intervals with
    max(in, out) >= CONGESTION_UTILISATION x speed, and in that period either a
    path through the interface is degraded or the interface drops packets
    (out-discards).  Rates above IMPLAUSIBLE_UTILISATION x speed are counter
    artefacts, never congestion; intervals dropped for a counter reset do not
    exist here, so a reset cannot make a spike.

    Why: above ~90 % queues build in front of the link and loss starts; it is
    the tight link of every path crossing it.
    """
    out: list[RuleFinding] = []
    for iface in ctx.all_interfaces():
        if not iface.speed_bps or not reaches_utilisation(iface, k.CONGESTION_UTILISATION):
            continue  # no poll at the threshold: no run (most interfaces of a shard)
        rows = valid_rows(ctx, iface)
        runs, implausible = congested_runs(rows, iface.speed_bps)
        for run in runs:
            start, end = run[0].time, run[-1].time
            degraded = degraded_through(ctx, iface, start, end)
            discards = median((r.out_discards_per_s or 0.0) for r in run) or 0.0
            if not degraded and discards <= 0:
                continue
            utils = [_utilisation(r, iface.speed_bps) for r in run]
            peak = max(u for u, _ in utils if u is not None)
            med = median(u for u, _ in utils if u is not None) or 0.0
            direction = max({d for _, d in utils}, key=[d for _, d in utils].count)
            out.append(
                _finding(
                    codes.LINK_CONGESTION,
                    iface,
                    degraded,
                    start=start,
                    end=end,
                    facts={
                        "name": iface.name,
                        "speed_bps": iface.speed_bps,
                        "direction": direction,
                        "utilisation_median": med,
                        "utilisation_peak": peak,
                        "intervals": len(run),
                        "start": start,
                        "end": end,
                        "out_discards_per_s": discards,
                        "implausible_intervals": implausible,
                        "degraded_paths": [a.key for a, _ in degraded],
                    },
                    evidence={
                        "utilisation_median": med,
                        "utilisation_peak": peak,
                        "direction": direction,
                        "speed_bps": iface.speed_bps,
                        "intervals": len(run),
                        "out_discards_per_s_median": discards,
                        "implausible_intervals": implausible,
                        "rows": [{"time": r.time, "in_bps": r.in_bps, "out_bps": r.out_bps} for r in run],
                        "degraded_paths": [a.key for a, _ in degraded],
                    },
                )
            )
    return out


def counter_discontinuity(ctx: RuleContext) -> list[RuleFinding]:
    """COUNTER_DISCONTINUITY: an interface's counters were reset; the interval was discarded, not turned into a spike.

    Evidence: the discontinuities the rate computation recorded (sysUpTime went
    back, ifCounterDiscontinuityTime changed, or a counter decrease that cannot be
    a plausible wrap).

    Criterion: at least one discontinuity in the window (informational).

    Why: a counter that goes backwards together with sysUpTime is a device or
    agent restart, not a wrap: computing a rate across it would invent a rate of
    up to 2^64 * 8 / interval.  Operators should know the device restarted and
    that there is a gap in its rates.
    """
    out: list[RuleFinding] = []
    for iface in ctx.all_interfaces():
        if not iface.discontinuities:
            continue
        events = sorted((d for d in iface.discontinuities if _in_window(ctx, d.time)), key=lambda d: d.time)
        if not events:
            continue
        same_device = [
            other.name
            for other in ctx.all_interfaces()
            if other.equipment == iface.equipment
            and other.name != iface.name
            and any(abs((d.time - e.time).total_seconds()) < 300 for d in other.discontinuities for e in events)
        ]
        reasons = sorted({d.reason for d in events})
        out.append(
            _finding(
                codes.COUNTER_DISCONTINUITY,
                iface,
                (),
                start=events[0].time,
                end=events[-1].time,
                facts={
                    "name": iface.name,
                    "equipment": iface.equipment,
                    "times": [d.time for d in events],
                    "reasons": reasons,
                    "same_device_interfaces": same_device,
                },
                evidence={
                    "discontinuities": [
                        {"time": d.time, "reason": d.reason, "previous_time": d.previous_time} for d in events
                    ],
                    "same_device_interfaces": same_device,
                },
            )
        )
    return out
