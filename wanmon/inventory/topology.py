"""Topology documents (docs/scenario-format.md#topology, the ``topology`` block): validate, import, export.

Import runs in two phases:

1. :func:`topology_validate` checks the whole document without writing anything and collects *every*
   error, each naming its place in the document (``paths[3].hops[2]: unknown equipment 'geant-frx'``).
   References may point at things declared in the same document or already in the database.
2. :func:`topology_import` applies the validated document through the services in one transaction
   (all or nothing) and reports created / updated / unchanged counts per section.

Semantics, so that importing is idempotent and partial documents (scenario files) are safe:

- objects are matched by their natural keys (carrier and site codes, equipment names, ``equipment``
  + interface name, ``site`` + host name, ``carrier`` + circuit id, trunk names, ``src`` + ``dst``);
- keys present in an entry set the attribute (``null`` clears it); keys absent leave it alone;
  ``contacts`` of a site and ``members`` of a trunk, when present, replace the whole set;
- nothing is deleted: entries absent from the document stay as they are;
- a path whose hops or capacity differ from the version in force gets a new version (see
  ``services.path_set``), at ``as_of`` (default now); the same route again changes nothing.

Export (:func:`topology_export` + :func:`topology_dump`) writes the same format deterministically:
sections and entries sorted by their keys, keys in a fixed order, optional keys only when they differ
from their default, so that export -> import -> export is byte-identical.

Keys only the inventory needs, not the diagnosis (all optional): ``carriers[].kind/noc_email/notes``,
``sites[].notes/contacts``, ``hosts[].role``, the equipment attributes of the model (``os_version``,
``location``, capacities, ``known_reordering``, ``quirks``), ``interfaces[].blade/description``, a
``circuits`` section, ``trunks[].description``, ``paths[].rtt_ms/note``.
"""

from __future__ import annotations

import ipaddress
import json
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path as FilePath
from typing import Any

import yaml
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction

from wanmon.inventory import selectors, services
from wanmon.inventory.choices import CarrierKind, CircuitStatus, ContactRole, EquipmentRole, HostRole
from wanmon.inventory.labels import label_join, label_split
from wanmon.inventory.models import (
    Carrier,
    Circuit,
    Equipment,
    Host,
    Interface,
    Site,
    Trunk,
    code_validator,
    name_validator,
)

# libyaml's safe loader is ~30 times faster than the pure-Python one on a large topology; same results.
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

SECTIONS = ("carriers", "sites", "hosts", "equipment", "interfaces", "circuits", "trunks", "paths")


