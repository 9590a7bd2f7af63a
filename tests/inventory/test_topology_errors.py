"""Every form of import error: `FILE: path: message` on stderr, exit status 2, nothing changed."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.inventory.conftest import REVERSE_PATH_LOSS, example_topology, inventory_counts
from wanmon.inventory.topology import topology_import_file

pytestmark = pytest.mark.django_db


def _run(tmp_path, document, capsys, *, name: str = "topology.yaml", raw: str | None = None) -> list[str]:
    """Import a document with the command; return its error lines (the command must fail with status 2)."""
    path = tmp_path / name
    path.write_text(raw if raw is not None else yaml.safe_dump(document, sort_keys=False))
    before = inventory_counts()
    with pytest.raises(CommandError) as caught:
        call_command("import_topology", str(path))
    assert caught.value.returncode == 2
    assert inventory_counts() == before, "a failed import changed the inventory"
    err = capsys.readouterr().err
    prefix = f"{path}: "
    lines = err.splitlines()
    assert lines and all(line.startswith(prefix) for line in lines), err
    return [line[len(prefix):] for line in lines]


def _set(section: str, index: int, key: str, value) -> Callable[[dict], None]:
    def mutate(topology: dict) -> None:
        topology[section][index][key] = value

    return mutate


def _delete(section: str, index: int, key: str) -> Callable[[dict], None]:
    def mutate(topology: dict) -> None:
        del topology[section][index][key]

    return mutate


def _append(section: str, entry: dict) -> Callable[[dict], None]:
    def mutate(topology: dict) -> None:
        topology.setdefault(section, []).append(entry)

    return mutate


def _hop(path_index: int, hop_index: int, label: str) -> Callable[[dict], None]:
    def mutate(topology: dict) -> None:
        topology["paths"][path_index]["hops"][hop_index] = label

    return mutate


CASES = {
    "unknown hop equipment": (_hop(3, 2, "geant-frx"), "paths[3].hops[2]: unknown equipment 'geant-frx'"),
    "unknown hop interface": (
        _hop(0, 1, "geant-gva:xe-9/9/9"), "paths[0].hops[1]: unknown interface 'geant-gva:xe-9/9/9'"),
    "empty hop interface": (_hop(0, 1, "geant-gva:"), "paths[0].hops[1]: must be 'equipment' or 'equipment:interface'"),
    "hop not a string": (_hop(0, 1, 7), "paths[0].hops[1]: must be 'equipment' or 'equipment:interface'"),
    "no hops": (_set("paths", 0, "hops", []), "paths[0].hops: must list at least one hop"),
    "hops not a list": (_set("paths", 0, "hops", "cern-border"), "paths[0].hops: must be a list"),
    "interface on unknown equipment": (
        _append("interfaces", {"equipment": "x", "name": "eth0"}), "interfaces[0].equipment: unknown equipment 'x'"),
    "duplicate site": (
        _append("sites", {"code": "CERN", "name": "again"}),
        "sites[4].code: duplicate site 'CERN' (first at sites[0])"),
    "duplicate equipment": (
        _append("equipment", {"name": "geant-fra", "carrier": "GEANT"}),
        "equipment[9].name: duplicate equipment 'geant-fra' (first at equipment[3])"),
    "duplicate path": (
        _append("paths", {"src": "CERN", "dst": "FZK", "hops": ["cern-border"]}),
        "paths[6]: duplicate path CERN->FZK (first at paths[0])"),
    "latitude out of range": (_set("sites", 1, "lat", 123), "sites[1].lat: must be a number between -90 and 90"),
    "latitude not a number": (_set("sites", 1, "lat", "north"), "sites[1].lat: must be a number between -90 and 90"),
    "longitude out of range": (_set("sites", 1, "lon", -181), "sites[1].lon: must be a number between -180 and 180"),
    "tier out of range": (_set("sites", 0, "tier", 7), "sites[0].tier: must be an integer between 0 and 3"),
    "bad code": (_set("sites", 0, "code", "bad code!"),
                 "sites[0].code: must be letters, digits, '_', '.', '-' (max 32)"),
    "code read as a boolean": (_set("carriers", 0, "code", False), "carriers[0].code: must be a string (quote it)"),
    "src equals dst": (_set("paths", 0, "dst", "CERN"), "paths[0]: src and dst are the same site 'CERN'"),
    "unknown src": (_set("paths", 0, "src", "XYZ"), "paths[0].src: unknown site 'XYZ'"),
    "missing code": (_delete("sites", 0, "code"), "sites[0]: missing required key 'code'"),
    "missing hops": (_delete("paths", 1, "hops"), "paths[1]: missing required key 'hops'"),
    "site and carrier": (
        _set("equipment", 0, "carrier", "GEANT"),
        "equipment[0]: has both site 'CERN' and carrier 'GEANT' (equipment belongs to one owner)"),
    "unknown carrier": (_set("equipment", 2, "carrier", "NOPE"), "equipment[2].carrier: unknown carrier 'NOPE'"),
    "bad role": (_set("equipment", 0, "role", "toaster"),
                 "equipment[0].role: must be one of router, switch, transport, firewall, host, other"),
    "bad boolean": (
        _set("equipment", 0, "known_reordering", "often"), "equipment[0].known_reordering: must be true or false"),
    "unknown key": (_set("sites", 0, "lattitude", 46.2),
                    "sites[0].lattitude: unknown key (expected: code, name, tier, region, lat, lon, notes, contacts)"),
    "bad capacity": (_set("paths", 0, "capacity_mbps", "10G"), "paths[0].capacity_mbps: must be a positive integer"),
    "zero capacity": (_set("paths", 0, "capacity_mbps", 0), "paths[0].capacity_mbps: must be a positive integer"),
    "bad host address": (
        _append("hosts", {"site": "CERN", "name": "cern-dt01", "address": "192.0.2.300"}),
        "hosts[0].address: must be an IPv4 or IPv6 address"),
    "host at unknown site": (
        _append("hosts", {"site": "XYZ", "name": "x-dt01"}), "hosts[0].site: unknown site 'XYZ'"),
    "bad contact e-mail": (
        _set("sites", 0, "contacts", [{"email": "not-an-address", "role": "noc"}]),
        "sites[0].contacts[0].email: must be an e-mail address"),
    "bad contact role": (
        _set("sites", 0, "contacts", [{"email": "noc@cern.example", "role": "boss"}]),
        "sites[0].contacts[0].role: must be one of noc, network, transfer, maintenance, management"),
    "trunk member without interface": (
        _append("trunks", {"name": "lag", "members": ["cern-border"]}),
        "trunks[0].members[0]: must be 'equipment:interface'"),
    "trunk member unknown": (
        _append("trunks", {"name": "lag", "members": ["cern-border:xe-0/0/9"]}),
        "trunks[0].members[0]: unknown interface 'cern-border:xe-0/0/9'"),
    "duplicate if_index": (
        lambda t: t["interfaces"].extend([
            {"equipment": "geant-fra", "name": "xe-0/0/0", "if_index": 501},
            {"equipment": "geant-fra", "name": "xe-0/0/1", "if_index": 501},
        ]),
        "interfaces[1].if_index: if_index 501 is already used by geant-fra:xe-0/0/0"),
    "bad mtu": (_append("interfaces", {"equipment": "geant-fra", "name": "xe-0/0/0", "mtu": 20}),
                "interfaces[0].mtu: must be an integer between 68 and 65535"),
    "circuit end unknown": (
        _append("circuits", {"carrier": "GEANT", "cid": "C-1", "a_interface": "geant-fra:nope"}),
        "circuits[0].a_interface: unknown interface 'geant-fra:nope'"),
    "unknown section": (lambda t: t.update(routers=[]),
                        "routers: unknown section (expected: carriers, sites, hosts, equipment, interfaces, "
                        "circuits, trunks, paths)"),
    "section not a list": (lambda t: t.update(sites={"code": "CERN"}), "sites: must be a list"),
    "entry not a mapping": (lambda t: t["carriers"].append("GEANT"), "carriers[4]: must be a mapping"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_error_names_the_place_in_a_bare_topology(case, tmp_path, capsys):
    mutate, expected = CASES[case]
    topology = example_topology()
    mutate(topology)
    assert expected in _run(tmp_path, topology, capsys)


def test_error_in_a_scenario_file_is_prefixed_with_its_topology_block(tmp_path, capsys):
    scenario = yaml.safe_load(REVERSE_PATH_LOSS.read_text())
    scenario["topology"]["paths"][3]["hops"][2] = "geant-frx"
    assert _run(tmp_path, scenario, capsys, name="scenario.yaml") == [
        "topology.paths[3].hops[2]: unknown equipment 'geant-frx'"
    ]


def test_all_errors_are_reported_at_once_with_a_summary(tmp_path, capsys):
    topology = example_topology()
    topology["paths"][3]["hops"][2] = "geant-frx"
    topology["sites"][1]["lat"] = 99
    topology["equipment"][0]["carrier"] = "GEANT"
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(topology))
    with pytest.raises(CommandError) as caught:
        call_command("import_topology", str(path))
    assert str(caught.value) == f"{path}: 3 errors; nothing was imported"
    assert capsys.readouterr().err.splitlines() == [
        f"{path}: sites[1].lat: must be a number between -90 and 90",
        f"{path}: equipment[0]: has both site 'CERN' and carrier 'GEANT' (equipment belongs to one owner)",
        f"{path}: paths[3].hops[2]: unknown equipment 'geant-frx'",
    ]


def test_invalid_yaml_names_line_and_column(tmp_path, capsys):
    lines = _run(tmp_path, None, capsys, raw="sites:\n  - code: CERN\n   name: [unclosed\n")
    # (the wording after the position depends on whether PyYAML uses libyaml)
    assert len(lines) == 1 and lines[0].startswith("line 3, column 4: invalid YAML: ")


def test_invalid_json_names_line_and_column(tmp_path, capsys):
    lines = _run(tmp_path, None, capsys, name="topology.json", raw='{"sites": [}\n')
    assert lines == ["line 1, column 12: invalid JSON: Expecting value"]


def test_empty_file_and_scenario_without_topology(tmp_path, capsys):
    assert _run(tmp_path, None, capsys, raw="") == ["the document is empty"]
    assert _run(tmp_path, {"scenario": "x", "measurements": []}, capsys, name="s.yaml") == [
        "topology: missing: this scenario file has no topology block"
    ]


def test_missing_file_exits_2(tmp_path):
    with pytest.raises(CommandError) as caught:
        call_command("import_topology", str(tmp_path / "nope.yaml"))
    assert caught.value.returncode == 2
    assert "no such file" in str(caught.value)


def test_as_of_before_the_version_in_force_is_refused(tmp_path, capsys):
    # given: the example in force since T; a changed route dated before T is a contradiction
    topology_import_file(REVERSE_PATH_LOSS, as_of=_dt("2026-03-01T12:00:00Z"))
    topology = example_topology()
    topology["paths"][0]["capacity_mbps"] = 10000
    path = tmp_path / "changed.yaml"
    path.write_text(yaml.safe_dump(topology))
    with pytest.raises(CommandError):
        call_command("import_topology", str(path), "--as-of", "2026-02-01T00:00:00Z")
    err = capsys.readouterr().err
    assert err.startswith(f"{path}: paths[0]: the new route of CERN->FZK must start after the version in force")


def test_as_of_needs_a_zone(tmp_path):
    with pytest.raises(CommandError) as caught:
        call_command("import_topology", str(REVERSE_PATH_LOSS), "--as-of", "2026-03-01T12:00:00")
    assert "--as-of: expected an ISO 8601 time with a zone" in str(caught.value)


def _dt(text: str):
    from django.utils.dateparse import parse_datetime

    return parse_datetime(text)
