"""Constrained field types, limits and counter widths of the wire schema, error items, time helpers."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Final, Literal, TypedDict, overload

from msgspec import Meta

SCHEMA_VERSION: Final = 2
"""Bump when a change would make a record of one side invalid or different on the other side.

1: the records of docs/scenario-format.md. 2: path test records may carry ``job_id`` (a test on demand,
docs/ondemand.md). A batch says the lowest version its records need (:func:`schema_version_needed`), so an agent
of this version still uploads its scheduled records to a centre that knows only version 1.
"""

JOB_ID_SCHEMA_VERSION: Final = 2
"""The first schema version whose path test records may carry ``job_id``."""

MIN_TIME: Final = datetime(2000, 1, 1, tzinfo=UTC)
MAX_TIME: Final = datetime(2100, 1, 1, tzinfo=UTC)  # sanity bound when no `now` is given
MAX_FUTURE_SKEW: Final = timedelta(minutes=5)
"""How far ahead of the receiver's clock a timestamp may be (agent clocks drift, NTP may lag)."""

MAX_REPORTED_ERRORS: Final = 100
"""A 400 response lists at most this many errors, then says how many more there were."""

INT64_MAX: Final = 2**63 - 1  # plain counts fit a PostgreSQL bigint
MAX_RATE_BPS: Final = 1e13  # 10 Tb/s: above any interface or test this system will see
MAX_DELAY_MS: Final = 3.6e6  # one hour

# Counter widths of the SNMP schema (IF-MIB): collectors/counters.py computes rates with these.
COUNTER32_MODULUS: Final = 2**32
COUNTER64_MODULUS: Final = 2**64
COUNTER32_MAX: Final = COUNTER32_MODULUS - 1
COUNTER64_MAX: Final = COUNTER64_MODULUS - 1
# sysUpTime and ifCounterDiscontinuityTime are TimeTicks: hundredths of a second, 32 bits,
# so sysUpTime wraps after 2^32 / 100 s = 497.1 days of uptime.
TICKS_PER_S: Final = 100
TIMETICKS_MODULUS: Final = 2**32
TIMETICKS_MAX: Final = TIMETICKS_MODULUS - 1

# --- constrained field types -------------------------------------------------------------------
# Patterns end in \Z, not $: `$` also matches before a trailing newline ("CERN\n").
# Lone UTF-16 surrogates (\ud800-\udfff) cannot be stored as UTF-8 text in PostgreSQL.
_CONTROL = r"\x00-\x1f\x7f\ud800-\udfff"
SITE_CODE_PATTERN: Final = r"^[A-Za-z0-9][A-Za-z0-9_.-]*\Z"
# No ':' in equipment names: docs/scenario-format.md writes interfaces as "equipment:interface".
_EQUIPMENT_PATTERN = rf"^[^\s:{_CONTROL}]+\Z"
_TOKEN_PATTERN = rf"^[^\s{_CONTROL}]+\Z"  # host names, addresses, traceroute hops
_IF_NAME_PATTERN = rf"^[^\s{_CONTROL}](?:[^{_CONTROL}]*[^\s{_CONTROL}])?\Z"  # inner spaces allowed (ifDescr)
_LABEL_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.+-]*\Z"  # tool names, versions, congestion control
_TEXT_PATTERN = r"^[^\x00\ud800-\udfff]*\Z"  # free text: newlines and tabs allowed
_UUID_PATTERN = r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\Z"

PATTERN_HELP: Final = {
    SITE_CODE_PATTERN: "a site code: letters, digits, '_', '.' and '-', starting with a letter or digit",
    _EQUIPMENT_PATTERN: "a name without spaces, ':' or control characters",
    _TOKEN_PATTERN: "a name or address without spaces or control characters",
    _IF_NAME_PATTERN: "a name without control characters or leading/trailing spaces",
    _LABEL_PATTERN: "letters, digits, '_', '.', '+' and '-', starting with a letter or digit",
    _TEXT_PATTERN: "text without NUL characters or lone surrogates",
    _UUID_PATTERN: "a UUID such as 6f1c0c8e-1b7e-4c8a-9a53-2f3f1c1d9e01",
}


