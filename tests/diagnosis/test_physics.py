"""The physics table of docs/diagnosis.md#the-physics, number by number."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wanmon.diagnosis import constants as k
from wanmon.diagnosis import physics

MiB = 1 << 20


def test_bdp_1gbps_330ms_is_41_mb():
    assert physics.bdp_bytes(1e9, 330) == pytest.approx(41.25e6)


def test_window_limited_rate_4mib_125ms_is_268_mbps():
    assert physics.window_limited_rate_bps(4 * MiB, 125) == pytest.approx(268.4e6, rel=1e-3)


def test_recommended_window_10gbps_125ms_is_312_mb():
    assert physics.recommended_window_bytes(10e9, 125) == pytest.approx(312.5e6)


def test_east_asia_needs_about_80_mb():
    # DIAGNOSIS case 4: RTT ~330 ms at 1 Gb/s needs ~80 MB (2 x BDP)
    assert physics.recommended_window_bytes(1e9, 330) == pytest.approx(82.5e6)


def test_mathis_mss_8948_72ms_p_6_4e_5_is_87_mbps():
    assert physics.mathis_rate_bps(8948, 72, 6.4e-5) == pytest.approx(87.0e6, rel=5e-3)


def test_case6_udp_loss_5_of_78110_gives_the_same_87_mbps():
    p = 5 / 78110
    assert p == pytest.approx(6.4e-5, rel=1e-3)
    assert physics.mathis_rate_bps(8948, 72, p) == pytest.approx(87.0e6, rel=5e-3)


def test_loss_needed_for_1gbps_at_120ms_mss_1460_is_about_5e_9():
    p = physics.loss_for_rate(1e9, 1460, 120)
    assert p == pytest.approx(4.64e-9, rel=1e-2)
    assert 4e-9 < p < 6e-9


def test_reno_responsiveness_10gbps_120ms_mtu_1500_is_about_one_and_a_half_hours():
    rho = physics.reno_responsiveness_s(10e9, 120, physics.mss_from_mtu(1500))
    # C*RTT^2/(2*MSS*8) = 1e10 * 0.0144 / (2 * 1460 * 8) = 6164 s = 1.71 h; the Caltech slides quote 1 h 32 min
    # (5520 s) and the table "~1.5 h": the same order, within 12 %.
    assert rho == pytest.approx(6164, rel=1e-3)
    assert rho == pytest.approx(5520, rel=0.12)


def test_reno_responsiveness_cern_taiwan_note_figures():
    # note, Fig 1.1: 1 Gb/s CERN-Taiwan (330 ms) ~90 min, 10 Gb/s ~13 h
    mss = physics.mss_from_mtu(1500)
    assert physics.reno_responsiveness_s(1e9, 330, mss) / 60 == pytest.approx(78, rel=0.05)
    assert physics.reno_responsiveness_s(10e9, 330, mss) / 3600 == pytest.approx(12.95, rel=0.01)


def test_counter_wrap_times():
    assert physics.counter_wrap_time_s(32, 10e9) == pytest.approx(3.436, rel=1e-3)
    years = physics.counter_wrap_time_s(64, 10e9) / (365.25 * 86400)
    assert years == pytest.approx(467.6, rel=1e-3)


def test_propagation_5_us_per_km():
    assert physics.propagation_delay_ms(200) == pytest.approx(1.0)
    assert physics.propagation_delay_ms(1) == pytest.approx(0.005)
    assert physics.fibre_km_for_delay_ms(0.3) == pytest.approx(60)


def test_great_circle_geneva_karlsruhe():
    km = physics.great_circle_km(46.23, 6.05, 49.09, 8.43)
    assert 350 < km < 370
    # light needs at least ~1.8 ms one way over that distance; the FZK owamp minimum is 4.9 ms
    assert physics.propagation_delay_ms(km) < 4.9


def test_mss_from_mtu():
    assert physics.mss_from_mtu(1500) == 1460
    assert physics.mss_from_mtu(1500, timestamps=True) == 1448
    assert physics.mss_from_mtu(9000, timestamps=True) == 8948


def test_mathis_constants_documented():
    assert k.MATHIS_C_RENO == pytest.approx(1.2247, rel=1e-4)
    # the emulated 100 ms test: p = 0.11 %, MSS 1448 -> C=1.22 predicts ~4.1 Mb/s, C=0.7 ~2.4 Mb/s
    assert physics.mathis_rate_bps(1448, 100, 0.0011, c=k.MATHIS_C_RENO) == pytest.approx(4.28e6, rel=0.05)
    assert physics.mathis_rate_bps(1448, 100, 0.0011) == pytest.approx(2.45e6, rel=0.05)


def test_zero_loss_is_unlimited_and_bad_inputs_raise():
    assert math.isinf(physics.mathis_rate_bps(1448, 10, 0.0))
    with pytest.raises(ValueError):
        physics.mathis_rate_bps(1448, 10, 1.5)
    with pytest.raises(ValueError):
        physics.bdp_bytes(1e9, 0)
    with pytest.raises(ValueError):
        physics.mss_from_mtu(40)


def test_retransmit_loss_fraction_none_is_unknown_not_zero():
    assert physics.retransmit_loss_fraction(None, 1e9, 10, 8948) is None
    assert physics.retransmit_loss_fraction(0, 1e9, 10, 8948) == 0.0
    # 150 retransmits in 10 s at 890 Mb/s with MSS 8948: ~1.2e-3 (the ACK-loss victim of the FZK example)
    p = physics.retransmit_loss_fraction(150, 890e6, 10, 8948)
    assert p == pytest.approx(150 / (890e6 * 10 / 8 / 8948), rel=2e-3)
    # retransmits beyond the delivered segments stay a fraction
    assert 0 < physics.retransmit_loss_fraction(6000, 25e6, 10, 8948) < 1


@given(
    rate=st.floats(min_value=1e6, max_value=1e11),
    mss=st.integers(min_value=500, max_value=9000),
    rtt=st.floats(min_value=0.1, max_value=600),
)
def test_loss_for_rate_inverts_mathis(rate, mss, rtt):
    p = physics.loss_for_rate(rate, mss, rtt)
    if p < 1.0:
        assert physics.mathis_rate_bps(mss, rtt, p) == pytest.approx(rate, rel=1e-9)


@given(
    capacity=st.floats(min_value=1e6, max_value=1e11),
    rtt=st.floats(min_value=0.1, max_value=600),
)
def test_a_bdp_window_exactly_fills_the_path(capacity, rtt):
    w = physics.bdp_bytes(capacity, rtt)
    assert physics.window_limited_rate_bps(w, rtt) == pytest.approx(capacity, rel=1e-9)
    assert physics.recommended_window_bytes(capacity, rtt) == pytest.approx(2 * w)
