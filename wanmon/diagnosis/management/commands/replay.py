"""manage.py replay FILE [--json] [--check] [--keep] [--notify]  (docs/scenario-format.md)."""

import json

from django.core.management.base import BaseCommand, CommandError

from wanmon.diagnosis.replay import ScenarioInvalid, scenario_load, scenario_replay


class Command(BaseCommand):
    help = "Replay a scenario file through the real ingest and diagnosis; print (and optionally check) findings."

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--json", action="store_true", help="print one JSON object (docs/scenario-format.md)")
        parser.add_argument("--check", action="store_true", help="compare with the file's expect block; exit 1")
        parser.add_argument("--keep", action="store_true", help="commit the data and findings (default: roll back)")
        parser.add_argument("--notify", action="store_true", help="with --keep: run the alerting pipeline too")

    def handle(self, *args, **options):
        if options["notify"] and not options["keep"]:
            raise CommandError("--notify needs --keep (notifications are sent for stored findings)")
        try:
            scenario = scenario_load(options["file"])
            result = scenario_replay(scenario, keep=options["keep"])
        except ScenarioInvalid as exc:
            for line in exc.lines():
                self.stderr.write(line)
            raise SystemExit(2) from None
        if options["notify"]:
            try:
                from wanmon.alerts.services import alerts_process_now  # noqa: PLC0415 - optional app
            except ImportError:
                raise CommandError("--notify: the alerting pipeline is not installed in this version") from None
            alerts_process_now(now=result.now)
        if options["json"]:
            self.stdout.write(json.dumps(result.as_json(), indent=2, default=str))
        else:
            self._table(result)
        if options["check"]:
            if result.problems:
                for line in result.problems:
                    self.stderr.write(f"{options['file']}: {line}")
                raise SystemExit(1)
            self.stderr.write(
                f"{options['file']}: check passed ({len(scenario.expect.get('findings') or [])} "
                f"expected, {len(scenario.expect.get('absent') or [])} forbidden)"
            )

    def _table(self, result):
        self.stdout.write(
            f"scenario {result.scenario} as of {result.now:%Y-%m-%dT%H:%M:%SZ}: {len(result.findings)} finding(s)"
        )
        if not result.findings:
            return
        rows = [("CODE", "SEVERITY", "SUBJECT", "RANK", "SUMMARY")]
        for f in result.findings:
            subject = ",".join(f"{k}={v}" for k, v in f.subject.items())
            rows.append((f.code, f.severity, subject, str(f.rank or ""), f.summary[:110]))
        widths = [max(len(r[i]) for r in rows) for i in range(4)]
        for r in rows:
            self.stdout.write("  ".join(r[i].ljust(widths[i]) for i in range(4)) + "  " + r[4])