# --- errors and results ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class TopologyError:
    """One problem in a document: where (``paths[3].hops[2]``; empty for the whole file) and what."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class TopologyInvalid(Exception):
    """The document cannot be imported; ``errors`` lists every problem found. Nothing was changed."""

    def __init__(self, errors: list[TopologyError]):
        self.errors = errors
        super().__init__("\n".join(str(e) for e in errors))


@dataclass
class Item:
    """An entry of a section: where it is in the document and its normalised values.

    An incomplete entry (some value was wrong) is kept during validation so that its valid keys still
    count: a site with a bad latitude must not make every path to it an "unknown site" as well.
    """

    path: str
    values: dict[str, Any]
    complete: bool = True


@dataclass
class TopologyDocument:
    """A validated topology: the entries of each section, in document order."""

    sections: dict[str, list[Item]]
    prefix: str = ""


@dataclass
class ImportReport:
    """Per section, how many entries were created, updated (a new path version counts) or unchanged."""

    counts: dict[str, Counter] = field(default_factory=lambda: {s: Counter() for s in SECTIONS})

    def add(self, section: str, change: services.Change) -> None:
        self.counts[section][str(change)] += 1

    def total(self, change: str) -> int:
        return sum(c[change] for c in self.counts.values())

    @property
    def changed(self) -> bool:
        return bool(self.total("created") or self.total("updated"))

    def as_dict(self) -> dict[str, dict[str, int]]:
        return {
            s: {k: self.counts[s][k] for k in ("created", "updated", "unchanged")} for s in SECTIONS
        }

    def lines(self) -> list[str]:
        return [
            f"{s}: {c['created']} created, {c['updated']} updated, {c['unchanged']} unchanged"
            for s, c in self.as_dict().items()
            if any(c.values())
        ]


@dataclass
class KnownRefs:
    """What already exists in the database and may be referenced without being declared again."""

    carriers: set[str] = field(default_factory=set)
    sites: set[str] = field(default_factory=set)
    equipment: set[str] = field(default_factory=set)
    interfaces: set[tuple[str, str]] = field(default_factory=set)
    if_indexes: dict[tuple[str, int], str] = field(default_factory=dict)

    @classmethod
    def from_database(cls) -> KnownRefs:
        refs = cls(
            carriers=set(Carrier.objects.values_list("code", flat=True)),
            sites=set(Site.objects.values_list("code", flat=True)),
            equipment=set(Equipment.objects.values_list("name", flat=True)),
        )
        for eq_name, if_name, if_index in Interface.objects.values_list("equipment__name", "name", "if_index"):
            refs.interfaces.add((eq_name, if_name))
            if if_index is not None:
                refs.if_indexes[(eq_name, if_index)] = if_name
        return refs


# --- value parsers: each returns the normalised value or raises _Bad(message) --------------------------------


class _Bad(Exception):
    pass


Parser = Callable[[Any], Any]


def _string(max_length: int, *, required: bool = False, regex: re.Pattern | None = None, hint: str = "") -> Parser:
    def parse(value: Any) -> Any:
        if value is None and not required:
            return ""
        if not isinstance(value, str):
            quote = " (quote it)" if isinstance(value, bool | int | float) else ""
            raise _Bad(f"must be a string{quote}")
        if required and not value.strip():
            raise _Bad("must not be empty")
        if regex is not None and not regex.match(value):
            raise _Bad(f"must be {hint}")
        if len(value) > max_length:
            raise _Bad(f"must be at most {max_length} characters")
        return value

    return parse


_code = _string(32, required=True, regex=code_validator.regex, hint=code_validator.message)
_name = _string(100, required=True, regex=name_validator.regex, hint=name_validator.message)
_ref = _string(100, required=True)  # a reference: resolved in the second pass


def _integer(low: int, high: int, *, nullable: bool = True, message: str = "") -> Parser:
    message = message or f"must be an integer between {low} and {high}"

    def parse(value: Any) -> Any:
        if value is None and nullable:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise _Bad(message)
        return value

    return parse


_positive = _integer(1, 2**63 - 1, message="must be a positive integer")


def _number(low: float, high: float, message: str) -> Parser:
    def parse(value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise _Bad(message)
        if not low <= value <= high:
            raise _Bad(message)
        return float(value)

    return parse


def _boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise _Bad("must be true or false")
    return value


def _choice(choices: type) -> Parser:
    values = [c.value for c in choices]

    def parse(value: Any) -> Any:
        if value not in values:
            raise _Bad(f"must be one of {', '.join(values)}")
        return value

    return parse


def _email(value: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _Bad("must be an e-mail address")
    if value:
        try:
            validate_email(value)
        except ValidationError:
            raise _Bad("must be an e-mail address") from None
    return value


def _ip(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise _Bad("must be an IPv4 or IPv6 address")
    try:
        return str(ipaddress.ip_address(value))
    except ValueError:
        raise _Bad("must be an IPv4 or IPv6 address") from None


def _any_list(value: Any) -> list:
    if not isinstance(value, list):
        raise _Bad("must be a list")
    return value


@dataclass(frozen=True)
class _Key:
    parse: Parser
    required: bool = False


# Keys of each section, in export order.
SCHEMA: dict[str, dict[str, _Key]] = {
    "carriers": {
        "code": _Key(_code, True),
        "name": _Key(_string(200, required=True)),
        "kind": _Key(_choice(CarrierKind)),
        "noc_email": _Key(_email),
        "notes": _Key(_string(10_000)),
    },
    "sites": {
        "code": _Key(_code, True),
        "name": _Key(_string(200, required=True)),
        "tier": _Key(_integer(0, 3)),
        "region": _Key(_string(64)),
        "lat": _Key(_number(-90, 90, "must be a number between -90 and 90")),
        "lon": _Key(_number(-180, 180, "must be a number between -180 and 180")),
        "notes": _Key(_string(10_000)),
        "contacts": _Key(_any_list),
    },
    "hosts": {
        "site": _Key(_ref, True),
        "name": _Key(_name, True),
        "address": _Key(_ip),
        "role": _Key(_choice(HostRole)),
    },
    "equipment": {
        "name": _Key(_name, True),
        "site": _Key(_ref),
        "carrier": _Key(_ref),
        "role": _Key(_choice(EquipmentRole)),
        "vendor": _Key(_string(100)),
        "model": _Key(_string(100)),
        "os_version": _Key(_string(100)),
        "location": _Key(_string(200)),
        "linecard_capacity_mbps": _Key(_positive),
        "backplane_capacity_mbps": _Key(_positive),
        "known_reordering": _Key(_boolean),
        "quirks": _Key(_string(10_000)),
    },
    "interfaces": {
        "equipment": _Key(_ref, True),
        "name": _Key(_string(100, required=True), True),
        "if_index": _Key(_integer(0, 2**31 - 1)),
        "speed_mbps": _Key(_positive),
        "mtu": _Key(_integer(68, 65535)),
        "blade": _Key(_string(50)),
        "description": _Key(_string(200)),
    },
    "circuits": {
        "carrier": _Key(_ref, True),
        "cid": _Key(_string(100, required=True), True),
        "a_interface": _Key(_string(201)),
        "z_interface": _Key(_string(201)),
        "capacity_mbps": _Key(_positive),
        "status": _Key(_choice(CircuitStatus)),
        "description": _Key(_string(200)),
    },
    "trunks": {
        "name": _Key(_name, True),
        "members": _Key(_any_list),
        "description": _Key(_string(200)),
    },
    "paths": {
        "src": _Key(_ref, True),
        "dst": _Key(_ref, True),
        "capacity_mbps": _Key(_positive),
        "rtt_ms": _Key(_number(0, 10_000, "must be a number between 0 and 10000")),
        "hops": _Key(_any_list, True),
        "note": _Key(_string(200)),
    },
}
CONTACT_SCHEMA: dict[str, _Key] = {
    "email": _Key(_email, True),
    "role": _Key(_choice(ContactRole)),
    "name": _Key(_string(200)),
}


# --- loading -------------------------------------------------------------------------------------------------


def topology_parse(text: str, *, filename: str = "") -> Any:
    """Parse a YAML (or, for ``*.json``, JSON) text; syntax errors become a :class:`TopologyInvalid`."""
    try:
        if filename.endswith(".json"):
            return json.loads(text)
        return yaml.load(text, Loader=_YAML_LOADER)  # a safe loader (libyaml's when available)
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


def _join(prefix: str, path: str) -> str:
    return f"{prefix}.{path}" if prefix else path


class _Validator:
    def __init__(self, prefix: str, known: KnownRefs):
        self.prefix = prefix
        self.known = known
        self.errors: list[TopologyError] = []

    def error(self, path: str, message: str) -> None:
        self.errors.append(TopologyError(_join(self.prefix, path), message))

    def entries(self, where: str, raw: Any, schema: dict[str, _Key]) -> Item | None:
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
            except _Bad as bad:
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
                v.error(where, f"duplicate contact {spec.email} as {spec.role} "
                               f"(first at {_join(v.prefix, item.path)}.contacts[{seen[(spec.role, spec.email)]}])")
                continue
            seen[(spec.role, spec.email)] = j
            contacts.append(spec)
        item.values["contacts"] = contacts
    for item in sections["trunks"]:
        if "members" not in item.values:
            continue
        members = []
        for j, raw in enumerate(item.values["members"]):
            parsed = v.label(f"{item.path}.members[{j}]", raw, interface_required=True)
            if parsed is None:
                continue
            if parsed in members:
                v.error(f"{item.path}.members[{j}]", f"duplicate member {label_join(*parsed)!r}")
                continue
            members.append(parsed)
        item.values["members"] = members
    for item in sections["paths"]:
        if "hops" not in item.values:
            continue
        hops = []
        if not item.values["hops"]:
            v.error(f"{item.path}.hops", "must list at least one hop")
        for j, raw in enumerate(item.values["hops"]):
            parsed = v.label(f"{item.path}.hops[{j}]", raw, interface_required=False)
            hops.append(parsed)
        item.values["hops"] = hops
    for item in sections["circuits"]:
        for end in ("a_interface", "z_interface"):
            if item.values.get(end):
                item.values[end] = v.label(f"{item.path}.{end}", item.values[end], interface_required=True)
            elif end in item.values:
                item.values[end] = None


def _check_keys_and_references(v: _Validator, sections: dict[str, list[Item]], known: KnownRefs) -> None:
    def keyed(section: str, *names: str):
        """(item, key) for the entries of a section whose key fields are all valid."""
        for item in sections[section]:
            if all(name in item.values for name in names):
                yield item, tuple(item.values[name] for name in names)

    def unique(section: str, names: tuple[str, ...], describe: Callable[[tuple], str], where: str = "") -> set:
        first: dict[tuple, str] = {}
        for item, key in keyed(section, *names):
            if key in first:
                v.error(f"{item.path}{where}", f"duplicate {describe(key)} (first at {_join(v.prefix, first[key])})")
            else:
                first[key] = item.path
        return set(first)

    carriers = {k[0] for k in unique("carriers", ("code",), lambda k: f"carrier {k[0]!r}", ".code")}
    sites = {k[0] for k in unique("sites", ("code",), lambda k: f"site {k[0]!r}", ".code")}
    equipment = {k[0] for k in unique("equipment", ("name",), lambda k: f"equipment {k[0]!r}", ".name")}
    carriers |= known.carriers
    sites |= known.sites
    equipment |= known.equipment
    unique("hosts", ("site", "name"), lambda k: f"host {k[1]!r} of site {k[0]!r}")
    interfaces = unique("interfaces", ("equipment", "name"), lambda k: f"interface {label_join(*k)!r}")
    interfaces |= known.interfaces
    unique("circuits", ("carrier", "cid"), lambda k: f"circuit {k[1]!r} of carrier {k[0]!r}")
    unique("trunks", ("name",), lambda k: f"trunk {k[0]!r}", ".name")
    unique("paths", ("src", "dst"), lambda k: f"path {k[0]}->{k[1]}")

    def ref(where: str, value: str | None, pool: set, kind: str) -> None:
        if value and value not in pool:
            v.error(where, f"unknown {kind} {value!r}")

    def interface_ref(where: str, parsed: tuple[str, str | None] | None) -> None:
        if parsed is None:
            return
        eq_name, if_name = parsed
        if eq_name not in equipment:
            v.error(where, f"unknown equipment {eq_name!r}")
        elif if_name is not None and (eq_name, if_name) not in interfaces:
            v.error(where, f"unknown interface {label_join(eq_name, if_name)!r}")

    for item in sections["hosts"]:
        ref(f"{item.path}.site", item.values.get("site"), sites, "site")
    for item in sections["equipment"]:
        site, carrier = item.values.get("site"), item.values.get("carrier")
        if site and carrier:
            v.error(item.path, f"has both site {site!r} and carrier {carrier!r} (equipment belongs to one owner)")
        ref(f"{item.path}.site", site, sites, "site")
        ref(f"{item.path}.carrier", carrier, carriers, "carrier")

    # ifIndex is unique per equipment, within the document and against the database.
    declared_index = {key: item.values.get("if_index") for item, key in keyed("interfaces", "equipment", "name")}
    if_index_owner: dict[tuple[str, int], str] = {}
    for item in sections["interfaces"]:
        ref(f"{item.path}.equipment", item.values.get("equipment"), equipment, "equipment")
    for item, (eq_name, if_name, if_index) in keyed("interfaces", "equipment", "name", "if_index"):
        if if_index is None:
            continue
        if (eq_name, if_index) in if_index_owner:
            owner = label_join(eq_name, if_index_owner[(eq_name, if_index)])
            v.error(f"{item.path}.if_index", f"if_index {if_index} is already used by {owner}")
            continue
        if_index_owner[(eq_name, if_index)] = if_name
        stored = known.if_indexes.get((eq_name, if_index))
        # A clash with the database counts unless the document moves that interface to another ifIndex.
        if stored is not None and stored != if_name and declared_index.get((eq_name, stored)) in (None, if_index):
            v.error(f"{item.path}.if_index", f"if_index {if_index} is already used by {label_join(eq_name, stored)}")

    for item in sections["circuits"]:
        ref(f"{item.path}.carrier", item.values.get("carrier"), carriers, "carrier")
        for end in ("a_interface", "z_interface"):
            interface_ref(f"{item.path}.{end}", item.values.get(end))
        a, z = item.values.get("a_interface"), item.values.get("z_interface")
        if a and z and a == z:
            v.error(item.path, "a_interface and z_interface are the same interface")
    for item in sections["trunks"]:
        for j, member in enumerate(item.values.get("members", [])):
            interface_ref(f"{item.path}.members[{j}]", member)
    for item in sections["paths"]:
        src, dst = item.values.get("src"), item.values.get("dst")
        ref(f"{item.path}.src", src, sites, "site")
        ref(f"{item.path}.dst", dst, sites, "site")
        if src and src == dst:
            v.error(item.path, f"src and dst are the same site {src!r}")
        for j, hop in enumerate(item.values.get("hops", [])):
            interface_ref(f"{item.path}.hops[{j}]", hop)


# --- import ------------------------------------------------------------------------------------------------------


def _messages(exc: ValidationError) -> str:
    if hasattr(exc, "error_dict"):
        return "; ".join(
            msg if key == "__all__" else f"{key}: {msg}" for key, msgs in exc.message_dict.items() for msg in msgs
        )
    return "; ".join(exc.messages)


class _Applier:
    """Applies a validated document through the services, resolving names to the objects just written."""

    def __init__(self, doc: TopologyDocument, as_of: datetime | None):
        self.doc = doc
        self.as_of = as_of
        self.report = ImportReport()

    def run(self) -> ImportReport:
        for section in SECTIONS:
            for item in self.doc.sections[section]:
                try:
                    change = getattr(self, f"_apply_{section}")(item.values)
                except ValidationError as exc:
                    raise TopologyInvalid([TopologyError(_join(self.doc.prefix, item.path), _messages(exc))]) from None
                self.report.add(section, change)
        return self.report

    # Objects by natural key: filled by each upsert and, for references to rows the document does not
    # declare, from the database on first use (one query per distinct reference, not per mention).
    def _cached(self, kind: str, key, load):
        cache = self.__dict__.setdefault(f"_{kind}_cache", {})
        if key not in cache:
            cache[key] = load()
        return cache[key]

    def _remember(self, kind: str, key, obj):
        self.__dict__.setdefault(f"_{kind}_cache", {})[key] = obj
        return obj

    def _carrier(self, code: str | None) -> Carrier | None:
        return self._cached("carrier", code, lambda: Carrier.objects.get(code=code)) if code else None

    def _site(self, code: str | None) -> Site | None:
        return self._cached("site", code, lambda: Site.objects.get(code=code)) if code else None

    def _equipment(self, name: str) -> Equipment:
        return self._cached("equipment", name, lambda: Equipment.objects.get(name=name))

    def _interface(self, parsed: tuple[str, str | None] | None) -> Interface | None:
        if parsed is None:
            return None
        return self._cached("interface", parsed, lambda: Interface.objects.select_related("equipment").get(
            equipment__name=parsed[0], name=parsed[1]))

    def _apply_carriers(self, values: dict) -> services.Change:
        carrier, change = services.carrier_upsert(**values)
        self._remember("carrier", carrier.code, carrier)
        return change

    def _apply_sites(self, values: dict) -> services.Change:
        site, change = services.site_upsert(**values)
        self._remember("site", site.code, site)
        return change

    def _apply_hosts(self, values: dict) -> services.Change:
        return services.host_upsert(**{**values, "site": self._site(values["site"])})[1]

    def _apply_equipment(self, values: dict) -> services.Change:
        values = dict(values)
        for key, lookup in (("site", self._site), ("carrier", self._carrier)):
            if key in values:
                values[key] = lookup(values[key])
        equipment, change = services.equipment_upsert(**values)
        self._remember("equipment", equipment.name, equipment)
        return change

    def _apply_interfaces(self, values: dict) -> services.Change:
        equipment = self._equipment(values["equipment"])
        interface, change = services.interface_upsert(**{**values, "equipment": equipment})
        self._remember("interface", (equipment.name, interface.name), interface)
        return change

    def _apply_circuits(self, values: dict) -> services.Change:
        values = {**values, "carrier": self._carrier(values["carrier"])}
        for end in ("a_interface", "z_interface"):
            if end in values:
                values[end] = self._interface(values[end])
        return services.circuit_upsert(**values)[1]

    def _apply_trunks(self, values: dict) -> services.Change:
        if "members" in values:
            values = {**values, "members": [self._interface(m) for m in values["members"]]}
        return services.trunk_upsert(**values)[1]

    def _apply_paths(self, values: dict) -> services.Change:
        hops = [
            (self._equipment(eq_name), self._interface((eq_name, if_name)) if if_name is not None else None)
            for eq_name, if_name in values["hops"]
        ]
        extra = {k: values[k] for k in ("capacity_mbps", "rtt_ms", "note") if k in values}
        return services.path_set(
            src=self._site(values["src"]), dst=self._site(values["dst"]), hops=hops, at=self.as_of, **extra
        )[1]


def topology_import(
    topology: Any, *, prefix: str = "", as_of: datetime | None = None, dry_run: bool = False
) -> ImportReport:
    """Validate ``topology`` against itself and the database, then apply it in one transaction.

    Raises :class:`TopologyInvalid` (and changes nothing) when anything is wrong. ``as_of`` is the
    start of any new path version (default: now; see ``services.path_set`` for first versions).
    ``dry_run`` does everything and rolls back, to report what an import would change.
    """
    with transaction.atomic():
        doc = topology_validate(topology, prefix=prefix, known=KnownRefs.from_database())
        report = _Applier(doc, as_of).run()
        if dry_run:
            transaction.set_rollback(True)
    return report


def topology_import_file(
    filename: str | FilePath, *, as_of: datetime | None = None, dry_run: bool = False
) -> ImportReport:
    """:func:`topology_import` of a topology file or of a scenario file's ``topology`` block."""
    topology, prefix = topology_load_file(filename)
    return topology_import(topology, prefix=prefix, as_of=as_of, dry_run=dry_run)


