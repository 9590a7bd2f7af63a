"""Command transport for the tool collectors (nuttcp, owping, tracepath, ...).

Every collector that drives an external program talks to it through the
small :class:`CommandRunner` protocol and turns the captured text into numbers
with a pure ``parse`` function. That split lets the parsers be tested against
real captured output (public third-party captures the tests read beside the repository, see
``shared_fixture`` in ``tests/conftest.py``) and the collectors
against :class:`FakeCommandRunner`, without the tools or a network.

Contract of a runner: ``run`` never raises for anything the command does
(missing binary, non-zero exit, timeout, undecodable output). It always
returns a :class:`CommandResult`; ``error`` says what went wrong when the
command could not run to completion. A scheduler cycle must survive one bad
test, so errors are data here, not exceptions.

This module also holds the helpers every collector needs to build record
dicts (:func:`utc_time`, :func:`excerpt`, :func:`endpoints`, :func:`record_head`, :func:`failed_run_record`), so
the collectors share one definition of "time", of "output excerpt", of which end is the source and of what a
record of a failed run holds.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, Protocol, runtime_checkable

# Exit codes a POSIX shell uses for "cannot run": we reuse them so a caller can
# tell "the tool is not installed" apart from "the tool ran and failed".
EXIT_NOT_FOUND = 127
EXIT_NOT_EXECUTABLE = 126

# How long a killed process group gets to flush its pipes after SIGTERM before
# SIGKILL. Short: the command already overran its own deadline.
_KILL_GRACE_S = 2.0

# Default size of excerpts of tool output stored in records. Records travel to
# the central service in batches; a few kB per test keeps the evidence without
# bloating the wire format.
DEFAULT_EXCERPT_CHARS = 2000


@dataclass(frozen=True)
class CommandResult:
    """What one command run produced.

    ``exit_code`` is the process exit status, a negative signal number if the
    process died from a signal (``subprocess`` convention), :data:`EXIT_NOT_FOUND`
    if the program does not exist, or ``None`` when the runner killed it on
    timeout. ``error`` is ``None`` when the command ran to completion (whatever
    its exit status); otherwise a one-line human explanation.
    """

    exit_code: int | None
    stdout: str
    stderr: str
    duration_s: float
    error: str | None = None
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        """True when the command ran to completion and exited 0."""
        return self.error is None and self.exit_code == 0


@runtime_checkable
class CommandRunner(Protocol):
    """Runs one external command and captures its output; never raises."""

    def run(self, argv: list[str], timeout_s: float) -> CommandResult:
        """Run ``argv`` (no shell) for at most ``timeout_s`` seconds."""
        ...


def _decode(data: bytes | None) -> str:
    # Tools print ASCII; "replace" keeps a stray byte from losing the output.
    return (data or b"").decode("utf-8", errors="replace")


def _not_started(program: str, exc: OSError, duration_s: float) -> CommandResult:
    """The result of a command that could not be started: the shell's exit status for it, when there is one."""
    if isinstance(exc, FileNotFoundError):
        exit_code, error = EXIT_NOT_FOUND, f"command not found: {program}"
    elif isinstance(exc, PermissionError):
        exit_code, error = EXIT_NOT_EXECUTABLE, f"command not executable: {program}: {exc.strerror}"
    else:
        exit_code, error = None, f"cannot start {program}: {exc}"
    return CommandResult(exit_code=exit_code, stdout="", stderr="", duration_s=duration_s, error=error)


