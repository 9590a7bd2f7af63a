"""manage.py maintenance_import_url URL: fetch a carrier's iCalendar feed (or one notification) and import it."""

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from wanmon.maintenance.imports import maintenance_import_url
from wanmon.maintenance.management.commands._common import add_import_options, carrier_option, print_report


class Command(BaseCommand):
    help = "Fetch an iCalendar feed or file over http(s) and import its maintenance windows."

    def add_arguments(self, parser):
        parser.add_argument("url", help="http:// or https:// URL")
        add_import_options(parser)

    def handle(self, *args, **options):
        try:
            report = maintenance_import_url(
                url=options["url"], carrier=carrier_option(options["carrier"]), parser=options["parser"],
                vouched_by="imported with manage.py maintenance_import_url",
            )
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from None
        print_report(self, report, options["json"])
