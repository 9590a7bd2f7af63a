"""Path membership (pure): one answer to "does this element lie on this path, and which way?"."""

from __future__ import annotations

from wanmon.inventory.membership import (
    ALL_PORTS,
    ANY,
    IN,
    OUT,
    THROUGH,
    Bundle,
    CircuitEnds,
    Element,
    bundles_on_path,
    circuits_on_path,
    element_on_path,
    hops_from_labels,
)

# CERN->FZK leaves geant-gva by xe-0/0/0; xe-9/0/0 of the same router belongs to another customer.
CERN_FZK = hops_from_labels(["cern-border:xe-1/0/0", "geant-gva:xe-0/0/0", "geant-fra", "dfn-fra", "fzk-border"])
LAG = Bundle("gva-fra-lag", (("geant-gva", "xe-0/0/0"), ("geant-gva", "xe-0/0/1"), ("geant-fra", "et-1/0/0"),
                             ("geant-fra", "et-1/0/1")))
CIRCUIT = CircuitEnds("CERN-GVA-1", ("cern-border", "xe-1/0/0"), ("geant-gva", "xe-5/0/0"))


def test_the_port_a_hop_names_is_on_the_path_outbound():
    m = element_on_path(Element("geant-gva", "xe-0/0/0"), CERN_FZK)
    assert (m.position, m.direction, m.port_known, m.towards) == (1, OUT, True, "geant-fra")


def test_another_port_of_a_router_on_the_path_is_not():
    assert element_on_path(Element("geant-gva", "xe-9/0/0"), CERN_FZK) is None
    # not even when suspects are ranked: the hop names its port, so the port is known
    assert element_on_path(Element("geant-gva", "xe-9/0/0"), CERN_FZK, unknown_ports=ALL_PORTS) is None


def test_the_router_itself_is_crossed_towards_the_next_hop():
    m = element_on_path(Element("geant-gva"), CERN_FZK)
    assert (m.position, m.direction, m.towards) == (1, THROUGH, "geant-fra")
    assert element_on_path(Element("geant-lon"), CERN_FZK) is None


def test_a_sibling_member_of_a_bundle_carries_the_path_and_the_far_end_receives_it():
    sibling = element_on_path(Element("geant-gva", "xe-0/0/1"), CERN_FZK, [LAG])
    assert (sibling.direction, sibling.via, sibling.port_known) == (OUT, "bundle", True)
    far = element_on_path(Element("geant-fra", "et-1/0/1"), CERN_FZK, [LAG])
    assert (far.position, far.direction, far.via) == (2, IN, "far-end")
    assert [b.name for b in bundles_on_path(CERN_FZK, [LAG])] == ["gva-fra-lag"]


def test_the_far_end_of_a_circuit_is_where_the_path_arrives():
    m = element_on_path(Element("geant-gva", "xe-5/0/0"), CERN_FZK, circuits=[CIRCUIT])
    assert (m.position, m.direction) == (1, IN)
    assert [c.name for c in circuits_on_path(CERN_FZK, [CIRCUIT])] == ["CERN-GVA-1"]


def test_a_hop_without_a_port_counts_its_bundles_but_not_its_plain_ports():
    # geant-fra is named without a port: the LAG members there may carry the path, a plain port is unknown
    reverse = hops_from_labels(["fzk-border", "dfn-fra", "geant-fra", "geant-gva", "cern-border"])
    member = element_on_path(Element("geant-fra", "et-1/0/0"), reverse, [LAG])
    assert (member.direction, member.port_known) == (ANY, False)
    assert element_on_path(Element("geant-fra", "xe-3/0/0"), reverse, [LAG]) is None
    assumed = element_on_path(Element("geant-fra", "xe-3/0/0"), reverse, [LAG], unknown_ports=ALL_PORTS)
    assert (assumed.position, assumed.port_known) == (2, False)


def test_a_hop_naming_a_non_member_port_does_not_use_the_bundle():
    other = hops_from_labels(["cern-border", "geant-gva:xe-9/0/0", "geant-fra:et-9/0/0", "fzk-border"])
    assert bundles_on_path(other, [LAG]) == []


def test_a_circuit_between_consecutive_portless_hops_is_on_the_path():
    c = CircuitEnds("DFN-1", ("geant-fra", "xe-7/0/0"), ("dfn-fra", "xe-0/0/0"))
    m = element_on_path(Element(circuit="DFN-1"), CERN_FZK, circuits=[c])
    assert (m.position, m.port_known) == (2, False)
    assert circuits_on_path(hops_from_labels(["geant-fra", "garr-mil"]), [c]) == []
