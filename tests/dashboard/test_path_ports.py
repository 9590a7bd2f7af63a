"""Which counters carry a path in its direction: the demo's FZK->CERN case (no circuits in the inventory)."""

from wanmon.dashboard.path_ports import VIA_REVERSE, path_ports
from wanmon.inventory.membership import Bundle, CircuitEnds, Links, hops_from_labels, link_far_ends

CERN_FZK = hops_from_labels(["cern-border:et-1/0/0", "geant-gva:et-1/0/0", "geant-fra:et-1/0/0",
                             "dfn-fra:et-1/0/0", "fzk-border"])
FZK_CERN = hops_from_labels(["fzk-border:Ethernet1/1", "dfn-fra:et-1/1/0", "geant-fra:et-1/1/0",
                             "geant-gva:et-1/1/0", "cern-border"])
PORTS = [("cern-border", "et-1/0/0"), ("geant-gva", "et-1/0/0"), ("geant-gva", "et-1/1/0"),
         ("geant-fra", "et-1/0/0"), ("geant-fra", "et-1/1/0"), ("dfn-fra", "et-1/0/0"), ("dfn-fra", "et-1/1/0"),
         ("fzk-border", "Ethernet1/1"), ("geant-gva", "et-9/9/9")]


def test_links_are_paired_from_the_paths_in_opposite_directions():
    far = link_far_ends([CERN_FZK, FZK_CERN])
    # CERN->FZK leaves geant-gva by et-1/0/0 towards geant-fra; FZK->CERN leaves geant-fra by et-1/1/0 back
    assert far[("geant-gva", "et-1/0/0")] == ("geant-fra", "et-1/1/0")
    assert far[("geant-fra", "et-1/1/0")] == ("geant-gva", "et-1/0/0")
    assert ("geant-gva", "et-9/9/9") not in far


def test_a_circuit_names_the_far_end_first():
    links = Links(circuits=[CircuitEnds("1", ("geant-gva", "et-1/0/0"), ("geant-fra", "et-7/0/0"))])
    assert link_far_ends([CERN_FZK, FZK_CERN], links)[("geant-gva", "et-1/0/0")] == ("geant-fra", "et-7/0/0")


def test_receive_errors_at_geant_gva_belong_to_the_path_arriving_by_it():
    far = link_far_ends([CERN_FZK, FZK_CERN])
    ports = path_ports([FZK_CERN, CERN_FZK], PORTS, Links(), far)
    fzk_cern = [(p.label, p.direction) for p in ports if p.path == 0]
    cern_fzk = [(p.label, p.direction) for p in ports if p.path == 1]
    # FZK->CERN: out of geant-fra by et-1/1/0, into geant-gva by et-1/0/0 (its receive counters: the CRC errors)
    assert ("geant-fra:et-1/1/0", "out") in fzk_cern
    assert ("geant-gva:et-1/0/0", "in") in fzk_cern
    assert fzk_cern.index(("geant-fra:et-1/1/0", "out")) + 1 == fzk_cern.index(("geant-gva:et-1/0/0", "in"))
    assert ("geant-gva:et-1/0/0", "out") not in fzk_cern
    # CERN->FZK leaves by that port: only its transmit side
    assert ("geant-gva:et-1/0/0", "out") in cern_fzk and ("geant-gva:et-1/0/0", "in") not in cern_fzk
    assert next(p for p in ports if p.path == 0 and p.label == "geant-gva:et-1/0/0").via == VIA_REVERSE
    # a port no path names is on neither
    assert all("et-9/9/9" not in label for label, _ in fzk_cern + cern_fzk)


def test_bundle_members_at_the_next_box_are_the_entries():
    hops = hops_from_labels(["ral-border:xe-0/0/0", "janet-lon:et-1/0/0", "geant-lon"])
    lag = Bundle("ral-lag", (("janet-lon", "xe-4/0/0"), ("janet-lon", "xe-4/1/0"), ("ral-border", "xe-0/0/0"),
                             ("ral-border", "xe-0/1/0")))
    ports = path_ports([hops], [m for m in lag.members] + [("janet-lon", "et-1/0/0")], Links(bundles=[lag]), {})
    assert [(p.label, p.direction) for p in ports] == [
        ("ral-border:xe-0/0/0", "out"), ("ral-border:xe-0/1/0", "out"), ("janet-lon:xe-4/0/0", "in"),
        ("janet-lon:xe-4/1/0", "in"), ("janet-lon:et-1/0/0", "out")]
