"""``manage.py demo_data``: load the demonstration data (idempotent; later stages add to it)."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from wanmon.inventory.topology import TopologyInvalid, topology_import_file

LHC_TOPOLOGY = Path(__file__).resolve().parents[2] / "data" / "lhc-topology.yaml"


class Command(BaseCommand):
    help = "Load the demo data: the LHC Tier-0/Tier-1 topology (wanmon/demo/data/lhc-topology.yaml)."

    def handle(self, *args, **options):
        try:
            report = topology_import_file(LHC_TOPOLOGY)
        except TopologyInvalid as exc:
            raise CommandError(f"{LHC_TOPOLOGY}:\n{exc}") from None
        self.stdout.write(f"LHC topology ({LHC_TOPOLOGY.name}):")
        for line in report.lines():
            self.stdout.write(f"  {line}")
