"""A carrier's evidence: the two faults at once of the alerting's tests (a GEANT link with CRC errors degrading
FZK->CERN and CNAF->CERN, a CANARIE trunk on TRIUMF->CERN), with a third carrier, GARR, on the way from CNAF, and
counters on both ends of the GEANT Frankfurt-Geneva link."""

from __future__ import annotations

import copy
from datetime import timedelta

from tests.alerts.test_pipeline import TWO_FAULTS_TOPOLOGY, T
from wanmon.diagnosis.evidence import RuleFinding
from wanmon.diagnosis.services import findings_sync
from wanmon.inventory.models import Interface, Site
from wanmon.measurements.models import InterfaceRate, Traceroute

ONSET = T - timedelta(minutes=50)
#: The names a GEANT page must never show: the other carriers, their boxes, trunk and circuits, the unrelated path.
HIDDEN = ("CANARIE", "canarie-mtl", "canarie-lag", "CANARIE-MTL-GVA-10G", "GARR", "garr-mil", "GARR-MIL-FRA-10G",
          "TRIUMF", "noc@", "62.40.98.77")


def topology() -> dict:
    """The alerting's two-fault topology, and GARR's Milan box on the CNAF->CERN path, a circuit of each carrier."""
    doc = copy.deepcopy(TWO_FAULTS_TOPOLOGY)
    doc["carriers"].append({"code": "GARR", "name": "GARR", "kind": "nren", "noc_email": "noc@garr.test"})
    doc["equipment"].append({"name": "garr-mil", "carrier": "GARR"})
    doc["interfaces"] += [{"equipment": "garr-mil", "name": "xe-0/1/0", "speed_mbps": 100000},
                          {"equipment": "geant-fra", "name": "et-2/0/0", "speed_mbps": 100000}]
    doc["circuits"] += [
        {"carrier": "GARR", "cid": "GARR-MIL-FRA-10G", "a_interface": "garr-mil:xe-0/1/0",
         "z_interface": "geant-fra:et-2/0/0", "capacity_mbps": 100000},
        {"carrier": "CANARIE", "cid": "CANARIE-MTL-GVA-10G", "a_interface": "canarie-mtl:xe-0/0/0",
         "capacity_mbps": 10000},
    ]
    for path in doc["paths"]:
        if path["src"] == "CNAF":
            path["hops"] = ["garr-mil:xe-0/1/0", *path["hops"]]
    return doc


def shared_faults() -> None:
    """The inventory, the findings at T (as the alerting's ``two_faults``) and the counters of the GEANT link."""
    from wanmon.inventory.topology import topology_import

    topology_import(topology(), as_of=T - timedelta(days=30))

    def at(code, subject, severity="critical", **evidence):
        return RuleFinding(code=code, severity=severity, subject=subject, start=ONSET, end=T,
                             summary=f"{code} here", explanation="x", evidence=evidence, actions=(f"Check {code}",))

    eu = ["FZK->CERN", "CNAF->CERN"]
    findings_sync(findings=[
        *(at("LOSS_LIMITED", {"src": p.split("->")[0], "dst": "CERN"},
             derived={"loss_fraction": 0.0679, "rtt_ms": 12.0, "mathis_ceiling_bps": 19.6e6}) for p in eu),
        at("SHARED_EQUIPMENT_SUSPECT", {"equipment": "geant-fra"}, degraded_paths=eu, score=2.0,
           healthy_reverse=["TRIUMF->CERN"]),
        at("INTERFACE_ERRORS", {"equipment": "geant-gva", "interface": "et-1/0/0"}, "warning",
           intervals_with_errors=9, intervals=10, crc_error_fraction=0.004),
        at("LOSS_LIMITED", {"src": "TRIUMF", "dst": "CERN"}),
        at("TRUNK_IMBALANCE", {"trunk": "canarie-lag"}, "warning"),
    ], now=T)
    # the link's counters: receive errors at the far end (geant-gva), none at the near end (geant-fra)
    near = Interface.objects.get(equipment__name="geant-fra", name="et-1/1/0")
    far = Interface.objects.get(equipment__name="geant-gva", name="et-1/0/0")
    rows = []
    for minutes in range(0, 50, 5):
        time = ONSET + timedelta(minutes=minutes)
        rows += [InterfaceRate(time=time, interface_id=near.id, interval_s=300, in_errors_per_s=0.0,
                               in_discards_per_s=0.0, out_discards_per_s=0.0),
                 InterfaceRate(time=time, interface_id=far.id, interval_s=300, in_errors_per_s=2.5 if minutes else 0,
                               in_discards_per_s=0.0, out_discards_per_s=0.0)]
    InterfaceRate.objects.bulk_create(rows)
    # FZK's traceroute towards CERN 20 min after the onset: one hop did not answer
    Traceroute.objects.create(time=ONSET + timedelta(minutes=20), src_id=Site.objects.get(code="FZK").id,
                              dst_id=Site.objects.get(code="CERN").id, pmtu_bytes=9000,
                              hops=["192.108.45.1", None, "62.40.98.77", "192.65.184.1"])
