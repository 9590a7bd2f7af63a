"""manage.py replay FILE [--json] [--check] [--keep] [--notify] [--step MIN] [--since TIME]
(docs/scenario-format.md#replay)."""

import json
from datetime import timedelta

from django.core.management.base import BaseCommand, CommandError

from wanmon.diagnosis.replay import (
    DEFAULT_STEP,
    ScenarioInvalid,
    parse_time,
    scenario_load,
    scenario_replay,
    shortest_test_interval,
)


class Command(BaseCommand):
    help = (
        "Replay a scenario file through the real ingest and production's diagnosis cycle, every minute of its "
        "timeline; print (and optionally check) every finding opened on the way."
    )

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--json", action="store_true", help="print one JSON object (docs/scenario-format.md)")
        parser.add_argument(
            "--check", action="store_true", help="compare every finding opened with the file's expect block; exit 1"
        )
        parser.add_argument("--keep", action="store_true", help="commit the data and findings (default: roll back)")
        parser.add_argument("--notify", action="store_true", help="run the alerting after every cycle (sends e-mail)")
        parser.add_argument(
            "--step",
            default=str(DEFAULT_STEP.total_seconds() / 60),
            help="minutes between two cycles (default 1, as the beat; coarser is faster and sees less), or 'auto': "
            "the scenario's shortest test interval",
        )
        parser.add_argument(
            "--since",
            help="run the cycles from this time on (ISO 8601 with a zone); what comes before is history only",
        )

    def handle(self, *args, **options):
        step = None
        if options["step"] != "auto":
            try:
                step = timedelta(minutes=float(options["step"]))
            except (TypeError, ValueError, OverflowError):
                step = None
            if step is None or not step > timedelta(0) or step > timedelta(days=7):
                raise CommandError(
                    f"--step: a number of minutes above 0 (at most a week) or 'auto', not {options['step']!r}"
                )
        since = None
        if options["since"]:
            since = parse_time(options["since"])
            if since is None:
                raise CommandError(f"--since: not an ISO 8601 time with a zone: {options['since']!r}")
        after_step = None
        notify = options["notify"]
        if notify and not options["keep"]:
            raise CommandError("--notify needs --keep (notifications are sent for stored findings)")
        if notify:
            try:
                from wanmon.alerts.selectors import incidents_of_findings  # noqa: PLC0415 - optional app
                from wanmon.alerts.services import alerts_process_now  # noqa: PLC0415 - optional app
            except ImportError:
                raise CommandError("--notify: the alerting pipeline is not installed in this version") from None

            def after_step(at):
                # the timers run in the scenario's time, as production's beat would have run them
                alerts_process_now(now=at, flush=False)

        try:
            scenario = scenario_load(options["file"])
            step = step or shortest_test_interval(scenario.records)
            result = scenario_replay(
                scenario,
                keep=options["keep"],
                step=step,
                since=since,
                after_step=after_step,
                incidents=incidents_of_findings if notify else None,
            )
        except ScenarioInvalid as exc:
            for line in exc.lines():
                self.stderr.write(line)
            raise SystemExit(2) from None
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
                f"{options['file']}: check passed over {result.steps} cycles "
                f"({len(scenario.expect.get('findings') or [])} expected, "
                f"{len(scenario.expect.get('absent') or [])} forbidden at every step)"
            )

    def _table(self, result):
        self.stdout.write(
            f"scenario {result.scenario} as of {result.now:%Y-%m-%dT%H:%M:%SZ}: {result.steps} cycle(s) every "
            f"{result.step_s / 60:g} min, {len(result.findings)} finding(s) opened"
        )
        if not result.findings:
            return
        rows = [("CODE", "SEVERITY", "SUBJECT", "RANK", "OPENED", "STATUS", "SUMMARY")]
        for f in result.findings:
            subject = ",".join(f"{k}={v}" for k, v in f.subject.items())
            rows.append(
                (
                    f.code,
                    f.worst_severity,
                    subject,
                    str(f.rank or ""),
                    f"{f.first_seen_at:%Y-%m-%dT%H:%MZ}",
                    f.status,
                    f.summary[:100],
                )
            )
        widths = [max(len(r[i]) for r in rows) for i in range(6)]
        for r in rows:
            self.stdout.write("  ".join(r[i].ljust(widths[i]) for i in range(6)) + "  " + r[6])
