"""manage.py maintenance_import_maildir DIR: every message of a Maildir (or files of a directory), once each."""

from wanmon.maintenance.imports import ImportReport, maintenance_import_maildir
from wanmon.maintenance.management.commands._common import ImportCommand


class Command(ImportCommand):
    help = (
        "Import the carrier e-mails of a Maildir (new/ and cur/, left untouched) or of a directory of .eml/.ics "
        "files. Run it from cron or after fetchmail: messages already imported are skipped."
    )

    def add_source_argument(self, parser) -> None:
        parser.add_argument("directory", help="a Maildir or a directory of messages")

    def run_import(self, options, *, carrier) -> ImportReport:
        return maintenance_import_maildir(directory=options["directory"], carrier=carrier, parser=options["parser"])
