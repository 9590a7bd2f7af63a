"""One production-road replay per corpus file per test run, shared by the tests that read it.

``manage.py replay FILE --json --check --step auto`` prints the findings (stdout) and the check against the
file's ``expect`` block (stderr, exit 1 on a failure). Without ``--keep`` it runs in a transaction it rolls back,
so its output depends only on the file: the regression corpus's check (test_replay) and the key numbers read
from the same JSON (test_corpus_numbers) come from one run of the same command instead of two.
"""

from __future__ import annotations

import functools
import hashlib
from io import StringIO
from pathlib import Path

from django.core.management import call_command


@functools.cache
def _replayed(path: str, digest: str) -> tuple[int, str, str]:
    out, err = StringIO(), StringIO()
    try:
        call_command("replay", path, "--json", "--check", "--step", "auto", stdout=out, stderr=err)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


def corpus_replay(path: Path) -> tuple[int, str, str]:
    """(exit code, JSON, check report) of the file's replay at its own test interval; run once per content."""
    return _replayed(str(path), hashlib.sha256(Path(path).read_bytes()).hexdigest())
