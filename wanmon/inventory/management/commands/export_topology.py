"""``manage.py export_topology [FILE]``: write the inventory as a topology document."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand

from wanmon.inventory.management.commands._common import parse_aware_datetime
from wanmon.inventory.topology import topology_dump, topology_export


class Command(BaseCommand):
    help = (
        "Write the inventory in the topology format of docs/scenario-format.md (the paths in force at --at, default "
        "now) to FILE or standard output. Deterministic: export -> import -> export is byte-identical."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", nargs="?", help="output file (default: standard output)")
        parser.add_argument("--at", help="export the path versions in force at this time (ISO 8601 with zone)")
        parser.add_argument("--format", choices=["yaml", "json"], default=None,
                            help="default: json for *.json files, yaml otherwise")

    def handle(self, *args, **options):
        at = parse_aware_datetime(options["at"], option="--at")
        filename = options["file"]
        fmt = options["format"] or ("json" if filename and filename.endswith(".json") else "yaml")
        text = topology_dump(topology_export(at=at), fmt=fmt)
        if filename and filename != "-":
            Path(filename).write_text(text, encoding="utf-8")
        else:
            self.stdout.write(text, ending="")
