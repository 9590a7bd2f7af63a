"""manage.py maintenance_notices: send the site notices due now (what the beat task does every minute)."""

import json

from django.core.management.base import BaseCommand, CommandError
from django.utils.dateparse import parse_datetime

from wanmon.maintenance.site_notices import site_notices_send


class Command(BaseCommand):
    help = "Send the sites' due advance, change, cancellation and 'ended but still degraded' notices (each once)."

    def add_arguments(self, parser):
        parser.add_argument("--now", help="pretend it is this time (ISO 8601 with a zone)")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **options):
        now = None
        if options["now"]:
            now = parse_datetime(options["now"].replace("Z", "+00:00"))
            if now is None or now.tzinfo is None:
                raise CommandError("--now needs an ISO 8601 time with a zone")
        report = site_notices_send(now=now)
        if options["json"]:
            self.stdout.write(json.dumps({"sent": report.sent, "failed": report.failed}, indent=2))
            return
        for kind, ref, recipient in report.sent:
            self.stdout.write(f"sent    {kind:15} {ref} -> {recipient}")
        for kind, ref, recipient, error in report.failed:
            self.stdout.write(f"FAILED  {kind:15} {ref} -> {recipient}: {error}")
        self.stdout.write(f"{len(report.sent)} sent, {len(report.failed)} failed")
