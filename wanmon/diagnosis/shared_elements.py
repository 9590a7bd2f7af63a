"""Which network element do degraded paths have in common? The pure layers of the correlation rule
(``rules/correlation.py``):

* ``rank_shared_elements(degraded, healthy)`` -- given degraded path directions (with their time windows and
  hops) and healthy ones (with their hops), rank the elements shared by at least two degraded paths,
  direction-aware;
* ``interface_load_rise``, ``bundle_load_rise``, ``path_load_rise`` -- for a single degraded path, whether the
  load (SNMP) of an element on it, or the traffic of another path through it, rose when it degraded (equipment
  at its limits, LHC SC1 CERN-FNAL).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from wanmon.diagnosis import constants as k
from wanmon.diagnosis.assessment import PathAssessment
from wanmon.diagnosis.degradation import BASELINE_REFERENCE
from wanmon.diagnosis.evidence import InterfaceEvidence, PathDirection
from wanmon.diagnosis.path_elements import base_equipment

Edge = tuple[str, str]


@dataclass(frozen=True)
class DegradedPath(PathDirection):
    """A path direction degraded during [start, end]."""

    start: datetime
    end: datetime
    hops: tuple[str, ...]


@dataclass(frozen=True)
class PathRoute(PathDirection):
    """A healthy path direction (measured and fine during the period) and its hops."""

    hops: tuple[str, ...]


@dataclass(frozen=True)
class SuspectElement:
    """A ranked suspect with the reasons for its score."""

    element: str
    score: float
    degraded: tuple[str, ...]
    healthy_same_direction: tuple[str, ...] = ()
    healthy_other_ports: tuple[str, ...] = ()
    healthy_reverse: tuple[str, ...] = ()
    coverage: float = 1.0
    endpoint: bool = False
    carrier: bool = False
    corroboration: tuple[str, ...] = ()
    rank: int = 0
    notes: tuple[str, ...] = field(default=())


def hop_elements(hops: Sequence[str]) -> set[str]:
    out = set(hops)
    out |= {base_equipment(h) for h in hops}
    return out


def hop_position(hops: Sequence[str], element: str) -> int | None:
    for i, h in enumerate(hops):
        if h == element or base_equipment(h) == element:
            return i
    return None


def edges_at(hops: Sequence[str], element: str) -> set[Edge]:
    """Directed hops (equipment level) entering and leaving ``element`` on a path."""
    i = hop_position(hops, element)
    if i is None:
        return set()
    here = base_equipment(hops[i])
    out: set[Edge] = set()
    if i > 0:
        out.add((base_equipment(hops[i - 1]), here))
    if i < len(hops) - 1:
        out.add((here, base_equipment(hops[i + 1])))
    return out


def port_direction(hops: Sequence[str], element: str) -> str | None:
    """'in' when the path arrives by the port (it is named on the last hop), 'out' when a hop leaves by it."""
    i = hop_position(hops, element)
    if i is None:
        return None
    return "in" if i == len(hops) - 1 else "out"


def healthy_weight(
    healthy_hops: Sequence[str],
    element: str,
    degraded_edges: set[Edge],
    degraded_port_directions: set[str | None] | None = None,
) -> tuple[float, str]:
    """How much a healthy path crossing ``element`` exonerates it, and why.

    Same direction (leaves the element by the same directed hop as a degraded path; at a path's end, arrives by
    the same one): HEALTHY_WEIGHT_SAME_DIRECTION; sharing only the way in counts as another port; only the
    reverse of such hops:
    HEALTHY_WEIGHT_REVERSE (one fibre of a pair can be bad); other ports:
    HEALTHY_WEIGHT_OTHER_PORTS.
    """
    mine = edges_at(healthy_hops, element)
    if degraded_port_directions and ":" in element:
        # a port carries a path out (a hop leaves by it) or in (the last hop arrives by it): the two are different
        # fibres, and CRC errors on the receive side say nothing of the transmit side
        if port_direction(healthy_hops, element) not in degraded_port_directions:
            return k.HEALTHY_WEIGHT_REVERSE, "reverse"
    here = base_equipment(element)
    egress = {e for e in mine if e[0] == here}
    degraded_egress = {e for e in degraded_edges if e[0] == here}
    if egress and degraded_egress:
        # both leave the element: only leaving it the same way (the same output port and link) clears it; a
        # healthy path sharing only the way in may leave by another port, and the fault can sit on the way out
        if egress & degraded_egress:
            return k.HEALTHY_WEIGHT_SAME_DIRECTION, "same"
    elif mine & degraded_edges:
        return k.HEALTHY_WEIGHT_SAME_DIRECTION, "same"
    if {(b, a) for a, b in mine} & degraded_edges:
        return k.HEALTHY_WEIGHT_REVERSE, "reverse"
    return k.HEALTHY_WEIGHT_OTHER_PORTS, "other"


def rank_shared_elements(
    degraded: Sequence[DegradedPath],
    healthy: Sequence[PathRoute],
    carrier_elements: Iterable[str] = (),
    corroboration: Mapping[str, Sequence[str]] | None = None,
) -> list[SuspectElement]:
    """Rank the elements shared by degraded paths of >= 2 site pairs, most suspect first.

    (The two directions of one site pair share every element, so they alone do not discriminate.)

    score = (degraded paths through it) - (sum of the healthy paths' weights,
    see ``healthy_weight``) + CORROBORATION_BONUS if a finding on the element itself (errors,
    congestion) corroborates it.  Only elements with a positive score are kept.
    Ties go to the element covering more of the degraded paths, then to
    elements that are not a path end point (a site border every path of that
    site crosses), then to carrier equipment, interfaces/trunks before whole
    equipment, then by name.  An equipment is dropped when one of its interfaces
    is shared by exactly the same degraded paths (the interface is more precise).
    """
    corroboration = corroboration or {}
    carriers = set(carrier_elements)
    by_key: dict[str, DegradedPath] = {}
    for d in degraded:
        by_key.setdefault(d.key, d)
    paths = list(by_key.values())
    candidates: dict[str, list[DegradedPath]] = {}
    for d in paths:
        for e in hop_elements(d.hops):
            candidates.setdefault(e, []).append(d)
    # two directions of one site pair share every element: only paths of different site pairs discriminate
    shared = {e: ds for e, ds in candidates.items() if len({frozenset((d.src, d.dst)) for d in ds}) >= 2}
    # drop an equipment whose interface carries exactly the same degraded paths
    for e in list(shared):
        if ":" in e:
            parent = base_equipment(e)
            if parent in shared and {d.key for d in shared[parent]} == {d.key for d in shared[e]}:
                del shared[parent]
    out: list[SuspectElement] = []
    for e, ds in shared.items():
        d_edges: set[Edge] = set()
        for d in ds:
            d_edges |= edges_at(d.hops, e)
        directions = {port_direction(d.hops, e) for d in ds}
        groups: dict[str, list[str]] = {"same": [], "reverse": [], "other": []}
        penalty = 0.0
        for h in healthy:
            if h.key in by_key or e not in hop_elements(h.hops):
                continue
            w, kind = healthy_weight(h.hops, e, d_edges, directions)
            penalty += w
            groups[kind].append(h.key)
        bonus = k.CORROBORATION_BONUS if corroboration.get(e) or corroboration.get(base_equipment(e)) else 0.0
        score = len(ds) - penalty + bonus
        if score <= 0:
            continue
        endpoint = any(hop_position(d.hops, e) in (0, len(d.hops) - 1) for d in ds)
        out.append(
            SuspectElement(
                element=e,
                score=score,
                degraded=tuple(sorted(d.key for d in ds)),
                healthy_same_direction=tuple(sorted(groups["same"])),
                healthy_other_ports=tuple(sorted(groups["other"])),
                healthy_reverse=tuple(sorted(groups["reverse"])),
                coverage=len(ds) / len(paths),
                endpoint=endpoint,
                carrier=base_equipment(e) in carriers,
                corroboration=tuple(corroboration.get(e, ()) or corroboration.get(base_equipment(e), ())),
            )
        )
    out.sort(key=lambda s: (-s.score, -s.coverage, s.endpoint, not s.carrier, ":" not in s.element, s.element))
    return [SuspectElement(**{**s.__dict__, "rank": i + 1}) for i, s in enumerate(out)]


# --------------------------------------------------------------------------- load correlation (single path)
def _load(r, direction: str | None) -> float:
    """The load of one poll in the direction the path uses (out or in), or the larger one when unknown."""
    if direction == "out" and r.out_bps is not None:
        return r.out_bps
    if direction == "in" and r.in_bps is not None:
        return r.in_bps
    return max(r.in_bps or 0.0, r.out_bps or 0.0)


def _mean_load_bps(
    iface: InterfaceEvidence, start: datetime, end: datetime, direction: str | None = None
) -> float | None:
    bad = {d.time for d in iface.discontinuities}
    vals = [
        _load(r, direction)
        for r in iface.rates
        if start <= r.time <= end and r.time not in bad and (r.in_bps is not None or r.out_bps is not None)
    ]
    if iface.speed_bps:
        vals = [v for v in vals if v <= k.IMPLAUSIBLE_UTILISATION * iface.speed_bps]
    return statistics.fmean(vals) if vals else None


def interface_load_rise(
    iface: InterfaceEvidence, onset: datetime, end: datetime, direction: str | None = None
) -> dict | None:
    """Load on the interface after ``onset`` vs the LOAD_LOOKBACK_S before it, when it rose enough.

    ``direction`` ('out' or 'in'): the side the path uses; traffic the other way shares the port but not the
    fibre or the queue, and does not compete (None: the larger of the two).
    """
    before = _mean_load_bps(
        iface, onset - timedelta(seconds=k.LOAD_LOOKBACK_S), onset - timedelta(seconds=1), direction
    )
    after = _mean_load_bps(iface, onset, end, direction)
    if before is None or after is None:
        return None
    rise = after - before
    floor = max(k.LOAD_RISE_MIN_BPS, k.LOAD_RISE_MIN_FRACTION * (iface.speed_bps or 0.0))
    if rise < floor:
        return None
    return {
        "interface": iface.name,
        "before_bps": before,
        "after_bps": after,
        "rise_bps": rise,
        "speed_bps": iface.speed_bps,
        "after_utilisation": after / iface.speed_bps if iface.speed_bps else None,
    }


def bundle_load_rise(members: Sequence[InterfaceEvidence], onset: datetime, end: datetime) -> float | None:
    """Rise of a bundle's aggregate load (the sum of its members' mean loads) after ``onset``.

    Flows are hashed over the members in service: when a member is shut or rehashed, its flows move to the
    others, whose loads rise while the bundle carries no more than before.  Only the aggregate says whether
    other traffic arrived.
    """
    before = after = 0.0
    for m in members:
        b = _mean_load_bps(m, onset - timedelta(seconds=k.LOAD_LOOKBACK_S), onset - timedelta(seconds=1))
        a = _mean_load_bps(m, onset, end)
        if b is None or a is None:
            return None
        before += b
        after += a
    return after - before


def path_load_rise(q: PathAssessment, onset: datetime, end: datetime, observed_since: datetime) -> dict | None:
    """Traffic of another path's tests after ``onset`` vs before: started, or rose by at least
    max(LOAD_RISE_MIN_BPS, LOAD_RISE_MIN_FRACTION x its capacity, DEGRADED_STAT_SIGMAS robust sigmas of its
    earlier results) -- a few per cent up and down is test-to-test noise, not new traffic."""
    tol = timedelta(seconds=k.LOAD_ONSET_TOLERANCE_S)
    tests = [t for t in q.path.throughput_tests if t.error is None and t.throughput_bps]
    after = [t.throughput_bps for t in tests if onset - tol <= t.time <= end]
    before = [t.throughput_bps for t in tests if onset - timedelta(seconds=k.LOAD_LOOKBACK_S) <= t.time < onset - tol]
    if not after:
        return None
    earlier = sorted((t for t in tests if t.time < onset - tol), key=lambda t: t.time)
    if not before and earlier:
        # tests sparser than the look-back (every few hours): the path ran before, its latest results are the
        # level to compare with -- an empty look-back is no quiet period, and no traffic "started"
        before = [t.throughput_bps for t in earlier[-k.MIN_REFERENCE_TESTS :]]
    if not before:
        if observed_since >= onset - tol:
            return None  # no evidence of the quiet period before
        first = min(t.time for t in tests if onset - tol <= t.time <= end)
        if abs((first - onset).total_seconds()) > k.LOAD_ONSET_TOLERANCE_S:
            return None
        before_bps = 0.0
    else:
        before_bps = statistics.median(before)
    after_bps = statistics.median(after)
    # a rise must stand out of the test-to-test noise: 2 % of the path's capacity and 4 robust sigmas
    noise = 0.0
    if len(before) >= k.MIN_REFERENCE_TESTS:
        noise = k.DEGRADED_STAT_SIGMAS * 1.4826 * statistics.median(abs(b - before_bps) for b in before)
    if before and q.reference_source == BASELINE_REFERENCE and q.reference_bps:
        # the path's own history knows its level and spread better than the few tests before the onset
        # (three results every four hours can sit low or close together by chance): new traffic runs above
        # its usual level by more than its usual run-to-run spread
        before_bps = max(before_bps, q.reference_bps)
        noise = max(noise, k.DEGRADED_STAT_SIGMAS * (q.test_sigma_bps or 0.0))
    if after_bps - before_bps < max(k.LOAD_RISE_MIN_BPS, k.LOAD_RISE_MIN_FRACTION * q.path.capacity_bps, noise):
        return None
    return {
        "path": q.key,
        "before_bps": before_bps,
        "after_bps": after_bps,
        "rise_bps": after_bps - before_bps,
        "started": not before,
    }
