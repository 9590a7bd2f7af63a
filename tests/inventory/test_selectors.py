"""The queries other apps build on: paths through elements, shared elements, trunks, circuits, sites."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.inventory.conftest import example_topology
from wanmon.inventory.models import Equipment, Interface, Trunk
from wanmon.inventory.selectors import (
    circuit_list_on_path,
    contact_list_for_sites,
    element_get_by_label,
    element_list_shared_by_paths,
    path_current,
    path_hops_labels,
    path_list_through_element,
    path_list_through_trunk,
    path_list_valid_at,
    site_list_affected_by_element,
    trunk_list_on_path,
)
from wanmon.inventory.topology import topology_import

pytestmark = pytest.mark.django_db


def _names(paths) -> list[str]:
    return sorted(str(p) for p in paths)


def _shared(pairs, **kwargs) -> list[str]:
    return [e.direction_label for e in element_list_shared_by_paths(pairs=pairs, **kwargs)]


# --- the reverse-path-loss example (equipment-level hops) -------------------------------------------------


def test_geant_fra_is_shared_by_fzk_and_cnaf_towards_cern(reverse_path_loss):
    elements = element_list_shared_by_paths(pairs=[("FZK", "CERN"), ("CNAF", "CERN")])
    # in path order, each with the direction both paths leave it by
    assert [e.direction_label for e in elements] == [
        "geant-fra -> geant-gva", "geant-gva -> cern-border", "cern-border",
    ]
    fra = elements[0]
    assert (fra.kind, fra.label, fra.position) == ("equipment", "geant-fra", 2)
    assert _names(fra.paths) == ["CNAF->CERN", "FZK->CERN"]


def test_shared_elements_are_direction_aware(reverse_path_loss):
    # CERN->FZK crosses the same boxes as FZK->CERN, but each in the other direction
    assert _shared([("CERN", "FZK"), ("FZK", "CERN")]) == []
    assert _shared([("CERN", "FZK"), ("FZK", "CERN")], direction_aware=False) == [
        "cern-border", "geant-gva", "geant-fra", "dfn-fra", "fzk-border",
    ]
    # the pair order selects the direction: CERN->FZK and CERN->CNAF share the way out of CERN
    assert _shared([("CERN", "FZK"), ("CERN", "CNAF")]) == [
        "cern-border -> geant-gva", "geant-gva -> geant-fra",
    ]


def test_healthy_paths_do_not_cross_the_suspect_direction(reverse_path_loss):
    # given every path of the example, elements crossed by one or more of them
    everything = [("CERN", "FZK"), ("FZK", "CERN"), ("CERN", "CNAF"), ("CNAF", "CERN"), ("CERN", "IN2P3"),
                  ("IN2P3", "CERN")]
    by_label = {e.direction_label: _names(e.paths)
                for e in element_list_shared_by_paths(pairs=everything, min_paths=1)}
    # then geant-fra towards geant-gva is crossed only by the two degraded paths
    assert by_label["geant-fra -> geant-gva"] == ["CNAF->CERN", "FZK->CERN"]
    assert by_label["geant-gva -> cern-border"] == ["CNAF->CERN", "FZK->CERN", "IN2P3->CERN"]


def test_paths_through_an_element(reverse_path_loss):
    assert _names(path_list_through_element(equipment="geant-fra")) == [
        "CERN->CNAF", "CERN->FZK", "CNAF->CERN", "FZK->CERN",
    ]
    assert _names(path_list_through_element(equipment="geant-fra", towards="geant-gva")) == [
        "CNAF->CERN", "FZK->CERN",
    ]
    assert _names(path_list_through_element(equipment="renater-lyo")) == ["CERN->IN2P3", "IN2P3->CERN"]
    assert list(path_list_through_element(equipment="no-such-box")) == []


def test_sites_affected_by_an_element(reverse_path_loss):
    assert [s.code for s in site_list_affected_by_element(equipment="geant-fra")] == ["CERN", "CNAF", "FZK"]
    assert [s.code for s in site_list_affected_by_element(equipment="renater-lyo")] == ["CERN", "IN2P3"]
    # the owner site counts even for equipment on no path
    topology_import({"equipment": [{"name": "fzk-spare", "site": "FZK"}]})
    assert [s.code for s in site_list_affected_by_element(equipment="fzk-spare")] == ["FZK"]


def test_path_selectors_are_time_aware():
    t1 = datetime(2026, 3, 1, tzinfo=UTC)
    t2 = t1 + timedelta(days=1)
    topology = example_topology()
    topology_import(topology, as_of=t1)
    topology["paths"][1]["hops"] = ["fzk-border", "dfn-fra", "geant-gva", "cern-border"]  # geant-fra bypassed
    topology_import(topology, as_of=t2)

    before, after = t2 - timedelta(hours=1), t2 + timedelta(hours=1)
    assert path_hops_labels(path_current("FZK", "CERN", at=before))[2] == "geant-fra"
    assert path_hops_labels(path_current("FZK", "CERN", at=after)) == [
        "fzk-border", "dfn-fra", "geant-gva", "cern-border",
    ]
    assert "FZK->CERN" in _names(path_list_through_element(equipment="geant-fra", at=before))
    assert "FZK->CERN" not in _names(path_list_through_element(equipment="geant-fra", at=after))
    assert "geant-fra -> geant-gva" in _shared([("FZK", "CERN"), ("CNAF", "CERN")], at=before)
    assert "geant-fra -> geant-gva" not in _shared([("FZK", "CERN"), ("CNAF", "CERN")], at=after)
    assert path_list_valid_at(at=t1 - timedelta(seconds=1)).count() == 0
    assert path_list_valid_at(at=after).count() == 6


# --- the LHC topology (ports, trunks, circuits) --------------------------------------------------------------


def test_lhc_fzk_and_cnaf_share_the_geant_fra_port_towards_geneva(lhc):
    elements = element_list_shared_by_paths(pairs=[("FZK", "CERN"), ("CNAF", "CERN")])
    labels = [e.label for e in elements]
    assert labels[:2] == ["geant-fra", "geant-fra:et-1/1/0"]
    assert elements[1].kind == "interface"
    # the opposite direction leaves geant-fra by another port
    cern_fzk = path_hops_labels(path_current("CERN", "FZK"))
    assert cern_fzk[2].startswith("geant-fra:") and cern_fzk[2] != "geant-fra:et-1/1/0"


def test_lhc_every_tier1_has_both_directions(lhc):
    tier1 = ["ASGC", "BNL", "CNAF", "FNAL", "FZK", "IN2P3", "NDGF", "PIC", "RAL", "SARA", "TRIUMF"]
    for site in tier1:
        assert path_current("CERN", site) is not None, site
        assert path_current(site, "CERN") is not None, site
    assert path_current("CERN", "ASGC").rtt_ms == 300.0
    assert path_current("CERN", "FNAL").capacity_mbps == 10000
    assert path_current("CERN", "FZK").capacity_mbps == 100000


def test_lhc_fnal_and_bnl_share_the_transatlantic_trunk(lhc):
    # the two paths leave Geneva by different members of one bundle: they share the switch and its direction
    shared = _shared([("CERN", "FNAL"), ("CERN", "BNL")])
    assert shared[:3] == ["cern-border -> uslhcnet-gva", "cern-border:xe-1/1/0 -> uslhcnet-gva",
                          "uslhcnet-gva -> uslhcnet-chi"]
    for src, dst in [("CERN", "FNAL"), ("CERN", "BNL"), ("FNAL", "CERN"), ("BNL", "CERN")]:
        assert [t.name for t in trunk_list_on_path(path=path_current(src, dst))] == ["uslhcnet-gva-chi"], (src, dst)
    assert trunk_list_on_path(path=path_current("CERN", "FZK")) == []
    assert [t.name for t in trunk_list_on_path(path=path_current("RAL", "CERN"))] == ["ral-lag"]
    assert _names(path_list_through_trunk(trunk="uslhcnet-gva-chi")) == [
        "BNL->CERN", "CERN->BNL", "CERN->FNAL", "FNAL->CERN",
    ]


def test_lhc_a_trunk_member_carries_the_paths_of_its_siblings(lhc):
    # FNAL is pinned to member 2/0, BNL to 2/1: trouble on either member concerns both
    member = Interface.objects.get(equipment__name="uslhcnet-gva", name="TenGigabitEthernet 2/0")
    assert _names(path_list_through_element(equipment="uslhcnet-gva", interface=member)) == ["CERN->BNL", "CERN->FNAL"]
    assert _names(path_list_through_element(equipment="uslhcnet-gva", interface="TenGigabitEthernet 2/1")) == [
        "CERN->BNL", "CERN->FNAL",
    ]
    # a plain port carries only the paths that name it
    assert _names(path_list_through_element(equipment="geant-fra", interface="et-1/1/0")) == [
        "CNAF->CERN", "FZK->CERN", "NDGF->CERN",
    ]


def test_lhc_circuits_on_paths(lhc):
    # the two transatlantic circuits are the members of one LAG: a flow pinned to one member's port may be
    # hashed onto the other after any change, exactly as the sibling port carries it (test above)
    both = ["USLHCNET-GVA-CHI-1", "USLHCNET-GVA-CHI-2"]
    assert [c.cid for c in circuit_list_on_path(path=path_current("CERN", "FNAL"))] == both
    assert [c.cid for c in circuit_list_on_path(path=path_current("CERN", "BNL"))] == both
    assert [c.cid for c in circuit_list_on_path(path=path_current("BNL", "CERN"))] == both
    assert [c.cid for c in circuit_list_on_path(path=path_current("CERN", "RAL"))] == [
        "JISC-RAL-LHCOPN-1", "JISC-RAL-LHCOPN-2",
    ]
    assert [c.cid for c in circuit_list_on_path(path=path_current("CERN", "ASGC"))] == ["ASGCNET-AMS-TPE-1"]
    assert circuit_list_on_path(path=path_current("CERN", "FZK")) == []


def test_lhc_sites_affected_by_the_transatlantic_switch(lhc):
    assert [s.code for s in site_list_affected_by_element(equipment="uslhcnet-gva")] == ["BNL", "CERN", "FNAL"]


def test_lhc_contacts_by_role(lhc):
    contacts = contact_list_for_sites(sites=["FZK", "CNAF"], roles=["noc"])
    assert [(c.site.code, c.email) for c in contacts] == [("CNAF", "noc@cnaf.example"), ("FZK", "noc@fzk.example")]


# --- membership rules when ports are unknown ---------------------------------------------------------------------


def test_unknown_port_counts_trunks_and_circuits_of_the_equipment(reverse_path_loss):
    # given ports and a LAG on geant-fra towards dfn-fra, and paths that name no port
    topology_import({
        "interfaces": [{"equipment": "geant-fra", "name": "xe-1/0/0"}, {"equipment": "geant-fra", "name": "xe-1/0/1"},
                       {"equipment": "dfn-fra", "name": "xe-0/0/0"}, {"equipment": "garr-mil", "name": "xe-0/0/0"}],
        "trunks": [{"name": "fra-lag", "members": ["geant-fra:xe-1/0/0", "geant-fra:xe-1/0/1"]}],
        "circuits": [{"carrier": "GEANT", "cid": "GEANT-FRA-DFN", "a_interface": "geant-fra:xe-1/0/0",
                      "z_interface": "dfn-fra:xe-0/0/0"}],
    })
    cern_fzk = path_current("CERN", "FZK")
    # then the trunk is counted (port unknown) and the circuit too (its two ends are consecutive hops)
    assert [t.name for t in trunk_list_on_path(path=cern_fzk)] == ["fra-lag"]
    assert [c.cid for c in circuit_list_on_path(path=cern_fzk)] == ["GEANT-FRA-DFN"]
    # the circuit joins geant-fra and dfn-fra: CERN->CNAF leaves geant-fra towards garr-mil instead
    assert circuit_list_on_path(path=path_current("CERN", "CNAF")) == []

    # when CERN->FZK names a non-member port at geant-fra, neither is on it any more
    topology = example_topology()
    topology["interfaces"] = [{"equipment": "geant-fra", "name": "et-9/0/0"}]
    topology["paths"][0]["hops"][2] = "geant-fra:et-9/0/0"
    topology_import(topology)
    cern_fzk = path_current("CERN", "FZK")
    assert trunk_list_on_path(path=cern_fzk) == []
    assert circuit_list_on_path(path=cern_fzk) == []


def test_element_labels_resolve(lhc):
    assert element_get_by_label("geant-fra") == Equipment.objects.get(name="geant-fra")
    assert element_get_by_label("geant-fra:et-1/1/0").name == "et-1/1/0"
    assert element_get_by_label("ral-lag") == Trunk.objects.get(name="ral-lag")
    assert element_get_by_label("nothing") is None