class SubprocessRunner:
    """Real :class:`CommandRunner` built on :mod:`subprocess`.

    The command runs in its own session (process group) so a timeout can kill
    everything it started: nuttcp forks, and a shell wrapper would otherwise
    leave orphans that keep ports busy for the next test.

    ``env`` entries are added to the inherited environment. ``LC_ALL=C`` is
    forced by default because the parsers expect C-locale numbers ("0.5", not
    "0,5") and English messages.
    """

    def __init__(self, env: Mapping[str, str] | None = None, *, force_c_locale: bool = True) -> None:
        self._env = dict(env or {})
        self._force_c_locale = force_c_locale

    def _environment(self) -> dict[str, str]:
        environment = dict(os.environ)
        if self._force_c_locale:
            environment["LC_ALL"] = "C"
            environment["LANG"] = "C"
        environment.update(self._env)
        return environment

    def run(self, argv: list[str], timeout_s: float) -> CommandResult:
        """Run ``argv``; on timeout kill its process group and report an error."""
        started = time.monotonic()
        try:
            process = subprocess.Popen(  # noqa: S603 - argv list, no shell
                list(argv),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                env=self._environment(),
            )
        except OSError as exc:  # ENOEXEC, E2BIG...: like a missing tool, not our caller's problem
            return _not_started(argv[0], exc, time.monotonic() - started)

        try:
            stdout, stderr = process.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            stdout, stderr = self._kill_group(process)
            return CommandResult(
                exit_code=None,
                stdout=_decode(stdout),
                stderr=_decode(stderr),
                duration_s=time.monotonic() - started,
                error=f"timeout after {timeout_s:g} s: {argv[0]} killed",
                timed_out=True,
            )
        return CommandResult(
            exit_code=process.returncode,
            stdout=_decode(stdout),
            stderr=_decode(stderr),
            duration_s=time.monotonic() - started,
        )

    @staticmethod
    def _kill_group(process: subprocess.Popen[bytes]) -> tuple[bytes, bytes]:
        """SIGTERM then SIGKILL the whole process group; return what it printed."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError):  # the group may already be gone
                os.killpg(process.pid, sig)
            try:
                return process.communicate(timeout=_KILL_GRACE_S)
            except subprocess.TimeoutExpired:
                continue
        # Something outside the group (a daemonised grandchild) still holds the
        # pipes open. Give up on the output rather than block the agent.
        for pipe in (process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()
        # An unkillable child (D state) is reaped by the OS later; the agent moves on.
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=_KILL_GRACE_S)
        return b"", b""


# A scripted response: a fixed result, or a function of (argv, timeout_s).
FakeResponse = CommandResult | Callable[[list[str], float], CommandResult]


@dataclass
class FakeCommandRunner:
    """Scripted :class:`CommandRunner` for tests.

    ``responses`` maps a program name (``argv[0]``'s basename) to either one
    response reused for every call or a list consumed in order. A response is a
    :class:`CommandResult` or a callable ``(argv, timeout_s) -> CommandResult``.
    Every call is recorded in ``calls`` as ``(argv, timeout_s)``.

    A program with no scripted response (or an exhausted list) behaves like a
    missing binary (exit 127) when ``missing_is_not_found`` is true, which is
    how tests simulate "owping is not installed"; otherwise it fails the test.
    """

    responses: Mapping[str, FakeResponse | list[FakeResponse]] = field(default_factory=dict)
    missing_is_not_found: bool = False
    calls: list[tuple[list[str], float]] = field(default_factory=list)
    _cursor: dict[str, int] = field(default_factory=dict, repr=False)

    def run(self, argv: list[str], timeout_s: float) -> CommandResult:
        """Return the next scripted response for ``argv[0]``."""
        self.calls.append((list(argv), timeout_s))
        program = os.path.basename(argv[0])
        scripted = self.responses.get(program)
        response: FakeResponse | None
        if isinstance(scripted, list):
            index = self._cursor.get(program, 0)
            response = scripted[index] if index < len(scripted) else None
            self._cursor[program] = index + 1
        else:
            response = scripted
        if response is None:
            if self.missing_is_not_found:
                return CommandResult(EXIT_NOT_FOUND, "", "", 0.0, error=f"command not found: {argv[0]}")
            raise AssertionError(f"FakeCommandRunner: no scripted response for {argv!r}")
        if callable(response):
            return response(list(argv), timeout_s)
        return response

    def programs_called(self) -> list[str]:
        """Basenames of the programs run so far, in call order."""
        return [os.path.basename(argv[0]) for argv, _ in self.calls]


def completed(stdout: str = "", stderr: str = "", *, exit_code: int = 0, duration_s: float = 0.0) -> CommandResult:
    """Shorthand for a command that ran to completion (used by tests and fakes)."""
    return CommandResult(exit_code=exit_code, stdout=stdout, stderr=stderr, duration_s=duration_s)


def utc_time(value: datetime) -> datetime:
    """Return ``value`` in UTC; naive datetimes are refused (their zone is a guess)."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError("time must be timezone-aware (UTC expected), got a naive datetime")
    return value.astimezone(UTC)


def excerpt(text: str, limit_chars: int = DEFAULT_EXCERPT_CHARS, *, tail: bool = True) -> str | None:
    """Bounded excerpt of tool output for a record; ``None`` for empty output.

    The tail is kept by default: tools print their summary and their fatal
    error last.
    """
    text = text.strip("\n")
    if not text:
        return None
    if len(text) <= limit_chars:
        return text
    return "..." + text[-limit_chars:] if tail else text[:limit_chars] + "..."


def output_fields(result: CommandResult, argv: list[str] | None = None, *, exit_code: bool = True) -> dict[str, object]:
    """What a record keeps of a tool run: its exit status, excerpts of stderr and stdout, the command line.

    Empty output and an absent argv leave their keys out (records omit what is unknown)."""
    fields_: dict[str, object] = {"exit_code": result.exit_code} if exit_code else {}
    for key, text in (("stderr_excerpt", result.stderr), ("raw_excerpt", result.stdout)):
        text_excerpt = excerpt(text)
        if text_excerpt:
            fields_[key] = text_excerpt
    if argv:
        fields_["command"] = shlex.join(argv)
    return fields_


def run_fields(result: CommandResult | None, argv: list[str] | None) -> dict[str, object]:
    """``output_fields`` of a run that may not have happened (an error record): only the command line, if any,
    when the tool never ran."""
    if result is not None:
        return output_fields(result, argv)
    return {"command": shlex.join(argv)} if argv else {}


def endpoints(outbound: bool, *, src_site: str, dst_site: str, host: str) -> dict[str, str]:
    """A record's ``src`` and ``dst`` sites and the far end's host (``dst_host`` or ``src_host``) for a test run at
    ``src_site`` towards ``host`` at ``dst_site``; ``outbound`` when the measured traffic went from here to there."""
    if outbound:
        return {"src": src_site, "dst": dst_site, "dst_host": host}
    return {"src": dst_site, "dst": src_site, "src_host": host}


def plain_number(value: float) -> str:
    """A number for a tool's command line: ``10`` not ``10.0``, ``0.5`` not ``5e-01`` (nuttcp and owping read their
    numbers with sscanf/strtod and take neither an exponent nor Python's float repr)."""
    return format(Decimal(str(value)).normalize(), "f")


def host_part(host: str) -> str:
    """The host of a tool's ``name``, ``name:port``, ``v4:port``, ``[v6]`` or ``[v6]:port`` (a bare IPv6 address, with
    several colons, is itself); a ``[`` without its ``]`` is left as it is."""
    if host.startswith("["):
        return host[1 : host.index("]")] if "]" in host else host
    if host.count(":") == 1:
        return host.split(":", 1)[0]
    return host


def record_head(
    record_type: str, *, tool: str, ends: Mapping[str, str], time: datetime, **fields: object
) -> dict[str, Any]:
    """The fields a tool collector's record starts with: its ``type``, ``time`` (UTC), ``src`` and ``dst`` and the
    far end's host (``ends``, from :func:`endpoints`), the ``tool``, then the record type's own ``fields``."""
    return {"type": record_type, "time": utc_time(time), **ends, "tool": tool, **fields}


def failed_run_record(
    record_type: str,
    *,
    tool: str,
    ends: Mapping[str, str],
    time: datetime,
    error: str,
    command: CommandResult | None = None,
    argv: list[str] | None = None,
    **fields: object,
) -> dict[str, Any]:
    """A record of a test run that measured nothing: :func:`record_head`, ``error`` and what is known of the run
    (:func:`run_fields`). Measurement fields stay absent; the centre takes the error itself as evidence."""
    head = record_head(record_type, tool=tool, ends=ends, time=time, **fields)
    return {**head, "error": error, **run_fields(command, argv)}


def first_matching_line(lines: Iterable[str], needles: Iterable[str]) -> str | None:
    """First line containing any of ``needles`` (stripped), else ``None``."""
    wanted = tuple(needles)
    for line in lines:
        if any(needle in line for needle in wanted):
            return line.strip()
    return None
