"""``scripts/lab SCENARIO``: one scenario by hand against a running centre (the demo), its findings stored.

Prints what was measured against the physics' prediction, the honesty figures and the findings, and runs the
diagnosis once with storing (as the beat does every minute), so the dashboard shows the scenario at once.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    from tests.lab.scenarios import SCENARIOS

    parser = argparse.ArgumentParser(prog="scripts/lab", description="run one lab scenario against the centre")
    parser.add_argument("scenario", nargs="?", help=", ".join(SCENARIOS))
    parser.add_argument("--list", action="store_true", help="list the scenarios")
    parser.add_argument("--centre", required=True, help="the centre's URL as agents reach it on loopback")
    parser.add_argument("--ca-file", type=Path, help="CA bundle when the centre speaks HTTPS")
    parser.add_argument("--keep", type=Path, help="keep the run's files (agent logs, emulator status) here")
    args = parser.parse_args(argv)
    if args.list or not args.scenario:
        for s in SCENARIOS.values():
            print(f"{s.name:22} {s.note} ({s.run_s:g} s)")  # noqa: T201
        return 0 if args.list else 2
    if args.scenario.upper() not in SCENARIOS:
        print(f"scripts/lab: unknown scenario {args.scenario!r}; one of {', '.join(SCENARIOS)}", file=sys.stderr)  # noqa: T201
        return 2
    from tests.lab import netns

    reason = netns.unavailable_reason()
    if reason:
        print(f"scripts/lab: {reason}", file=sys.stderr)  # noqa: T201
        return 2

    import django

    django.setup()
    from django.utils import timezone

    from tests.lab.runner import run_scenario
    from wanmon.diagnosis.shards import diagnosis_cycle_run

    s = SCENARIOS[args.scenario.upper()]
    work = args.keep or Path(tempfile.mkdtemp(prefix=f"wanmon-lab-{s.code.lower()}-"))
    print(f"running {s.name} ({s.note}) for {s.run_s:g} s; files in {work}", file=sys.stderr)  # noqa: T201
    outcome = run_scenario(s, work, centre_url=args.centre, ca_file=args.ca_file,
                           agent_suffix=f"-{int(time.time())}")  # fmt: skip
    diagnosis_cycle_run(now=timezone.now())
    print(outcome.report())  # noqa: T201
    print(f"dashboard: {args.centre}/ (sites {s.site_a}, {s.site_b}; path {s.site_a} -> {s.site_b})")  # noqa: T201
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
