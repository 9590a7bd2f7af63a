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

The package: ``schema`` (keys, value parsers, errors), ``validation`` (reading and checking a document),
``importer`` (applying it), ``export`` (writing the inventory back). Import from here.
"""

from __future__ import annotations

from wanmon.inventory.topology.export import topology_dump, topology_export
from wanmon.inventory.topology.importer import topology_import, topology_import_file
from wanmon.inventory.topology.schema import (
    CONTACT_SCHEMA,
    SCHEMA,
    SECTIONS,
    ImportReport,
    Item,
    KnownRefs,
    Parser,
    TopologyDocument,
    TopologyError,
    TopologyInvalid,
)
from wanmon.inventory.topology.validation import topology_extract, topology_load_file, topology_parse, topology_validate

__all__ = [
    "CONTACT_SCHEMA",
    "ImportReport",
    "Item",
    "KnownRefs",
    "Parser",
    "SCHEMA",
    "SECTIONS",
    "TopologyDocument",
    "TopologyError",
    "TopologyInvalid",
    "topology_dump",
    "topology_export",
    "topology_extract",
    "topology_import",
    "topology_import_file",
    "topology_load_file",
    "topology_parse",
    "topology_validate",
]
