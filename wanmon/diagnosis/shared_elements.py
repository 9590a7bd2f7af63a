"""Which network element do degraded paths have in common? The pure layers of the correlation rule
(``rules/correlation.py``):

* ``rank_shared_elements(degraded, healthy)`` -- given degraded path directions (with their time windows and
  hops) and healthy ones (with their hops), rank the elements shared by at least two degraded paths,
  direction-aware;
* ``interface_load_rise``, ``bundle_load_rise``, ``path_load_rise`` -- for a single degraded path, whether the
  load (SNMP) of an element on it, or the traffic of another path through it, rose when it degraded (equipment
  at its limits, LHC SC1 CERN-FNAL);
* ``polled_ports_on_path``, ``tightest_spare`` -- the capacity the other traffic left a test on the tightest
  polled port of its path (every result is judged against it: ``degradation``).
"""

from __future__ import annotations

import bisect
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from wanmon.diagnosis import constants as k
from wanmon.diagnosis.degradation import BASELINE_REFERENCE
from wanmon.diagnosis.evidence import EvidenceBundle, InterfaceEvidence, PathDirection, PathEvidence, ThroughputTest
from wanmon.diagnosis.path_elements import base_equipment, interface_direction, interfaces_on_path

if TYPE_CHECKING:
    # the assessment judges each test against the capacity the load left it (``tightest_spare``): it imports this
    from wanmon.diagnosis.assessment import PathAssessment

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
@dataclass(frozen=True)
class DropStep:
    """Where a path's TCP results stepped down: ``start`` is its first result at the lower level (before the
    degradation episode's start when the first lower results were not yet judged bad), ``last_healthy`` the
    result just before it; ``before`` the results at the level before (within LOAD_LOOKBACK_S of the start, or
    the last MIN_REFERENCE_TESTS of them when the tests are sparser), ``after`` those from the start to the
    episode's end."""

    start: datetime
    last_healthy: ThroughputTest | None
    before_bps: float
    after_bps: float
    before: tuple[ThroughputTest, ...]
    after: tuple[ThroughputTest, ...]

    @property
    def drop_bps(self) -> float:
        return self.before_bps - self.after_bps


def throughput_step(
    tests: Sequence[ThroughputTest], start: datetime, end: datetime, reference_bps: float | None
) -> DropStep | None:
    """The step down of a path's TCP ``tests`` that a degradation episode [start, end] belongs to (pure).

    The episode's results give the lower level; walking back from its start, a result nearer the lower level than
    the level before (``reference_bps``, else the median of the earlier results) belongs to the drop: without a
    baseline the first lower results join the path's own history and the episode opens only later, and a load
    rise is to be compared with the drop's real start, not with the episode's.  None without results in the
    episode or when they are not below the level before.
    """
    done = sorted((t for t in tests if t.error is None and t.throughput_bps), key=lambda t: t.time)
    during = [t.throughput_bps for t in done if start <= t.time <= end]
    earlier = [t for t in done if t.time < start]
    if not during:
        return None
    low = statistics.median(during)
    level = reference_bps or (statistics.median(t.throughput_bps for t in earlier) if earlier else None)
    if not level or level <= low:
        return None
    middle = (level + low) / 2
    first, last_healthy = start, None
    for t in reversed(earlier):
        if t.throughput_bps >= middle:
            last_healthy = t
            break
        first = t.time
    high = [t for t in earlier if t.time < first and t.throughput_bps >= middle]
    before = [t for t in high if t.time >= first - timedelta(seconds=k.LOAD_LOOKBACK_S)]
    if not before:
        # tests sparser than the look-back: the latest results at the level before are that level
        before = high[-k.MIN_REFERENCE_TESTS :]
    after = [t for t in done if first <= t.time <= end]
    return DropStep(
        start=first,
        last_healthy=last_healthy,
        before_bps=statistics.median(t.throughput_bps for t in before) if before else level,
        after_bps=statistics.median(t.throughput_bps for t in after),
        before=tuple(before),
        after=tuple(after),
    )


