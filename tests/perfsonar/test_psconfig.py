"""pSConfig templates from the inventory: valid against perfSONAR's schema, the right groups, maintenance pauses,
the read-only token URL printed by psconfig_url, and the archive token in a site's template works."""

from __future__ import annotations

import importlib
import io
import json
from datetime import timedelta

import jsonschema
import pytest
from django.apps import apps as django_apps
from django.core.management import call_command
from django.utils import timezone

from tests.conftest import shared_fixture
from tests.perfsonar.conftest import load
from wanmon.inventory.choices import AgentScope, HostRole
from wanmon.inventory.models import Agent
from wanmon.inventory.models import Path as InventoryPath
from wanmon.inventory.services import agent_revoke
from wanmon.maintenance.models import MaintenanceAffect, MaintenanceWindow
from wanmon.measurements.models import IngestBatch
from wanmon.perfsonar.models import PsconfigToken
from wanmon.perfsonar.psconfig import SiteHosts, TemplateInput, template_build

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def validator():
    schema = json.loads(shared_fixture("fixtures", "psconfig", "psconfig-schema.json").read_text())
    return jsonschema.Draft4Validator(schema)


def valid(validator, template: dict) -> dict:
    errors = sorted(validator.iter_errors(template), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]
    return template


def url_of(site: str | None) -> str:
    out, err = io.StringIO(), io.StringIO()
    call_command("psconfig_url", *(["--site", site] if site else ["--mesh"]), stdout=out, stderr=err)
    return out.getvalue().strip()


def fetch(client, url: str):
    path = url.split("://", 1)[1].split("/", 1)[1]
    return client.get("/" + path)


def pairs(template: dict, group: str) -> set[tuple[str, str]]:
    """The host pairs a group tests: the directions its addresses imply, less its excludes."""
    g = template["groups"][group]
    if g["type"] == "mesh":
        names = [a["name"] for a in g["addresses"]]
        implied = {(x, y) for x in names for y in names if x != y}
    else:
        a = [x["name"] for x in g["a-addresses"]]
        b = [x["name"] for x in g["b-addresses"]]
        implied = {(x, y) for x in a for y in b} | {(y, x) for x in a for y in b}
    excluded = {(e["local-address"]["name"], t["name"]) for e in g.get("excludes", ()) for t in e["target-addresses"]}
    return implied - excluded


def test_the_examples_of_the_schema_validate(validator):
    # The validator itself accepts perfSONAR's own examples: a failure below is the template's, not the set-up's.
    for name in ("example-1-simple.json", "example-2-testbed.json"):
        valid(validator, json.loads(shared_fixture("fixtures", "psconfig", name).read_text()))


def test_mesh_template_has_the_star_and_the_tier1_mesh_and_validates(client, ps_topo, validator):
    url = url_of(None)
    assert url.startswith("http://") and url.endswith(".json") and "/perfsonar/psconfig/" in url
    response = fetch(client, url)
    assert response.status_code == 200
    template = valid(validator, response.json())
    assert template["addresses"] == {
        "cern-ps01": {"address": "192.168.1.104", "_meta": {"site": "CERN"}},
        "fzk-ps01": {"address": "192.168.1.101", "_meta": {"site": "FZK"}},
        "ral-ps01": {"address": "203.0.113.30", "_meta": {"site": "RAL"}},
    }
    assert pairs(template, "wanmon-star") == {("cern-ps01", "fzk-ps01"), ("fzk-ps01", "cern-ps01"),
                                              ("cern-ps01", "ral-ps01"), ("ral-ps01", "cern-ps01")}
    assert template["groups"]["wanmon-mesh"]["type"] == "mesh"
    assert pairs(template, "wanmon-mesh") == {("fzk-ps01", "ral-ps01"), ("ral-ps01", "fzk-ps01")}
    assert set(template["tasks"]) == {f"wanmon-{g}-{t}" for g in ("star", "mesh")
                                      for t in ("throughput", "latencybg", "trace")}
    assert template["tests"]["wanmon-throughput"]["spec"]["source"] == "{% address[0] %}"
    assert "archives" not in template  # one agent token cannot be right for every site
    assert "psconfig_url --site" in template["_meta"]["wanmon"]["archive"]


