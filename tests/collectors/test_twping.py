"""twping parsers (collectors/twamp/twping.py) against real OWAMP 5.2.3 twping output.

The captures were made on a host whose clock was not NTP-synchronised
(../shared/fixtures/toolout/SOURCES.md), hence ``(unsync)`` and ``SYNC 0`` throughout.
"""

from __future__ import annotations

from collectors import owamp, twamp
from tests.collectors.test_owamp import fixture, ntp_delay_ms


def test_twping_summary():
    (session,) = twamp.parse_twamp_summary(fixture("twping-default-1.txt"))
    assert (session.packets_sent, session.packets_lost) == (20, 0)
    assert (session.send_duplicates, session.reflect_duplicates) == (0, 0)
    assert session.round_trip == twamp.DelayStats(0.0472, 0.09, 2.27, 0.38, 9.31e-07)
    assert session.send == twamp.DelayStats(0.0334, 0.07, 1.33, 0.04, 4.66e-07)
    assert session.reflect == twamp.DelayStats(0.0119, 0.02, 0.947, 0.36, 4.66e-07)
    assert (session.processing_min_ms, session.processing_max_ms) == (0.00286, 0.021)
    assert session.percentiles_ms == {95.0: 0.47, 99.0: 2.28}
    assert (session.send_hops_min, session.reflect_hops_max) == (0, 0)
    # surprising but real: twping reports err= (synced) on the same unsynced host
    assert session.clock_synced is True
    assert owamp.parse_summary(fixture("twping-default-1.txt")) == []


def test_twping_machine():
    (session,) = twamp.parse_twamp_machine(fixture("twping-M-1.txt"))
    assert session.round_trip.delay_min_ms == 0.067234
    send = session.send
    assert (send.delay_min_ms, send.delay_median_ms, send.delay_max_ms) == (0.0481606, 0.07, 2.3942)
    assert (session.reflect.delay_min_ms, session.reflect.delay_max_ms) == (0.0119209, 0.0739098)
    assert (session.processing_min_ms, session.processing_max_ms) == (0.00524521, 0.0219345)
    assert session.send.error_ms == 4.65661e-07
    assert (session.send_hops_min, session.reflect_hops_min) == (0, 0)


def test_twping_raw():
    session = twamp.parse_twamp_raw(fixture("twping-R-1.txt"))
    assert (session.packets_sent, session.packets_lost) == (20, 0)
    # seq 0: sent 17198335970638510159, reflector got 17198335970639025555
    assert session.send.delay_max_ms >= ntp_delay_ms(17198335970638510159, 17198335970639025555)
    assert session.send.delay_min_ms == 0.041
    assert session.reflect.delay_min_ms == 0.013
    assert session.round_trip.delay_min_ms == 0.057
    assert (session.processing_min_ms, session.processing_max_ms) == (0.005, 0.021)
    # the raw records carry sync flags 0, unlike twping's own summary
    assert session.clock_synced is False
    assert session.round_trip.error_ms is None