# --- export ------------------------------------------------------------------------------------------------------


def _put(entry: dict, key: str, value: Any, default: Any = "") -> None:
    """Add an optional key only when it differs from its default (so minimal documents stay minimal)."""
    if value is not None and value != default:
        entry[key] = value


def _interface_label(interface: Interface | None) -> str | None:
    return label_join(interface.equipment.name, interface.name) if interface is not None else None


def topology_export(*, at: datetime | None = None) -> dict[str, list[dict]]:
    """The whole inventory as a topology document (paths: the versions in force at ``at``, default now)."""
    doc: dict[str, list[dict]] = {}

    carriers = []
    for c in Carrier.objects.order_by("code"):
        entry = {"code": c.code, "name": c.name}
        _put(entry, "kind", c.kind, CarrierKind.OTHER)
        _put(entry, "noc_email", c.noc_email)
        _put(entry, "notes", c.notes)
        carriers.append(entry)
    doc["carriers"] = carriers

    sites = []
    for s in Site.objects.order_by("code").prefetch_related("contacts"):
        entry = {"code": s.code, "name": s.name}
        _put(entry, "tier", s.tier)
        _put(entry, "region", s.region)
        _put(entry, "lat", s.lat)
        _put(entry, "lon", s.lon)
        _put(entry, "notes", s.notes)
        contacts = []
        for contact in sorted(s.contacts.all(), key=lambda c: (c.role, c.email)):
            item = {"email": contact.email, "role": contact.role}
            _put(item, "name", contact.name)
            contacts.append(item)
        if contacts:
            entry["contacts"] = contacts
        sites.append(entry)
    doc["sites"] = sites

    hosts = []
    for h in Host.objects.select_related("site").order_by("site__code", "name"):
        entry = {"site": h.site.code, "name": h.name}
        _put(entry, "address", h.address)
        _put(entry, "role", h.role, HostRole.TEST)
        hosts.append(entry)
    doc["hosts"] = hosts

    equipment = []
    for e in Equipment.objects.select_related("site", "carrier").order_by("name"):
        entry: dict[str, Any] = {"name": e.name}
        if e.site_id:
            entry["site"] = e.site.code
        elif e.carrier_id:
            entry["carrier"] = e.carrier.code
        entry["role"] = e.role
        for key in ("vendor", "model", "os_version", "location"):
            _put(entry, key, getattr(e, key))
        _put(entry, "linecard_capacity_mbps", e.linecard_capacity_mbps)
        _put(entry, "backplane_capacity_mbps", e.backplane_capacity_mbps)
        _put(entry, "known_reordering", e.known_reordering, False)
        _put(entry, "quirks", e.quirks)
        equipment.append(entry)
    doc["equipment"] = equipment

    interfaces = []
    for i in Interface.objects.select_related("equipment").order_by("equipment__name", "name"):
        entry = {"equipment": i.equipment.name, "name": i.name}
        _put(entry, "if_index", i.if_index)
        _put(entry, "speed_mbps", i.speed_mbps)
        _put(entry, "mtu", i.mtu)
        _put(entry, "blade", i.blade)
        _put(entry, "description", i.description)
        interfaces.append(entry)
    doc["interfaces"] = interfaces

    circuits = []
    for c in Circuit.objects.select_related(
        "carrier", "a_interface__equipment", "z_interface__equipment"
    ).order_by("carrier__code", "cid"):
        entry = {"carrier": c.carrier.code, "cid": c.cid}
        _put(entry, "a_interface", _interface_label(c.a_interface))
        _put(entry, "z_interface", _interface_label(c.z_interface))
        _put(entry, "capacity_mbps", c.capacity_mbps)
        _put(entry, "status", c.status, CircuitStatus.ACTIVE)
        _put(entry, "description", c.description)
        circuits.append(entry)
    if circuits:  # inventory-only: written when used, so plain documents stay plain
        doc["circuits"] = circuits

    trunks = []
    for t in Trunk.objects.prefetch_related("members__equipment").order_by("name"):
        entry = {"name": t.name, "members": sorted(_interface_label(m) for m in t.members.all())}
        _put(entry, "description", t.description)
        trunks.append(entry)
    doc["trunks"] = trunks

    paths = []
    for p in selectors.path_list_valid_at(at=at):
        entry = {"src": p.src.code, "dst": p.dst.code}
        _put(entry, "capacity_mbps", p.capacity_mbps)
        _put(entry, "rtt_ms", p.rtt_ms)
        entry["hops"] = selectors.path_hops_labels(p)
        _put(entry, "note", p.note)
        paths.append(entry)
    doc["paths"] = paths

    return {key: doc[key] for key in SECTIONS if key in doc}


def topology_dump(document: dict, *, fmt: str = "yaml") -> str:
    """Serialise a document deterministically (stable key order, no flow style, UTF-8 text)."""
    if fmt == "json":
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    return yaml.safe_dump(document, sort_keys=False, default_flow_style=False, allow_unicode=True, width=4096)
