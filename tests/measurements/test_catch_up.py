"""Lost work is redone: rates and rollups whose task never ran (lost in Redis, Redis down at ingest, retries
exhausted during a database outage) are found from each interface's watermark and computed by the catch-up."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext

from collectors.records import decode_records
from wanmon.measurements.ingest import batch_ingest

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
T0 = datetime(2026, 3, 1, 11, 0, tzinfo=UTC)
BPS = 2e9  # every poll: 2 Gb/s in


def _batch(first: int, polls: int, *, interface: str = "xe-1/0/0"):
    per_poll = int(BPS * 60 / 8)
    records = [
        {"type": "snmp", "time": T0 + timedelta(minutes=k), "equipment": "geant-par", "interface": interface,
         "sys_uptime_ticks": 883_412_200 + 6000 * k, "oper_status": "up",
         "counters": {"hc_in_octets": 10**12 + k * per_poll, "hc_out_octets": 0, "in_errors": 0, "in_discards": 0}}
        for k in range(first, first + polls)
    ]  # fmt: skip
    return batch_ingest(batch_id=f"00000000-0000-4000-8000-{first:012d}", records=decode_records(records), source="t")


def _rates(iid: int) -> list[tuple[datetime, float]]:
    with connection.cursor() as c:
        c.execute("SELECT time, in_bps FROM measurements_interfacerate WHERE interface_id = %s ORDER BY time", [iid])
        return c.fetchall()


def _rollup_5m(iid: int) -> list[tuple[datetime, int, float]]:
    with connection.cursor() as c:
        c.execute(
            "SELECT time, samples, in_bps_avg FROM measurements_interfacerate_5m WHERE interface_id = %s ORDER BY time",
            [iid],
        )
        return c.fetchall()


def _now() -> datetime:
    return T0 + timedelta(hours=1)


@pytest.fixture(autouse=True)
def _no_grace(settings):
    settings.WANMON_CATCHUP_GRACE_S = 0  # the watermarks here were all moved a moment ago


def test_an_interface_whose_watermark_just_moved_is_left_to_its_queued_task(topo, settings):
    from wanmon.measurements.services import interfaces_behind, measurements_process

    iid = topo["xe"].id
    measurements_process(interface_since=_batch(0, 5).interface_since)
    _batch(5, 5)  # its task is (most likely) queued: the watermark moved a moment ago
    settings.WANMON_CATCHUP_GRACE_S = 120
    assert interfaces_behind(now=_now()) == {}
    with connection.cursor() as c:  # two minutes later, nothing moved it: that task was lost
        c.execute("UPDATE measurements_interfacewatermark SET updated_at = updated_at - interval '121 seconds'")
    assert interfaces_behind(now=_now()) == {iid: T0 + timedelta(minutes=4)}


def test_a_task_lost_before_a_later_one_ran_is_redone_by_the_later_one(topo):
    from wanmon.measurements.services import measurements_process

    iid = topo["xe"].id
    _batch(0, 10)  # its task is lost (never run)
    later = _batch(10, 10)
    measurements_process(interface_since=later.interface_since)
    # 19 intervals, none missing: the later task started at the watermark (none: the interface's first sample)
    rates = _rates(iid)
    assert [t for t, _ in rates] == [T0 + timedelta(minutes=k) for k in range(1, 20)]
    assert all(abs(bps - BPS) < 1 for _, bps in rates)


def test_the_catch_up_computes_rates_and_rollups_of_every_lost_task(topo):
    from wanmon.measurements.services import measurements_process
    from wanmon.measurements.tasks import measurements_catch_up_task

    iid = topo["xe"].id
    measurements_process(interface_since=_batch(0, 10).interface_since)
    _batch(10, 10)  # lost: Redis restarted with the task queued
    _batch(20, 10)  # lost: Redis down at ingest
    assert len(_rates(iid)) == 9
    from unittest import mock

    with mock.patch("wanmon.measurements.services.timezone.now", _now):
        done = measurements_catch_up_task()
    assert done == {"interfaces": 1, "rates": 21, "discontinuities": 0}
    rates = _rates(iid)
    assert [t for t, _ in rates] == [T0 + timedelta(minutes=k) for k in range(1, 30)]
    # The 5-minute rollups cover the half hour: 6 buckets, 5 rates each (4 in the first: no rate at T0).
    rollups = _rollup_5m(iid)
    assert [(t, n) for t, n, _ in rollups] == [(T0 + timedelta(minutes=5 * b), 4 if b == 0 else 5) for b in range(6)]
    assert all(abs(avg - BPS) < 1 for _, _, avg in rollups)
    # Nothing behind any more: a second pass does nothing.
    with mock.patch("wanmon.measurements.services.timezone.now", _now):
        assert measurements_catch_up_task() == {"interfaces": 0, "rates": 0, "discontinuities": 0}


def test_a_task_that_failed_for_good_leaves_the_watermark_behind_and_the_catch_up_redoes_it(topo):
    """A database outage longer than the task's 5 retries: the transaction rolled back, rates included, so the
    watermark did not move and the next catch-up computes the batch."""
    from unittest import mock

    from wanmon.measurements.models import InterfaceWatermark
    from wanmon.measurements.services import measurements_catch_up, measurements_process

    iid = topo["xe"].id
    measurements_process(interface_since=_batch(0, 5).interface_since)
    mark = InterfaceWatermark.objects.get(interface_id=iid).processed_until
    assert mark == T0 + timedelta(minutes=4)
    failing = _batch(5, 5)
    with mock.patch("wanmon.measurements.services.interface_rollups_refresh", side_effect=RuntimeError("db down")):
        with pytest.raises(RuntimeError):
            measurements_process(interface_since=failing.interface_since)
    assert InterfaceWatermark.objects.get(interface_id=iid).processed_until == mark
    assert len(_rates(iid)) == 4  # the rates of the failed run rolled back with it
    done = measurements_catch_up(now=_now())
    assert (done.interfaces, done.behind_s) == (1, {iid: 300.0})
    assert len(_rates(iid)) == 9
    assert InterfaceWatermark.objects.get(interface_id=iid).processed_until == T0 + timedelta(minutes=9)


def test_the_catch_up_is_one_query_when_nothing_is_behind(topo):
    from wanmon.inventory.models import Interface
    from wanmon.measurements.services import measurements_catch_up, measurements_process

    for k in range(50):  # more interfaces, all up to date
        Interface.objects.create(equipment=topo["par"], name=f"et-{k}", if_index=1000 + k, speed_mbps=100_000)
    measurements_process(interface_since=_batch(0, 5).interface_since)
    with CaptureQueriesContext(connection) as queries:
        done = measurements_catch_up(now=_now())
    assert done.interfaces == 0
    assert len(queries) == 1
    # Samples older than the look-back are not looked for (the sweep stays cheap whatever the history).
    _batch(5, 5)
    assert measurements_catch_up(now=T0 + timedelta(seconds=settings.WANMON_CATCHUP_LOOKBACK_S + 600)).interfaces == 0
    assert measurements_catch_up(now=_now()).interfaces == 1


def test_the_catch_up_and_retention_are_on_the_beat_schedule_retention_on_a_crontab():
    from celery.schedules import crontab

    beat = settings.CELERY_BEAT_SCHEDULE
    assert beat["measurements-catch-up"]["task"] == "wanmon.measurements.tasks.measurements_catch_up_task"
    assert beat["measurements-catch-up"]["schedule"] <= 300
    retention = beat["measurements-retention"]["schedule"]
    assert isinstance(retention, crontab)
    # Beat restarted every day at 02:00 (a deploy): an interval of 24 h counted from each start never fires;
    # the crontab fires the same night.
    started = datetime(2026, 3, 1, 2, 0, tzinfo=UTC)
    for hours in range(1, 24):
        now = started + timedelta(hours=hours)
        clocked = crontab(minute=retention._orig_minute, hour=retention._orig_hour, nowfun=lambda now=now: now)
        if clocked.is_due(started).is_due:
            break
    else:
        pytest.fail("retention never due within a day of beat's start")
    assert hours < 24


def test_task_time_limits_are_below_the_brokers_visibility_timeout():
    from wanmon.celery import app

    visibility = app.conf.broker_transport_options["visibility_timeout"]
    assert app.conf.task_time_limit and app.conf.task_soft_time_limit
    assert app.conf.task_soft_time_limit < app.conf.task_time_limit < visibility
    assert visibility == settings.CELERY_VISIBILITY_TIMEOUT_S


def test_every_redis_client_has_connect_and_read_timeouts():
    from wanmon.celery import app

    options = settings.CACHES["default"]["OPTIONS"]
    assert 0 < options["socket_connect_timeout"] <= 5 and 0 < options["socket_timeout"] <= 10
    transport = app.conf.broker_transport_options
    assert 0 < transport["socket_connect_timeout"] <= 5 and 0 < transport["socket_timeout"] <= 10
    assert 0 < app.conf.redis_socket_connect_timeout <= 5 and 0 < app.conf.redis_socket_timeout <= 10


def test_compose_redis_keeps_its_queue_across_restarts():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    redis = compose["services"]["redis"]
    command = redis["command"]
    assert command[command.index("--appendonly") + 1] == "yes"
    assert any(v.split(":")[1] == "/data" for v in redis["volumes"])


def _rollup(level: str, iid: int) -> list[tuple[datetime, int]]:
    with connection.cursor() as c:
        c.execute(f"SELECT time, samples FROM measurements_interfacerate_{level} WHERE interface_id = %s ORDER BY time",
                  [iid])
        return c.fetchall()


def test_the_daily_rollup_is_recomputed_when_the_rates_leave_an_hour(topo):
    from wanmon.measurements.services import measurements_process

    iid = topo["xe"].pk
    for k in range(8):  # one poll a minute from 11:00, each batch processed as it comes
        measurements_process(interface_since=_batch(k, 1).interface_since)
    # the 5-minute and hourly levels follow every batch; the day's bucket waits for the hour to end
    assert _rollup("5m", iid) == [(T0, 4), (T0 + timedelta(minutes=5), 3)]
    assert _rollup("1h", iid) == [(T0, 7)]
    assert _rollup("1d", iid) == []
    for k in range(8, 62):
        measurements_process(interface_since=_batch(k, 1).interface_since)
    assert _rollup("1h", iid) == [(T0, 59), (T0 + timedelta(hours=1), 2)]
    assert _rollup("1d", iid) == [(T0.replace(hour=0), 60)]  # 11:01 .. 12:00, rolled up when 12:00 came
    # a recompute reaching back before the watermark (a late sample at 11:30) recomputes every level at once
    measurements_process(interface_since={iid: T0 + timedelta(minutes=30)})
    assert _rollup("1d", iid) == [(T0.replace(hour=0), 61)]


def test_an_interface_gone_silent_gets_its_daily_rollup_completed_by_the_catch_up(topo):
    from wanmon.measurements.services import measurements_catch_up, measurements_process

    iid = topo["xe"].pk
    hour = (datetime.now(UTC) - timedelta(hours=2)).replace(minute=0, second=0, microsecond=0)
    per_poll = int(BPS * 60 / 8)
    for k in range(8):  # polled at hh:00 .. hh:07, processed as it came, then nothing more
        record = {"type": "snmp", "time": hour + timedelta(minutes=k), "equipment": "geant-par",
                  "interface": "xe-1/0/0", "sys_uptime_ticks": 6000 * k, "oper_status": "up",
                  "counters": {"hc_in_octets": 10**12 + k * per_poll, "hc_out_octets": 0}}
        result = batch_ingest(batch_id=f"00000000-0000-4000-8000-{k:012d}", records=decode_records([record]))
        measurements_process(interface_since=result.interface_since)
        with connection.cursor() as c:
            c.execute("UPDATE measurements_interfacewatermark SET updated_at = processed_until")
    assert (_rollup("1h", iid), _rollup("1d", iid)) == ([(hour, 7)], [])
    assert measurements_catch_up().interfaces == 1  # its hour is over
    assert _rollup("1d", iid) == [(hour.replace(hour=0), 7)]
    assert measurements_catch_up().interfaces == 0  # completed once
