"""Counter samples become rates through the shared wrap/reset-safe arithmetic, then roll up."""

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection

from collectors.records import decode_records
from wanmon.measurements.ingest import batch_ingest
from wanmon.measurements.services import measurements_process

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 3, 1, 11, 0, tzinfo=UTC)
WRAP = 2**64


def _samples(octets_per_poll: int, polls: int, start_octets: int, reboot_at: int | None = None):
    records = []
    octets, ticks = start_octets, 883_412_200
    for k in range(polls):
        if reboot_at is not None and k == reboot_at:
            octets, ticks = 1_000_000, 3_000  # the device restarted: counters and sysUpTime start over
        records.append({"type": "snmp", "time": T0 + timedelta(seconds=60 * k), "equipment": "geant-par",
                        "interface": "xe-1/0/0", "sys_uptime_ticks": ticks, "oper_status": "up",
                        "counters": {"hc_in_octets": octets % WRAP, "hc_out_octets": 0,
                                     "in_errors": 0, "in_discards": 0}})
        octets += octets_per_poll
        ticks += 6000
    return decode_records(records)


def _ingest(records):
    result = batch_ingest(batch_id=f"00000000-0000-4000-8000-{len(records):012d}", records=records, source="test")
    measurements_process(interface_since=result.interface_since)


def _rates():
    with connection.cursor() as c:
        c.execute("SELECT time, in_bps FROM measurements_interfacerate ORDER BY time")
        return c.fetchall()


def test_counter64_wrap_at_10g_gives_the_true_rate(topo):
    # 9.1 Gb/s for 60 s = 68.25e9 octets per poll, starting 100e9 octets below 2^64: the counter wraps.
    per_poll = int(9.1e9 * 60 / 8)
    _ingest(_samples(per_poll, 5, WRAP - 100_000_000_000))
    rates = _rates()
    assert len(rates) == 4
    assert all(abs(bps - 9.1e9) < 1 for _, bps in rates)


def test_reboot_drops_the_interval_and_records_a_discontinuity(topo):
    per_poll = int(2e9 * 60 / 8)
    _ingest(_samples(per_poll, 6, 10**12, reboot_at=3))
    rates = _rates()
    # 5 intervals, the one across the reboot dropped: no spike, no negative rate
    assert len(rates) == 4
    assert max(bps for _, bps in rates) < 2.0001e9
    assert T0 + timedelta(minutes=3) not in [t for t, _ in rates]
    with connection.cursor() as c:
        c.execute("SELECT time, code FROM measurements_counterdiscontinuity")
        assert c.fetchall() == [(T0 + timedelta(minutes=3), "sys_uptime_reset")]


def test_rollups_average_max_and_p95(topo):
    # 60 one-minute polls: 1 Gb/s for 57 minutes and 5 Gb/s for 3 minutes
    records, octets, ticks = [], 0, 100
    for k in range(61):
        records.append({"type": "snmp", "time": T0 + timedelta(minutes=k), "equipment": "geant-par",
                        "interface": "xe-1/0/0", "sys_uptime_ticks": ticks, "oper_status": "up",
                        "counters": {"hc_in_octets": octets, "hc_out_octets": 0}})
        octets += int((5e9 if k in (10, 20, 30) else 1e9) * 60 / 8)
        ticks += 6000
    _ingest(decode_records(records))
    with connection.cursor() as c:
        c.execute("SELECT samples, in_bps_avg, in_bps_max, in_bps_p95 FROM measurements_interfacerate_1h "
                  "WHERE time = %s", [T0])
        samples, avg, peak, p95 = c.fetchone()
        c.execute("SELECT count(*), sum(samples) FROM measurements_interfacerate_5m")
        buckets, total = c.fetchone()
    # rates are stamped at the end of their interval: 11:01 .. 11:59 fall in the 11:00 hour (59 polls)
    assert samples == 59
    assert peak == pytest.approx(5e9)
    assert avg == pytest.approx((56 * 1e9 + 3 * 5e9) / 59)
    # percentile_cont: position 0.95 * 58 = 55.1 between the 56th (1 Gb/s) and 57th (5 Gb/s) values
    assert p95 == pytest.approx(1e9 + 0.1 * 4e9)
    assert buckets == 13 and total == 60


