"""manage.py seed_history: rates, rollups that agree with them, the tests of the pair; a second run changes nothing."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from wanmon.diagnosis.models import Finding
from wanmon.inventory.models import Interface, Path, Trunk
from wanmon.maintenance.models import MaintenanceWindow

pytestmark = pytest.mark.django_db

END = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
DAYS = 2
INTERFACES = 25


def _seed() -> str:
    out = io.StringIO()
    call_command("seed_history", days=DAYS, interfaces=INTERFACES, end="2026-03-01T12:00:00Z", workers=1, stdout=out)
    return out.getvalue()


def _one(sql: str, params=()):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()


def _counts() -> dict[str, int]:
    tables = ["measurements_interfacerate", "measurements_interfacerate_5m", "measurements_interfacerate_1h",
              "measurements_interfacerate_1d", "measurements_throughputtest", "measurements_owamptest",
              "measurements_traceroute", "measurements_counterdiscontinuity", "inventory_interface", "inventory_path",
              "inventory_pathhop", "diagnosis_finding", "maintenance_maintenancewindow"]
    return {table: _one(f"SELECT count(*) FROM {table}")[0] for table in tables}


def test_seed_fills_rates_rollups_and_tests():
    output = _seed()
    assert f"rates: {INTERFACES} of {INTERFACES} interfaces filled" in output
    minutes = DAYS * 1440
    # every interface: one rate per minute, stamped at the end of its minute, all inside (END - 2 days, END]
    assert _one("SELECT count(*), count(DISTINCT interface_id), min(time), max(time) FROM measurements_interfacerate"
                ) == (INTERFACES * minutes, INTERFACES, END - timedelta(days=DAYS) + timedelta(minutes=1), END)
    assert _one("SELECT min(out_utilisation) > 0.05, max(out_utilisation) < 0.7, min(in_bps) > 0 "
                "FROM measurements_interfacerate") == (True, True, True)
    # the rollups cover every rate, and their averages are the rates' averages
    for table in ("measurements_interfacerate_5m", "measurements_interfacerate_1h", "measurements_interfacerate_1d"):
        assert _one(f"SELECT sum(samples), sum(covered_s) FROM {table}") == (INTERFACES * minutes,
                                                                            INTERFACES * minutes * 60.0), table
    iid = Interface.objects.get(equipment__name="seed-core1", name="et-0/0/2").pk
    raw_avg, raw_max = _one("""SELECT avg(out_bps), max(out_utilisation) FROM measurements_interfacerate
                               WHERE interface_id = %s AND time >= %s AND time < %s""",
                            [iid, END - timedelta(hours=5), END - timedelta(hours=4)])
    hourly = _one("SELECT out_bps_avg, out_utilisation_max FROM measurements_interfacerate_1h "
                  "WHERE interface_id = %s AND time = %s", [iid, END - timedelta(hours=5)])
    assert hourly == pytest.approx((raw_avg, raw_max))
    # the tests an agent with default intervals runs, both directions
    tcp, udp = _one("""SELECT count(*) FILTER (WHERE protocol = 'tcp'), count(*) FILTER (WHERE protocol = 'udp')
                       FROM measurements_throughputtest""")
    assert (tcp, udp) == (2 * DAYS * 48, 2 * DAYS * 4)
    assert _one("SELECT count(*) FROM measurements_owamptest") == (2 * DAYS * 288,)
    assert _one("SELECT count(*), count(DISTINCT hops) FROM measurements_traceroute") == (2 * DAYS * 24, 4)
    # the paths leave by a trunk member on one core router each: 7 interfaces per direction on the path page
    forward = Path.objects.get(src__code="SEEDA", dst__code="SEEDB", valid_to__isnull=True)
    assert [h.equipment.name for h in forward.hops.order_by("position")] == [
        "seed-a-border", "seed-core1", "seed-core2", "seed-core3", "seed-b-border"]
    assert Trunk.objects.get(name="seed-core1-ae0").members.count() == 4
    assert Interface.objects.filter(equipment__name__startswith="seed-").count() == INTERFACES


def test_a_second_run_changes_nothing_and_an_interrupted_one_is_completed():
    _seed()
    first = _counts()
    rollup = _one("SELECT sum(out_bps_avg * covered_s) FROM measurements_interfacerate_1h")
    output = _seed()
    assert f"rates: 0 of {INTERFACES} interfaces filled" in output
    assert _counts() == first
    # an interrupted run left one interface with half its rates and none of their rollups
    iid = Interface.objects.get(equipment__name="seed-core2", name="et-0/0/3").pk
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM measurements_interfacerate WHERE interface_id = %s AND time > %s",
                       [iid, END - timedelta(days=1)])
        for level in ("5m", "1h", "1d"):
            cursor.execute(f"DELETE FROM measurements_interfacerate_{level} WHERE interface_id = %s", [iid])
    assert f"rates: 1 of {INTERFACES} interfaces filled" in _seed()
    assert _counts() == first
    assert _one("SELECT sum(out_bps_avg * covered_s) FROM measurements_interfacerate_1h") == pytest.approx(rollup)
    # weekly events from the second day on: one of each in two days
    event = END - timedelta(days=DAYS) + timedelta(days=1, hours=3)
    assert [(f.status, f.start) for f in Finding.objects.filter(subject_key="dst=SEEDB;src=SEEDA")] == [
        ("resolved", event + timedelta(hours=4))]
    assert [(w.reference, w.start) for w in MaintenanceWindow.objects.all()] == [
        (f"SEED-{event:%Y%m%d}", event + timedelta(hours=1))]
    assert _one("SELECT count(*), min(time) FROM measurements_counterdiscontinuity") == (1, event)


def test_bad_arguments_are_refused():
    with pytest.raises(CommandError, match="--interfaces >= 25"):
        call_command("seed_history", days=1, interfaces=10, stdout=io.StringIO())
    with pytest.raises(CommandError, match="time zone"):
        call_command("seed_history", days=1, end="2026-03-01T12:00:00", stdout=io.StringIO())