class Pattern:
    """``Annotated`` marker of a string field whose pattern is checked after decoding (``_pattern_problems``).

    msgspec would run the regular expression on every value while decoding; a batch of 5 000 SNMP
    samples names the same hundred interfaces fifty times, so the ingest checks each distinct value
    once instead (a third of the decoding time). The published JSON schema keeps the pattern.
    """

    __slots__ = ("help", "regex")

    def __init__(self, pattern: str) -> None:
        self.regex = re.compile(pattern)
        self.help = PATTERN_HELP[pattern]


def _name(pattern: str, *, min_length: int = 0, max_length: int, description: str | None = None) -> Any:
    meta = Meta(
        min_length=min_length, max_length=max_length, description=description, extra_json_schema={"pattern": pattern}
    )
    return Annotated[str, meta, Pattern(pattern)]


SiteCode = _name(SITE_CODE_PATTERN, min_length=1, max_length=32, description="site code")
EquipmentName = _name(_EQUIPMENT_PATTERN, min_length=1, max_length=100)  # the inventory's equipment names
InterfaceName = _name(_IF_NAME_PATTERN, min_length=1, max_length=128)
HostName = _name(_TOKEN_PATTERN, min_length=1, max_length=255, description="DNS name or address")
Label = _name(_LABEL_PATTERN, min_length=1, max_length=64)
ShortText = _name(_IF_NAME_PATTERN, min_length=1, max_length=128)
Text = _name(_TEXT_PATTERN, max_length=8192)
# Once per batch: msgspec checks the pattern itself.
AgentVersion = Annotated[str, Meta(min_length=1, max_length=64, pattern=_LABEL_PATTERN)]
BatchId = Annotated[str, Meta(pattern=_UUID_PATTERN, description="UUID, the idempotency key of the batch")]

UtcDatetime = Annotated[datetime, Meta(tz=True, description="RFC 3339 time with a zone; stored in UTC")]
Count = Annotated[int, Meta(ge=0, le=INT64_MAX)]
Counter32 = Annotated[int, Meta(ge=0, le=COUNTER32_MAX)]
# msgspec bounds must fit an int64, so the 2^64 - 1 upper bound is checked in _snmp_problems.
Counter64 = Annotated[int, Meta(ge=0, description="0..2^64-1")]
TimeTicks = Annotated[int, Meta(ge=0, le=TIMETICKS_MAX, description="hundredths of a second")]
RateBps = Annotated[float, Meta(ge=0, le=MAX_RATE_BPS)]
DurationS = Annotated[float, Meta(gt=0, le=86400)]
IntervalS = Annotated[float, Meta(gt=0, le=7 * 86400)]
# One-way delays may be negative: that is how unsynchronised clocks show (CLOCK_UNSYNC).
DelayMs = Annotated[float, Meta(ge=-MAX_DELAY_MS, le=MAX_DELAY_MS)]
PositiveMs = Annotated[float, Meta(ge=0, le=MAX_DELAY_MS)]
SizeBytes = Annotated[int, Meta(ge=0, le=2**40)]  # socket buffers and windows; 1 TiB is absurd already
MssBytes = Annotated[int, Meta(ge=1, le=65535)]
PacketBytes = Annotated[int, Meta(ge=1, le=65535)]
PmtuBytes = Annotated[int, Meta(ge=68, le=65535)]
MtuBytes = Annotated[int, Meta(ge=68, le=65536)]  # Linux loopback reports 65536
Streams = Annotated[int, Meta(ge=1, le=4096)]
JobId = Annotated[int, Meta(ge=1, le=INT64_MAX, description="the centre's test job this record answers")]
ExitCode = Annotated[int, Meta(ge=-(2**31), le=2**31 - 1)]  # negative: killed by a signal
IfIndex = Annotated[int, Meta(ge=1, le=2**31 - 1)]
EngineBoots = Annotated[int, Meta(ge=0, le=2**31 - 1)]
SpeedMbps = Annotated[float, Meta(ge=0, le=1e7, description="ifHighSpeed, Mbit/s; 0 = unknown")]
NicSpeedMbps = Annotated[
    float, Meta(gt=0, le=1e7, description="link speed of the host's test interface (/sys/class/net/IF/speed), Mbit/s")
]
SysctlTriple = Annotated[list[Annotated[int, Meta(ge=0, le=2**40)]], Meta(min_length=3, max_length=3)]
Hop = Annotated[str, Meta(min_length=1, max_length=255, pattern=_TOKEN_PATTERN)]