def test_recompute_drops_rollup_buckets_whose_rates_are_gone(topo):
    from wanmon.measurements.rollups import interface_rollups_refresh

    # 11:01 .. 11:20: four 5-minute buckets (11:00, 11:05, 11:10, 11:15) and 11:20 in a fifth
    _ingest(_samples(int(1e9 * 60 / 8), 21, 0))
    iid = topo["xe"].pk
    with connection.cursor() as c:
        c.execute("DELETE FROM measurements_interfacerate WHERE time > %s AND time < %s",
                  [T0 + timedelta(minutes=5), T0 + timedelta(minutes=10)])
        interface_rollups_refresh(interface_ids=[iid], since=T0)
        c.execute("SELECT time, samples FROM measurements_interfacerate_5m ORDER BY time")
        buckets = c.fetchall()
        c.execute("SELECT samples FROM measurements_interfacerate_1h")
        hourly = c.fetchall()
    # the 11:05 bucket kept only its 11:05 rate; 11:06 .. 11:09 are gone, the 11:10 bucket is intact
    assert buckets == [(T0, 4), (T0 + timedelta(minutes=5), 1), (T0 + timedelta(minutes=10), 5),
                       (T0 + timedelta(minutes=15), 5), (T0 + timedelta(minutes=20), 1)]
    assert hourly == [(16,)]
    with connection.cursor() as c:
        c.execute("DELETE FROM measurements_interfacerate WHERE time >= %s AND time < %s",
                  [T0 + timedelta(minutes=5), T0 + timedelta(minutes=10)])
        interface_rollups_refresh(interface_ids=[iid], since=T0)
        c.execute("SELECT time FROM measurements_interfacerate_5m ORDER BY time")
        times = [r[0] for r in c.fetchall()]
    assert times == [T0, T0 + timedelta(minutes=10), T0 + timedelta(minutes=15), T0 + timedelta(minutes=20)]


def test_recompute_is_idempotent(topo):
    records = _samples(int(1e9 * 60 / 8), 4, 0)
    result = batch_ingest(batch_id="00000000-0000-4000-8000-000000000001", records=records, source="test")
    measurements_process(interface_since=result.interface_since)
    first = _rates()
    measurements_process(interface_since=result.interface_since)
    assert _rates() == first and len(first) == 3


def _polls(names: list[str], minutes: range, *, reset: str | None = None):
    """One poll a minute of each interface, each polled at its own second (devices are not polled in step);
    ``reset`` restarts its counters at the third poll."""
    records = []
    for n, name in enumerate(names):
        step = (n + 1) * 10**8 * 60 // 8
        for k in minutes:
            since_start = k - 2 if name == reset and k >= 2 else k + 1000
            octets, ticks = 5_000 + since_start * step, 200 + since_start * 6000
            records.append({"type": "snmp", "time": T0 + timedelta(minutes=k, seconds=n % 50),
                            "equipment": "geant-par", "interface": name, "sys_uptime_ticks": ticks,
                            "oper_status": "up", "counters": {"hc_in_octets": octets, "hc_out_octets": 7 * k,
                                                              "in_errors": k, "in_discards": 0}})
    return decode_records(records)


def _process_counting(records) -> int:
    from django.test.utils import CaptureQueriesContext

    result = batch_ingest(batch_id=str(uuid.uuid4()), records=records, source="test")
    with CaptureQueriesContext(connection) as queries:
        measurements_process(interface_since=result.interface_since)
    return len(queries.captured_queries)


def test_rates_of_a_batch_take_the_same_statements_for_2_or_40_interfaces_and_match_the_counter_functions(topo):
    from collectors.counters import rates_from_series, sample_from_snmp

    few, many = [f"xe-2/0/{i}" for i in range(2)], [f"xe-3/0/{i}" for i in range(40)]
    counted = [_process_counting(_polls(few, range(4))), _process_counting(_polls(many, range(4), reset=many[7]))]
    # and a later batch of every interface, its watermark from the batch before
    counted.append(_process_counting(_polls(many, range(4, 6), reset=many[7])))
    # the later batch stays in the hour of its watermark: the daily level waits for the hour to end
    assert counted[0] == counted[1] == counted[2] + 1 <= 12
    with connection.cursor() as c:
        c.execute("SELECT i.name, r.time, r.interval_s, r.in_bps, r.out_bps, r.in_errors_per_s, r.in_utilisation "
                  "FROM measurements_interfacerate r JOIN inventory_interface i ON i.id = r.interface_id "
                  "WHERE i.name LIKE 'xe-3/%%' ORDER BY i.name, r.time")
        stored = c.fetchall()
        c.execute("SELECT count(*), min(code) FROM measurements_counterdiscontinuity")
        assert c.fetchone() == (1, "sys_uptime_reset")
    expected = []
    polls = _polls(many, range(6), reset=many[7])
    for name in sorted(many):
        # no inventory speed for these interfaces and none polled: utilisation unknown
        samples = [sample_from_snmp(r) for r in polls if r.interface == name]
        expected += [(name, r.end, r.interval_s, r.in_bps, r.out_bps, r.in_errors_per_s, None)
                     for r in rates_from_series(samples) if r.valid]
    assert len(stored) == 40 * 5 - 1
    assert stored == [tuple(pytest.approx(v) if isinstance(v, float) else v for v in row) for row in expected]
