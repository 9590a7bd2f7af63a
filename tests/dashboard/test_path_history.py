"""The path page over seeded months of history (manage.py seed_history): the same answers as the raw rows,
and a number of queries that does not grow with the hops, the trunk members or the length of the range."""

from __future__ import annotations

import io
import statistics
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from wanmon.dashboard import selectors as s
from wanmon.inventory.models import Carrier, Interface, Path, Trunk
from wanmon.inventory.services import equipment_upsert, interface_upsert, path_set, trunk_upsert

pytestmark = pytest.mark.django_db

END = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
DAYS = 3
START = END - timedelta(days=DAYS)
# seed_history changes the traceroute hop list two thirds into the history
ROUTE_CHANGE_AT = START + timedelta(days=2)


@pytest.fixture
def seeded(db):
    call_command("seed_history", days=DAYS, interfaces=25, end="2026-03-01T12:00:00Z", workers=1,
                 stdout=io.StringIO())


def _values(sql: str, params) -> list:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [r[0] for r in cursor.fetchall()]


def test_derived_inputs_are_the_medians_of_the_stored_tests(seeded):
    data = s.direction_data(src="SEEDA", dst="SEEDB", start=START, end=END, bucket_s=3600, raw=False)
    src, dst = data.path.src_id, data.path.dst_id
    rtts = _values("""SELECT rtt_ms FROM measurements_throughputtest WHERE src_id = %s AND dst_id = %s
                      AND protocol = 'tcp'""", [src, dst])
    delays = _values("SELECT delay_min_ms FROM measurements_owamptest WHERE src_id = %s AND dst_id = %s", [src, dst])
    assert len(rtts) == DAYS * 48 and len(set(rtts)) > 1
    assert data.derived_samples["rtts"] == [pytest.approx(statistics.median(rtts))]
    assert data.derived_samples["delays"] == [pytest.approx(statistics.median(delays))]
    assert data.derived_samples["windows"] == [268435456] and data.derived_samples["mss"] == [8948]
    assert data.derived_samples["sent"] == DAYS * 288 * 600


def test_traceroutes_are_reduced_to_the_route_changes(seeded):
    # 72 hourly traceroutes in the range: the first, and the one whose hops differ from the one before
    data = s.direction_data(src="SEEDA", dst="SEEDB", start=START, end=END, bucket_s=3600, raw=False)
    first_hour = START + timedelta(minutes=7)
    change = ROUTE_CHANGE_AT + timedelta(minutes=7)
    assert [t["time"] for t in data.traceroutes] == [first_hour, change]
    assert len(data.traceroutes[1]["hops"]) == len(data.traceroutes[0]["hops"]) + 1
    # a range starting after the change still gets the traceroute before it, and no change
    later = s.direction_data(src="SEEDA", dst="SEEDB", start=END - timedelta(hours=6), end=END, bucket_s=60, raw=True)
    assert [t["time"] for t in later.traceroutes] == [END - timedelta(hours=6, minutes=53)]


def test_path_page_marks_the_route_change_once(seeded, operator_client):
    figures = operator_client.get("/paths/SEEDA/SEEDB/", {"range": "7d", "end": "2026-03-01T12:00:00Z"}).context[
        "figures"]
    marks = {t["meta"]: t for t in figures["throughput"]["data"] if t.get("yaxis") == "y2"}
    assert marks["route"]["x"] == ["2026-02-28 12:07:00"]
    assert len(marks["finding"]["x"]) == 1 and len(marks["maintenance"]["x"]) == 1
    util = [t["name"] for t in figures["utilisation"]["data"] if t.get("yaxis") != "y2"]
    # hop by hop, each box's exit (out: with its LAG's members) then the next box's entry (in), the link's far end
    # paired by the reverse path
    assert util == ["seed-a-border:et-0/0/0 out", "seed-core1:et-0/0/4 in", "seed-core1:et-0/0/0 out",
                    "seed-core1:et-0/0/1 out", "seed-core1:et-0/0/2 out", "seed-core1:et-0/0/3 out",
                    "seed-core2:et-0/0/1 in", "seed-core2:et-0/0/0 out", "seed-core3:et-0/0/0 in",
                    "seed-core3:et-0/0/4 out", "seed-b-border:et-0/0/0 in"]


def _queries(client, url: str, params: dict) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url, params).status_code == 200
    return len(queries)


def test_path_page_queries_do_not_grow_with_hops_members_or_range(seeded, operator_client):
    url, end = "/paths/SEEDA/SEEDB/both/", "2026-03-01T12:00:00Z"
    operator_client.get(url, {"end": end})  # the session's first request also stores the user's time zone
    counts = {key: _queries(operator_client, url, {"range": key, "end": end, "format": "json"})
              for key in ("7d", "30d", "1y")}
    assert len(set(counts.values())) == 1, counts
    # eight more members in the LAG the path leaves core1 by, and a new route three hops longer: the page
    # shows eleven more counters with the same queries
    core1 = Interface.objects.get(equipment__name="seed-core1", name="et-0/0/0").equipment
    members = [interface_upsert(equipment=core1, name=f"et-1/0/{i}", speed_mbps=100_000)[0] for i in range(8)]
    trunk = Trunk.objects.get(name="seed-core1-ae0")
    trunk_upsert(name=trunk.name, members=[*trunk.members.all(), *members])
    forward = Path.objects.get(src__code="SEEDA", dst__code="SEEDB", valid_to__isnull=True)
    hops = [(h.equipment, h.interface) for h in forward.hops.order_by("position")]
    carrier = Carrier.objects.get(code="SEEDNET")
    extra = []
    for i in range(3):
        box = equipment_upsert(name=f"seed-extra-{i}", carrier=carrier)[0]
        extra.append((box, interface_upsert(equipment=box, name="et-0/0/0", speed_mbps=100_000)[0]))
    path_set(src=forward.src, dst=forward.dst, hops=[*hops[:2], *extra, *hops[2:]], at=START - timedelta(days=1))
    response = operator_client.get(url, {"range": "7d", "end": end})
    # 11 counters each way before; now 8 more LAG members and 3 new boxes' exits on the forward path, and the
    # reverse path no longer enters core1 by the port forward traffic leaves it by towards core2 (the route moved)
    assert len(response.context["ports"]) == (11 + 8 + 3 - 1) + (11 - 1)
    assert _queries(operator_client, url, {"range": "7d", "end": end, "format": "json"}) == counts["7d"]
