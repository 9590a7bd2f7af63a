"""A validated topology document applied to the inventory through its services, in one transaction."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path as FilePath
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from wanmon.inventory import services
from wanmon.inventory.models import Carrier, Equipment, Interface, Site
from wanmon.inventory.topology.schema import (
    SECTIONS,
    ImportReport,
    KnownRefs,
    TopologyDocument,
    TopologyError,
    TopologyInvalid,
)
from wanmon.inventory.topology.validation import join_location, topology_load_file, topology_validate

# --- import ------------------------------------------------------------------------------------------------------


def _messages(exc: ValidationError) -> str:
    if hasattr(exc, "error_dict"):
        return "; ".join(
            msg if key == "__all__" else f"{key}: {msg}" for key, msgs in exc.message_dict.items() for msg in msgs
        )
    return "; ".join(exc.messages)


class _Applier:
    """Applies a validated document through the services, resolving names to the objects just written."""

    def __init__(self, doc: TopologyDocument, as_of: datetime | None, replace_paths: bool = True):
        self.doc = doc
        self.as_of = as_of
        self.replace_paths = replace_paths
        self.report = ImportReport()

    def run(self) -> ImportReport:
        # Paths come last and depend on nothing after them: every path refused is reported, not only the first.
        refused: list[TopologyError] = []
        for section in SECTIONS:
            for item in self.doc.sections[section]:
                try:
                    change = getattr(self, f"_apply_{section}")(item.values)
                except ValidationError as exc:
                    error = TopologyError(join_location(self.doc.prefix, item.path), _messages(exc))
                    if section != "paths":
                        raise TopologyInvalid([error]) from None
                    refused.append(error)
                    continue
                self.report.add(section, change)
        if refused:
            raise TopologyInvalid(refused)
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
            src=self._site(values["src"]),
            dst=self._site(values["dst"]),
            hops=hops,
            at=self.as_of,
            replace=self.replace_paths,
            **extra,
        )[1]


def topology_import(
    topology: Any,
    *,
    prefix: str = "",
    as_of: datetime | None = None,
    dry_run: bool = False,
    replace_paths: bool = True,
) -> ImportReport:
    """Validate ``topology`` against itself and the database, then apply it in one transaction.

    Raises :class:`TopologyInvalid` (and changes nothing) when anything is wrong. ``as_of`` is the
    start of any new path version (default: now; see ``services.path_set`` for first versions).
    ``dry_run`` does everything and rolls back, to report what an import would change.
    ``replace_paths=False`` refuses (TopologyInvalid) a path whose route or capacity differs from the
    version in force instead of replacing it: the document may add paths, not re-route the ones in force.
    """
    with transaction.atomic():
        doc = topology_validate(topology, prefix=prefix, known=KnownRefs.from_database())
        report = _Applier(doc, as_of, replace_paths).run()
        if dry_run:
            transaction.set_rollback(True)
    return report


def topology_import_file(
    filename: str | FilePath, *, as_of: datetime | None = None, dry_run: bool = False
) -> ImportReport:
    """:func:`topology_import` of a topology file or of a scenario file's ``topology`` block."""
    topology, prefix = topology_load_file(filename)
    return topology_import(topology, prefix=prefix, as_of=as_of, dry_run=dry_run)
