"""manage.py maintenance_import_maildir DIR: every message of a Maildir (or files of a directory), once each."""

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from wanmon.maintenance.imports import maintenance_import_maildir
from wanmon.maintenance.management.commands._common import add_import_options, carrier_option, print_report


class Command(BaseCommand):
    help = (
        "Import the carrier e-mails of a Maildir (new/ and cur/, left untouched) or of a directory of .eml/.ics "
        "files. Run it from cron or after fetchmail: messages already imported are skipped."
    )

    def add_arguments(self, parser):
        parser.add_argument("directory", help="a Maildir or a directory of messages")
        add_import_options(parser)

    def handle(self, *args, **options):
        try:
            report = maintenance_import_maildir(
                directory=options["directory"], carrier=carrier_option(options["carrier"]), parser=options["parser"]
            )
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from None
        print_report(self, report, options["json"])
