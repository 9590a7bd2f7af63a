"""``manage.py import_topology FILE``: import a topology file or a scenario file's topology block."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from wanmon.inventory.management.commands._common import parse_aware_datetime
from wanmon.inventory.topology import TopologyInvalid, topology_import_file


class Command(BaseCommand):
    help = (
        "Import the topology document of FILE (a bare topology, or a scenario file whose `topology` block is "
        "used; see docs/scenario-format.md). Idempotent: importing twice changes nothing. On any error, prints "
        "'FILE: path: message' lines, changes nothing and exits with status 2."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="YAML or JSON file")
        parser.add_argument(
            "--as-of", dest="as_of", help="start time of new path versions (ISO 8601 with zone; default: now)"
        )
        parser.add_argument("--dry-run", action="store_true", help="validate and report, then roll back")

    def handle(self, *args, **options):
        filename = options["file"]
        as_of = parse_aware_datetime(options["as_of"], option="--as-of")
        try:
            report = topology_import_file(filename, as_of=as_of, dry_run=options["dry_run"])
        except FileNotFoundError:
            raise CommandError(f"{filename}: no such file", returncode=2) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"{filename}: cannot read: {exc}", returncode=2) from None
        except TopologyInvalid as exc:
            for error in exc.errors:
                self.stderr.write(f"{filename}: {error}")
            count = len(exc.errors)
            raise CommandError(
                f"{filename}: {count} error{'s' if count != 1 else ''}; nothing was imported", returncode=2
            ) from None
        for line in report.lines():
            self.stdout.write(line)
        if options["dry_run"]:
            self.stdout.write("dry run: nothing was changed")
        elif not report.changed:
            self.stdout.write("no changes")