OperStatus = Literal["up", "down", "testing", "unknown", "dormant", "notPresent", "lowerLayerDown"]
AdminStatus = Literal["up", "down", "testing"]


class ErrorItem(TypedDict):
    """One validation error: where (``records[3].throughput_bps``; ``""`` = whole document) and what."""

    path: str
    message: str


class RecordError(ValueError):
    """Invalid input. ``errors`` lists every problem found, each with its path."""

    def __init__(self, errors: list[ErrorItem]) -> None:
        self.errors = errors
        shown = "; ".join(f"{e['path'] or '(document)'}: {e['message']}" for e in errors[:5])
        more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
        super().__init__(f"{len(errors)} validation error(s): {shown}{more}")


class TooManyRecordsError(RecordError):
    """More records than the receiver accepts in one batch (refused before any record is decoded).

    Not a problem of any record: an agent splits such a batch (HTTP 413), it does not park it.
    """


# --- error items and times ---------------------------------------------------------------------


def join_location(prefix: str, rest: str) -> str:
    """records[3] + .x -> records[3].x; "" + .x -> x; prefix + [2] -> prefix[2]."""
    if not prefix:
        return rest.removeprefix(".")
    return prefix + rest


def error_item(path: str, message: str) -> ErrorItem:
    return {"path": path, "message": message}


def capped_errors(errors: list[ErrorItem]) -> list[ErrorItem]:
    if len(errors) <= MAX_REPORTED_ERRORS:
        return errors
    hidden = len(errors) - MAX_REPORTED_ERRORS
    return [*errors[:MAX_REPORTED_ERRORS], error_item("", f"... and {hidden} more errors not shown")]


def to_utc(moment: datetime) -> datetime:
    """The same instant in UTC. A naive datetime is returned as is, never taken as local time
    (astimezone would): the schema then refuses it. Year 1 or 9999 with an offset cannot be
    converted and is left for the time-window check to refuse."""
    if not isinstance(moment, datetime) or moment.utcoffset() is None:
        return moment
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        return moment


def require_aware(now: datetime) -> None:
    if now.tzinfo is None or now.utcoffset() is None:
        raise TypeError(f"`now` must be a timezone-aware datetime, got {now!r}")


@overload
def iso_z(moment: datetime, timespec: str = "auto", *, utc: bool = False) -> str: ...
@overload
def iso_z(moment: None, timespec: str = "auto", *, utc: bool = False) -> None: ...


def iso_z(moment: datetime | None, timespec: str = "auto", *, utc: bool = False) -> str | None:
    """The one writer of times as ISO 8601 text: ``moment`` with a UTC offset written ``Z`` as on the wire
    (``2026-03-01T11:00:00Z``), ``timespec`` as :meth:`datetime.isoformat`'s; None stays None (a time not known
    yet). With ``utc`` it is first brought to UTC (a naive time is taken as UTC), as for every time wanmon writes
    into files, links and JSON; without, other offsets stay as they are (the wire's errors quote a time as it was
    sent, which may not even have a UTC equivalent: year 1 at +01:00)."""
    if moment is None:
        return None
    if utc:
        moment = moment.replace(tzinfo=UTC) if moment.utcoffset() is None else moment.astimezone(UTC)
    return moment.isoformat(timespec=timespec).replace("+00:00", "Z")
