"""Shared options and output of the maintenance import commands."""

from __future__ import annotations

import json

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from wanmon.inventory.management.commands._common import carrier_option
from wanmon.inventory.models import Carrier
from wanmon.maintenance.imports import ImportReport


def add_import_options(parser) -> None:
    parser.add_argument("--carrier", help="carrier code (default: from the sender, X-MAINTNOTE-PROVIDER or circuits)")
    parser.add_argument(
        "--parser", help="'bcop', or a circuit-maintenance-parser provider for e-mails (e.g. zayo, colt, gtt)"
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def print_report(command, report: ImportReport, as_json: bool) -> None:
    """Human-readable lines (or JSON); exit status 1 when every carrier notice failed."""
    if as_json:
        command.stdout.write(json.dumps(report.as_dict(), indent=2, default=str))
    else:
        for n in report.notices:
            head = f"{n.origin}: {n.status}" + (" (already imported)" if n.duplicate else "")
            head += f" [{n.parser or 'no parser'}; carrier {n.carrier or 'unknown'}]"
            command.stdout.write(head)
            for p in n.problems:
                command.stdout.write(f"  ! {p}")
            for w in n.windows:
                line = f"  {w.action:9} {w.reference} {w.start} -> {w.end}"
                line += f" {w.status or 'status unchanged'}"
                if w.sequence is not None:
                    line += f" SEQUENCE {w.sequence}"
                if w.reason:
                    line += f" ({w.reason})"
                command.stdout.write(line)
                if w.matched:
                    command.stdout.write(f"            matched: {', '.join(w.matched)}")
                if w.unmatched:
                    command.stdout.write(f"            NOT IN THE INVENTORY: {', '.join(w.unmatched)}")
                for note in w.notes:
                    command.stdout.write(f"            note: {note}")
                if w.doubts:
                    command.stdout.write(f"            HELD FOR REVIEW, times doubtful: {'; '.join(w.doubts)}")
        totals = report.totals()
        command.stdout.write(", ".join(f"{k}: {v}" for k, v in totals.items()))
    if report.notices and all(n.status == "failed" for n in report.notices):
        raise CommandError("nothing could be imported", returncode=1)


class ImportCommand(BaseCommand):
    """An import command: what to import (its positional argument), --carrier/--parser/--json, the report.

    A subclass names its argument in ``add_source_argument`` and imports in ``run_import``; the service's refusal
    (a ValidationError: not a directory, a URL it may not fetch) is the command's error message.
    """

    def add_source_argument(self, parser) -> None:
        raise NotImplementedError

    def run_import(self, options: dict, *, carrier: Carrier | None) -> ImportReport:
        raise NotImplementedError

    def add_arguments(self, parser):
        self.add_source_argument(parser)
        add_import_options(parser)

    def handle(self, *args, **options):
        carrier = carrier_option(options["carrier"])
        try:
            report = self.run_import(options, carrier=carrier)
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from None
        print_report(self, report, options["json"])
