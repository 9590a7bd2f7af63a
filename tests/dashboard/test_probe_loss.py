"""The overview's grid and the path page judge probe loss with the diagnosis's one estimator
(``wanmon.diagnosis.loss.lead_loss``): UDP tests count beside owamp, the most precise probe leads, and stray owamp
losses scattered over sessions only bound the loss."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from wanmon.dashboard import selectors as s
from wanmon.dashboard.presenters import direction_derived
from wanmon.inventory.services import equipment_upsert, path_set, site_upsert
from wanmon.measurements import models as m

pytestmark = pytest.mark.django_db

AT = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def _pair():
    a, _ = site_upsert(code="LOSSA")
    b, _ = site_upsert(code="LOSSB")
    router, _ = equipment_upsert(name="lossb-border", site=b)
    path, _ = path_set(src=a, dst=b, hops=[(router, None)], capacity_mbps=10_000)
    return a, b, path


def _owamp(a, b, lost_per_session: list[int], sent: int = 600) -> None:
    m.OwampTest.objects.bulk_create(
        m.OwampTest(time=AT - timedelta(minutes=5 * (i + 1)), src_id=a.id, dst_id=b.id, packets_sent=sent,
                    packets_lost=lost, delay_min_ms=10.0)
        for i, lost in enumerate(lost_per_session)
    )


def _udp(a, b, lost: int, sent: int, minutes_before: int = 20) -> None:
    m.ThroughputTest.objects.create(time=AT - timedelta(minutes=minutes_before), src_id=a.id, dst_id=b.id,
                                    tool="nuttcp", protocol="udp", duration_s=10, offered_bps=2e9,
                                    throughput_bps=2e9, packets_sent=sent, packets_lost=lost)


def test_stray_owamp_losses_scattered_over_sessions_do_not_turn_a_cell_amber():
    a, b, _ = _pair()
    # one packet in each of three sessions of 600: pooled 1.7e-3, above the grid's 1e-4 warning line, yet no
    # session lost enough to measure a rate (the diagnosis bounds the loss, it does not find it)
    _owamp(a, b, [1, 0, 1, 0, 1, 0, 0, 0])
    cell = s.path_observations(at=AT)[("LOSSA", "LOSSB")]
    assert cell.observation.loss_fraction == 0.0
    assert cell.health.status != "amber", cell.health


def test_a_precise_udp_loss_leads_the_grid_and_the_page_over_owamp_that_saw_none():
    a, b, _ = _pair()
    _owamp(a, b, [0] * 8)  # 4 800 packets, nothing lost
    _udp(a, b, lost=2_000, sent=1_600_000)  # 1.25e-3 over 1.6 M datagrams
    cell = s.path_observations(at=AT)[("LOSSA", "LOSSB")]
    assert cell.observation.loss_fraction == pytest.approx(1.25e-3)
    assert cell.observation.loss_packets == 1_600_000
    data = s.direction_data(src="LOSSA", dst="LOSSB", start=AT - timedelta(hours=1), end=AT, bucket_s=300,
                            raw=False)
    assert data.derived_samples["udp_sent"] == 1_600_000 and data.derived_samples["sent"] == 4_800
    figures = direction_derived(data)
    assert figures.loss_fraction == pytest.approx(1.25e-3)
    assert "UDP" in figures.loss_note
