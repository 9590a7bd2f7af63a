"""Root-cause grouping and incident headlines (pure, no database)."""

from wanmon.alerts.choices import IncidentKind, MemberRole
from wanmon.alerts.grouping import FindingFacts, group_findings, headline

EU_THROUGH_FRA = ("CERN->FZK", "FZK->CERN", "CERN->CNAF", "CNAF->CERN")


def path_finding(i, code, src, dst, severity="critical", **kw):
    return FindingFacts(id=i, code=code, severity=severity, subject={"src": src, "dst": dst},
                        subject_key=f"dst={dst};src={src}", summary=f"{src}->{dst}: {code.lower()} here", **kw)


def suspect(i, equipment, rank, degraded, severity="critical", element_paths=EU_THROUGH_FRA):
    return FindingFacts(id=i, code="SHARED_EQUIPMENT_SUSPECT", severity=severity, subject={"equipment": equipment},
                        subject_key=f"equipment={equipment}", rank=rank, summary=f"#{rank} {equipment}",
                        degraded_paths=tuple(degraded), element_paths=element_paths)


def fzk_case():
    """Case 1 (docs/diagnosis.md#case-studies) as the engine reports it (reverse-path-loss-fzk.yaml)."""
    return [
        path_finding(1, "LOSS_LIMITED", "CNAF", "CERN"),
        path_finding(2, "LOSS_LIMITED", "FZK", "CERN"),
        path_finding(3, "ASYMMETRIC_PATH", "CNAF", "CERN"),
        path_finding(4, "ASYMMETRIC_PATH", "FZK", "CERN"),
        suspect(5, "geant-fra", 1, ["CNAF->CERN", "FZK->CERN"]),
        suspect(6, "geant-gva", 2, ["CNAF->CERN", "FZK->CERN"], "warning", ("FZK->CERN", "CNAF->CERN", "IN2P3->CERN")),
        suspect(7, "cern-border", 3, ["CNAF->CERN", "FZK->CERN"], "warning", ()),
    ]


def test_shared_backbone_element_gathers_its_symptom_paths_and_the_lower_ranked_suspects():
    groups = group_findings(fzk_case())
    assert len(groups) == 1
    g = groups[0]
    assert (g.key, g.kind, g.root_id) == ("element:geant-fra", IncidentKind.ELEMENT, 5)
    assert list(g.roles)[0] == 5 and set(g.roles) == {1, 2, 3, 4, 5, 6, 7}
    assert g.roles[6] == g.roles[7] == MemberRole.RELATED
    assert {g.roles[i] for i in (1, 2, 3, 4)} == {MemberRole.SYMPTOM}
    head = headline(g, [next(f for f in fzk_case() if f.id == i) for i in g.roles])
    assert head.title == "geant-fra: 2 paths degraded (CNAF->CERN, FZK->CERN)"
    assert (head.severity, head.code, head.subject_text) == ("critical", "SHARED_EQUIPMENT_SUSPECT", "geant-fra")
    assert head.sites == ("CERN", "CNAF", "FZK") and head.elements == ("geant-fra", "cern-border", "geant-gva")


def test_grouping_does_not_depend_on_the_order_findings_arrive_in():
    assert [(g.key, list(g.roles)) for g in group_findings(fzk_case())] == [
        (g.key, list(g.roles)) for g in group_findings(list(reversed(fzk_case())))
    ]


def test_an_unrelated_path_elsewhere_stays_a_separate_incident():
    findings = [*fzk_case(), path_finding(8, "PATH_DOWN", "CERN", "RAL")]
    keys = sorted(g.key for g in group_findings(findings))
    assert keys == ["element:geant-fra", "pair:CERN<->RAL"]


def test_interface_errors_on_a_path_the_suspect_explains_corroborate_the_same_incident():
    errors = FindingFacts(id=9, code="INTERFACE_ERRORS", severity="warning",
                          subject={"equipment": "dfn-fra", "interface": "xe-0/0/1"},
                          subject_key="equipment=dfn-fra;interface=xe-0/0/1", element_paths=("FZK->CERN", "CERN->FZK"))
    groups = group_findings([*fzk_case(), errors])
    assert len(groups) == 1 and groups[0].roles[9] == MemberRole.RELATED


