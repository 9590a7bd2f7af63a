"""``python -m tests.scenarios.noise [--write DIR] [--case NAME ...] [--list]``: inspect the noise corpus."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .corpus import CASES, case_named, write


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.scenarios.noise", description=__doc__)
    parser.add_argument("--write", metavar="DIR", type=Path, help="write the scenario YAML files into DIR")
    parser.add_argument("--case", action="append", default=[], help="only this case (repeatable)")
    parser.add_argument("--list", action="store_true", help="list the cases with their size")
    args = parser.parse_args(argv)
    try:
        cases = [case_named(n) for n in args.case] or list(CASES.values())
    except KeyError as exc:
        print(exc.args[0], file=sys.stderr)
        return 2
    if args.list or not args.write:
        for case in cases:
            kind = "healthy" if case.healthy else "faulty "
            print(f"{kind} {case.name:<42} sites={len(case.spec.sites)} path_days={case.path_days:.0f}")
    if args.write:
        for case in cases:
            path = write(case, args.write)
            print(f"{path} ({path.stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
