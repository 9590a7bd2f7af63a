"""manage.py maintenance_import_file FILE [FILE...]: BCOP iCalendar files (.ics) or carrier e-mails (.eml)."""

from wanmon.maintenance.imports import ImportReport, maintenance_import_file
from wanmon.maintenance.management.commands._common import ImportCommand


class Command(ImportCommand):
    help = "Import carriers' maintenance notices from files: BCOP .ics calendars or carrier .eml e-mails."

    def add_source_argument(self, parser) -> None:
        parser.add_argument("files", nargs="+", help="iCalendar (.ics) or e-mail (.eml) files")

    def run_import(self, options, *, carrier) -> ImportReport:
        # One file that cannot be read or imported is reported failed with its reason; the others are imported.
        report = ImportReport()
        for name in options["files"]:
            report.notices += maintenance_import_file(
                path=name, carrier=carrier, parser=options["parser"]
            ).notices
        return report