def _load(r, direction: str | None) -> float:
    """The load of one poll in the direction the path uses (out or in), or the larger one when unknown."""
    if direction == "out" and r.out_bps is not None:
        return r.out_bps
    if direction == "in" and r.in_bps is not None:
        return r.in_bps
    return max(r.in_bps or 0.0, r.out_bps or 0.0)


@dataclass(frozen=True)
class _Polls:
    """The valid polling intervals of one interface, by end time: ``ends`` (sorted), their ``lengths`` in seconds
    and ``rows``; read once per interface and rule, searched once per test."""

    ends: tuple[datetime, ...]
    lengths: tuple[float, ...]
    rows: tuple
    longest_s: float


def _polls(iface: InterfaceEvidence) -> _Polls:
    """The interface's valid polling intervals (a counter reset and a rate above the speed are no load)."""
    bad = {d.time for d in iface.discontinuities}
    ends, lengths, rows = [], [], []
    previous: datetime | None = None
    for r in sorted(iface.rates, key=lambda r: r.time):
        length = r.interval_s or ((r.time - previous).total_seconds() if previous is not None else None)
        previous = r.time
        if r.time in bad or (r.in_bps is None and r.out_bps is None) or not length or length <= 0:
            continue
        if iface.speed_bps and max(r.in_bps or 0.0, r.out_bps or 0.0) > k.IMPLAUSIBLE_UTILISATION * iface.speed_bps:
            continue
        ends.append(r.time)
        lengths.append(float(length))
        rows.append(r)
    return _Polls(tuple(ends), tuple(lengths), tuple(rows), max(lengths, default=0.0))


def _covering_load(polls: _Polls, start: datetime, end: datetime, direction: str | None) -> tuple[float, float] | None:
    """Mean load of the polls whose intervals (end - length, end] meet [start, end], and the seconds they span."""
    span = total = 0.0
    horizon = end + timedelta(seconds=polls.longest_s)
    for i in range(bisect.bisect_left(polls.ends, start), len(polls.ends)):
        t = polls.ends[i]
        if t > horizon:
            break
        if t - timedelta(seconds=polls.lengths[i]) <= end:
            span += polls.lengths[i]
            total += polls.lengths[i] * _load(polls.rows[i], direction)
    return (total / span, span) if span else None


def load_during_bps(
    iface: InterfaceEvidence, start: datetime, end: datetime, direction: str | None = None
) -> tuple[float, float] | None:
    """Mean load of the polls whose intervals cover any of [start, end], and the seconds those polls span (pure).

    A 10-second test is judged by the polls it ran in (one or two minute polls, or the 5-minute buckets the
    cycle keeps before its last half hour), not by an average over hours of diurnal load.
    """
    return _covering_load(_polls(iface), start, end, direction)


def _test_load(polls: _Polls, test: ThroughputTest, direction: str | None) -> float | None:
    duration_s = test.duration_s or k.LOAD_TEST_DEFAULT_DURATION_S
    load = _covering_load(polls, test.time, test.time + timedelta(seconds=duration_s), direction)
    return load[0] if load is not None else None


def load_at_test_bps(iface: InterfaceEvidence, test: ThroughputTest, direction: str | None = None) -> float | None:
    """The load through the interface at the time of ``test``: the mean of the polls covering its seconds (pure).

    The test's own bytes are left in: a 10-second test is a few per cent of a 5-minute bucket, and counting them
    as other traffic only makes the capacity left to the path look smaller and a rise look smaller (quieter, never
    a false suspect).
    """
    return _test_load(_polls(iface), test, direction)


