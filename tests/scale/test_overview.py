"""The overview at 200 sites: problems first, sites grouped by region and tier with an aggregated status, search
and filter, the full matrix of a chosen group; bad filters are a 400 naming the parameter."""

from __future__ import annotations

import re
import uuid
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from scripts.scale_inventory import inventory_create, owamp_records, world_generate
from wanmon.dashboard.selectors.overview import GRID_MAX_SITES
from wanmon.measurements.ingest import batch_ingest

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    """200 sites, 600 directed paths, 30 minutes of latencybg results; five directions lose 1-1.8 %."""
    w = world_generate(n_paths=600, n_sites=200)
    now = timezone.now().replace(second=0, microsecond=0)
    inventory_create(w, valid_from=now - timedelta(days=1))
    t = now - timedelta(minutes=30)
    while t <= now:
        batch_ingest(batch_id=str(uuid.uuid4()), records=owamp_records(w, t, end=now))
        t += timedelta(minutes=1)
    return w


@pytest.fixture
def client_in(client):
    client.force_login(get_user_model().objects.create_user("noc", password="x"))
    return client


def _problem_pairs(html: str) -> list[tuple[str, str]]:
    table = html.split('id="overview-problems"', 1)[1].split("</table>", 1)[0]
    return re.findall(r'data-src="([^"]+)" data-dst="([^"]+)"', table)


def test_overview_at_200_sites_lists_problems_first_and_groups_by_region_and_tier(world, client_in):
    response = client_in.get("/")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="health-grid"' not in html  # no 200 x 200 grid
    problems = _problem_pairs(html)
    # loss >= 1 %: critical, listed first; a stray lost packet or two elsewhere is at most a warning
    assert set(problems[: len(world.lossy_paths)]) == set(world.lossy_paths)
    statuses_listed = re.findall(r'<tr data-status="([^"]+)" data-src=', html)
    assert statuses_listed[: len(world.lossy_paths)] == ["critical"] * len(world.lossy_paths)
    assert set(statuses_listed[len(world.lossy_paths):]) <= {"warning"}
    groups = re.findall(r'<tr data-region="([^"]*)" data-tier="([^"]*)" data-status="([^"]+)"', html)
    regions = {s["region"] for s in world.sites}
    assert {g[0] for g in groups} == regions
    assert len(groups) == len({(s["region"], s["tier"]) for s in world.sites})
    lossy_groups = {
        (s["region"], str(s["tier"])) for s in world.sites for src, _ in world.lossy_paths if s["code"] == src
    }
    statuses = {(g[0], g[1]): g[2] for g in groups}
    assert {key for key, st in statuses.items() if st == "critical"} == lossy_groups
    first = groups[: len(lossy_groups)]  # worst groups first
    assert all(g[2] == "critical" for g in first)


def test_a_chosen_group_gets_its_full_matrix(world, client_in):
    region = world.sites[1]["region"]
    members = sorted(s["code"] for s in world.sites if s["region"] == region and s["tier"] == 2)
    assert 1 < len(members) <= GRID_MAX_SITES
    html = client_in.get("/", {"region": region, "tier": 2}).content.decode()
    grid = html.split('id="health-grid"', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r'<th class="src" scope="row">([^<]+)</th>', grid)
    cols = re.findall(r'<th class="dst" scope="col">([^<]+)</th>', grid)
    assert sorted(rows) == sorted(cols) == members
    inside = {(a, b) for a, b in world.paths if a in members and b in members}
    assert len(re.findall(r'<a class="cell ', grid)) == len(inside)


def test_search_and_status_filter(world, client_in):
    src, dst = next(iter(world.lossy_paths))
    html = client_in.get("/", {"q": src.lower()}).content.decode()
    assert all(src in pair for pair in _problem_pairs(html))
    assert (src, dst) in _problem_pairs(html)
    html = client_in.get("/", {"status": "critical"}).content.decode()
    assert sorted(_problem_pairs(html)) == sorted(world.lossy_paths)


@pytest.mark.parametrize(
    ("params", "message"),
    [({"tier": "7"}, "tier: '7' is not one of 0, 1, 2, 3"), ({"status": "purple"}, "status: 'purple' is not one of"),
     ({"q": "x" * 65}, "q: at most 64 characters")],
)
def test_bad_filters_are_a_400_naming_the_parameter(world, client_in, params, message):
    response = client_in.get("/", params)
    assert response.status_code == 400
    assert message in response.content.decode()


def test_the_overviews_path_rows_give_every_status_the_path_versions_give(world):
    """The scaled overview reads plain rows of the paths (no model instances): each of the 600 directions gets the
    status and reasons it gets from its path version, and the counts add up to every direction."""
    from wanmon.dashboard.selectors.overview import _overview_paths, overview, path_observations
    from wanmon.inventory.selectors import path_list_valid_at

    at = timezone.now()
    rows = path_observations(at=at, paths=_overview_paths(at, []))
    versions = path_observations(at=at, paths=list(path_list_valid_at(at=at)))
    assert len(rows) == len(world.paths) == 600
    assert {key: cell.health for key, cell in rows.items()} == {key: cell.health for key, cell in versions.items()}
    counts = overview(at=at).status_counts
    assert sum(counts.values()) == 600
    assert counts["critical"] == len(world.lossy_paths) == 5
    assert counts == {st: sum(c.health.status == st for c in versions.values()) for st in counts}