def test_many_degraded_paths_of_one_site_become_one_site_incident():
    findings = [
        path_finding(1, "LOSS_LIMITED", "FZK", "CERN"),
        path_finding(2, "UNEXPLAINED_DEGRADATION", "FZK", "RAL", "warning"),
        path_finding(3, "PATH_DOWN", "CNAF", "FZK"),
        path_finding(4, "LOSS_LIMITED", "FZK", "CERN"),  # same path: counts once
        path_finding(5, "REORDERING", "CERN", "RAL", "warning"),
    ]
    groups = {g.key: g for g in group_findings(findings, site_min_paths=3)}
    assert set(groups) == {"site:FZK", "pair:CERN<->RAL"}
    site = groups["site:FZK"]
    assert set(site.roles) == {1, 2, 3, 4} and site.root_id == 3  # PATH_DOWN: critical, first in the catalogue
    head = headline(site, [next(f for f in findings if f.id == i) for i in site.roles])
    assert head.title == "site FZK: 3 paths degraded (CNAF->FZK, FZK->CERN, FZK->RAL)"
    # two paths are not "many": they stay per pair
    assert {g.key for g in group_findings(findings[:2], site_min_paths=3)} == {"pair:CERN<->FZK", "pair:FZK<->RAL"}


def test_both_directions_of_a_pair_and_the_host_tuning_that_explains_them_are_one_incident():
    findings = [
        path_finding(1, "WINDOW_LIMITED", "CERN", "ASGC", "warning"),
        path_finding(2, "WINDOW_LIMITED", "ASGC", "CERN", "warning"),
        FindingFacts(id=3, code="HOST_TCP_TUNING", severity="warning", subject={"site": "ASGC", "host": "asgc-dt01"},
                     subject_key="host=asgc-dt01;site=ASGC"),
        FindingFacts(id=4, code="CLOCK_UNSYNC", severity="warning", subject={"site": "RAL"}, subject_key="site=RAL"),
    ]
    groups = {g.key: g for g in group_findings(findings)}
    assert set(groups) == {"pair:ASGC<->CERN", "site:RAL"}
    pair = groups["pair:ASGC<->CERN"]
    assert set(pair.roles) == {1, 2, 3} and pair.roles[3] == MemberRole.RELATED
    head = headline(pair, [next(f for f in findings if f.id == i) for i in pair.roles])
    assert head.title == "ASGC<->CERN: 2 paths degraded (ASGC->CERN, CERN->ASGC)"
    assert head.code == "WINDOW_LIMITED"


def test_findings_explained_by_maintenance_are_gathered_by_the_window():
    findings = [
        path_finding(1, "LOSS_LIMITED", "CERN", "FZK", "info", explained_by=("GEANT-CHG-0042",)),
        path_finding(2, "LOSS_LIMITED", "FZK", "CERN", "info", explained_by=("GEANT-CHG-0042",)),
        FindingFacts(id=3, code="MAINTENANCE_EXPLAINED", severity="info", subject={"equipment": "geant-fra"},
                     subject_key="equipment=geant-fra", maintenance_ref="GEANT-CHG-0042"),
    ]
    (group,) = group_findings(findings)
    assert (group.key, group.kind, group.root_id) == ("maintenance:GEANT-CHG-0042", IncidentKind.MAINTENANCE, 3)
    head = headline(group, [next(f for f in findings if f.id == i) for i in group.roles])
    assert head.severity == "info"
    assert head.title == "maintenance GEANT-CHG-0042 on geant-fra: 2 paths degraded (CERN->FZK, FZK->CERN)"


def test_a_single_path_finding_is_titled_by_its_summary():
    (group,) = group_findings([path_finding(1, "PATH_DOWN", "CERN", "RAL")])
    head = headline(group, [path_finding(1, "PATH_DOWN", "CERN", "RAL")])
    assert head.title == "CERN->RAL: path_down here"


def test_a_finding_that_clears_and_recurs_keeps_its_identity():
    first = path_finding(1, "PATH_DOWN", "CERN", "RAL")
    again = path_finding(99, "PATH_DOWN", "CERN", "RAL")
    assert first.key == again.key == "PATH_DOWN|dst=RAL;src=CERN"
    assert group_findings([first])[0].key == group_findings([again])[0].key