def test_site_template_holds_the_sites_tests_and_an_archive_with_a_working_agent_token(client, ps_topo, validator):
    url = url_of("FZK")
    template = valid(validator, fetch(client, url).json())
    assert pairs(template, "wanmon-star") == {("cern-ps01", "fzk-ps01"), ("fzk-ps01", "cern-ps01")}
    assert pairs(template, "wanmon-mesh") == {("fzk-ps01", "ral-ps01"), ("ral-ps01", "fzk-ps01")}
    archive = template["archives"]["wanmon"]
    assert archive["archiver"] == "http" and archive["ttl"] == "PT2H"
    data = archive["data"]
    assert data["schema"] == 2 and data["op"] == "put"
    assert data["_url"] == "http://127.0.0.1:8000/api/v1/perfsonar/archive" or data["_url"].endswith(
        "/api/v1/perfsonar/archive")
    assert data["retry-policy"][0] == {"attempts": 2, "wait": "PT1M"}
    assert all(task["archives"] == ["wanmon"] for task in template["tasks"].values())
    agent = Agent.objects.get(name="fzk-perfsonar")
    assert agent.site == ps_topo["fzk"]

    # The token the template hands the toolkit archives as FZK's agent: a CERN->FZK run is accepted.
    token = data["_headers"]["Authorization"].removeprefix("Bearer ")
    body = load("pscheduler-archiver-http-throughput-1.json")
    response = client.put("/api/v1/perfsonar/archive", data=json.dumps(body), content_type="application/json",
                          HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 200 and response.json()["accepted"] == 1
    # The URL's token is read-only: it is no agent token.
    read_token = url.rsplit("/", 1)[1].removesuffix(".json")
    response = client.put("/api/v1/perfsonar/archive", data=json.dumps(body), content_type="application/json",
                          HTTP_AUTHORIZATION=f"Bearer {read_token}")
    assert response.status_code == 401


def test_the_token_in_a_site_template_is_refused_by_the_ingest(client, ps_topo):
    # given FZK's template, which anyone fetching it reads (no login)
    template = fetch(client, url_of("FZK")).json()
    token = template["archives"]["wanmon"]["data"]["_headers"]["Authorization"].removeprefix("Bearer ")
    # when its token sends a measurement batch about a CERN->FZK path, as a site agent would
    batch = {"batch_id": "6f1c0c8e-1b7e-4c8a-9a53-2f3f1c1d9e01", "agent_version": "1.0.0",
             "sent_at": "2026-03-01T11:02:00Z",
             "records": [{"type": "throughput", "time": "2026-03-01T11:00:00Z", "src": "CERN", "dst": "FZK",
                          "tool": "nuttcp", "protocol": "tcp", "duration_s": 10, "throughput_bps": 9.0e8}]}
    response = client.post("/api/v1/ingest", data=json.dumps(batch), content_type="application/json",
                           HTTP_AUTHORIZATION=f"Bearer {token}")
    # then it is refused, saying what the token is for, and nothing is stored
    assert response.status_code == 403
    assert "perfSONAR runs only" in response.json()["errors"][0]["message"]
    assert not IngestBatch.objects.exists()
    assert Agent.objects.get(name="fzk-perfsonar").scope == AgentScope.ARCHIVE
    # while a site agent's token sends the same batch
    response = client.post("/api/v1/ingest", data=json.dumps(batch), content_type="application/json",
                           HTTP_AUTHORIZATION=f"Bearer {ps_topo['cern_token']}")
    assert response.status_code == 200 and response.json()["accepted"] == 1


def test_archive_agents_made_before_scopes_are_limited_to_the_archive_by_the_migration(client, ps_topo):
    url_of("RAL")
    Agent.objects.filter(name="ral-perfsonar").update(scope=AgentScope.AGENT)  # as every agent was before
    migration = importlib.import_module("wanmon.perfsonar.migrations.0002_archive_agents_scope")
    migration.archive_agents_scope(django_apps, None)
    assert Agent.objects.get(name="ral-perfsonar").scope == AgentScope.ARCHIVE
    assert Agent.objects.get(name="ral-agent-1").scope == AgentScope.AGENT


def test_psconfig_url_prints_the_same_url_again_and_a_revoked_archive_agent_is_replaced(client, ps_topo):
    first = url_of("CERN")
    assert url_of("CERN") == first
    assert PsconfigToken.objects.filter(site=ps_topo["cern"]).count() == 1
    agent = Agent.objects.get(name="cern-perfsonar")
    agent_revoke(agent=agent)
    template = fetch(client, first).json()
    assert "archives" not in template and "revoked" in template["_meta"]["wanmon"]["archive"]
    assert url_of("CERN") == first  # the read-only token is unchanged; a new archive agent is made
    template = fetch(client, first).json()
    assert template["archives"]["wanmon"]["data"]["_headers"]["Authorization"].startswith("Bearer ")
    assert Agent.objects.get(site=ps_topo["cern"], revoked_at__isnull=True, name__startswith="cern-perfsonar").name == (
        "cern-perfsonar-2")


def test_unknown_token_is_404(client, ps_topo):
    assert client.get("/perfsonar/psconfig/nope.json").status_code == 404
    assert client.get(f"/perfsonar/psconfig/{'x' * 300}.json").status_code == 404


def test_unknown_site_is_a_command_error(ps_topo):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="unknown site 'XYZ'"):
        call_command("psconfig_url", "--site", "XYZ", stdout=io.StringIO(), stderr=io.StringIO())


