"""The topology document's keys and values: errors and results of a validation, the value parsers, and the
table of every section's keys (docs/scenario-format.md#topology)."""

from __future__ import annotations

import ipaddress
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import yaml
from django.core.exceptions import ValidationError
from django.core.validators import validate_email

from wanmon.inventory import services
from wanmon.inventory.choices import CarrierKind, CircuitStatus, ContactRole, EquipmentRole, HostRole
from wanmon.inventory.models import Carrier, Equipment, Interface, Site, code_validator, name_validator

# libyaml's safe loader is ~30 times faster than the pure-Python one on a large topology; same results.
YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

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


# --- value parsers: each returns the normalised value or raises BadValue(message) --------------------------------


class BadValue(Exception):
    pass


Parser = Callable[[Any], Any]


def _string(max_length: int, *, required: bool = False, regex: re.Pattern | None = None, hint: str = "") -> Parser:
    def parse(value: Any) -> Any:
        if value is None and not required:
            return ""
        if not isinstance(value, str):
            quote = " (quote it)" if isinstance(value, bool | int | float) else ""
            raise BadValue(f"must be a string{quote}")
        if required and not value.strip():
            raise BadValue("must not be empty")
        if regex is not None and not regex.match(value):
            raise BadValue(f"must be {hint}")
        if len(value) > max_length:
            raise BadValue(f"must be at most {max_length} characters")
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
            raise BadValue(message)
        return value

    return parse


_positive = _integer(1, 2**63 - 1, message="must be a positive integer")


def _number(low: float, high: float, message: str) -> Parser:
    def parse(value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise BadValue(message)
        if not low <= value <= high:
            raise BadValue(message)
        return float(value)

    return parse


def _boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise BadValue("must be true or false")
    return value


def _choice(choices: type) -> Parser:
    values = [c.value for c in choices]

    def parse(value: Any) -> Any:
        if value not in values:
            raise BadValue(f"must be one of {', '.join(values)}")
        return value

    return parse


def _email(value: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise BadValue("must be an e-mail address")
    if value:
        try:
            validate_email(value)
        except ValidationError:
            raise BadValue("must be an e-mail address") from None
    return value


def _ip(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadValue("must be an IPv4 or IPv6 address")
    try:
        return str(ipaddress.ip_address(value))
    except ValueError:
        raise BadValue("must be an IPv4 or IPv6 address") from None


def _any_list(value: Any) -> list:
    if not isinstance(value, list):
        raise BadValue("must be a list")
    return value


@dataclass(frozen=True)
class SchemaKey:
    parse: Parser
    required: bool = False


# Keys of each section, in export order.
SCHEMA: dict[str, dict[str, SchemaKey]] = {
    "carriers": {
        "code": SchemaKey(_code, True),
        "name": SchemaKey(_string(200, required=True)),
        "kind": SchemaKey(_choice(CarrierKind)),
        "noc_email": SchemaKey(_email),
        "notes": SchemaKey(_string(10_000)),
    },
    "sites": {
        "code": SchemaKey(_code, True),
        "name": SchemaKey(_string(200, required=True)),
        "tier": SchemaKey(_integer(0, 3)),
        "region": SchemaKey(_string(64)),
        "lat": SchemaKey(_number(-90, 90, "must be a number between -90 and 90")),
        "lon": SchemaKey(_number(-180, 180, "must be a number between -180 and 180")),
        "notes": SchemaKey(_string(10_000)),
        "contacts": SchemaKey(_any_list),
    },
    "hosts": {
        "site": SchemaKey(_ref, True),
        "name": SchemaKey(_name, True),
        "address": SchemaKey(_ip),
        "role": SchemaKey(_choice(HostRole)),
    },
    "equipment": {
        "name": SchemaKey(_name, True),
        "site": SchemaKey(_ref),
        "carrier": SchemaKey(_ref),
        "role": SchemaKey(_choice(EquipmentRole)),
        "vendor": SchemaKey(_string(100)),
        "model": SchemaKey(_string(100)),
        "os_version": SchemaKey(_string(100)),
        "location": SchemaKey(_string(200)),
        "linecard_capacity_mbps": SchemaKey(_positive),
        "backplane_capacity_mbps": SchemaKey(_positive),
        "known_reordering": SchemaKey(_boolean),
        "quirks": SchemaKey(_string(10_000)),
    },
    "interfaces": {
        "equipment": SchemaKey(_ref, True),
        "name": SchemaKey(_string(100, required=True), True),
        "if_index": SchemaKey(_integer(0, 2**31 - 1)),
        "speed_mbps": SchemaKey(_positive),
        "mtu": SchemaKey(_integer(68, 65535)),
        "blade": SchemaKey(_string(50)),
        "description": SchemaKey(_string(200)),
    },
    "circuits": {
        "carrier": SchemaKey(_ref, True),
        "cid": SchemaKey(_string(100, required=True), True),
        "a_interface": SchemaKey(_string(201)),
        "z_interface": SchemaKey(_string(201)),
        "capacity_mbps": SchemaKey(_positive),
        "status": SchemaKey(_choice(CircuitStatus)),
        "description": SchemaKey(_string(200)),
    },
    "trunks": {
        "name": SchemaKey(_name, True),
        "members": SchemaKey(_any_list),
        "description": SchemaKey(_string(200)),
    },
    "paths": {
        "src": SchemaKey(_ref, True),
        "dst": SchemaKey(_ref, True),
        "capacity_mbps": SchemaKey(_positive),
        "rtt_ms": SchemaKey(_number(0, 10_000, "must be a number between 0 and 10000")),
        "hops": SchemaKey(_any_list, True),
        "note": SchemaKey(_string(200)),
    },
}
CONTACT_SCHEMA: dict[str, SchemaKey] = {
    "email": SchemaKey(_email, True),
    "role": SchemaKey(_choice(ContactRole)),
    "name": SchemaKey(_string(200)),
}