def load_verdict(test_bps: float, level_before_bps: float, spare_bps: float | None) -> str | None:
    """What the load at the time of the lower tests says of their drop (pure).

    'spare': the tests got (nearly) all the capacity the other traffic left them (LOAD_SPARE_MATCH_FRACTION): the
    link was full, the load predicts the result -- a busy shared link, not a fault; 'limits': the capacity left
    was (nearly, the same fraction) the path's level before the drop, yet the tests got far less, so congestion
    cannot explain it -- equipment close to its limits (case study 5); 'unknown': no load measured on the
    element; None: the load took a good part of the path's room, and the tests fell further still than it left
    them (a fault during a busy hour: the load explains neither the size of the drop nor its absence).
    """
    if spare_bps is None:
        return "unknown"
    if test_bps >= k.LOAD_SPARE_MATCH_FRACTION * spare_bps:
        return "spare"
    if spare_bps >= k.LOAD_SPARE_MATCH_FRACTION * level_before_bps:
        return "limits"
    return None


def interface_load_rise(iface: InterfaceEvidence, step: DropStep, direction: str | None = None) -> dict | None:
    """The load through the interface at the time of the path's tests at the level before ``step`` and of the
    lower ones (``load_at_test_bps``), when it rose with the drop (pure).

    ``direction`` ('out' or 'in'): the side the path uses; traffic the other way shares the port but not the
    fibre or the queue, and does not compete (None: the larger of the two).  The rise must be at least
    max(LOAD_RISE_MIN_BPS, LOAD_RISE_MIN_FRACTION x speed).  ``stepped``: at least LOAD_STEP_FRACTION of it
    happened between the last test at the level before and the first lower one (``step_bps``), as when a flow
    starts; a load that ramps up over hours, as every morning, does not start with a drop.  With it the capacity
    the other traffic left the lower tests (``spare_bps``).
    """
    polls = _polls(iface)
    before = [v for v in (_test_load(polls, t, direction) for t in step.before) if v is not None]
    after = [v for v in (_test_load(polls, t, direction) for t in step.after) if v is not None]
    if not before or not after:
        return None
    before_bps, after_bps = statistics.median(before), statistics.median(after)
    rise = after_bps - before_bps
    if rise < max(k.LOAD_RISE_MIN_BPS, k.LOAD_RISE_MIN_FRACTION * (iface.speed_bps or 0.0)):
        return None
    last = _test_load(polls, step.last_healthy, direction) if step.last_healthy is not None else None
    first = _test_load(polls, step.after[0], direction)
    if last is None:
        last = before[-1]
    step_bps = (first - last) if first is not None else None
    return {
        "interface": iface.name,
        "before_bps": before_bps,
        "after_bps": after_bps,
        "rise_bps": rise,
        "speed_bps": iface.speed_bps,
        "after_utilisation": after_bps / iface.speed_bps if iface.speed_bps else None,
        "spare_bps": max(iface.speed_bps - after_bps, 0.0) if iface.speed_bps else None,
        "step_bps": step_bps,
        "stepped": step_bps is not None and step_bps >= k.LOAD_STEP_FRACTION * rise,
    }


def spare_at_tests_bps(
    iface: InterfaceEvidence, tests: Sequence[ThroughputTest], direction: str | None
) -> float | None:
    """The capacity the other traffic left at the time of ``tests`` (median over them; None without a speed or
    polls covering them)."""
    if not iface.speed_bps:
        return None
    polls = _polls(iface)
    others = [v for v in (_test_load(polls, t, direction) for t in tests) if v is not None]
    return max(iface.speed_bps - statistics.median(others), 0.0) if others else None


@dataclass(frozen=True)
class PolledPort:
    """A port of a path with polls, the side the path uses (its out or in counters) and its valid polls."""

    name: str
    direction: str
    speed_bps: float
    polls: _Polls


#: The polls of the interfaces of the latest bundles, by identity: every path through a border port reads the
#: same polls, worked out once (a cycle judges tens of paths through each uplink).
_POLLS_CACHE: dict[int, tuple[InterfaceEvidence, _Polls]] = {}
_POLLS_CACHE_MAX = 4096


def _cached_polls(iface: InterfaceEvidence) -> _Polls:
    hit = _POLLS_CACHE.get(id(iface))
    if hit is not None and hit[0] is iface:
        return hit[1]
    if len(_POLLS_CACHE) >= _POLLS_CACHE_MAX:
        _POLLS_CACHE.clear()
    polls = _polls(iface)
    _POLLS_CACHE[id(iface)] = (iface, polls)
    return polls