def test_outage_maintenance_on_a_path_pauses_its_tests(client, ps_topo, validator):
    now = timezone.now()
    window = MaintenanceWindow.objects.create(reference="GEANT-1234", start=now - timedelta(hours=1),
                                              end=now + timedelta(hours=1), impact="outage")
    path = InventoryPath.objects.get(src=ps_topo["cern"], dst=ps_topo["fzk"])
    MaintenanceAffect.objects.create(window=window, path=path)
    template = valid(validator, fetch(client, url_of(None)).json())
    star = pairs(template, "wanmon-star")
    assert ("cern-ps01", "fzk-ps01") not in star  # would only measure the outage
    assert ("fzk-ps01", "cern-ps01") in star and ("cern-ps01", "ral-ps01") in star
    assert template["_meta"]["wanmon"]["paused"] == [{"path": "CERN->FZK", "maintenance": "GEANT-1234"}]

    window.impact = "at-risk"  # work that may not cut the path: keep measuring it
    window.save()
    template = fetch(client, url_of(None)).json()
    assert ("cern-ps01", "fzk-ps01") in pairs(template, "wanmon-star")


def test_template_build_without_paths_is_still_valid(validator):
    spec = TemplateInput(sites=[SiteHosts("CERN", 0, (("cern-ps01", "192.0.2.1"),))], pairs=frozenset())
    template = valid(validator, template_build(spec))
    assert template["groups"] == {} and template["tasks"] == {}


def test_the_lhc_inventory_gives_the_cern_tier1_star(client, validator):
    from tests.conftest import ROOT
    from wanmon.inventory.models import Host, Site

    call_command("import_topology", str(ROOT / "wanmon/demo/data/lhc-topology.yaml"), stdout=io.StringIO())
    template = valid(validator, fetch(client, url_of(None)).json())
    tier1 = set(Site.objects.filter(tier=1).values_list("code", flat=True))
    star = pairs(template, "wanmon-star")
    cern_hosts = set(Host.objects.filter(site__code="CERN", role=HostRole.TEST).values_list("name", flat=True))
    spokes = {t for s, t in star if s in cern_hosts}
    assert {Host.objects.get(name=h).site.code for h in spokes} == tier1  # every Tier-1, both ways
    assert {(t, s) for s, t in star} == star
    assert "wanmon-mesh" not in template["groups"]  # the inventory has no Tier-1 to Tier-1 path
    for name, address in template["addresses"].items():
        assert Host.objects.get(name=name).address == address["address"]
    site_template = valid(validator, fetch(client, url_of("TRIUMF")).json())
    assert {h for pair in pairs(site_template, "wanmon-star") for h in pair} == cern_hosts | set(
        Host.objects.filter(site__code="TRIUMF", role=HostRole.TEST).values_list("name", flat=True))


def test_a_host_name_two_sites_use_is_qualified_by_the_site(client, ps_topo, validator):
    from wanmon.inventory.models import Host

    Host.objects.filter(name__in=["fzk-ps01", "ral-ps01"]).update(name="ps01")
    template = valid(validator, fetch(client, url_of(None)).json())
    assert template["addresses"]["fzk-ps01"]["address"] == "192.168.1.101"
    assert template["addresses"]["ral-ps01"]["address"] == "203.0.113.30"
    assert ("fzk-ps01", "ral-ps01") in pairs(template, "wanmon-mesh")