def test_load_correlation_suspects_of_one_path_are_one_incident():
    """Case 5 (docs/diagnosis.md#case-studies): three ranked suspects for CERN->FNAL, no path finding of their own."""
    suspects = [
        FindingFacts(id=i, code="SHARED_EQUIPMENT_SUSPECT", severity="warning", subject=subject,
                     subject_key=";".join(f"{k}={v}" for k, v in sorted(subject.items())), rank=i,
                     summary=f"#{i} CERN->FNAL degraded when load through it rose", degraded_paths=("CERN->FNAL",))
        for i, subject in ((1, {"equipment": "uslhcnet-gva", "interface": "xe-0/0/0"}),
                           (2, {"equipment": "starlight"}), (3, {"equipment": "uslhcnet-chi"}))
    ]
    (group,) = group_findings(suspects)
    assert group.key == "element:uslhcnet-gva" and group.root_id == 1
    head = headline(group, suspects)
    assert head.title == "uslhcnet-gva:xe-0/0/0: 1 path degraded (CERN->FNAL)"


def test_host_findings_keep_the_paths_they_explain_out_of_a_site_incident():
    """Case 4 (docs/diagnosis.md#case-studies): four window-limited paths at CERN, caused by the hosts at ASGC, FNAL."""
    findings = [
        *(path_finding(i, "WINDOW_LIMITED", s, d, "warning")
          for i, (s, d) in enumerate((("CERN", "ASGC"), ("ASGC", "CERN"), ("CERN", "FNAL"), ("FNAL", "CERN")), 1)),
        FindingFacts(id=5, code="HOST_TCP_TUNING", severity="warning", subject={"site": "ASGC", "host": "asgc-dt01"},
                     subject_key="host=asgc-dt01;site=ASGC"),
        FindingFacts(id=6, code="HOST_TCP_TUNING", severity="warning", subject={"site": "FNAL", "host": "fnal-dt01"},
                     subject_key="host=fnal-dt01;site=FNAL"),
    ]
    groups = {g.key: set(g.roles) for g in group_findings(findings, site_min_paths=3)}
    assert groups == {"pair:ASGC<->CERN": {1, 2, 5}, "pair:CERN<->FNAL": {3, 4, 6}}


def test_a_periodically_dropping_receiver_and_its_path_are_one_incident():
    """Case 2 (docs/diagnosis.md#case-studies)."""
    findings = [
        path_finding(1, "PERIODIC_LOSS", "FZK", "CERN", "warning"),
        FindingFacts(id=2, code="PERIODIC_LOSS", severity="warning", subject={"site": "CERN", "host": "cern-dt01"},
                     subject_key="host=cern-dt01;site=CERN"),
    ]
    (group,) = group_findings(findings)
    assert group.key == "pair:CERN<->FZK" and group.roles == {1: MemberRole.ROOT, 2: MemberRole.RELATED}


def test_paths_only_flagged_for_their_clocks_are_affected_not_degraded():
    findings = [path_finding(1, "CLOCK_UNSYNC", "PIC", "CERN", "warning"),
                path_finding(2, "CLOCK_UNSYNC", "CERN", "PIC", "warning"),
                FindingFacts(id=3, code="CLOCK_UNSYNC", severity="warning", subject={"site": "PIC"},
                             subject_key="site=PIC")]
    (group,) = group_findings(findings)
    assert headline(group, findings).title == "CERN<->PIC: 2 paths affected (CERN->PIC, PIC->CERN)"


def test_a_headline_from_an_unbounded_summary_fits_the_incident_columns():
    # A counter reset listed at every poll gave a 1005-character summary; the incident could not be saved
    # and the alerting run failed on every pass, so no alert at all went out.
    label = "ciena-rls-6500-r2:vrf-osc0s16-vpn"
    long = FindingFacts(id=1, code="COUNTER_DISCONTINUITY", severity="info", subject={"equipment": "x"},
                        subject_key="equipment=x", summary=f"{label}: counters reset at " + "2026-11-24 22:57, " * 60)
    (group,) = group_findings([long])

    head = headline(group, [long])

    assert len(head.title) <= 500 and len(head.subject_text) <= 200
    assert head.title.endswith("…")
    assert head.title.startswith(f"{head.subject_text}: ") and "counters reset at 2026-11-24 22:57, " in head.title