def path_port_direction(name: str, path: PathEvidence, bundle: EvidenceBundle) -> str | None:
    """The side of port ``name`` the path uses: 'in' when it is named on the path's last hop (the path arrives
    there by it: ``port_direction``; it leaves by no port at its end), else the inventory's answer
    (``interface_direction``: 'out' when a hop leaves by it, 'in' when the path arrives by its far end)."""
    return "in" if _arrives_by(name, path) else interface_direction(name, path, bundle)


def _arrives_by(name: str, path: PathEvidence) -> bool:
    """Whether port ``name`` is named on the path's last hop, which names a port."""
    return hop_position(path.hops, name) == len(path.hops) - 1 and ":" in path.hops[-1]


def polled_ports_on_path(path: PathEvidence, bundle: EvidenceBundle) -> tuple[PolledPort, ...]:
    """The ports the path leaves or arrives by (named on its hops) that have a speed and polls (pure).

    Only a port the path is known to cross, in a known direction, says what room the path had: another port of
    a router it crosses carries someone else's link, and a bundle member carries only the flows hashed onto it.
    """
    equipment = {base_equipment(h) for h in path.hops}
    polled = [i for i in bundle.interfaces if i.equipment in equipment and i.speed_bps and i.rates]
    crossed = interfaces_on_path((i.name for i in polled), path, bundle)
    out = []
    for iface in polled:
        how, direction = crossed[iface.name]
        if how != "exact":
            continue
        if _arrives_by(iface.name, path):
            direction = "in"
        if direction not in ("in", "out"):
            continue
        polls = _cached_polls(iface)
        if polls.ends:
            out.append(PolledPort(iface.name, direction, iface.speed_bps, polls))
    return tuple(out)


def tightest_spare(ports: Sequence[PolledPort], test: ThroughputTest) -> tuple[float, str] | None:
    """The capacity the other traffic left ``test`` on the tightest of ``ports`` (its speed less the load of the
    polls covering the test's seconds, ``load_at_test_bps``) and that port's name; None when no poll covers it.

    A test on a shared link gets what the other traffic leaves it: this is what it could get at best.
    """
    best: tuple[float, str] | None = None
    for port in ports:
        load = _test_load(port.polls, test, port.direction)
        if load is None:
            continue
        spare = max(port.speed_bps - load, 0.0)
        if best is None or spare < best[0]:
            best = (spare, port.name)
    return best


def load_pending(ports: Sequence[PolledPort], test: ThroughputTest, now: datetime) -> bool:
    """True when no poll of ``ports`` covers ``test`` yet but one is due: every port's last poll ended before the
    test did, less than two polling intervals before ``now`` (the poll that will cover it is simply not in yet).

    A test judged without its load is judged against the path's level: the newest test of a busy afternoon, seconds
    before the poll that measures its room arrives, reads as a collapse. It waits for its poll instead (one polling
    interval); a port whose polls have stopped is not waited for.
    """
    if not ports:
        return False
    duration = timedelta(seconds=test.duration_s or k.LOAD_TEST_DEFAULT_DURATION_S)
    for port in ports:
        last = port.polls.ends[-1]
        if last >= test.time + duration or (now - last).total_seconds() > 2 * port.polls.longest_s:
            return False
    return True


def bundle_load_rise(members: Sequence[InterfaceEvidence], step: DropStep) -> float | None:
    """Rise of a bundle's aggregate load (its members' loads added up at the time of each test) from the tests
    before ``step`` to the lower ones (pure).

    Flows are hashed over the members in service: when a member is shut or rehashed, its flows move to the
    others, whose loads rise while the bundle carries no more than before.  Only the aggregate says whether
    other traffic arrived.
    """

    polls = [_polls(m) for m in members]

    def aggregate(tests: Sequence[ThroughputTest]) -> float | None:
        sums = []
        for t in tests:
            loads = [_test_load(p, t, None) for p in polls]
            if any(v is None for v in loads):
                continue
            sums.append(sum(v for v in loads if v is not None))
        return statistics.median(sums) if sums else None

    before, after = aggregate(step.before), aggregate(step.after)
    if before is None or after is None:
        return None
    return after - before


