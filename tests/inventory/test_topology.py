"""Topology documents: idempotent import, exact round trip, path versions, merge semantics."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import yaml
from django.core.management import call_command

from tests.inventory.conftest import (
    EXAMPLE_FILES,
    LHC_TOPOLOGY,
    REVERSE_PATH_LOSS,
    example_topology,
    inventory_counts,
    inventory_wipe,
)
from wanmon.inventory.constants import PATH_HISTORY_START
from wanmon.inventory.models import Equipment, Path, Site
from wanmon.inventory.selectors import path_current, path_hops_labels, path_list_versions
from wanmon.inventory.topology import (
    TopologyInvalid,
    topology_dump,
    topology_export,
    topology_import,
    topology_import_file,
    topology_parse,
)

pytestmark = pytest.mark.django_db

T1 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
T2 = datetime(2026, 3, 2, 8, 30, tzinfo=UTC)


def _export() -> str:
    return topology_dump(topology_export())


def _path_rows() -> list[tuple]:
    return sorted(Path.objects.values_list("id", "src__code", "dst__code", "valid_from", "valid_to", "capacity_mbps"))


@pytest.mark.parametrize("example", EXAMPLE_FILES, ids=lambda p: p.stem)
def test_example_imports_twice_without_change(example):
    # given: the scenario's topology block
    topology = yaml.safe_load(example.read_text())["topology"]
    entries = {section: len(topology.get(section) or []) for section in topology}

    # when: imported twice
    first = topology_import_file(example)
    counts, paths = inventory_counts(), _path_rows()
    second = topology_import_file(example)

    # then: the first import created one row per entry, the second changed nothing at all
    for section, n in entries.items():
        assert first.as_dict()[section] == {"created": n, "updated": 0, "unchanged": 0}, section
        assert second.as_dict()[section] == {"created": 0, "updated": 0, "unchanged": n}, section
    assert not second.changed
    assert inventory_counts() == counts
    assert _path_rows() == paths


def test_import_command_reports_counts_and_no_changes(capsys):
    call_command("import_topology", str(REVERSE_PATH_LOSS))
    out = capsys.readouterr().out
    assert "paths: 6 created, 0 updated, 0 unchanged" in out
    assert "equipment: 9 created, 0 updated, 0 unchanged" in out
    call_command("import_topology", str(REVERSE_PATH_LOSS))
    out = capsys.readouterr().out
    assert "paths: 0 created, 0 updated, 6 unchanged" in out
    assert out.rstrip().endswith("no changes")


@pytest.mark.parametrize("source", [*EXAMPLE_FILES, LHC_TOPOLOGY], ids=lambda p: p.stem)
def test_export_import_export_is_byte_identical(source, tmp_path):
    # given: an inventory loaded from the file, exported
    topology_import_file(source)
    first = _export()

    # when: the export is imported into the same inventory, and into an empty one, and exported again
    same = topology_import(topology_parse(first))
    assert not same.changed, same.as_dict()
    assert _export() == first
    inventory_wipe()
    exported = tmp_path / "export.yaml"
    exported.write_text(first)
    topology_import_file(exported)

    # then: the text is the same, byte for byte
    assert _export() == first


def test_export_command_writes_the_same_text_as_the_function(tmp_path, capsys):
    topology_import_file(REVERSE_PATH_LOSS)
    call_command("export_topology")
    assert capsys.readouterr().out == _export()
    target = tmp_path / "topology.json"
    call_command("export_topology", str(target))
    assert topology_parse(target.read_text(), filename="topology.json") == topology_export()


def test_lhc_file_is_in_canonical_export_form():
    topology_import_file(LHC_TOPOLOGY)
    body = "".join(line for line in LHC_TOPOLOGY.read_text().splitlines(keepends=True) if not line.startswith("#"))
    assert _export() == body


def test_minimal_document_round_trips_without_defaults():
    # given: a document with only the required keys (no optional extension appears in the export)
    topology_import({
        "sites": [{"code": "A", "name": "Site A"}, {"code": "B", "name": "Site B"}],
        "equipment": [{"name": "a-r1", "site": "A"}, {"name": "b-r1", "site": "B"}],
        "paths": [{"src": "A", "dst": "B", "hops": ["a-r1", "b-r1"]}],
    })
    exported = topology_export()
    assert list(exported) == ["carriers", "sites", "hosts", "equipment", "interfaces", "trunks", "paths"]
    assert exported == {
        "carriers": [],
        "sites": [{"code": "A", "name": "Site A"}, {"code": "B", "name": "Site B"}],
        "hosts": [],
        "equipment": [{"name": "a-r1", "site": "A", "role": "router"}, {"name": "b-r1", "site": "B", "role": "router"}],
        "interfaces": [],
        "trunks": [],
        "paths": [{"src": "A", "dst": "B", "hops": ["a-r1", "b-r1"]}],
    }


def test_first_version_covers_the_past_and_as_of_sets_its_start():
    topology_import_file(REVERSE_PATH_LOSS)
    assert path_current("FZK", "CERN").valid_from == PATH_HISTORY_START
    # a measurement from years before the import is still explained by the route
    assert path_current("FZK", "CERN", at=datetime(2006, 3, 1, tzinfo=UTC)) is not None

    inventory_wipe()
    topology_import_file(REVERSE_PATH_LOSS, as_of=T1)
    assert path_current("FZK", "CERN").valid_from == T1
    assert path_current("FZK", "CERN", at=T1 - timedelta(seconds=1)) is None


def test_route_change_closes_the_version_in_force_and_keeps_history():
    # given: the example imported, then FZK->CERN rerouted through Paris at T2
    topology_import_file(REVERSE_PATH_LOSS, as_of=T1)
    old_id = path_current("FZK", "CERN").pk
    topology = example_topology()
    topology["equipment"].append({"name": "geant-par", "carrier": "GEANT", "role": "router"})
    topology["paths"][1]["hops"] = ["fzk-border", "dfn-fra", "geant-par", "geant-gva", "cern-border"]

    # when
    report = topology_import(topology, as_of=T2)

    # then: one new version, the old one ends at T2, both remain
    assert report.as_dict()["paths"] == {"created": 0, "updated": 1, "unchanged": 5}
    versions = list(path_list_versions(src="FZK", dst="CERN"))
    assert [(v.valid_from, v.valid_to) for v in versions] == [(T1, T2), (T2, None)]
    assert versions[0].pk == old_id
    assert path_hops_labels(versions[0]) == ["fzk-border", "dfn-fra", "geant-fra", "geant-gva", "cern-border"]
    assert path_hops_labels(path_current("FZK", "CERN", at=T2 - timedelta(microseconds=1)))[2] == "geant-fra"
    assert path_hops_labels(path_current("FZK", "CERN", at=T2))[2] == "geant-par"
    # the other direction is untouched
    assert path_list_versions(src="CERN", dst="FZK").count() == 1

    # and importing the new route again changes nothing
    again = topology_import(topology, as_of=T2 + timedelta(hours=1))
    assert not again.changed
    assert path_list_versions(src="FZK", dst="CERN").count() == 2


def test_capacity_change_is_a_new_version_but_rtt_and_note_are_updated_in_place():
    topology_import_file(REVERSE_PATH_LOSS, as_of=T1)
    topology = example_topology()
    topology["paths"][0]["rtt_ms"] = 9.5
    topology["paths"][0]["note"] = "measured"
    report = topology_import(topology, as_of=T2)
    assert report.as_dict()["paths"]["updated"] == 1
    assert path_list_versions(src="CERN", dst="FZK").count() == 1
    assert path_current("CERN", "FZK").rtt_ms == 9.5

    topology["paths"][0]["capacity_mbps"] = 10000
    topology_import(topology, as_of=T2)
    versions = list(path_list_versions(src="CERN", dst="FZK"))
    assert [(v.capacity_mbps, v.valid_to) for v in versions] == [(1000, T2), (10000, None)]
    assert versions[1].rtt_ms == 9.5 and versions[1].note == "measured"


def test_without_replace_paths_a_route_in_force_is_confirmed_or_refused_never_replaced():
    # given: the LHC inventory (CERN<->FZK at 100 Gb/s over named ports)
    topology_import_file(LHC_TOPOLOGY)
    rows = _path_rows()

    # when: a scenario's network with its own CERN<->FZK (1 Gb/s, no ports) is imported without replacing routes
    with pytest.raises(TopologyInvalid) as refused:
        topology_import(example_topology(), prefix="topology", replace_paths=False)

    # then: every path it would re-route is named with both routes, and nothing changed
    messages = {e.path: e.message for e in refused.value.errors}
    assert set(messages) == {f"topology.paths[{i}]" for i in range(6)}
    assert messages["topology.paths[1]"] == (
        "FZK->CERN: 1000 Mb/s over fzk-border, dfn-fra, geant-fra, geant-gva, cern-border would replace the route "
        "in force, 100000 Mb/s over fzk-border:Ethernet1/1, dfn-fra:et-1/1/0, geant-fra:et-1/1/0, geant-gva:et-1/1/0, "
        "cern-border"
    )
    assert _path_rows() == rows
    # the same routes again, rtt and note updated in place, and new paths are accepted
    lhc = yaml.safe_load(LHC_TOPOLOGY.read_text())
    lhc["paths"][0]["rtt_ms"] = 301.0
    lhc["sites"].append({"code": "KEK", "name": "KEK", "tier": 1})
    lhc["paths"].append({"src": "KEK", "dst": "CERN", "capacity_mbps": 10000, "hops": ["cern-border"]})
    report = topology_import(lhc, replace_paths=False)
    assert report.as_dict()["paths"] == {"created": 1, "updated": 1, "unchanged": len(rows) - 1}
    assert Path.objects.filter(valid_to__isnull=False).count() == 0


def test_absent_keys_are_left_alone_and_null_clears():
    # given: the richer LHC inventory
    topology_import_file(LHC_TOPOLOGY)
    location = Equipment.objects.get(name="geant-fra").location
    assert location

    # when: a scenario that describes geant-fra with fewer keys is imported
    topology_import({"carriers": [{"code": "GEANT", "name": "GEANT"}],
                     "equipment": [{"name": "geant-fra", "carrier": "GEANT", "vendor": "Juniper"}]})

    # then: what it does not say is kept; an explicit null clears
    assert Equipment.objects.get(name="geant-fra").location == location
    topology_import({"equipment": [{"name": "geant-fra", "location": None}]})
    assert Equipment.objects.get(name="geant-fra").location == ""
    topology_import({"sites": [{"code": "CERN", "tier": None}]})
    assert Site.objects.get(code="CERN").tier is None


def test_contacts_and_trunk_members_replace_the_whole_set():
    topology_import_file(LHC_TOPOLOGY)
    topology_import({"sites": [{"code": "RAL", "contacts": [{"email": "wan@ral.example", "role": "network"}]}],
                     "trunks": [{"name": "ral-lag", "members": ["janet-lon:xe-4/0/0", "janet-lon:xe-4/1/0"]}]})
    ral = Site.objects.get(code="RAL")
    assert [(c.email, c.role) for c in ral.contacts.all()] == [("wan@ral.example", "network")]
    exported = {t["name"]: t for t in topology_export()["trunks"]}
    assert exported["ral-lag"]["members"] == ["janet-lon:xe-4/0/0", "janet-lon:xe-4/1/0"]


def test_equipment_changing_owner_drops_the_other_owner():
    topology_import_file(REVERSE_PATH_LOSS)
    topology_import({"equipment": [{"name": "geant-fra", "site": "FZK"}]})
    eq = Equipment.objects.get(name="geant-fra")
    assert (eq.site.code, eq.carrier) == ("FZK", None)


def test_document_may_reference_what_the_database_holds():
    topology_import_file(LHC_TOPOLOGY)
    report = topology_import({
        "sites": [{"code": "KISTI", "name": "KISTI GSDC", "tier": 1, "lat": 36.37, "lon": 127.36}],
        "equipment": [{"name": "kisti-border", "site": "KISTI"}],
        "paths": [{"src": "KISTI", "dst": "CERN", "capacity_mbps": 10000,
                   "hops": ["kisti-border", "geant-ams:et-1/1/0", "geant-gva", "cern-border"]}],
    })
    assert report.as_dict()["paths"]["created"] == 1


def test_dry_run_reports_and_changes_nothing(capsys):
    call_command("import_topology", str(REVERSE_PATH_LOSS), "--dry-run")
    assert "paths: 6 created" in capsys.readouterr().out
    assert sum(inventory_counts().values()) == 0


def test_invalid_document_raises_with_every_error_and_changes_nothing():
    topology_import_file(REVERSE_PATH_LOSS)
    before = inventory_counts(), _path_rows()
    topology = example_topology()
    topology["sites"][0]["name"] = "renamed"  # a valid change, which must not be applied either
    topology["sites"][1]["lat"] = 123
    topology["paths"][3]["hops"][2] = "geant-frx"
    topology["interfaces"] = [{"equipment": "x", "name": "eth0"}]
    with pytest.raises(TopologyInvalid) as caught:
        topology_import(topology)
    assert [str(e) for e in caught.value.errors] == [
        "sites[1].lat: must be a number between -90 and 90",
        "interfaces[0].equipment: unknown equipment 'x'",
        "paths[3].hops[2]: unknown equipment 'geant-frx'",
    ]
    assert (inventory_counts(), _path_rows()) == before
    assert Site.objects.get(code="CERN").name == "CERN"


@pytest.mark.parametrize("odd", ["\u2028", "\u2029", "\x85", "\r", "\x01", "\x7f", "\ufeff", "\t", "\n"],
                         ids=lambda c: f"U+{ord(c):04X}")
def test_names_with_any_unicode_round_trip_through_export_and_import(odd, tmp_path):
    # A device's ifName or description is whatever its operator typed: U+2028 was written raw and read back
    # as a line break (NEL as a space), so export -> import -> export differed.
    topology_import({
        "sites": [{"code": "A", "name": f"Site{odd}A"}],
        "equipment": [{"name": "a-r1", "site": "A", "location": f"rack{odd}3"}],
        "interfaces": [{"equipment": "a-r1", "name": f"xe-0/0/0{odd}1", "if_index": 1, "description": f"to{odd}B"}],
    })
    first = _export()
    inventory_wipe()
    path = tmp_path / "export.yaml"
    path.write_text(first, encoding="utf-8")
    topology_import_file(path)
    assert _export() == first
    (interface,) = topology_export()["interfaces"]
    assert interface["name"] == f"xe-0/0/0{odd}1" and interface["description"] == f"to{odd}B"
