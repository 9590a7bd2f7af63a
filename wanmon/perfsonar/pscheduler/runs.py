"""pScheduler runs as the ``http`` archiver posts them, read and checked (:func:`parse_run`) into a :class:`PsRun`,
with every problem named by its place in the body."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

MEASURED_TEST_TYPES: Final = frozenset({"throughput", "latency", "latencybg", "rtt", "trace"})
"""Test types that become records; runs of other types (clock, dns, http, idle...) are acknowledged and ignored."""

MAX_EXCERPT_CHARS: Final = 8000  # records.Text allows 8192
MAX_DIAGS_CHARS: Final = 4000
US_PER_MS: Final = 1000.0
MS_PER_S: Final = 1000.0  # pScheduler writes durations (ISO 8601) and the latency bucket width in seconds

_DURATION = re.compile(
    r"^P(?:(?P<w>\d+(?:\.\d+)?)W)?(?:(?P<d>\d+(?:\.\d+)?)D)?"
    r"(?:T(?:(?P<h>\d+(?:\.\d+)?)H)?(?:(?P<m>\d+(?:\.\d+)?)M)?(?:(?P<s>\d+(?:\.\d+)?)S)?)?\Z"
)
_DURATION_S = {"w": 604800.0, "d": 86400.0, "h": 3600.0, "m": 60.0, "s": 1.0}


def iso_duration_s(text: str) -> float | None:
    """Seconds of an ISO 8601 duration as pScheduler writes them (``PT0.001301S``, ``PT19S``, ``P0D``), or None."""
    if not isinstance(text, str):
        return None
    match = _DURATION.match(text.strip())
    if match is None or text.strip() in ("P", "PT"):
        return None
    return sum(float(value) * _DURATION_S[unit] for unit, value in match.groupdict().items() if value)


def endpoint_normalise(text: Any) -> str | None:
    """The comparable form of a pScheduler endpoint: lower case, no port, no brackets, no trailing dot.

    ``[2001:db8::1]:861`` -> ``2001:db8::1``; ``PS1.Example.org.:443`` -> ``ps1.example.org``; an IPv6
    address without brackets keeps its colons. None for anything that is not a usable name or address.
    """
    if not isinstance(text, str):
        return None
    value = text.strip()
    if value.startswith("["):
        value = value[1:].partition("]")[0]
    elif value.count(":") == 1:  # name:port or IPv4:port (an IPv6 address has two colons or more)
        value = value.partition(":")[0]
    value = value.rstrip(".").lower()
    if not value or len(value) > 255 or any(c.isspace() or ord(c) < 32 for c in value):
        return None
    return value


class BodyProblem(ValueError):
    """A body that is not a usable pScheduler run; ``errors`` are ``{path, message}`` items naming the fields."""

    def __init__(self, errors: list[dict[str, str]]) -> None:
        self.errors = errors
        super().__init__("; ".join(f"{e['path'] or '(body)'}: {e['message']}" for e in errors[:5]))


@dataclass(frozen=True)
class PsRun:
    """What the conversion needs of one archived run, with ``prefix`` ("" or "result." for a plugin input)."""

    run_id: str
    test_type: str
    spec: Mapping[str, Any]
    tool: str | None
    tool_version: str | None
    start: datetime
    duration_s: float | None
    participants: tuple[str, ...]
    result: Mapping[str, Any]
    succeeded: bool
    error: str | None
    diags: str | None
    href: str | None
    repeat_s: float | None
    prefix: str = ""

    @property
    def measured(self) -> bool:
        return self.test_type in MEASURED_TEST_TYPES

    @property
    def reversed(self) -> bool:
        """Throughput with ``reverse``: the dest sends, so data flows dest -> source."""
        return self.test_type == "throughput" and self.spec.get("reverse") is True

    def _candidates(self, keys: Iterable[str], participant: int) -> tuple[str, ...]:
        found = [endpoint_normalise(self.spec.get(k)) for k in keys]
        # A spec without a source (rtt, trace, latency from the local host) means the lead participant.
        if participant < len(self.participants) and not any(found):
            found.append(endpoint_normalise(self.participants[participant]))
        return tuple(dict.fromkeys(f for f in found if f))

    @property
    def source_names(self) -> tuple[str, ...]:
        """The names or addresses the measuring source goes by, most specific first (before ``reverse``)."""
        return self._candidates(("source", "source-node"), 0)

    @property
    def dest_names(self) -> tuple[str, ...]:
        return self._candidates(("dest", "dest-node"), 1)


def common_paths(prefix: str) -> dict[str, str]:
    """Where the fields every record has come from in the body."""
    return {
        "time": f"{prefix}schedule.start",
        "tool": f"{prefix}tool.name",
        "tool_version": f"{prefix}tool.version",
        "error": f"{prefix}result.error",
        "stderr_excerpt": f"{prefix}result.diags",
        "schedule_interval_s": f"{prefix}task.schedule.repeat",
    }


@dataclass(frozen=True)
class RecordSource:
    """One record as plain data (validated later by collectors.records) and where each field came from."""

    data: dict[str, Any]
    paths: dict[str, str] = field(default_factory=dict)  # record field -> body path


def _problem(errors: list[dict[str, str]], path: str, message: str) -> None:
    errors.append({"path": path, "message": message})


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    # Old pScheduler versions wrote local times without a zone; the toolkit runs in UTC by default.
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def parse_run(body: Any) -> PsRun:
    """Check a decoded archiver body and return the run, or raise BodyProblem naming every offending field.

    Also accepted: an archiver plugin's input (``{"data", "result", "attempts"}``), whose ``result`` is the run,
    and the older shapes (``tool`` a plain name, ``participants`` objects with a ``host``).
    """
    errors: list[dict[str, str]] = []
    prefix = ""
    if not isinstance(body, Mapping):
        raise BodyProblem([{"path": "", "message": f"expected a JSON object (a pScheduler run), got {_kind(body)}"}])
    if "id" not in body and isinstance(body.get("result"), Mapping) and "test" in body["result"]:
        body, prefix = body["result"], "result."
    run_id = body.get("id")
    if not isinstance(run_id, str) or not run_id.strip() or len(run_id) > 200 or not _printable(run_id):
        _problem(errors, f"{prefix}id", "required: the run's id (at most 200 printable characters)")
    test = body.get("test")
    test_type, spec = "", {}
    if not isinstance(test, Mapping):
        _problem(errors, f"{prefix}test", "required: an object with `type` and `spec`")
    else:
        test_type = test.get("type")
        if not isinstance(test_type, str) or not test_type:
            _problem(errors, f"{prefix}test.type", "required: the test type (throughput, latency, rtt, trace...)")
            test_type = ""
        spec = test.get("spec")
        if not isinstance(spec, Mapping):
            _problem(errors, f"{prefix}test.spec", "required: the test's specification (an object)")
            spec = {}
    tool, tool_version = _tool(body.get("tool"), prefix, errors)
    run = body.get("run") if isinstance(body.get("run"), Mapping) else {}
    schedule = body.get("schedule") if isinstance(body.get("schedule"), Mapping) else {}
    start = _time(run.get("start-time")) or _time(schedule.get("start"))
    if start is None:
        _problem(errors, f"{prefix}schedule.start", "required: when the run started (ISO 8601 with a time zone)")
    participants = _participants(body.get("participants"), prefix, errors)
    result = body.get("result")
    if not isinstance(result, Mapping):
        _problem(errors, f"{prefix}result", "required: the run's result (an object)")
        result = {}
    if test_type in MEASURED_TEST_TYPES and spec is not None:
        if not endpoint_normalise(spec.get("dest")) and not endpoint_normalise(spec.get("dest-node")):
            _problem(errors, f"{prefix}test.spec.dest", "required: the test's destination (a host name or address)")
        if "source" in spec and not endpoint_normalise(spec.get("source")):
            _problem(errors, f"{prefix}test.spec.source", "expected a host name or address")
        if "source" not in spec and not participants:
            _problem(errors, f"{prefix}participants", "required when test.spec has no source: the lead's name")
    if errors:
        raise BodyProblem(errors)
    succeeded = result.get("succeeded", True) is not False
    error = result.get("error") or run.get("errors")
    if not succeeded and not error:
        error = "the pScheduler run failed (succeeded: false) without saying why"
    diags = result.get("diags") if isinstance(result.get("diags"), str) else None
    duration_s = iso_duration_s(schedule.get("duration")) or iso_duration_s(run.get("duration"))
    task = body.get("task") if isinstance(body.get("task"), Mapping) else {}
    task_schedule = task.get("schedule") if isinstance(task.get("schedule"), Mapping) else {}
    return PsRun(
        run_id=run_id.strip(),
        test_type=test_type,
        spec=spec,
        tool=tool,
        tool_version=tool_version,
        start=start,
        duration_s=duration_s,
        participants=participants,
        result=result,
        succeeded=succeeded and not error,
        error=str(error)[:MAX_DIAGS_CHARS] if error else None,
        diags=diags,
        href=run.get("href") if isinstance(run.get("href"), str) else None,
        repeat_s=iso_duration_s(task_schedule.get("repeat")),
        prefix=prefix,
    )


def _printable(text: str) -> bool:
    """No control characters or lone surrogates (PostgreSQL stores neither NUL nor unpaired surrogates)."""
    return not any(ord(c) < 32 or 0xD800 <= ord(c) <= 0xDFFF or c == "\x7f" for c in text)


def _kind(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}.get(type(value), "a number")


def _tool(value: Any, prefix: str, errors: list) -> tuple[str | None, str | None]:
    if value is None:
        return None, None
    if isinstance(value, str):
        return value, None
    if isinstance(value, Mapping):
        name, version = value.get("name"), value.get("version")
        if name is not None and not isinstance(name, str):
            _problem(errors, f"{prefix}tool.name", "expected the tool's name (a string)")
            name = None
        return name, str(version) if isinstance(version, str | int | float) else None
    _problem(errors, f"{prefix}tool", "expected {name, version} or the tool's name")
    return None, None


def _participants(value: Any, prefix: str, errors: list) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        _problem(errors, f"{prefix}participants", "expected an array of host names")
        return ()
    out = []
    for i, item in enumerate(value):
        host = item.get("host") if isinstance(item, Mapping) else item
        if host is None:  # pScheduler writes null for "the local host"
            out.append("")
        elif isinstance(host, str):
            out.append(host)
        else:
            _problem(errors, f"{prefix}participants[{i}]", "expected a host name")
    return tuple(out)
