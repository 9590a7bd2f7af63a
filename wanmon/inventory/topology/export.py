"""The inventory written as a topology document, deterministically (export -> import -> export is
byte-identical)."""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

import yaml

from wanmon.inventory import selectors
from wanmon.inventory.choices import CarrierKind, CircuitStatus, HostRole
from wanmon.inventory.labels import label_join
from wanmon.inventory.models import Carrier, Circuit, Equipment, Host, Interface, Site, Trunk
from wanmon.inventory.topology.schema import SECTIONS

# --- export ------------------------------------------------------------------------------------------------------


def _put(entry: dict, key: str, value: Any, default: Any = "") -> None:
    """Add an optional key only when it differs from its default (so minimal documents stay minimal)."""
    if value is not None and value != default:
        entry[key] = value


def _put_fields(entry: dict, obj: Any, keys: tuple[str, ...], defaults: dict[str, Any] | None = None) -> None:
    """``_put`` of each attribute ``keys`` of ``obj``, in order; ``defaults`` gives the defaults other than ""."""
    for key in keys:
        _put(entry, key, getattr(obj, key), (defaults or {}).get(key, ""))


_EQUIPMENT_FIELDS = (
    "vendor", "model", "os_version", "location", "linecard_capacity_mbps", "backplane_capacity_mbps",
    "known_reordering", "quirks",
)


def _interface_label(interface: Interface | None) -> str | None:
    return label_join(interface.equipment.name, interface.name) if interface is not None else None


def topology_export(*, at: datetime | None = None) -> dict[str, list[dict]]:
    """The whole inventory as a topology document (paths: the versions in force at ``at``, default now)."""
    doc: dict[str, list[dict]] = {}

    carriers = []
    for c in Carrier.objects.order_by("code"):
        entry = {"code": c.code, "name": c.name}
        _put_fields(entry, c, ("kind", "noc_email", "notes"), {"kind": CarrierKind.OTHER})
        carriers.append(entry)
    doc["carriers"] = carriers

    sites = []
    for s in Site.objects.order_by("code").prefetch_related("contacts"):
        entry = {"code": s.code, "name": s.name}
        _put_fields(entry, s, ("tier", "region", "lat", "lon", "notes"))
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
        _put_fields(entry, h, ("address", "role"), {"role": HostRole.TEST})
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
        _put_fields(entry, e, _EQUIPMENT_FIELDS, {"known_reordering": False})
        equipment.append(entry)
    doc["equipment"] = equipment

    interfaces = []
    for i in Interface.objects.select_related("equipment").order_by("equipment__name", "name"):
        entry = {"equipment": i.equipment.name, "name": i.name}
        _put_fields(entry, i, ("if_index", "speed_mbps", "mtu", "blade", "description"))
        interfaces.append(entry)
    doc["interfaces"] = interfaces

    circuits = []
    for c in Circuit.objects.select_related(
        "carrier", "a_interface__equipment", "z_interface__equipment"
    ).order_by("carrier__code", "cid"):
        entry = {"carrier": c.carrier.code, "cid": c.cid}
        _put(entry, "a_interface", _interface_label(c.a_interface))
        _put(entry, "z_interface", _interface_label(c.z_interface))
        _put_fields(entry, c, ("capacity_mbps", "status", "description"), {"status": CircuitStatus.ACTIVE})
        circuits.append(entry)
    if circuits:  # inventory-only: written when used, so plain documents stay plain
        doc["circuits"] = circuits

    trunks = []
    for t in Trunk.objects.prefetch_related("members__equipment").order_by("name"):
        entry = {"name": t.name, "members": sorted(_interface_label(m) for m in t.members.all())}
        _put_fields(entry, t, ("description",))
        trunks.append(entry)
    doc["trunks"] = trunks

    paths = []
    for p in selectors.path_list_valid_at(at=at):
        entry = {"src": p.src.code, "dst": p.dst.code}
        _put_fields(entry, p, ("capacity_mbps", "rtt_ms"))
        entry["hops"] = selectors.path_hops_labels(p)
        _put(entry, "note", p.note)
        paths.append(entry)
    doc["paths"] = paths

    return {key: doc[key] for key in SECTIONS if key in doc}


# Characters a YAML reader takes for a line break or drops (CR, NEL, U+2028, U+2029, BOM) or that no plain or
# single-quoted scalar may hold (control characters): a name holding one (a device's ifName is whatever its
# operator typed) is written double-quoted with escapes (\L, \N, \x01), and reads back as it was.
_NEEDS_ESCAPES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff]")


class _TopologyDumper(yaml.SafeDumper):
    """The safe dumper, with names that hold line separators or control characters double-quoted."""


def _represent_str(dumper: yaml.SafeDumper, text: str):
    if _NEEDS_ESCAPES.search(text):
        return dumper.represent_scalar("tag:yaml.org,2002:str", text, style='"')
    return dumper.represent_str(text)


_TopologyDumper.add_representer(str, _represent_str)


def topology_dump(document: dict, *, fmt: str = "yaml") -> str:
    """Serialise a document deterministically (stable key order, no flow style, UTF-8 text)."""
    if fmt == "json":
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    return yaml.dump(document, Dumper=_TopologyDumper, sort_keys=False, default_flow_style=False,
                     allow_unicode=True, width=4096)
