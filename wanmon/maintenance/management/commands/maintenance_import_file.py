"""manage.py maintenance_import_file FILE [FILE...]: BCOP iCalendar files (.ics) or carrier e-mails (.eml)."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from wanmon.maintenance.imports import ImportReport, maintenance_import_file
from wanmon.maintenance.management.commands._common import add_import_options, carrier_option, print_report


class Command(BaseCommand):
    help = "Import maintenance notifications from files: BCOP .ics calendars or carrier .eml e-mails."

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="+", help="iCalendar (.ics) or e-mail (.eml) files")
        add_import_options(parser)

    def handle(self, *args, **options):
        carrier = carrier_option(options["carrier"])
        report = ImportReport()
        for name in options["files"]:
            path = Path(name)
            if not path.is_file():
                raise CommandError(f"{name}: no such file")
            report.notifications += maintenance_import_file(
                path=path, carrier=carrier, parser=options["parser"]
            ).notifications
        print_report(self, report, options["json"])
