"""Wrap- and reset-safe SNMP counter arithmetic: two polls of an interface in, rates out.

Pure functions on plain values, shared by the site agent and the central service (the scenario
replay turns counters into rates with exactly this code). No I/O, no Django, no msgspec.

The physics (docs/diagnosis.md#the-physics):

- A Counter32 octet counter wraps after 2^32 octets: every 2^32 * 8 / C seconds, i.e. 34.4 s at
  1 Gb/s, 3.4 s at 10 Gb/s and 0.34 s at 100 Gb/s. Polled every 60 s it can wrap many times
  between two polls, and ``delta mod 2^32`` is then simply wrong.
- A Counter64 octet counter wraps after 2^64 * 8 / C seconds: 468 years at 10 Gb/s, 46.8 years at
  100 Gb/s. A wrap is still possible because counters do not always start at 0 (case study 9 of
  docs/diagnosis.md#case-studies crosses 2^64 on a 10 Gb/s interface), so a decrease is taken as a wrap when the
  implied rate is plausible for the interface speed.
- A counter that goes backwards together with sysUpTime, snmpEngineBoots or
  ifCounterDiscontinuityTime is a reset, not a wrap. Its interval is dropped, never turned into a
  spike; the reason becomes COUNTER_DISCONTINUITY evidence.

"Plausible" means at most ``RATE_MARGIN`` (110 %) of the interface speed, measured over the poll
interval plus ``POLL_TIMING_SLACK_S`` (1 s) because the two polls' timestamps are not the instants
the device read its counters. For packet and error counters the speed is converted with the
smallest Ethernet frame on the wire (64 bytes + 8 preamble + 12 inter-frame gap = 672 bits):
10 Gb/s carries at most 14.88 million frames per second.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

# The counter widths are the schema's (collectors/records/types.py): this module computes with them.
from collectors.records import SnmpRecord
from collectors.records.schema import COUNTER_BITS
from collectors.records.types import (
    COUNTER32_MAX,
    COUNTER32_MODULUS,
    COUNTER64_MAX,
    COUNTER64_MODULUS,
    TICKS_PER_S,
    TIMETICKS_MAX,
    TIMETICKS_MODULUS,
    iso_z,
)

__all__ = [
    "COUNTER32_MAX",
    "COUNTER32_MODULUS",
    "COUNTER64_MAX",
    "COUNTER64_MODULUS",
    "COUNTER_RESET_CODES",
    "COUNTER_KINDS",
    "COUNTER_SPECS",
    "DISCONTINUITY_COUNTER_DECREASED",
    "DISCONTINUITY_ENGINE_BOOTS",
    "DISCONTINUITY_IF_COUNTER",
    "DISCONTINUITY_RATE_IMPLAUSIBLE",
    "DISCONTINUITY_SYS_UPTIME",
    "DISCONTINUITY_TIME",
    "MIN_FRAME_BITS",
    "POLL_TIMING_SLACK_S",
    "RATE_FIELDS",
    "RATE_MARGIN",
    "TICKS_PER_S",
    "TIMETICKS_MAX",
    "TIMETICKS_MODULUS",
    "UNKNOWN_SPEED_CAP_BPS",
    "CounterKind",
    "CounterSpec",
    "InterfaceRates",
    "RateResult",
    "Sample",
    "rate_between",
    "rates_from_series",
    "sample_from_snmp",
]

RATE_MARGIN = 1.1
"""A rate up to 110 % of the interface speed is plausible (timestamp jitter, speed rounding)."""

POLL_TIMING_SLACK_S = 1.0
"""Added to the poll interval when bounding a delta: a poll's timestamp can be off by about a
second from the instant the device read its counters (slow agents, retries, GETBULK walks)."""

UNKNOWN_SPEED_CAP_BPS = 100e9
"""Rate ceiling assumed for a Counter32 that decreased on an interface of unknown speed."""

MIN_FRAME_BITS = (64 + 8 + 12) * 8
"""672 bits: the smallest Ethernet frame with preamble and inter-frame gap; bounds frame rates."""

# How far sysUpTime may disagree with the wall clock between two polls before we call it a
# restart: 10 s (timeouts and retries of one poll) plus 1 % of the interval (long gaps).
UPTIME_TOLERANCE_S = 10.0
UPTIME_TOLERANCE_REL = 0.01

# Discontinuity codes (RateResult.discontinuity_code). All but DISCONTINUITY_TIME mean the
# counters restarted and are COUNTER_DISCONTINUITY evidence.
DISCONTINUITY_TIME = "time_not_increasing"
DISCONTINUITY_SYS_UPTIME = "sys_uptime_reset"
DISCONTINUITY_ENGINE_BOOTS = "engine_boots_changed"
DISCONTINUITY_IF_COUNTER = "counter_discontinuity_time_changed"
DISCONTINUITY_COUNTER_DECREASED = "counter_decreased"
DISCONTINUITY_RATE_IMPLAUSIBLE = "rate_implausible"
COUNTER_RESET_CODES = frozenset(
    {
        DISCONTINUITY_SYS_UPTIME,
        DISCONTINUITY_ENGINE_BOOTS,
        DISCONTINUITY_IF_COUNTER,
        DISCONTINUITY_COUNTER_DECREASED,
        DISCONTINUITY_RATE_IMPLAUSIBLE,
    }
)


class CounterKind(StrEnum):
    """What a counter counts; decides how the interface speed bounds its rate."""

    OCTETS = "octets"
    PACKETS = "packets"
    EVENTS = "events"  # errors and discards: frames, but nobody expects 2^32 of them per poll


@dataclass(frozen=True, slots=True)
class CounterSpec:
    """An IF-MIB counter: its width in bits and what it counts."""

    bits: int
    kind: CounterKind

    @property
    def modulus(self) -> int:
        return 2**self.bits

    @property
    def units_per_bit_of_speed(self) -> float:
        """Counter units per second that one bit/s of interface speed can produce."""
        return 1 / 8 if self.kind is CounterKind.OCTETS else 1 / MIN_FRAME_BITS

    @property
    def rate_scale(self) -> int:
        """Multiplier from counter units per second to the published rate (octets -> bits)."""
        return 8 if self.kind is CounterKind.OCTETS else 1


COUNTER_KINDS: Mapping[str, CounterKind] = {
    "hc_in_octets": CounterKind.OCTETS,
    "hc_out_octets": CounterKind.OCTETS,
    "hc_in_ucast_pkts": CounterKind.PACKETS,
    "hc_out_ucast_pkts": CounterKind.PACKETS,
    "in_octets": CounterKind.OCTETS,
    "out_octets": CounterKind.OCTETS,
    "in_errors": CounterKind.EVENTS,
    "out_errors": CounterKind.EVENTS,
    "in_discards": CounterKind.EVENTS,
    "out_discards": CounterKind.EVENTS,
}
"""What each counter of the wire schema counts."""

COUNTER_SPECS: Mapping[str, CounterSpec] = {
    name: CounterSpec(bits, COUNTER_KINDS[name]) for name, bits in COUNTER_BITS.items()
}
"""The counters of the wire schema (exactly the fields of records.Counters), each as wide as its type there."""

RATE_FIELDS: Mapping[str, tuple[str, ...]] = {
    "in_bps": ("hc_in_octets", "in_octets"),  # Counter64 preferred; Counter32 only without HC
    "out_bps": ("hc_out_octets", "out_octets"),
    "in_ucast_pps": ("hc_in_ucast_pkts",),
    "out_ucast_pps": ("hc_out_ucast_pkts",),
    "in_errors_per_s": ("in_errors",),
    "out_errors_per_s": ("out_errors",),
    "in_discards_per_s": ("in_discards",),
    "out_discards_per_s": ("out_discards",),
}
"""Each published rate and the counters it may come from, in order of preference."""


@dataclass(frozen=True, slots=True)
class Sample:
    """One poll of one interface.

    ``time`` is the tz-aware poll time, ``sys_uptime_ticks`` sysUpTime, ``engine_boots``
    snmpEngineBoots, ``discontinuity_ticks`` ifCounterDiscontinuityTime (None when not polled),
    ``counters`` IF-MIB counters by their snake-case names (see COUNTER_SPECS; other names are
    ignored), ``speed_bps`` the interface speed (None or 0: unknown, as ifSpeed 0 means in IF-MIB).
    """

    time: datetime
    sys_uptime_ticks: int | None
    engine_boots: int | None
    discontinuity_ticks: int | None
    counters: Mapping[str, int]
    speed_bps: float | None

    def __post_init__(self) -> None:
        # Bad samples are programming errors (records.py already validated the wire data):
        # fail loudly here rather than compute a rate from them.
        if self.time.tzinfo is None or self.time.utcoffset() is None:
            raise ValueError(f"Sample.time must be timezone-aware, got {self.time!r}")
        for label, ticks in (
            ("sys_uptime_ticks", self.sys_uptime_ticks),
            ("discontinuity_ticks", self.discontinuity_ticks),
        ):
            if ticks is not None and not _is_int_in(ticks, 0, TIMETICKS_MAX):
                raise ValueError(f"{label} must be an int in 0..2^32-1, got {ticks!r}")
        if self.engine_boots is not None and not _is_int_in(self.engine_boots, 0, 2**31 - 1):
            raise ValueError(f"engine_boots must be an int in 0..2^31-1, got {self.engine_boots!r}")
        for name, value in self.counters.items():
            spec = COUNTER_SPECS.get(name)
            if spec is not None and not _is_int_in(value, 0, spec.modulus - 1):
                raise ValueError(f"counter {name} must be an int in 0..2^{spec.bits}-1, got {value!r}")
        if self.speed_bps is not None and not (math.isfinite(self.speed_bps) and self.speed_bps >= 0):
            raise ValueError(f"speed_bps must be a finite number >= 0, got {self.speed_bps!r}")


@dataclass(frozen=True, slots=True)
class InterfaceRates:
    """What an interface carried over one polling interval, per second: ``in_bps``/``out_bps`` bit/s, errors and
    discards events/s; None when not known. The base of :class:`RateResult` and of what is built from stored rates."""

    in_bps: float | None = None
    out_bps: float | None = None
    in_errors_per_s: float | None = None
    out_errors_per_s: float | None = None
    in_discards_per_s: float | None = None
    out_discards_per_s: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RateResult(InterfaceRates):
    """The rates of one polling interval, or why the interval was dropped.

    Rates are per second (:class:`InterfaceRates`), ``*_pps`` frames/s.
    A rate is None when its counters were not polled in both samples or could not be trusted;
    ``notes`` then says why (keyed by the rate's name). When ``discontinuity`` is set the whole
    interval is dropped: every rate is None and ``discontinuity_code`` is one of the
    ``DISCONTINUITY_*`` constants. ``wrapped`` lists the counters taken to have wrapped.
    """

    start: datetime
    end: datetime
    interval_s: float
    in_ucast_pps: float | None = None
    out_ucast_pps: float | None = None
    discontinuity: str | None = None
    discontinuity_code: str | None = None
    wrapped: tuple[str, ...] = ()
    notes: Mapping[str, str] = field(default_factory=dict)

    @property
    def valid(self) -> bool:
        """True when the interval was kept (some rates may still be None, see ``notes``)."""
        return self.discontinuity is None

    @property
    def is_counter_reset(self) -> bool:
        """True when the interval was dropped because the counters restarted (COUNTER_DISCONTINUITY)."""
        return self.discontinuity_code in COUNTER_RESET_CODES

    def rates(self) -> dict[str, float]:
        """The computed rates by name (RATE_FIELDS keys), without the ones that are None."""
        values = {name: getattr(self, name) for name in RATE_FIELDS}
        return {name: value for name, value in values.items() if value is not None}


def rate_between(prev: Sample, cur: Sample) -> RateResult:
    """Rates over the interval from ``prev`` to ``cur`` (two polls of the same interface).

    The interval is dropped (``discontinuity`` set, no rates) when:

    1. time did not advance (``DISCONTINUITY_TIME``): duplicate or out-of-order samples;
    2. snmpEngineBoots changed (``DISCONTINUITY_ENGINE_BOOTS``);
    3. sysUpTime says the device restarted (``DISCONTINUITY_SYS_UPTIME``): it went backwards, or
       advanced less than the wall clock by more than 10 s + 1 % of the interval. A decrease is a
       497-day wrap instead when the wrapped advance ``(cur - prev) mod 2^32`` ticks matches the
       elapsed wall time within that tolerance (e.g. 4294967000 -> 5704 ticks over 60 s: the
       wrapped advance is 6000 ticks = 60.00 s, so no restart);
    4. ifCounterDiscontinuityTime changed (``DISCONTINUITY_IF_COUNTER``);
    5. a counter decreased and neither sample has sysUpTime, snmpEngineBoots or
       ifCounterDiscontinuityTime (``DISCONTINUITY_COUNTER_DECREASED``): without a restart detector
       a reset and a wrap look alike, and only the reset is safe to assume;
    6. a counter decreased and a wrap would imply a rate above the plausible ceiling
       (``DISCONTINUITY_COUNTER_DECREASED``), or a counter increased faster than the ceiling
       (``DISCONTINUITY_RATE_IMPLAUSIBLE``: an unsignalled reset, or a wrong interface speed).

    The ceiling for one counter is ``speed * 1.1 * (interval + 1 s)`` converted to counter units
    (octets: /8; packets and errors: /672 bits per minimum frame). Per counter, with delta
    ``cur - prev``:

    - no decrease: the delta is taken as is (no wrap) unless the counter is a Counter32 octet
      counter whose ceiling reaches 2^32: then several wraps are possible and the rate is left
      None with a note ("ambiguous"). At 10 Gb/s a Counter32 wraps every 3.4 s, so a 60 s poll
      can never give a trustworthy 32-bit rate: we say so instead of computing a wrong one.
      At 1 Gb/s the limit is a 30 s poll, at 100 Mb/s 311 s. Error and discard counters are
      assumed not to wrap more than once (2^32 errors per poll would be a dead link);
    - decrease, speed known: a single wrap (delta + 2^N) if within the ceiling; ambiguous (None,
      note) if the ceiling reaches 2^N; otherwise a reset. Example: 10 Gb/s, 60 s, Counter64 from
      2^64 - 3e10 to 3e10: the wrap delta is 6e10 octets = 8 Gb/s, below 11.2 Gb/s, so a wrap;
    - decrease, speed unknown: a Counter64 decrease is a reset (a Counter64 wrap needs 46.8 years
      at 100 Gb/s, only a speed can make one plausible); a Counter32 decrease is a single wrap if
      the implied rate is at most 100 Gb/s (or 100 Gb/s of minimum frames), otherwise a reset.
      Without a speed a Counter32 that wrapped more than once cannot be detected: give the
      interface speed (inventory speed_mbps or ifHighSpeed) for trustworthy 32-bit rates.
    """
    interval_s = (cur.time - prev.time).total_seconds()
    if interval_s <= 0:
        return _dropped(
            prev,
            cur,
            interval_s,
            DISCONTINUITY_TIME,
            f"sample time did not advance ({iso_z(prev.time)} -> {iso_z(cur.time)}, {interval_s:+.3f} s)",
        )

    for code, reason in (
        (DISCONTINUITY_ENGINE_BOOTS, _engine_boots_reason(prev, cur)),
        (DISCONTINUITY_SYS_UPTIME, _sys_uptime_reason(prev.sys_uptime_ticks, cur.sys_uptime_ticks, interval_s)),
        (DISCONTINUITY_IF_COUNTER, _if_counter_discontinuity_reason(prev, cur)),
    ):
        if reason is not None:
            return _dropped(prev, cur, interval_s, code, reason)

    speed_bps = _interval_speed_bps(prev, cur)
    # Without sysUpTime, snmpEngineBoots or ifCounterDiscontinuityTime in both samples a restart is
    # invisible, and a restarted counter looks exactly like a wrapped one: taking it for a wrap would
    # invent up to 2^32 (or 2^64) units of traffic. Without a detector a decrease is always a reset.
    detector = _has_restart_detector(prev, cur)
    rates: dict[str, float] = {}
    notes: dict[str, str] = {}
    wrapped: list[str] = []
    resets: list[tuple[str, str]] = []
    for rate_name, sources in RATE_FIELDS.items():
        counter = next((name for name in sources if name in prev.counters and name in cur.counters), None)
        if counter is None:
            half = [name for name in sources if (name in prev.counters) != (name in cur.counters)]
            if half:
                side = "previous" if half[0] in cur.counters else "current"
                notes[rate_name] = f"{half[0]} missing in the {side} sample"
            continue
        outcome = _counter_delta(counter, prev.counters[counter], cur.counters[counter], interval_s, speed_bps)
        if not detector and isinstance(outcome, _Delta) and outcome.wrapped:
            outcome = _Reset(
                DISCONTINUITY_COUNTER_DECREASED,
                f"{counter} went back from {prev.counters[counter]} to {cur.counters[counter]} and the device reports "
                f"no sysUpTime, snmpEngineBoots or ifCounterDiscontinuityTime to tell a restart from a wrap: taken "
                f"as a counter reset",
            )
        if isinstance(outcome, _Reset):
            resets.append((outcome.code, outcome.reason))
        elif isinstance(outcome, _Ambiguous):
            notes[rate_name] = outcome.reason
        else:
            rates[rate_name] = outcome.delta * COUNTER_SPECS[counter].rate_scale / interval_s
            if outcome.wrapped:
                wrapped.append(counter)

    if resets:
        return _dropped(prev, cur, interval_s, resets[0][0], "; ".join(reason for _, reason in resets))
    return RateResult(
        start=prev.time, end=cur.time, interval_s=interval_s, wrapped=tuple(wrapped), notes=notes, **rates
    )


def rates_from_series(samples: Iterable[Sample]) -> list[RateResult]:
    """``rate_between`` over each pair of consecutive samples, in time order.

    The samples are sorted by time first (stable, so equal times keep their order and give a
    ``DISCONTINUITY_TIME`` interval). n samples give n - 1 results; a dropped interval does not
    affect the next one, which starts from the sample after the reset.
    """
    ordered = sorted(samples, key=lambda sample: sample.time)
    return [rate_between(prev, cur) for prev, cur in zip(ordered, ordered[1:], strict=False)]


def sample_from_snmp(record: SnmpRecord, *, speed_bps: float | None = None) -> Sample:
    """The Sample of one wire ``snmp`` record.

    ``speed_bps`` overrides the record's ``speed_mbps`` (e.g. the inventory's interface speed
    when the device reports none); a speed of 0 means unknown.
    """
    if speed_bps is None and record.speed_mbps:
        speed_bps = record.speed_mbps * 1e6
    counters = {name: getattr(record.counters, name) for name in COUNTER_SPECS}
    return Sample(
        time=record.time,
        sys_uptime_ticks=record.sys_uptime_ticks,
        engine_boots=record.snmp_engine_boots,
        discontinuity_ticks=record.counter_discontinuity_ticks,
        counters={name: value for name, value in counters.items() if value is not None},
        speed_bps=speed_bps,
    )


# --- internals -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Delta:
    delta: int
    wrapped: bool


@dataclass(frozen=True, slots=True)
class _Ambiguous:
    reason: str


@dataclass(frozen=True, slots=True)
class _Reset:
    code: str
    reason: str


def _counter_delta(
    name: str, prev_value: int, cur_value: int, interval_s: float, speed_bps: float | None
) -> _Delta | _Ambiguous | _Reset:
    """Apply the per-counter rules of ``rate_between`` to one counter."""
    spec = COUNTER_SPECS[name]
    raw_delta = cur_value - prev_value
    width = f"Counter{spec.bits}"

    if speed_bps is not None:
        ceiling = _ceiling(spec, speed_bps, interval_s)
        can_wrap_twice = ceiling >= spec.modulus
        if can_wrap_twice and (raw_delta < 0 or spec.kind is not CounterKind.EVENTS):
            wrap_s = spec.modulus / (speed_bps * spec.units_per_bit_of_speed)
            return _Ambiguous(
                f"{width} {name} can wrap every {wrap_s:.3g} s at {_bps(speed_bps)}, so a {interval_s:.3g} s "
                f"poll interval is ambiguous; poll the 64-bit ifHC counters or poll faster"
            )
        if raw_delta >= 0:
            if raw_delta > ceiling:
                return _Reset(
                    DISCONTINUITY_RATE_IMPLAUSIBLE,
                    f"{name} rose by {raw_delta} in {interval_s:.3g} s = {_rate_text(spec, raw_delta, interval_s)}, "
                    f"above {RATE_MARGIN:.0%} of the {_bps(speed_bps)} interface speed: an unsignalled counter "
                    f"reset or a wrong interface speed",
                )
            return _Delta(raw_delta, wrapped=False)
        wrap_delta = raw_delta + spec.modulus
        if wrap_delta <= ceiling:
            return _Delta(wrap_delta, wrapped=True)
        return _Reset(
            DISCONTINUITY_COUNTER_DECREASED,
            f"{name} went back from {prev_value} to {cur_value}; as a {width} wrap that would be "
            f"{_rate_text(spec, wrap_delta, interval_s)} in {interval_s:.3g} s, above {RATE_MARGIN:.0%} of the "
            f"{_bps(speed_bps)} interface speed: a counter reset",
        )

    if raw_delta >= 0:
        return _Delta(raw_delta, wrapped=False)
    if spec.bits == 64:
        return _Reset(
            DISCONTINUITY_COUNTER_DECREASED,
            f"{name} went back from {prev_value} to {cur_value} and the interface speed is unknown: a Counter64 "
            f"wrap takes 46.8 years even at 100 Gb/s, so this is a counter reset",
        )
    wrap_delta = raw_delta + spec.modulus
    if wrap_delta / interval_s <= UNKNOWN_SPEED_CAP_BPS * spec.units_per_bit_of_speed:
        return _Delta(wrap_delta, wrapped=True)
    return _Reset(
        DISCONTINUITY_COUNTER_DECREASED,
        f"{name} went back from {prev_value} to {cur_value}; as a {width} wrap that would be "
        f"{_rate_text(spec, wrap_delta, interval_s)} in {interval_s:.3g} s, above the "
        f"{_bps(UNKNOWN_SPEED_CAP_BPS)} assumed for an interface of unknown speed: a counter reset",
    )


def _has_restart_detector(prev: Sample, cur: Sample) -> bool:
    """True when both samples carry something that reveals a device or counter restart."""
    return any(
        getattr(prev, name) is not None and getattr(cur, name) is not None
        for name in ("sys_uptime_ticks", "engine_boots", "discontinuity_ticks")
    )


def _ceiling(spec: CounterSpec, speed_bps: float, interval_s: float) -> float:
    """Largest plausible delta of one counter over the interval, in counter units."""
    return speed_bps * RATE_MARGIN * spec.units_per_bit_of_speed * (interval_s + POLL_TIMING_SLACK_S)


def _interval_speed_bps(prev: Sample, cur: Sample) -> float | None:
    # A link renegotiated during the interval (1G -> 10G) may have run at either speed: the
    # higher one is the safe ceiling (a false reset is worse than a missed one here).
    speeds = [s for s in (prev.speed_bps, cur.speed_bps) if s is not None and s > 0]
    return max(speeds) if speeds else None


def _sys_uptime_reason(prev_ticks: int | None, cur_ticks: int | None, elapsed_s: float) -> str | None:
    """Why sysUpTime says the device restarted between the polls, or None."""
    if prev_ticks is None or cur_ticks is None:
        return None
    tolerance_s = UPTIME_TOLERANCE_S + UPTIME_TOLERANCE_REL * elapsed_s
    if (elapsed_s + tolerance_s) * TICKS_PER_S >= TIMETICKS_MODULUS:
        return None  # a gap of ~497 days: sysUpTime may have wrapped any number of times
    advanced_s = ((cur_ticks - prev_ticks) % TIMETICKS_MODULUS) / TICKS_PER_S
    if cur_ticks >= prev_ticks:
        if advanced_s < elapsed_s - tolerance_s:
            return (
                f"sysUpTime advanced only {advanced_s:.2f} s ({prev_ticks} -> {cur_ticks} ticks) while "
                f"{elapsed_s:.2f} s passed: the device restarted in between"
            )
        return None
    if abs(advanced_s - elapsed_s) <= tolerance_s:
        return None  # the 2^32-tick (497.1-day) wrap of sysUpTime, consistent with the wall clock
    return (
        f"sysUpTime went back from {prev_ticks} to {cur_ticks} ticks; a 2^32-tick wrap would mean "
        f"{advanced_s:.2f} s had passed, not {elapsed_s:.2f} s: the device restarted"
    )


def _engine_boots_reason(prev: Sample, cur: Sample) -> str | None:
    if prev.engine_boots is None or cur.engine_boots is None or prev.engine_boots == cur.engine_boots:
        return None
    return f"snmpEngineBoots changed from {prev.engine_boots} to {cur.engine_boots}: the SNMP engine restarted"


def _if_counter_discontinuity_reason(prev: Sample, cur: Sample) -> str | None:
    if prev.discontinuity_ticks is None or cur.discontinuity_ticks is None:
        return None
    if prev.discontinuity_ticks == cur.discontinuity_ticks:
        return None
    return (
        f"ifCounterDiscontinuityTime changed from {prev.discontinuity_ticks} to {cur.discontinuity_ticks} "
        f"ticks: the device signalled a counter discontinuity on this interface"
    )


def _dropped(prev: Sample, cur: Sample, interval_s: float, code: str, reason: str) -> RateResult:
    return RateResult(
        start=prev.time, end=cur.time, interval_s=interval_s, discontinuity=reason, discontinuity_code=code
    )


def _is_int_in(value: object, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _rate_text(spec: CounterSpec, delta: int, interval_s: float) -> str:
    rate = delta * spec.rate_scale / interval_s
    if spec.kind is CounterKind.OCTETS:
        return _bps(rate)
    return f"{rate:.3g} {'frames' if spec.kind is CounterKind.PACKETS else 'events'}/s"


def _bps(rate_bps: float) -> str:
    return f"{rate_bps / 1e9:.3g} Gb/s" if rate_bps >= 1e9 else f"{rate_bps / 1e6:.3g} Mb/s"