def path_load_rise(
    q: PathAssessment,
    onset: datetime,
    end: datetime,
    observed_since: datetime,
    last_healthy: datetime | None = None,
) -> dict | None:
    """Traffic of another path's tests after ``onset`` vs before: started, or rose by at least
    max(LOAD_RISE_MIN_BPS, LOAD_RISE_MIN_FRACTION x its capacity, DEGRADED_STAT_SIGMAS robust sigmas of its
    earlier results) -- a few per cent up and down is test-to-test noise, not new traffic.

    ``last_healthy``: the degraded path's last result at its level before the drop; traffic already up before it
    did not start with the drop.  The level before comes from the path's results before the onset, else from its
    history (the baseline): a path tested every few hours often has none in the look-back or in the window, and
    "no result in the window" is no quiet period: only a path without any earlier result "started".
    """
    tol = timedelta(seconds=k.LOAD_ONSET_TOLERANCE_S)
    cut = onset - tol if last_healthy is None else min(last_healthy, onset)
    tests = [t for t in q.path.throughput_tests if t.error is None and t.throughput_bps]
    after = [t.throughput_bps for t in tests if cut <= t.time <= end]
    before = [t.throughput_bps for t in tests if onset - timedelta(seconds=k.LOAD_LOOKBACK_S) <= t.time < cut]
    if not after:
        return None
    earlier = sorted((t for t in tests if t.time < cut), key=lambda t: t.time)
    if not before and earlier:
        # tests sparser than the look-back (every few hours): the path ran before, its latest results are the
        # level to compare with -- an empty look-back is no quiet period, and no traffic "started"
        before = [t.throughput_bps for t in earlier[-k.MIN_REFERENCE_TESTS :]]
    history = q.path.baseline
    known = bool(history and history.tcp_tests and history.tcp_reference_at(onset))
    if not before and not known:
        if observed_since >= cut:
            return None  # no evidence of the quiet period before
        first = min(t.time for t in tests if cut <= t.time <= end)
        if first > onset + tol:
            return None
        before_bps = 0.0
    elif before:
        before_bps = statistics.median(before)
    else:
        # none in the window before the onset, but the path has a history: that is its level, not 0
        before_bps = history.tcp_reference_at(onset) if history else 0.0
    after_bps = statistics.median(after)
    # a rise must stand out of the test-to-test noise: 2 % of the path's capacity and 4 robust sigmas
    noise = 0.0
    if len(before) >= k.MIN_REFERENCE_TESTS:
        noise = k.DEGRADED_STAT_SIGMAS * 1.4826 * statistics.median(abs(b - before_bps) for b in before)
    if known and history is not None:
        # the path's own history knows its level and spread better than the few tests before the onset
        # (three results every four hours can sit low or close together by chance): new traffic runs above
        # its usual level by more than its usual run-to-run spread
        before_bps = max(before_bps, history.tcp_reference_at(onset) or 0.0)
        sigma = q.test_sigma_bps if q.reference_source == BASELINE_REFERENCE else None
        if sigma is None and history.tcp_throughput_mad_bps is not None:
            sigma = 1.4826 * history.tcp_throughput_mad_bps
        noise = max(noise, k.DEGRADED_STAT_SIGMAS * (sigma or 0.0))
    if after_bps - before_bps < max(k.LOAD_RISE_MIN_BPS, k.LOAD_RISE_MIN_FRACTION * q.path.capacity_bps, noise):
        return None
    return {
        "path": q.key,
        "before_bps": before_bps,
        "after_bps": after_bps,
        "rise_bps": after_bps - before_bps,
        "started": not before and not known,
    }
