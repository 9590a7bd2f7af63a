"""manage.py maintenance_export [--site CODE | --carrier CODE] [-o FILE]: the calendar as BCOP iCalendar."""

from django.core.management.base import BaseCommand

from wanmon.inventory.management.commands._common import carrier_option, site_option
from wanmon.maintenance.constants import FEED_PAST_DAYS
from wanmon.maintenance.feeds import maintenance_export_windows
from wanmon.maintenance.ical import calendar_render


class Command(BaseCommand):
    help = "Write the maintenance calendar (all, one site's or one carrier's) as a BCOP iCalendar file."

    def add_arguments(self, parser):
        parser.add_argument("--site")
        parser.add_argument("--carrier")
        parser.add_argument("--past-days", type=int, default=FEED_PAST_DAYS)
        parser.add_argument("-o", "--output", help="file (default: standard output)")

    def handle(self, *args, **options):
        site, carrier = site_option(options["site"]), carrier_option(options["carrier"])
        windows = maintenance_export_windows(site=site, carrier=carrier, past_days=options["past_days"])
        name = "wanmon maintenance" + (f" - {site.code}" if site else f" - {carrier.code}" if carrier else "")
        body = calendar_render(windows, name=name)
        if options["output"]:
            with open(options["output"], "wb") as fh:
                fh.write(body)
            self.stderr.write(f"{len(windows)} windows written to {options['output']}")
        else:
            self.stdout.write(body.decode(), ending="")