def trunk_finding(i, trunk, element_paths, severity="warning"):
    return FindingFacts(id=i, code="TRUNK_IMBALANCE", severity=severity, subject={"trunk": trunk},
                        subject_key=f"trunk={trunk}", summary=f"{trunk}: one member carries most flows",
                        element_paths=tuple(element_paths))


CERN_ALL = ("CERN->FZK", "FZK->CERN", "CERN->CNAF", "CNAF->CERN", "CERN->NDGF", "NDGF->CERN", "CERN->RAL",
            "RAL->CERN")


def test_a_lower_ranked_suspect_crossed_by_every_path_does_not_pull_an_unrelated_fault_into_the_incident():
    # The demo's case: geant-fra degrades three paths to CERN; cern-border (ranked third) is crossed by every CERN
    # path, CERN->RAL among them; RAL's trunk is unbalanced and slows CERN->RAL. Two faults, two incidents.
    findings = [
        path_finding(1, "LOSS_LIMITED", "FZK", "CERN"),
        path_finding(2, "LOSS_LIMITED", "CNAF", "CERN"),
        path_finding(3, "LOSS_LIMITED", "NDGF", "CERN"),
        suspect(4, "geant-fra", 1, ["FZK->CERN", "CNAF->CERN", "NDGF->CERN"],
                element_paths=("FZK->CERN", "CERN->FZK", "CNAF->CERN", "CERN->CNAF", "NDGF->CERN", "CERN->NDGF")),
        suspect(5, "cern-border", 3, ["FZK->CERN", "CNAF->CERN", "NDGF->CERN"], "warning", CERN_ALL),
        path_finding(6, "TCP_ONLY_DEGRADATION", "CERN", "RAL", "warning"),
        trunk_finding(7, "ral-lag", ("CERN->RAL", "RAL->CERN")),
    ]
    groups = {g.key: g for g in group_findings(findings)}
    assert set(groups) == {"element:geant-fra", "trunk:ral-lag"}
    assert set(groups["element:geant-fra"].roles) == {1, 2, 3, 4, 5}
    assert set(groups["trunk:ral-lag"].roles) == {6, 7} and groups["trunk:ral-lag"].root_id == 7
    fra = groups["element:geant-fra"]
    head = headline(fra, [next(f for f in findings if f.id == i) for i in fra.roles])
    assert "CERN->RAL" not in head.paths and "RAL" not in head.sites


def test_two_faults_at_once_are_two_incidents_and_the_far_end_of_the_suspect_link_joins_its_own():
    # CRC errors on the GEANT Frankfurt-Geneva link (counted at its far end, geant-gva) and a failing member of a
    # CANARIE trunk on the TRIUMF paths, at the same time.
    eu = ("FZK->CERN", "CNAF->CERN", "NDGF->CERN")
    findings = [
        *(path_finding(i, "LOSS_LIMITED", *p.split("->")) for i, p in enumerate(eu, start=1)),
        suspect(4, "geant-fra", 1, eu, element_paths=(*eu, "CERN->FZK")),
        FindingFacts(id=5, code="INTERFACE_ERRORS", severity="warning",
                     subject={"equipment": "geant-gva", "interface": "et-1/0/0"},
                     subject_key="equipment=geant-gva;interface=et-1/0/0", element_paths=eu),
        path_finding(6, "LOSS_LIMITED", "TRIUMF", "CERN"),
        path_finding(7, "ASYMMETRIC_PATH", "CERN", "TRIUMF", "warning"),
        trunk_finding(8, "canarie-lag", ("TRIUMF->CERN", "CERN->TRIUMF"), "critical"),
    ]
    groups = {g.key: g for g in group_findings(findings)}
    assert set(groups) == {"element:geant-fra", "trunk:canarie-lag"}
    assert set(groups["element:geant-fra"].roles) == {1, 2, 3, 4, 5} and groups["element:geant-fra"].root_id == 4
    assert groups["element:geant-fra"].roles[5] == MemberRole.RELATED
    assert set(groups["trunk:canarie-lag"].roles) == {6, 7, 8} and groups["trunk:canarie-lag"].root_id == 8
