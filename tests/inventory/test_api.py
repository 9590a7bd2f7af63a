"""The inventory REST API: permissions by role, filters, validation, path versions, agents."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group

from tests.inventory.conftest import client_for
from wanmon.core.permissions import OPERATOR_GROUP, VIEWER_GROUP
from wanmon.inventory.models import Agent, Carrier, Equipment, Path
from wanmon.inventory.selectors import path_current, path_list_versions
from wanmon.inventory.services import agent_authenticate

pytestmark = pytest.mark.django_db

API = "/api/v1"
LIST_ENDPOINTS = ["carriers", "sites", "site-contacts", "hosts", "equipment", "interfaces", "circuits", "trunks",
                  "paths", "agents"]


# Entries of wanmon/demo/data/lhc-topology.yaml per endpoint.
LHC_COUNTS = {"carriers": 13, "sites": 12, "site-contacts": 48, "hosts": 24, "equipment": 37, "interfaces": 75,
              "circuits": 6, "trunks": 2, "paths": 22, "agents": 0}


def _results(response) -> list[dict]:
    assert response.status_code == 200, response.content
    return response.json()["results"]


def test_role_groups_exist():
    assert set(Group.objects.filter(name__in=[OPERATOR_GROUP, VIEWER_GROUP]).values_list("name", flat=True)) == {
        "operator", "viewer",
    }


def test_anonymous_is_refused_and_viewer_reads_every_list_but_the_contacts(lhc, viewer, operator):
    anonymous = {e: client_for().get(f"{API}/{e}/").status_code for e in LIST_ENDPOINTS}
    assert all(code in (401, 403) for code in anonymous.values()), anonymous
    counts = {}
    for endpoint in LIST_ENDPOINTS:
        response = client_for(viewer).get(f"{API}/{endpoint}/")
        counts[endpoint] = response.json()["count"] if response.status_code == 200 else response.status_code
    assert counts == {**LHC_COUNTS, "site-contacts": 403}  # people's addresses: operators only
    assert client_for(operator).get(f"{API}/site-contacts/").json()["count"] == LHC_COUNTS["site-contacts"]


def test_writes_need_operator_or_staff(lhc, viewer, operator, staff):
    body = {"code": "KREONET", "name": "KREONET", "kind": "nren"}
    assert client_for(viewer).post(f"{API}/carriers/", body, format="json").status_code == 403
    assert not Carrier.objects.filter(code="KREONET").exists()

    response = client_for(operator).post(f"{API}/carriers/", body, format="json")
    assert response.status_code == 201, response.content
    carrier_id = response.json()["id"]

    response = client_for(staff).patch(f"{API}/carriers/{carrier_id}/", {"noc_email": "noc@kreonet.example"},
                                       format="json")
    assert response.status_code == 200
    assert Carrier.objects.get(code="KREONET").noc_email == "noc@kreonet.example"
    assert client_for(viewer).delete(f"{API}/carriers/{carrier_id}/").status_code == 403
    assert client_for(operator).delete(f"{API}/carriers/{carrier_id}/").status_code == 204


def test_filters(lhc, viewer, operator):
    client = client_for(viewer)
    geant = _results(client.get(f"{API}/equipment/", {"carrier": "GEANT", "limit": 500}))
    assert sorted(e["name"] for e in geant) == [
        "geant-ams", "geant-fra", "geant-gva", "geant-ham", "geant-lon", "geant-mad", "geant-mil", "geant-par",
    ]
    assert [e["name"] for e in _results(client.get(f"{API}/equipment/", {"site": ["FZK", "CNAF"]}))] == [
        "cnaf-border", "fzk-border",
    ]
    assert [e["name"] for e in _results(client.get(f"{API}/equipment/", {"known_reordering": "true"}))] == ["asgc-tpe"]
    # an unknown code is an error, not an empty list
    assert client.get(f"{API}/equipment/", {"carrier": "NOPE"}).status_code == 400

    paths = _results(client.get(f"{API}/paths/", {"dst": "CERN", "equipment": "geant-fra", "current": "true"}))
    assert sorted(p["src"] for p in paths) == ["CNAF", "FZK", "NDGF"]
    assert _results(client.get(f"{API}/paths/", {"src": "FZK", "dst": "CERN"}))[0]["hops"][2] == "geant-fra:et-1/1/0"
    assert len(_results(client.get(f"{API}/paths/", {"site": "ASGC"}))) == 2
    trunks = _results(client.get(f"{API}/trunks/", {"equipment": "uslhcnet-gva"}))
    assert [t["name"] for t in trunks] == ["uslhcnet-gva-chi"]
    interfaces = _results(client.get(f"{API}/interfaces/", {"equipment": "uslhcnet-gva", "q": "chi"}))
    assert all(i["trunks"] == ["uslhcnet-gva-chi"] for i in interfaces if "2/" in i["name"])
    assert [s["code"] for s in _results(client.get(f"{API}/sites/", {"tier": 0}))] == ["CERN"]
    contacts = _results(client_for(operator).get(f"{API}/site-contacts/", {"site": "RAL", "role": "noc"}))
    assert [c["email"] for c in contacts] == ["noc@ral.example"]
    circuits = _results(client.get(f"{API}/circuits/", {"equipment": "ral-border"}))
    assert sorted(c["cid"] for c in circuits) == ["JISC-RAL-LHCOPN-1", "JISC-RAL-LHCOPN-2"]


def test_validation_errors_are_400_with_reasons(lhc, operator):
    client = client_for(operator)
    response = client.post(f"{API}/equipment/", {"name": "x-1", "site": "CERN", "carrier": "GEANT"}, format="json")
    assert response.status_code == 400
    assert "equipment belongs to a site or to a carrier, not both" in str(response.json())

    response = client.post(f"{API}/sites/", {"code": "CERN", "name": "again"}, format="json")
    assert response.status_code == 400 and "code" in response.json()

    response = client.post(f"{API}/sites/", {"code": "NEW", "name": "New", "lat": 123}, format="json")
    assert response.status_code == 400 and "lat" in response.json()

    response = client.post(f"{API}/trunks/", {"name": "t1", "members": ["geant-fra"]}, format="json")
    assert response.status_code == 400
    assert response.json() == {"members": ["must be 'equipment:interface'"]}

    response = client.post(f"{API}/interfaces/", {"equipment": "geant-fra", "name": "et-1/1/0"}, format="json")
    assert response.status_code == 400  # (equipment, name) is unique


def test_create_trunk_and_circuit_with_labels(lhc, operator):
    client = client_for(operator)
    response = client.post(f"{API}/trunks/", {"name": "fra-gva", "members": ["geant-fra:et-1/1/0"]}, format="json")
    assert response.status_code == 201
    assert response.json()["members"] == ["geant-fra:et-1/1/0"]
    response = client.post(f"{API}/circuits/", {
        "carrier": "GEANT", "cid": "GEANT-FRA-GVA-1", "capacity_mbps": 100000,
        "a_interface": "geant-fra:et-1/1/0", "z_interface": "geant-gva:et-1/0/0",
    }, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["a_interface"] == "geant-fra:et-1/1/0"


def test_deleting_something_in_use_is_a_conflict(lhc, operator):
    site_id = client_for(operator).get(f"{API}/sites/", {"code": "FZK"}).json()["results"][0]["id"]
    response = client_for(operator).delete(f"{API}/sites/{site_id}/")
    assert response.status_code == 409
    assert "FZK is still referenced by" in response.json()["detail"]


def test_path_writes_create_versions(reverse_path_loss, operator, viewer):
    client = client_for(operator)
    old = path_current("FZK", "CERN")
    reroute = {"src": "FZK", "dst": "CERN", "capacity_mbps": 1000,
               "hops": ["fzk-border", "dfn-fra", "geant-gva", "cern-border"]}

    assert client_for(viewer).post(f"{API}/paths/", reroute, format="json").status_code == 403

    # a new route: 201 with the new version; the old one ended
    response = client.post(f"{API}/paths/", reroute, format="json")
    assert response.status_code == 201, response.content
    new = response.json()
    assert new["hops"] == reroute["hops"] and new["is_current"] and new["id"] != old.pk
    old.refresh_from_db()
    assert old.valid_to is not None

    # ?at= lists the version in force then: the old route before the change, the new one after it
    before = _results(client.get(f"{API}/paths/", {"src": "FZK", "dst": "CERN", "at": old.valid_from.isoformat()}))
    after = _results(client.get(f"{API}/paths/", {"src": "FZK", "dst": "CERN", "at": old.valid_to.isoformat()}))
    assert [p["id"] for p in before] == [old.pk] and [p["id"] for p in after] == [new["id"]]

    # the same route again: 200, nothing new
    response = client.post(f"{API}/paths/", reroute, format="json")
    assert response.status_code == 200 and response.json()["id"] == new["id"]
    assert path_list_versions(src="FZK", dst="CERN").count() == 2

    # PATCH of the capacity: another version; of the note: in place
    response = client.patch(f"{API}/paths/{new['id']}/", {"capacity_mbps": 10000}, format="json")
    assert response.status_code == 200 and response.json()["capacity_mbps"] == 10000
    third = response.json()["id"]
    assert third != new["id"]
    response = client.patch(f"{API}/paths/{third}/", {"note": "rerouted"}, format="json")
    assert response.json()["id"] == third and response.json()["note"] == "rerouted"

    # an ended version cannot be changed
    assert client.patch(f"{API}/paths/{new['id']}/", {"note": "x"}, format="json").status_code == 409

    # DELETE ends the version in force; the history stays
    assert client.delete(f"{API}/paths/{third}/").status_code == 204
    assert path_current("FZK", "CERN") is None
    assert Path.objects.filter(src__code="FZK", dst__code="CERN").count() == 3
    listed = _results(client.get(f"{API}/paths/", {"src": "FZK", "current": "false"}))
    assert len(listed) == 3


def test_path_input_errors(reverse_path_loss, operator):
    client = client_for(operator)
    response = client.post(f"{API}/paths/", {"src": "FZK", "dst": "CERN",
                                             "hops": ["fzk-border", "dfn-fra", "geant-frx"]}, format="json")
    assert response.status_code == 400
    assert response.json() == {"hops": {"2": ["unknown equipment 'geant-frx'"]}}
    response = client.post(f"{API}/paths/", {"src": "CERN", "dst": "CERN", "hops": ["cern-border"]}, format="json")
    assert response.status_code == 400 and "same site" in str(response.json())
    response = client.post(f"{API}/paths/", {"src": "CERN", "dst": "FZK", "hops": []}, format="json")
    assert response.status_code == 400 and "hops" in response.json()


def test_shared_elements_and_path_elements_endpoints(lhc, viewer):
    client = client_for(viewer)
    response = client.get(f"{API}/paths/shared-elements/", {"pair": ["FZK,CERN", "CNAF->CERN"]})
    assert response.status_code == 200
    first = response.json()[0]
    assert (first["label"], first["towards"], sorted(first["paths"])) == (
        "geant-fra", "geant-gva", ["CNAF->CERN", "FZK->CERN"],
    )
    assert client.get(f"{API}/paths/shared-elements/").status_code == 400

    # CERN->FNAL leaves uslhcnet-gva by a member port of the Geneva-Chicago bundle: a LAG hashes each flow
    # onto either member, so both member circuits carry the path's traffic (wanmon/inventory/membership.py).
    fnal = path_current("CERN", "FNAL")
    response = client.get(f"{API}/paths/{fnal.pk}/elements/")
    assert response.json() == {
        "trunks": ["uslhcnet-gva-chi"],
        "circuits": ["USLHCNET USLHCNET-GVA-CHI-1", "USLHCNET USLHCNET-GVA-CHI-2"],
    }


def test_agent_api_shows_the_token_once(lhc, operator, viewer):
    client = client_for(operator)
    assert client_for(viewer).post(f"{API}/agents/", {"site": "RAL"}, format="json").status_code == 403

    response = client.post(f"{API}/agents/", {"site": "RAL", "equipment": ["ral-border"]}, format="json")
    assert response.status_code == 201, response.content
    created = response.json()
    token = created["token"]
    assert created["name"] == "ral-agent-1" and created["equipment"] == ["ral-border"]
    assert agent_authenticate(token=token).name == "ral-agent-1"

    # reading never shows the token or its hash
    listed = client_for(viewer).get(f"{API}/agents/").json()["results"][0]
    assert "token" not in listed and "token_hash" not in listed
    assert listed["token_prefix"] == token[:8]
    assert token not in client_for(viewer).get(f"{API}/agents/{created['id']}/").content.decode()

    # equipment assignment, rotation, revocation
    response = client.patch(f"{API}/agents/{created['id']}/", {"equipment": ["ral-border", "janet-lon"]},
                            format="json")
    assert sorted(response.json()["equipment"]) == ["janet-lon", "ral-border"]
    new_token = client.post(f"{API}/agents/{created['id']}/rotate-token/").json()["token"]
    assert agent_authenticate(token=token) is None and agent_authenticate(token=new_token) is not None
    response = client.post(f"{API}/agents/{created['id']}/revoke/")
    assert response.status_code == 200 and response.json()["is_active"] is False
    assert agent_authenticate(token=new_token) is None
    assert client_for(viewer).post(f"{API}/agents/{created['id']}/revoke/").status_code == 403
    assert Agent.objects.get().revoked_at is not None
    assert client.delete(f"{API}/agents/{created['id']}/").status_code == 405


def test_schema_lists_the_inventory(admin_client):
    response = admin_client.get("/api/schema/")
    assert response.status_code == 200
    text = response.content.decode()
    for endpoint in LIST_ENDPOINTS:
        assert f"/api/v1/{endpoint}/" in text
    assert "/api/v1/paths/shared-elements/" in text


def test_equipment_listing_uses_codes(lhc, viewer):
    item = _results(client_for(viewer).get(f"{API}/equipment/", {"name": "fzk-border"}))[0]
    assert item["site"] == "FZK" and item["carrier"] is None
    assert Equipment.objects.get(name="fzk-border").linecard_capacity_mbps == item["linecard_capacity_mbps"] == 80000
