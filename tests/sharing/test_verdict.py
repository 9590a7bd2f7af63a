"""The pure verdict builder: domains along a path, what a carrier's scope hides, and the verdict per domain; a link's
token kept out of the logs."""

from __future__ import annotations

from wanmon.sharing.verdict import OTHER_SEGMENT, DomainFacts, Owners, domain_route, domain_verdicts, scope_build

OWNERS = Owners(carrier_of={"geant-fra": "GEANT", "geant-gva": "GEANT", "garr-mil": "GARR", "canarie-mtl": "CANARIE"},
                site_of={"cern-border": "CERN", "triumf-border": "TRIUMF"})
ALL = ["FZK->CERN", "CNAF->CERN", "TRIUMF->CERN", "RAL->CERN"]


def geant():
    return scope_build(carrier="GEANT", incident_paths=["FZK->CERN", "CNAF->CERN"], suspect_paths=["FZK->CERN"],
                       all_paths=ALL, owners=OWNERS, other_names={"CANARIE-MTL-GVA-10G", "canarie-lag"})


def test_a_route_is_its_end_sites_around_the_owners_of_its_hops():
    route = domain_route(["garr-mil:xe-0/1/0", "geant-fra:et-1/1/0", "geant-gva:et-1/1/0", "cern-border"],
                         src="CNAF", dst="CERN", owners=OWNERS)
    assert route == [("site", "CNAF", ()), ("carrier", "GARR", ("garr-mil",)),
                     ("carrier", "GEANT", ("geant-fra", "geant-gva")), ("site", "CERN", ("cern-border",))]


def test_the_scope_names_the_carrier_and_the_incident_s_paths_and_hides_the_rest():
    scope = geant()
    for shown in ("geant-fra:et-1/1/0", "FZK->CERN", "CNAF->CERN", "CERN", "cern-border", "GEANT-FRA-GVA-100G"):
        assert scope.shown(shown), shown
    for hidden in ("TRIUMF->CERN", "RAL->CERN", "garr-mil", "GARR", "canarie-mtl:xe-0/0/0", "CANARIE-MTL-GVA-10G",
                   "canarie-lag", "LOSS_LIMITED TRIUMF->CERN: lossy", "traffic via triumf-border"):
        assert not scope.shown(hidden), hidden
    # a longer name that merely starts like a hidden one is not hidden
    assert scope.shown("garr-milano-museum")


def test_a_domain_with_a_suspect_is_suspect_and_another_carrier_is_only_a_segment():
    scope = geant()
    facts = [
        DomainFacts(kind="site", code="FZK", boxes=(), is_end=True),
        DomainFacts(kind="carrier", code="GARR", boxes=("garr-mil",), counters=("garr-mil:xe-0/1/0: 3 errors",)),
        DomainFacts(kind="carrier", code="GEANT", boxes=("geant-fra",), suspects=("geant-fra",),
                    implicating=("geant-fra: crossed by every degraded direction", "healthy: TRIUMF->CERN")),
        DomainFacts(kind="site", code="CERN", boxes=("cern-border",), is_end=True,
                    healthy={"cern-border": ["RAL->CERN", "TRIUMF->CERN"]}),
    ]
    fzk, garr, geant_, cern = domain_verdicts(facts, scope)
    assert (fzk.name, fzk.verdict) == ("FZK", "cleared")
    assert "host tests: no host or TCP tuning finding for the hosts of FZK" in fzk.clearing
    assert (garr.name, garr.verdict, garr.boxes, garr.counters, garr.clearing) == (OTHER_SEGMENT, "cleared", (), (), ())
    assert geant_.verdict == "suspect" and geant_.implicating == ("geant-fra: crossed by every degraded direction",)
    assert cern.verdict == "cleared"
    assert "healthy paths through cern-border: 2 other paths (not named here)" in cern.clearing


def test_a_share_link_s_token_is_masked_in_the_request_logs():
    from wanmon.core.logfilters import MASK, secrets_mask

    token = "uL4Nr9HqTBko39fr2TavN49JLMhZoXtmIrlgNpjVgO4"
    line = f'"GET /share/{token}?format=txt HTTP/1.1" 410'
    assert secrets_mask(line) == f'"GET /share/{MASK}?format=txt HTTP/1.1" 410' and token not in secrets_mask(line)
