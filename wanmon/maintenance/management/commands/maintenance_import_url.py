"""manage.py maintenance_import_url URL: fetch a carrier's iCalendar feed (or one carrier notice) and import it."""

from wanmon.maintenance.imports import ImportReport, maintenance_import_url
from wanmon.maintenance.management.commands._common import ImportCommand


class Command(ImportCommand):
    help = "Fetch an iCalendar feed or file over http(s) and import its maintenance windows."

    def add_source_argument(self, parser) -> None:
        parser.add_argument("url", help="http:// or https:// URL")

    def run_import(self, options, *, carrier) -> ImportReport:
        return maintenance_import_url(
            url=options["url"], carrier=carrier, parser=options["parser"],
            vouched_by="imported with manage.py maintenance_import_url",
        )
