"""Counter arithmetic with the numbers of real links: wraps are rates, resets are dropped intervals."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from collectors.counters import (
    COUNTER32_MODULUS,
    COUNTER64_MODULUS,
    DISCONTINUITY_COUNTER_DECREASED,
    DISCONTINUITY_ENGINE_BOOTS,
    DISCONTINUITY_IF_COUNTER,
    DISCONTINUITY_RATE_IMPLAUSIBLE,
    DISCONTINUITY_SYS_UPTIME,
    DISCONTINUITY_TIME,
    TIMETICKS_MODULUS,
    Sample,
    rate_between,
    rates_from_series,
    sample_from_snmp,
)
from collectors.records import Counters, SnmpRecord

T0 = datetime(2026, 3, 1, 11, 0, tzinfo=UTC)
GBPS = 1e9
UPTIME_AT_T0_S = 1_000_000  # 11.6 days


def sample(t_s: float, *, speed_bps: float | None = 10 * GBPS, uptime_ticks: int | None = -1,
           boots: int | None = None, discontinuity_ticks: int | None = None, **counters: int) -> Sample:
    """A poll t_s seconds after T0 of a device that has been up since long before T0."""
    if uptime_ticks == -1:
        uptime_ticks = round((UPTIME_AT_T0_S + t_s) * 100)
    return Sample(time=T0 + timedelta(seconds=t_s), sys_uptime_ticks=uptime_ticks, engine_boots=boots,
                  discontinuity_ticks=discontinuity_ticks, counters=counters, speed_bps=speed_bps)


def test_constants():
    assert COUNTER32_MODULUS == 4294967296
    assert COUNTER64_MODULUS == 18446744073709551616
    assert TIMETICKS_MODULUS == 2**32


# --- wraps -------------------------------------------------------------------------------------


def test_counter64_crossing_2_64_at_10g_over_60s_gives_the_true_rate():
    # given: 8 Gb/s for 60 s = 6e10 octets, starting 3e10 octets below 2^64 (docs/diagnosis.md#case-studies, case 9)
    prev = sample(0, hc_in_octets=COUNTER64_MODULUS - 30_000_000_000, hc_out_octets=10**12)
    cur = sample(60, hc_in_octets=30_000_000_000, hc_out_octets=10**12 + 7_500_000_000)

    # when
    result = rate_between(prev, cur)

    # then
    assert result.valid
    assert result.in_bps == 8 * GBPS
    assert result.out_bps == 1 * GBPS
    assert result.wrapped == ("hc_in_octets",)


@pytest.mark.parametrize("speed_gbps", [1, 10, 100])
def test_counter64_wrap_at_1_10_and_100g(speed_gbps):
    rate_bps = 0.9 * speed_gbps * GBPS
    octets = round(rate_bps * 60 / 8)
    prev = sample(0, speed_bps=speed_gbps * GBPS, hc_in_octets=COUNTER64_MODULUS - octets // 3)
    cur = sample(60, speed_bps=speed_gbps * GBPS, hc_in_octets=octets - octets // 3)

    assert rate_between(prev, cur).in_bps == pytest.approx(rate_bps, rel=1e-12)


def test_counter32_wrap_at_100m_over_60s_gives_the_true_rate():
    # 2^32 octets take 344 s at 100 Mb/s: a 60 s poll sees at most one wrap
    prev = sample(0, speed_bps=100e6, in_octets=COUNTER32_MODULUS - 100_000_000)
    cur = sample(60, speed_bps=100e6, in_octets=500_000_000)  # 6e8 octets = 80 Mb/s

    result = rate_between(prev, cur)

    assert result.in_bps == 80e6
    assert result.wrapped == ("in_octets",)


def test_counter32_at_1g_is_exact_at_10s_polls_and_ambiguous_at_60s():
    # At 1 Gb/s a Counter32 wraps every 34.4 s (31.2 s at the 110 % ceiling).
    wrap_10s = rate_between(sample(0, speed_bps=GBPS, in_octets=COUNTER32_MODULUS - 10**9),
                            sample(10, speed_bps=GBPS, in_octets=10**8))
    poll_60s = rate_between(sample(0, speed_bps=GBPS, in_octets=1000, in_errors=7),
                            sample(60, speed_bps=GBPS, in_octets=2000, in_errors=19))

    assert wrap_10s.in_bps == 880e6  # 1.1e9 octets in 10 s
    assert poll_60s.valid and poll_60s.in_bps is None
    assert "can wrap every 34.4 s at 1 Gb/s" in poll_60s.notes["in_bps"]


def test_counter32_at_10g_polled_every_60s_is_flagged_ambiguous_not_computed():
    # A Counter32 wraps every 3.4 s at 10 Gb/s: over 60 s "cur - prev mod 2^32" is meaningless,
    # whether the counter went up or down. Error counters of the same poll stay usable.
    up = rate_between(sample(0, in_octets=1_000, out_octets=COUNTER32_MODULUS - 5, in_errors=10),
                      sample(60, in_octets=900_000_000, out_octets=3, in_errors=40))

    assert up.valid
    assert up.in_bps is None and up.out_bps is None
    assert "Counter32 in_octets can wrap every 3.44 s at 10 Gb/s, so a 60 s poll interval is ambiguous" in (
        up.notes["in_bps"])
    assert "out_octets" in up.notes["out_bps"]
    assert up.in_errors_per_s == 0.5


def test_counter32_at_100g_is_ambiguous_even_at_1s_polls():
    result = rate_between(sample(0, speed_bps=100 * GBPS, in_octets=0), sample(1, speed_bps=100 * GBPS, in_octets=5))

    assert result.in_bps is None and "0.344 s" in result.notes["in_bps"]


def test_hc_counters_are_preferred_over_counter32():
    prev = sample(0, hc_in_octets=0, in_octets=0)
    cur = sample(60, hc_in_octets=75 * 10**8, in_octets=123)

    result = rate_between(prev, cur)

    assert result.in_bps == 1 * GBPS and "in_bps" not in result.notes


# --- resets ------------------------------------------------------------------------------------


def test_case_9_series_with_a_reboot_gives_correct_rates_and_one_discontinuity_and_no_spike():
    # 8 Gb/s on a 10 Gb/s interface polled every 60 s; the counter crosses 2^64 between the first
    # two polls; the device reboots between 180 s and 240 s (up again 30 s before the 240 s poll).
    per_poll = 60_000_000_000
    start = COUNTER64_MODULUS - per_poll // 2
    samples = [sample(60 * i, hc_in_octets=(start + i * per_poll) % COUNTER64_MODULUS) for i in range(4)]
    samples += [sample(60 * i, uptime_ticks=3000 + (i - 4) * 6000, hc_in_octets=per_poll // 2 + (i - 4) * per_poll)
                for i in range(4, 7)]

    results = rates_from_series(samples)

    assert [r.discontinuity_code for r in results] == [None, None, None, DISCONTINUITY_SYS_UPTIME, None, None]
    assert [r.in_bps for r in results if r.valid] == [8 * GBPS] * 5
    assert results[0].wrapped == ("hc_in_octets",)
    dropped = results[3]
    assert dropped.is_counter_reset and dropped.rates() == {}
    assert "sysUpTime went back from 100018000 to 3000 ticks" in dropped.discontinuity
    assert all(r.in_bps is None or r.in_bps <= 10 * GBPS for r in results)


def test_counter64_reset_without_sysuptime_is_caught_by_the_speed_ceiling():
    # A Counter64 that goes from 5e12 to 1e9 would have to wrap 2^64 octets: 2.5e9 Gb/s.
    result = rate_between(sample(0, uptime_ticks=None, hc_in_octets=5 * 10**12),
                          sample(60, uptime_ticks=None, hc_in_octets=10**9))

    assert result.discontinuity_code == DISCONTINUITY_COUNTER_DECREASED
    assert result.in_bps is None
    assert "hc_in_octets went back from 5000000000000 to 1000000000" in result.discontinuity


def test_counter64_decrease_with_unknown_speed_is_a_reset():
    result = rate_between(sample(0, speed_bps=None, hc_in_octets=COUNTER64_MODULUS - 10),
                          sample(60, speed_bps=None, hc_in_octets=10))

    assert result.discontinuity_code == DISCONTINUITY_COUNTER_DECREASED
    assert "interface speed is unknown" in result.discontinuity


def test_counter64_increase_with_unknown_speed_is_taken_as_is():
    result = rate_between(sample(0, speed_bps=None, hc_in_octets=0),
                          sample(60, speed_bps=None, hc_in_octets=75 * 10**8))

    assert result.in_bps == 1 * GBPS


def test_counter32_decrease_with_unknown_speed_is_a_wrap_up_to_100g():
    wrap = rate_between(sample(0, speed_bps=None, in_octets=COUNTER32_MODULUS - 1000),
                        sample(60, speed_bps=None, in_octets=3_749_000))  # 3.75e6 octets = 500 kb/s
    too_fast = rate_between(sample(0, speed_bps=None, in_octets=1000),
                            sample(0.1, speed_bps=None, in_octets=500))  # 2^32 octets in 0.1 s = 344 Gb/s

    assert wrap.in_bps == 500e3
    assert too_fast.discontinuity_code == DISCONTINUITY_COUNTER_DECREASED
    assert "100 Gb/s assumed for an interface of unknown speed" in too_fast.discontinuity


def test_zero_speed_means_unknown():
    result = rate_between(sample(0, speed_bps=0, hc_in_octets=100), sample(60, speed_bps=0, hc_in_octets=10))

    assert "interface speed is unknown" in result.discontinuity


def test_rate_above_the_interface_speed_drops_the_interval():
    # 50 Gb/s through a 10 Gb/s port: an unsignalled reset or a wrong speed, never a real rate
    result = rate_between(sample(0, hc_in_octets=0), sample(60, hc_in_octets=375 * 10**9))

    assert result.discontinuity_code == DISCONTINUITY_RATE_IMPLAUSIBLE
    assert "= 50 Gb/s, above 110% of the 10 Gb/s interface speed" in result.discontinuity


def test_rate_just_under_the_ceiling_is_kept():
    # 110 % of 10 Gb/s over 60 s + 1 s timing slack
    octets = int(10 * GBPS * 1.1 / 8 * 61)
    result = rate_between(sample(0, hc_in_octets=0), sample(60, hc_in_octets=octets))

    assert result.in_bps == pytest.approx(11.18 * GBPS, rel=1e-3)


def test_error_counter_reset_is_a_discontinuity_not_a_flood_of_errors():
    # 1000 -> 5 as a wrap would be 71.6 million errors/s; 10 Gb/s carries at most 16.4 million frames/s
    result = rate_between(sample(0, in_errors=1000), sample(60, in_errors=5))

    assert result.discontinuity_code == DISCONTINUITY_COUNTER_DECREASED
    assert result.in_errors_per_s is None


def test_error_counter_wrap_near_2_32_is_a_wrap():
    result = rate_between(sample(0, in_errors=COUNTER32_MODULUS - 100), sample(60, in_errors=20))

    assert result.in_errors_per_s == 2.0 and result.wrapped == ("in_errors",)


def test_error_counter_decrease_at_100g_over_60s_cannot_be_told_from_a_reset():
    # 100 Gb/s carries 148.8 million minimum frames/s: 2^32 of them in 29 s, so a decrease over 60 s is
    # either a wrap or a reset. The rate is withheld; octets and increasing counters are still used.
    result = rate_between(sample(0, speed_bps=100 * GBPS, hc_in_octets=0, in_errors=1000, in_discards=3),
                          sample(60, speed_bps=100 * GBPS, hc_in_octets=75 * 10**9, in_errors=5, in_discards=63))

    assert result.valid
    assert result.in_errors_per_s is None and "ambiguous" in result.notes["in_errors_per_s"]
    assert result.in_bps == 10 * GBPS and result.in_discards_per_s == 1.0


def test_packet_rate_above_line_rate_drops_the_interval():
    # 1 Gb/s carries at most 1.488 million frames/s (672 bits each)
    fine = rate_between(sample(0, speed_bps=GBPS, hc_in_ucast_pkts=0), sample(10, speed_bps=GBPS,
                                                                                  hc_in_ucast_pkts=14_880_000))
    too_many = rate_between(sample(0, speed_bps=GBPS, hc_in_ucast_pkts=0), sample(10, speed_bps=GBPS,
                                                                                      hc_in_ucast_pkts=30_000_000))

    assert fine.in_ucast_pps == 1_488_000
    assert too_many.discontinuity_code == DISCONTINUITY_RATE_IMPLAUSIBLE


# --- sysUpTime, snmpEngineBoots, ifCounterDiscontinuityTime ----------------------------------------


def test_sysuptime_497_day_wrap_is_not_a_reboot():
    # 10 s before the wrap, then 50 s after it: 60 s of uptime, matching the wall clock
    prev = sample(0, uptime_ticks=TIMETICKS_MODULUS - 1000, hc_in_octets=0)
    cur = sample(60, uptime_ticks=5000, hc_in_octets=75 * 10**8)

    result = rate_between(prev, cur)

    assert result.valid and result.in_bps == 1 * GBPS


def test_sysuptime_going_back_near_2_32_without_matching_wall_time_is_a_reboot():
    # same ticks, but 600 s passed: a wrap would account for 60 s only
    result = rate_between(sample(0, uptime_ticks=TIMETICKS_MODULUS - 1000, hc_in_octets=0),
                          sample(600, uptime_ticks=5000, hc_in_octets=75 * 10**8))

    assert result.discontinuity_code == DISCONTINUITY_SYS_UPTIME
    assert "a 2^32-tick wrap would mean 60.00 s had passed, not 600.00 s" in result.discontinuity


def test_sysuptime_advancing_less_than_the_wall_clock_is_a_reboot():
    # up 10 s at the first poll, rebooted, up 20 s at the poll 60 s later
    result = rate_between(sample(0, uptime_ticks=1000, hc_in_octets=10**9),
                          sample(60, uptime_ticks=2000, hc_in_octets=2 * 10**9))

    assert result.discontinuity_code == DISCONTINUITY_SYS_UPTIME
    assert "advanced only 10.00 s" in result.discontinuity


def test_sysuptime_within_poll_jitter_is_fine():
    # a poll answered 5 s late, and sysUpTime running ahead of the wall clock: both not reboots
    late = rate_between(sample(0, uptime_ticks=100_000, hc_in_octets=0),
                        sample(60, uptime_ticks=105_500, hc_in_octets=1))
    ahead = rate_between(sample(0, uptime_ticks=100_000, hc_in_octets=0),
                         sample(60, uptime_ticks=200_000, hc_in_octets=1))

    assert late.valid and ahead.valid


def test_engine_boots_change_is_a_discontinuity():
    result = rate_between(sample(0, boots=7, hc_in_octets=0), sample(60, boots=8, hc_in_octets=10))

    assert result.discontinuity_code == DISCONTINUITY_ENGINE_BOOTS
    assert "snmpEngineBoots changed from 7 to 8" in result.discontinuity


def test_counter_discontinuity_time_change_is_a_discontinuity():
    result = rate_between(sample(0, discontinuity_ticks=0, hc_in_octets=50),
                          sample(60, discontinuity_ticks=100_003_000, hc_in_octets=60))

    assert result.discontinuity_code == DISCONTINUITY_IF_COUNTER and result.is_counter_reset


def test_missing_uptime_or_boots_on_one_side_is_not_a_discontinuity():
    result = rate_between(sample(0, uptime_ticks=None, boots=3, hc_in_octets=0),
                          sample(60, boots=None, discontinuity_ticks=5, hc_in_octets=75 * 10**8))

    assert result.in_bps == 1 * GBPS


# --- time and series ---------------------------------------------------------------------------


@pytest.mark.parametrize("cur_s", [0, -60])
def test_non_advancing_time_is_invalid_but_not_a_counter_reset(cur_s):
    result = rate_between(sample(0, hc_in_octets=0), sample(cur_s, hc_in_octets=0))

    assert result.discontinuity_code == DISCONTINUITY_TIME
    assert not result.valid and not result.is_counter_reset


def test_sub_second_interval_uses_microseconds():
    result = rate_between(sample(0, hc_in_octets=0), sample(0.25, hc_in_octets=125_000_000))

    assert result.interval_s == 0.25 and result.in_bps == 4 * GBPS


def test_rates_from_series_sorts_and_gives_one_result_per_interval():
    samples = [sample(120, hc_in_octets=2 * 75 * 10**8), sample(0, hc_in_octets=0), sample(60, hc_in_octets=75 * 10**8)]

    results = rates_from_series(samples)

    assert [(r.start, r.end, r.in_bps) for r in results] == [
        (T0, T0 + timedelta(seconds=60), 1 * GBPS), (T0 + timedelta(seconds=60), T0 + timedelta(seconds=120), GBPS)]
    assert rates_from_series([]) == [] and rates_from_series(samples[:1]) == []


def test_a_counter_present_in_one_sample_only_is_noted():
    result = rate_between(sample(0, hc_in_octets=0), sample(60, hc_in_octets=10, in_errors=3))

    assert result.notes == {"in_errors_per_s": "in_errors missing in the previous sample"}
    assert result.rates() == {"in_bps": 10 * 8 / 60}


def test_speed_change_during_the_interval_uses_the_higher_speed():
    # renegotiated from 1 to 10 Gb/s: 5 Gb/s is plausible for the interval
    result = rate_between(sample(0, speed_bps=GBPS, hc_in_octets=0),
                          sample(60, speed_bps=10 * GBPS, hc_in_octets=375 * 10**8))

    assert result.in_bps == 5 * GBPS


# --- inputs ------------------------------------------------------------------------------------


def test_sample_from_an_snmp_record_uses_its_speed_unless_overridden():
    record = SnmpRecord(time=T0, equipment="geant-par", interface="xe-1/0/0", sys_uptime_ticks=883412200,
                        snmp_engine_boots=4, counter_discontinuity_ticks=0, oper_status="up", speed_mbps=10000,
                        counters=Counters(hc_in_octets=2**64 - 1, in_errors=0))

    own = sample_from_snmp(record)
    inventory = sample_from_snmp(record, speed_bps=1e9)

    assert own == Sample(time=T0, sys_uptime_ticks=883412200, engine_boots=4, discontinuity_ticks=0,
                         counters={"hc_in_octets": 2**64 - 1, "in_errors": 0}, speed_bps=10e9)
    assert inventory.speed_bps == 1e9


@pytest.mark.parametrize(
    "bad",
    [
        {"time": datetime(2026, 3, 1, 11)},
        {"counters": {"in_octets": 2**32}},
        {"counters": {"hc_in_octets": -1}},
        {"counters": {"in_errors": True}},
        {"sys_uptime_ticks": 2**32},
        {"speed_bps": float("nan")},
    ],
)
def test_invalid_samples_are_refused_at_construction(bad):
    fields = {"time": T0, "sys_uptime_ticks": 1, "engine_boots": None, "discontinuity_ticks": None,
              "counters": {}, "speed_bps": None, **bad}

    with pytest.raises(ValueError):
        Sample(**fields)


# --- devices without a restart detector (IF-MIB-only SNMP views) ------------------------------


def test_without_any_restart_detector_a_decrease_is_a_reset_never_a_wrap():
    # given: a 100 Mb/s port whose view lacks sysUpTime, snmpEngineBoots and ifCounterDiscontinuityTime;
    # the Counter32 went from near the top to a small value, which a wrap would read as 80 Mb/s
    prev = sample(0, speed_bps=100e6, uptime_ticks=None, in_octets=COUNTER32_MODULUS - 100_000_000)
    cur = sample(60, speed_bps=100e6, uptime_ticks=None, in_octets=500_000_000)

    result = rate_between(prev, cur)

    # then: the interval is dropped as a reset (it may have been a restart: nothing can tell)
    assert not result.valid
    assert result.discontinuity_code == DISCONTINUITY_COUNTER_DECREASED
    assert "no sysUpTime" in result.discontinuity


def test_without_any_restart_detector_increasing_counters_still_give_rates():
    prev = sample(0, uptime_ticks=None, hc_in_octets=10**12, in_errors=5)
    cur = sample(60, uptime_ticks=None, hc_in_octets=10**12 + 7_500_000_000, in_errors=11)

    result = rate_between(prev, cur)

    assert result.valid
    assert result.in_bps == 1 * GBPS
    assert result.in_errors_per_s == pytest.approx(0.1)


def test_engine_boots_alone_is_a_restart_detector_so_a_plausible_wrap_stays_a_wrap():
    prev = sample(0, speed_bps=100e6, uptime_ticks=None, boots=3, in_octets=COUNTER32_MODULUS - 100_000_000)
    cur = sample(60, speed_bps=100e6, uptime_ticks=None, boots=3, in_octets=500_000_000)

    result = rate_between(prev, cur)

    assert result.valid
    assert result.in_bps == pytest.approx(80e6)
    assert result.wrapped == ("in_octets",)
