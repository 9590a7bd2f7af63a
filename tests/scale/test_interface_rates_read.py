"""The window's SNMP rates of a shard are read in PostgreSQL's binary format (a shard reads ~30 polls an interface,
each with its time: parsed from text, they were a third of a shard's CPU a path); the values are those of the text
read. The speed a device reports is its last sample with one in the window (an index probe per interface)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from wanmon.diagnosis.selectors import common, series
from wanmon.inventory.models import Equipment, Interface, Site
from wanmon.measurements.models import InterfaceRate, SnmpSample

pytestmark = pytest.mark.django_db

END = datetime(2026, 5, 4, 12, 0, tzinfo=UTC)


def test_the_window_interface_rates_read_in_binary_give_the_values_of_the_text_read(monkeypatch):
    # given two interfaces polled every minute for two hours (one a trunk member: every poll kept), with errors now
    # and then, a poll without a packet rate and one down
    site = Site.objects.create(code="IFB", name="b")
    eq = Equipment.objects.create(name="ifb-border", site=site)
    ports = [Interface.objects.create(equipment=eq, name=f"et-0/0/{i}", speed_mbps=10_000) for i in range(2)]
    InterfaceRate.objects.bulk_create(
        InterfaceRate(
            time=END - timedelta(minutes=i, seconds=i % 5), interface_id=port.id, interval_s=60.0 + i % 3,
            in_bps=1e9 + i * 1e6, out_bps=2e9 - i * 1e6, in_pps=None if i == 7 else 1e5 + i, out_pps=2e5,
            in_errors_per_s=0.5 if i % 13 == 0 else 0.0, out_errors_per_s=0.0, in_discards_per_s=i / 1000,
            out_discards_per_s=0.0, oper_status="down" if i == 30 else "up",
        )
        for i in range(120)
        for port in ports
    )  # fmt: skip
    # and the first port reporting 10G, then 100G after an upgrade, then a poll without a speed
    SnmpSample.objects.bulk_create(
        SnmpSample(time=END - timedelta(minutes=m), equipment_id=eq.id, interface_id=ports[0].id, speed_mbps=speed)
        for m, speed in ((90, 10_000.0), (20, 100_000.0), (5, None))
    )
    ids, member = {p.id for p in ports}, {ports[1].id}
    start = END - timedelta(hours=2)
    binary = series.interfaces_bulk(ids, start, END, raw_ids=member, bucket_s=300)
    # when the same statements are read through the text-format cursor
    monkeypatch.setattr(series, "sql_rows", lambda sql, params, binary=False: common.sql_rows(sql, params))
    text = series.interfaces_bulk(ids, start, END, raw_ids=member, bucket_s=300)
    # then every rate is the same, to the times and their zone
    assert binary == text
    rates = [r for i in binary.values() for r in i.rates]
    assert len(binary[ports[1].id].rates) == 120  # the member: every poll
    assert 30 < len(binary[ports[0].id].rates) < 120  # bucketed before the last half hour
    assert {r.time.tzinfo for r in rates} == {UTC}
    # and the speed is the last one the device reported in the window, the inventory's without any
    assert (binary[ports[0].id].speed_bps, binary[ports[1].id].speed_bps) == (100e9, 10e9)


# The definition the status read keeps to, over every sample of the window (what it read before: every poll).
_EVERY_SAMPLE = """
    SELECT time, interface_id, oper_status FROM (
        SELECT time, interface_id, oper_status,
               lag(oper_status) OVER w AS previous,
               row_number() OVER (PARTITION BY interface_id ORDER BY time DESC) = 1 AS is_last
        FROM measurements_snmpsample
        WHERE interface_id = ANY(%s) AND time >= %s AND time <= %s AND oper_status IS NOT NULL
        WINDOW w AS (PARTITION BY interface_id ORDER BY time)) s
    WHERE is_last OR lower(oper_status) <> 'up' OR previous IS DISTINCT FROM oper_status OR interface_id = ANY(%s)
    ORDER BY time"""


def test_the_window_status_read_gives_what_every_sample_gives_reading_a_few_of_them():
    # given four ports polled every minute for six hours, from the hour before the window: one always up, one
    # that went down before the window and came back in it, one flapping (down, lowerLayerDown, up, down to the
    # end), a trunk member (every poll kept), and polls without a status
    site = Site.objects.create(code="IFS", name="s")
    eq = Equipment.objects.create(name="ifs-border", site=site)
    ports = [Interface.objects.create(equipment=eq, name=f"et-0/1/{i}", speed_mbps=10_000) for i in range(4)]
    start = END - timedelta(hours=5)

    def status(port: int, m: int) -> str | None:
        if m % 17 == 0:
            return None
        if port == 1:
            return "down" if m < 90 else "up"
        if port == 2:
            return "down" if 120 <= m < 125 else "lowerLayerDown" if 125 <= m < 127 else "down" if m >= 350 else "up"
        return "up"

    SnmpSample.objects.bulk_create(
        SnmpSample(time=END - timedelta(hours=6) + timedelta(minutes=m), equipment_id=eq.id,
                   interface_id=ports[p].id, oper_status=status(p, m))
        for m in range(361) for p in range(4)
    )  # fmt: skip
    ids, member = {p.id for p in ports}, {ports[3].id}
    # when the window's interface evidence is read
    read = series.interfaces_bulk(ids, start, END, raw_ids=member, bucket_s=300)
    # then each port has the status samples that every sample of the window would have given
    want: dict[int, list] = {p.id: [] for p in ports}
    for r in common.sql_rows(_EVERY_SAMPLE, [sorted(ids), start, END, sorted(member)]):
        want[r["interface_id"]].append((r["time"], r["oper_status"]))
    for port in ports:
        assert [(s.time, s.oper_status) for s in read[port.id].status] == want[port.id], port.name
    # and the port always up has two of its 283 samples (first and last), the member every one in the window
    assert len(read[ports[0].id].status) == 2
    assert len(read[ports[3].id].status) == len([m for m in range(60, 361) if m % 17])
