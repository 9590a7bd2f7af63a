"""Properties of the counter arithmetic over generated traffic, speeds, poll intervals and reboots."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from collectors.counters import (
    COUNTER32_MODULUS,
    COUNTER64_MODULUS,
    DISCONTINUITY_SYS_UPTIME,
    POLL_TIMING_SLACK_S,
    RATE_FIELDS,
    RATE_MARGIN,
    TIMETICKS_MAX,
    UPTIME_TOLERANCE_REL,
    UPTIME_TOLERANCE_S,
    Sample,
    rate_between,
    rates_from_series,
)

T0 = datetime(2026, 3, 1, tzinfo=UTC)
SPEEDS_BPS = st.sampled_from([100e6, 1e9, 10e9, 40e9, 100e9, 400e9]) | st.floats(1e6, 4e11)
FRACTION = st.floats(0, 1)


def poll(t_us: int, octets: int, *, name: str, speed_bps: float | None, uptime_ticks: int | None) -> Sample:
    return Sample(time=T0 + timedelta(microseconds=t_us), sys_uptime_ticks=uptime_ticks, engine_boots=None,
                  discontinuity_ticks=None, counters={name: octets}, speed_bps=speed_bps)


def uptime_pair(dt_us: int) -> tuple[int, int]:
    """sysUpTime of a device up for 10 days, at both polls."""
    start = 10 * 86400 * 100
    return start, start + round(dt_us / 10_000)


def polls_apart(dt_us: int, start: int, octets: int, *, name: str, speed_bps: float | None) -> tuple[Sample, Sample]:
    """Two polls ``dt_us`` apart of a device up for 10 days: the counter at ``start``, then ``octets`` later
    (modulo its width)."""
    modulus = COUNTER64_MODULUS if name.startswith("hc_") else COUNTER32_MODULUS
    prev_up, cur_up = uptime_pair(dt_us)
    return (poll(0, start, name=name, speed_bps=speed_bps, uptime_ticks=prev_up),
            poll(dt_us, (start + octets) % modulus, name=name, speed_bps=speed_bps, uptime_ticks=cur_up))  # fmt: skip


def ceiling_bps(speed_bps: float, interval_s: float) -> float:
    return speed_bps * RATE_MARGIN * (interval_s + POLL_TIMING_SLACK_S) / interval_s


def assert_exact(computed: float | None, octets: int, dt_us: int) -> None:
    expected_bps = octets * 8 / (dt_us / 1e6)
    assert computed is not None
    assert math.isclose(computed, expected_bps, rel_tol=1e-9, abs_tol=0.0) or computed == expected_bps == 0


@settings(max_examples=400, deadline=None)
@given(speed_bps=SPEEDS_BPS, load=FRACTION, dt_us=st.integers(100_000, 86_400_000_000),
       start=st.integers(0, COUNTER64_MODULUS - 1))
def test_counter64_rate_is_exact_for_any_traffic_up_to_the_speed(speed_bps, load, dt_us, start):
    # given: traffic at `load` x speed for dt; Counter64 may cross 2^64 (once: 46 years at 100 Gb/s)
    octets = round(load * speed_bps * dt_us / 1e6 / 8)
    prev, cur = polls_apart(dt_us, start, octets, name="hc_in_octets", speed_bps=speed_bps)

    # when
    result = rate_between(prev, cur)

    # then
    assert result.valid
    assert_exact(result.in_bps, octets, dt_us)
    assert result.wrapped == (("hc_in_octets",) if start + octets >= COUNTER64_MODULUS else ())


@settings(max_examples=400, deadline=None)
@given(speed_bps=SPEEDS_BPS, load=FRACTION, dt_share=st.floats(0.01, 1, exclude_max=True),
       start=st.integers(0, COUNTER32_MODULUS - 1))
def test_counter32_rate_is_exact_when_the_poll_interval_allows_at_most_one_wrap(speed_bps, load, dt_share, start):
    # the longest interval in which even 110 % of the speed cannot move 2^32 octets
    max_dt_s = COUNTER32_MODULUS * 8 / (speed_bps * RATE_MARGIN) - POLL_TIMING_SLACK_S
    dt_us = int(dt_share * max_dt_s * 1e6)
    assume(dt_us >= 1000)
    octets = round(load * speed_bps * dt_us / 1e6 / 8)
    prev, cur = polls_apart(dt_us, start, octets, name="in_octets", speed_bps=speed_bps)

    result = rate_between(prev, cur)

    assert result.valid
    assert_exact(result.in_bps, octets, dt_us)


@settings(max_examples=300, deadline=None)
@given(speed_bps=SPEEDS_BPS, load=FRACTION, extra_s=st.floats(0, 3600), start=st.integers(0, COUNTER32_MODULUS - 1))
def test_counter32_rate_is_withheld_when_several_wraps_are_possible(speed_bps, load, extra_s, start):
    dt_s = COUNTER32_MODULUS * 8 / (speed_bps * RATE_MARGIN) - POLL_TIMING_SLACK_S + extra_s
    dt_us = max(int(dt_s * 1e6) + 1, 1000)
    octets = round(load * speed_bps * dt_us / 1e6 / 8)

    result = rate_between(*polls_apart(dt_us, start, octets, name="in_octets", speed_bps=speed_bps))

    assert result.valid and result.in_bps is None and "ambiguous" in result.notes["in_bps"]


@settings(max_examples=300, deadline=None)
@given(rate_bps=st.floats(0, 100e9), dt_us=st.integers(400_000, 3_600_000_000), start=st.integers(0, 2**32 - 1))
def test_counter32_with_unknown_speed_is_exact_while_it_wraps_at_most_once(rate_bps, dt_us, start):
    octets = round(rate_bps * dt_us / 1e6 / 8)
    assume(octets < COUNTER32_MODULUS)

    result = rate_between(*polls_apart(dt_us, start, octets, name="in_octets", speed_bps=None))

    assert_exact(result.in_bps, octets, dt_us)


counter_values = {name: st.integers(0, 2**64 - 1 if name.startswith("hc_") else 2**32 - 1)
                  for sources in RATE_FIELDS.values() for name in sources}
any_counters = st.fixed_dictionaries({}, optional=counter_values)
maybe = st.none().__or__


@settings(max_examples=1000, deadline=None)
@given(prev_counters=any_counters, cur_counters=any_counters, dt_us=st.integers(-10**8, 10**11),
       speeds=st.tuples(maybe(st.floats(0, 1e12)), maybe(st.floats(0, 1e12))),
       uptimes=st.tuples(maybe(st.integers(0, TIMETICKS_MAX)), maybe(st.integers(0, TIMETICKS_MAX))),
       boots=st.tuples(maybe(st.integers(0, 3)), maybe(st.integers(0, 3))))
def test_rates_are_never_negative_and_never_above_the_ceiling_whatever_the_samples(
        prev_counters, cur_counters, dt_us, speeds, uptimes, boots):
    prev = Sample(time=T0, sys_uptime_ticks=uptimes[0], engine_boots=boots[0], discontinuity_ticks=None,
                  counters=prev_counters, speed_bps=speeds[0])
    cur = Sample(time=T0 + timedelta(microseconds=dt_us), sys_uptime_ticks=uptimes[1], engine_boots=boots[1],
                 discontinuity_ticks=None, counters=cur_counters, speed_bps=speeds[1])

    result = rate_between(prev, cur)

    assert all(math.isfinite(value) and value >= 0 for value in result.rates().values())
    if not result.valid:
        assert result.rates() == {}
    known = [s for s in speeds if s]
    if known and result.in_bps is not None:
        assert result.in_bps <= ceiling_bps(max(known), result.interval_s) * (1 + 1e-12)


@settings(max_examples=500, deadline=None)
@given(speed_bps=SPEEDS_BPS, load=FRACTION, dt_us=st.integers(12_000_000, 3_600_000_000),
       prev_value=st.integers(0, COUNTER64_MODULUS - 1), up_after_reboot=FRACTION,
       prev_uptime_s=st.integers(0, 400 * 86400), bits=st.sampled_from([32, 64]))
def test_a_reboot_drops_the_interval_and_never_yields_a_rate(
        speed_bps, load, dt_us, prev_value, up_after_reboot, prev_uptime_s, bits):
    # given: the device rebooted during the interval and has been up for less than the interval
    # minus the sysUpTime tolerance (10 s + 1 %; shorter reboots are invisible by design); its
    # counters restarted from 0 at boot. prev uptime stays below 400 days, so the reboot cannot
    # be mistaken for the 497-day sysUpTime wrap.
    dt_s = dt_us / 1e6
    tolerance_s = UPTIME_TOLERANCE_S + UPTIME_TOLERANCE_REL * dt_s
    up_s = up_after_reboot * max(dt_s - tolerance_s - 1, 0)
    name = "hc_in_octets" if bits == 64 else "in_octets"
    octets_since_boot = round(load * speed_bps * up_s / 8) % 2**bits
    prev = poll(0, prev_value % 2**bits, name=name, speed_bps=speed_bps, uptime_ticks=prev_uptime_s * 100)
    cur = poll(dt_us, octets_since_boot, name=name, speed_bps=speed_bps, uptime_ticks=int(up_s * 100))

    result = rate_between(prev, cur)

    assert result.discontinuity_code == DISCONTINUITY_SYS_UPTIME
    assert result.rates() == {}


@settings(max_examples=500, deadline=None)
@given(speed_bps=SPEEDS_BPS, load=FRACTION, dt_us=st.integers(1_000_000, 3_600_000_000),
       prev_value=st.integers(0, COUNTER64_MODULUS - 1), since_reset=FRACTION)
def test_an_unsignalled_reset_never_yields_a_rate_above_the_plausible_ceiling(
        speed_bps, load, dt_us, prev_value, since_reset):
    # given: no sysUpTime at all; the counter restarted from 0 somewhere in the interval
    dt_s = dt_us / 1e6
    octets_since_reset = round(load * speed_bps * since_reset * dt_s / 8)
    prev = poll(0, prev_value, name="hc_in_octets", speed_bps=speed_bps, uptime_ticks=None)
    cur = poll(dt_us, octets_since_reset, name="hc_in_octets", speed_bps=speed_bps, uptime_ticks=None)

    result = rate_between(prev, cur)

    # then: either dropped, or a rate the interface could carry (a reset indistinguishable from
    # ordinary traffic, e.g. from 0 to 0, is harmless by construction)
    assert result.in_bps is None or result.in_bps <= ceiling_bps(speed_bps, dt_s) * (1 + 1e-12)
    if result.valid and prev_value <= octets_since_reset:
        assert_exact(result.in_bps, octets_since_reset - prev_value, dt_us)


@st.composite
def polled_device(draw):
    """A 64-bit interface polled at irregular intervals, with traffic <= speed and random reboots.

    Returns the samples and, per interval, the true octet count or None for a reboot interval.
    """
    speed_bps = draw(SPEEDS_BPS)
    counter = draw(st.integers(COUNTER64_MODULUS - 10**14, COUNTER64_MODULUS - 1))  # crosses 2^64 early
    uptime_s = draw(st.integers(3600, 100 * 86400))
    t_us = 0
    samples = [poll(0, counter, name="hc_in_octets", speed_bps=speed_bps, uptime_ticks=uptime_s * 100)]
    truth: list[int | None] = []
    for _ in range(draw(st.integers(1, 12))):
        dt_us = draw(st.integers(15_000_000, 900_000_000))  # longer than the 10 s uptime tolerance
        dt_s = dt_us / 1e6
        load = draw(FRACTION)
        if draw(st.booleans()) and draw(st.booleans()):  # a reboot in one interval out of four
            up_s = draw(FRACTION) * (dt_s - UPTIME_TOLERANCE_S - UPTIME_TOLERANCE_REL * dt_s - 1)
            uptime_s = up_s
            counter = round(load * speed_bps * up_s / 8)
            truth.append(None)
        else:
            octets = round(load * speed_bps * dt_s / 8)
            uptime_s += dt_s
            counter = (counter + octets) % COUNTER64_MODULUS
            truth.append(octets)
        t_us += dt_us
        samples.append(poll(t_us, counter, name="hc_in_octets", speed_bps=speed_bps,
                            uptime_ticks=int(uptime_s * 100)))
    return samples, truth


@settings(max_examples=300, deadline=None)
@given(device=polled_device())
def test_a_series_gives_the_true_rate_for_every_interval_and_drops_exactly_the_reboots(device):
    samples, truth = device

    results = rates_from_series(reversed(samples))  # order must not matter

    assert len(results) == len(truth)
    for result, octets in zip(results, truth, strict=True):
        if octets is None:
            assert result.discontinuity_code == DISCONTINUITY_SYS_UPTIME and result.rates() == {}
        else:
            assert result.valid
            assert_exact(result.in_bps, octets, round(result.interval_s * 1e6))
