"""Topology documents read (YAML or JSON) and validated: every section, key and reference, every problem
reported with its place."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path as FilePath
from typing import Any

import yaml

from wanmon.inventory import services
from wanmon.inventory.choices import ContactRole
from wanmon.inventory.labels import label_join, label_split
from wanmon.inventory.topology.schema import (
    CONTACT_SCHEMA,
    SCHEMA,
    SECTIONS,
    YAML_LOADER,
    BadValue,
    Item,
    KnownRefs,
    SchemaKey,
    TopologyDocument,
    TopologyError,
    TopologyInvalid,
)

# --- loading -------------------------------------------------------------------------------------------------


def topology_parse(text: str, *, filename: str = "") -> Any:
    """Parse a YAML (or, for ``*.json``, JSON) text; syntax errors become a :class:`TopologyInvalid`."""
    try:
        if filename.endswith(".json"):
            return json.loads(text)
        return yaml.load(text, Loader=YAML_LOADER)  # a safe loader (libyaml's when available)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno}, column {exc.colno}"
        raise TopologyInvalid([TopologyError("", f"{where}: invalid JSON: {exc.msg}")]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise TopologyInvalid([TopologyError("", f"{where}invalid YAML: {problem}")]) from None


def topology_extract(document: Any) -> tuple[Any, str]:
    """The topology of a document and its prefix for error paths: a scenario file's ``topology`` block
    (prefix ``"topology"``) or the document itself when it is a bare topology (prefix ``""``)."""
    if document is None:
        raise TopologyInvalid([TopologyError("", "the document is empty")])
    if not isinstance(document, dict):
        raise TopologyInvalid([TopologyError("", "must be a mapping (a topology, or a scenario with a topology)")])
    if "topology" in document:
        return document["topology"], "topology"
    if "scenario" in document:
        raise TopologyInvalid([TopologyError("topology", "missing: this scenario file has no topology block")])
    return document, ""


def topology_load_file(filename: str | FilePath) -> tuple[Any, str]:
    """Read a topology file or a scenario file; returns ``(topology, prefix)`` for validation/import."""
    text = FilePath(filename).read_text(encoding="utf-8")
    return topology_extract(topology_parse(text, filename=str(filename)))


# --- validation ------------------------------------------------------------------------------------------------


def join_location(prefix: str, path: str) -> str:
    return f"{prefix}.{path}" if prefix else path


class _Validator:
    def __init__(self, prefix: str, known: KnownRefs):
        self.prefix = prefix
        self.known = known
        self.errors: list[TopologyError] = []

    def error(self, path: str, message: str) -> None:
        self.errors.append(TopologyError(join_location(self.prefix, path), message))

    def entries(self, where: str, raw: Any, schema: dict[str, SchemaKey]) -> Item | None:
        """Check one mapping against its schema: required keys, unknown keys, value types."""
        if not isinstance(raw, dict):
            self.error(where, "must be a mapping")
            return None
        values: dict[str, Any] = {}
        ok = True
        for key in raw:
            if key not in schema:
                self.error(f"{where}.{key}", f"unknown key (expected: {', '.join(schema)})")
                ok = False
        for key, spec in schema.items():
            if key not in raw:
                if spec.required:
                    self.error(where, f"missing required key {key!r}")
                    ok = False
                continue
            try:
                values[key] = spec.parse(raw[key])
            except BadValue as bad:
                self.error(f"{where}.{key}", str(bad))
                ok = False
        return Item(where, values, complete=ok)

    def label(self, where: str, value: Any, *, interface_required: bool) -> tuple[str, str | None] | None:
        expected = "'equipment:interface'" if interface_required else "'equipment' or 'equipment:interface'"
        if not isinstance(value, str) or not value:
            self.error(where, f"must be {expected}")
            return None
        eq_name, if_name = label_split(value)
        if not eq_name or if_name == "" or (interface_required and if_name is None):
            self.error(where, f"must be {expected}")
            return None
        return eq_name, if_name

    def labels(self, item: Item, key: str, *, interface_required: bool, unique: str = "") -> None:
        """Parse the labels listed under ``key`` of ``item`` in place. Each keeps its place (None where it is wrong)
        so that the reference checks name the place in the document; ``unique``: what a repeated label would be a
        duplicate of (repeats are then errors)."""
        if key not in item.values:
            return
        parsed: list[tuple[str, str | None] | None] = []
        for j, raw in enumerate(item.values[key]):
            where = f"{item.path}.{key}[{j}]"
            label = self.label(where, raw, interface_required=interface_required)
            if label is not None and unique and label in parsed:
                self.error(where, f"duplicate {unique} {label_join(*label)!r}")
                label = None
            parsed.append(label)
        item.values[key] = parsed


def topology_validate(topology: Any, *, prefix: str = "", known: KnownRefs | None = None) -> TopologyDocument:
    """Check a topology mapping completely; raise :class:`TopologyInvalid` with every error found.

    ``known`` lists what exists already (default: nothing; :func:`topology_import` passes the
    database's content), so that a document may reference equipment it does not declare. Pure: no
    database access of its own.
    """
    known = known or KnownRefs()
    v = _Validator(prefix, known)
    if not isinstance(topology, dict):
        v.errors.append(TopologyError(prefix, "must be a mapping of sections (carriers, sites, ...)"))
        raise TopologyInvalid(v.errors)
    for key in topology:
        if key not in SECTIONS:
            v.error(str(key), f"unknown section (expected: {', '.join(SECTIONS)})")

    sections: dict[str, list[Item]] = {}
    for section in SECTIONS:
        raw = topology.get(section)
        items: list[Item] = []
        if raw is not None and not isinstance(raw, list):
            v.error(section, "must be a list")
        for i, entry in enumerate(raw if isinstance(raw, list) else []):
            item = v.entries(f"{section}[{i}]", entry, SCHEMA[section])
            if item is not None:
                items.append(item)
        sections[section] = items

    _check_nested(v, sections)
    _check_keys_and_references(v, sections, known)
    if v.errors:
        raise TopologyInvalid(v.errors)
    return TopologyDocument(sections=sections, prefix=prefix)


def _check_nested(v: _Validator, sections: dict[str, list[Item]]) -> None:
    """Lists inside entries: site contacts, trunk members, path hops (parsed to tuples)."""
    for item in sections["sites"]:
        if "contacts" not in item.values:
            continue
        contacts = []
        seen: dict[tuple[str, str], int] = {}
        for j, raw in enumerate(item.values["contacts"]):
            where = f"{item.path}.contacts[{j}]"
            contact = v.entries(where, raw, CONTACT_SCHEMA)
            if contact is None or not contact.complete:
                continue
            spec = services.ContactSpec(
                email=contact.values["email"], role=contact.values.get("role", ContactRole.NOC),
                name=contact.values.get("name", ""),
            )
            if not spec.email:
                v.error(f"{where}.email", "must be an e-mail address")
                continue
            if (spec.role, spec.email) in seen:
                first_at = f"{join_location(v.prefix, item.path)}.contacts[{seen[(spec.role, spec.email)]}]"
                v.error(where, f"duplicate contact {spec.email} as {spec.role} (first at {first_at})")
                continue
            seen[(spec.role, spec.email)] = j
            contacts.append(spec)
        item.values["contacts"] = contacts
    for item in sections["trunks"]:
        v.labels(item, "members", interface_required=True, unique="member")
    for item in sections["paths"]:
        if item.values.get("hops") == []:
            v.error(f"{item.path}.hops", "must list at least one hop")
        v.labels(item, "hops", interface_required=False)
    for item in sections["circuits"]:
        for end in ("a_interface", "z_interface"):
            if item.values.get(end):
                item.values[end] = v.label(f"{item.path}.{end}", item.values[end], interface_required=True)
            elif end in item.values:
                item.values[end] = None


class _References:
    """Keys unique within the document and references that resolve, in the document or the database."""

    def __init__(self, v: _Validator, sections: dict[str, list[Item]], known: KnownRefs) -> None:
        self.v, self.sections, self.known = v, sections, known
        self.carriers = {k[0] for k in self.unique("carriers", ("code",), lambda k: f"carrier {k[0]!r}", ".code")}
        self.sites = {k[0] for k in self.unique("sites", ("code",), lambda k: f"site {k[0]!r}", ".code")}
        self.equipment = {k[0] for k in self.unique("equipment", ("name",), lambda k: f"equipment {k[0]!r}", ".name")}
        self.carriers |= known.carriers
        self.sites |= known.sites
        self.equipment |= known.equipment
        self.unique("hosts", ("site", "name"), lambda k: f"host {k[1]!r} of site {k[0]!r}")
        self.interfaces = self.unique("interfaces", ("equipment", "name"), lambda k: f"interface {label_join(*k)!r}")
        self.interfaces |= known.interfaces
        self.unique("circuits", ("carrier", "cid"), lambda k: f"circuit {k[1]!r} of carrier {k[0]!r}")
        self.unique("trunks", ("name",), lambda k: f"trunk {k[0]!r}", ".name")
        self.unique("paths", ("src", "dst"), lambda k: f"path {k[0]}->{k[1]}")

    def keyed(self, section: str, *names: str):
        """(item, key) for the entries of a section whose key fields are all valid."""
        for item in self.sections[section]:
            if all(name in item.values for name in names):
                yield item, tuple(item.values[name] for name in names)

    def unique(self, section: str, names: tuple[str, ...], describe: Callable[[tuple], str], where: str = "") -> set:
        first: dict[tuple, str] = {}
        for item, key in self.keyed(section, *names):
            if key in first:
                first_at = join_location(self.v.prefix, first[key])
                self.v.error(f"{item.path}{where}", f"duplicate {describe(key)} (first at {first_at})")
            else:
                first[key] = item.path
        return set(first)

    def ref(self, where: str, value: str | None, pool: set, kind: str) -> None:
        if value and value not in pool:
            self.v.error(where, f"unknown {kind} {value!r}")

    def interface_ref(self, where: str, parsed: tuple[str, str | None] | None) -> None:
        if parsed is None:
            return
        eq_name, if_name = parsed
        if eq_name not in self.equipment:
            self.v.error(where, f"unknown equipment {eq_name!r}")
        elif if_name is not None and (eq_name, if_name) not in self.interfaces:
            self.v.error(where, f"unknown interface {label_join(eq_name, if_name)!r}")

    def check_owners(self) -> None:
        for item in self.sections["hosts"]:
            self.ref(f"{item.path}.site", item.values.get("site"), self.sites, "site")
        for item in self.sections["equipment"]:
            site, carrier = item.values.get("site"), item.values.get("carrier")
            if site and carrier:
                self.v.error(
                    item.path, f"has both site {site!r} and carrier {carrier!r} (equipment belongs to one owner)"
                )
            self.ref(f"{item.path}.site", site, self.sites, "site")
            self.ref(f"{item.path}.carrier", carrier, self.carriers, "carrier")
        for item in self.sections["interfaces"]:
            self.ref(f"{item.path}.equipment", item.values.get("equipment"), self.equipment, "equipment")

    def check_if_indexes(self) -> None:
        """ifIndex is unique per equipment, within the document and against the database."""
        declared_index = {
            key: item.values.get("if_index") for item, key in self.keyed("interfaces", "equipment", "name")
        }
        if_index_owner: dict[tuple[str, int], str] = {}
        for item, (eq_name, if_name, if_index) in self.keyed("interfaces", "equipment", "name", "if_index"):
            if if_index is None:
                continue
            if (eq_name, if_index) in if_index_owner:
                owner = label_join(eq_name, if_index_owner[(eq_name, if_index)])
                self.v.error(f"{item.path}.if_index", f"if_index {if_index} is already used by {owner}")
                continue
            if_index_owner[(eq_name, if_index)] = if_name
            stored = self.known.if_indexes.get((eq_name, if_index))
            # A clash with the database counts unless the document moves that interface to another ifIndex.
            if stored is not None and stored != if_name and declared_index.get((eq_name, stored)) in (None, if_index):
                self.v.error(
                    f"{item.path}.if_index", f"if_index {if_index} is already used by {label_join(eq_name, stored)}"
                )

    def check_links(self) -> None:
        for item in self.sections["circuits"]:
            self.ref(f"{item.path}.carrier", item.values.get("carrier"), self.carriers, "carrier")
            for end in ("a_interface", "z_interface"):
                self.interface_ref(f"{item.path}.{end}", item.values.get(end))
            a, z = item.values.get("a_interface"), item.values.get("z_interface")
            if a and z and a == z:
                self.v.error(item.path, "a_interface and z_interface are the same interface")
        for item in self.sections["trunks"]:
            for j, member in enumerate(item.values.get("members", [])):
                self.interface_ref(f"{item.path}.members[{j}]", member)
        for item in self.sections["paths"]:
            src, dst = item.values.get("src"), item.values.get("dst")
            self.ref(f"{item.path}.src", src, self.sites, "site")
            self.ref(f"{item.path}.dst", dst, self.sites, "site")
            if src and src == dst:
                self.v.error(item.path, f"src and dst are the same site {src!r}")
            for j, hop in enumerate(item.values.get("hops", [])):
                self.interface_ref(f"{item.path}.hops[{j}]", hop)


def _check_keys_and_references(v: _Validator, sections: dict[str, list[Item]], known: KnownRefs) -> None:
    refs = _References(v, sections, known)
    refs.check_owners()
    refs.check_if_indexes()
    refs.check_links()
