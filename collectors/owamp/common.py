"""What the owamp programs (owping, twping, owstats, powstream) share: units, the layout of their text,
``-M`` and ``-R`` reports, TTLs, and their error messages on stderr."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal, InvalidOperation

from collectors.delay import round_ms
from collectors.ntp import NTP_FRACTION, ntp_to_datetime

# Senders set TTL 255; the receiver's TTL gives the hop count (owping_report.man).
OWAMP_SEND_TTL = 255

MS_PER_UNIT = {"s": Decimal(1000), "ms": Decimal(1), "us": Decimal("0.001"), "ns": Decimal("0.000001")}


class OwampParseError(ValueError):
    """The text is not owamp output of the expected kind."""


def to_ms(value: str | None, unit: str = "ms") -> float | None:
    """A printed delay in ``unit`` to milliseconds; ``nan``/``XXX``/missing -> None."""
    if value is None:
        return None
    try:
        number = Decimal(value)
    except InvalidOperation:
        return None
    if not number.is_finite():
        return None
    factor = MS_PER_UNIT.get(unit)
    if factor is None:
        raise OwampParseError(f"unknown time unit {unit!r}")
    return float(number * factor)


def hops_from_ttl(ttl_min: int | None, ttl_max: int | None) -> tuple[int | None, int | None]:
    if ttl_min is None or ttl_max is None:
        return None, None
    return OWAMP_SEND_TTL - ttl_max, OWAMP_SEND_TTL - ttl_min


@dataclass(frozen=True, kw_only=True)
class SessionReport:
    """What a report of owping or twping says of a session besides its figures. ``output_format`` is the report
    read ("summary", "machine" or "raw"), ``clock_synced`` whether the clocks said they were synchronised, the
    percentiles (ms, by percent) those of the delay the report gives them for."""

    output_format: str
    sid: str | None = None
    from_host: str | None = None
    to_host: str | None = None
    clock_synced: bool | None = None
    percentiles_ms: Mapping[float, float | None] = field(default_factory=dict)


# --- the default text report

HEADER = re.compile(
    r"^--- (?P<tool>owping|twping) statistics from \[(?P<from_host>.*?)\]:(?P<from_port>\S+)"
    r" to \[(?P<to_host>.*?)\]:(?P<to_port>\S+) ---\s*$"
)
SID = re.compile(r"^SID:\s+(?P<sid>[0-9a-fA-F]+)\s*$")
OW_COUNTS = re.compile(
    r"^(?P<sent>\d+) sent, (?P<lost>\d+) lost \((?P<loss_pct>[\d.]+)%\), (?P<dups>\d+) duplicates\s*$"
)
TW_COUNTS = re.compile(
    r"^(?P<sent>\d+) sent, (?P<lost>\d+) lost \((?P<loss_pct>[\d.]+)%\), "
    r"(?P<send_dups>\d+) send duplicates, (?P<reflect_dups>\d+) reflect duplicates\s*$"
)
DELAY = re.compile(
    r"^(?P<kind>one-way delay|round-trip time|send time|reflect time) min/median/max = "
    r"(?P<min>[^/\s]+)/(?P<median>[^/\s]+)/(?P<max>\S+) (?P<unit>\w+), "
    r"\((?:err=(?P<err>\S+) (?P<err_unit>\w+)|(?P<unsync>unsync))\)\s*$"
)
PROC = re.compile(r"^reflector processing time min/max = (?P<min>[^/\s]+)/(?P<max>\S+) (?P<unit>\w+)\s*$")
JITTER = re.compile(r"^(?P<kind>one-way|two-way|send|reflect) jitter = (?P<value>\S+) (?P<unit>\w+) \(P95-P50\)\s*$")
PERCENTILE = re.compile(r"^\s+(?P<pct>\d+(?:\.\d+)?): (?P<value>\S+) (?P<unit>\w+)\s*$")
HOPS_ONE = re.compile(r"^(?P<kind>send |reflect )?hops = (?P<hops>\d+) \(consistently\)\s*$")
HOPS_MANY = re.compile(
    r"^(?P<kind>send |reflect )?hops takes \d+ values; min hops = (?P<min>\d+), max hops = (?P<max>\d+)\s*$"
)
# DelaySummary field -> the DELAY group (upper-cased: the -M key) it is read from.
_DELAY_KEYS = {"delay_min_ms": "min", "delay_median_ms": "median", "delay_max_ms": "max"}
REORDER = re.compile(r"^1-reordering = (?P<pct>[\d.]+)%\s*$")
OFFSET_WARNING = "Directional delays may be inaccurate due to out of sync clocks!"


def split_text_sessions(text: str) -> list[tuple[re.Match[str], list[str], bool]]:
    """Blocks of (header match, following lines, clocks-offset warning seen before it)."""
    blocks: list[tuple[re.Match[str], list[str], bool]] = []
    current: tuple[re.Match[str], list[str], bool] | None = None
    offset_warning = False
    for raw_line in text.splitlines():
        line = raw_line.rstrip("\n")
        if line.strip() == OFFSET_WARNING:
            offset_warning = True
            continue
        header = HEADER.match(line.strip())
        if header:
            current = (header, [], offset_warning)
            blocks.append(current)
            offset_warning = False
            continue
        if current is not None:
            current[1].append(line)
    return blocks


def printed_delays(match: re.Match[str]) -> dict[str, float | None]:
    """The min/median/max of a :data:`DELAY` line as :class:`~collectors.delay.DelaySummary` fields."""
    unit = match["unit"]
    return {key: to_ms(match[name], unit) for key, name in _DELAY_KEYS.items()}


def printed_error_ms(match: re.Match[str]) -> float | None:
    """The ``err=`` of a :data:`DELAY` line in ms; None when the line says ``unsync``."""
    return to_ms(match["err"], match["err_unit"]) if match["err"] else None


@dataclass
class TextBlock:
    """What one session block of an owping or twping text report says, line kind by line kind.

    ``delays``, ``jitter_ms`` and ``hops`` are keyed by the kind the line names ("one-way delay",
    "send", ...; "" for owping's unnamed hops), in the order printed.
    """

    counts: re.Match[str] | None = None
    sid: str | None = None
    delays: dict[str, re.Match[str]] = field(default_factory=dict)
    jitter_ms: dict[str, float | None] = field(default_factory=dict)
    hops: dict[str, tuple[int, int]] = field(default_factory=dict)
    percentiles_ms: dict[float, float | None] = field(default_factory=dict)
    processing: re.Match[str] | None = None
    no_reordering: bool = False
    reorder_pct: float | None = None


def read_text_block(lines: list[str], counts: re.Pattern[str]) -> TextBlock:
    """The lines of one session block (see :func:`split_text_sessions`); ``counts`` is the tool's
    "sent, lost" line (:data:`OW_COUNTS` or :data:`TW_COUNTS`). Lines of no known kind are ignored."""
    block = TextBlock()
    in_percentiles = False
    for line in lines:
        stripped = line.strip()
        if in_percentiles:
            if match := PERCENTILE.match(line):
                block.percentiles_ms[float(match["pct"])] = to_ms(match["value"], match["unit"])
                continue
            in_percentiles = False
        if match := SID.match(stripped):
            block.sid = match["sid"]
        elif match := counts.match(stripped):
            block.counts = match
        elif match := DELAY.match(stripped):
            block.delays[match["kind"]] = match
        elif match := PROC.match(stripped):
            block.processing = match
        elif match := JITTER.match(stripped):
            block.jitter_ms[match["kind"]] = to_ms(match["value"], match["unit"])
        elif stripped == "Percentiles:":
            in_percentiles = True
        elif match := HOPS_ONE.match(stripped):
            block.hops[(match["kind"] or "").strip()] = (int(match["hops"]), int(match["hops"]))
        elif match := HOPS_MANY.match(stripped):
            block.hops[(match["kind"] or "").strip()] = (int(match["min"]), int(match["max"]))
        elif stripped == "no reordering":
            block.no_reordering = True
        elif match := REORDER.match(stripped):
            block.reorder_pct = float(match["pct"])
    return block


# --- the -M report


def machine_blocks(text: str) -> list[tuple[dict[str, str], dict[str, list[list[str]]]]]:
    """``SUMMARY`` blocks as (key -> value, <BLOCK> -> rows of fields)."""
    blocks: list[tuple[dict[str, str], dict[str, list[list[str]]]]] = []
    keys: dict[str, str] | None = None
    tables: dict[str, list[list[str]]] = {}
    table: str | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("SUMMARY"):
            keys, tables, table = {}, {}, None
            blocks.append((keys, tables))
            keys["SUMMARY"] = stripped.split(None, 1)[1] if " " in stripped or "\t" in stripped else ""
            continue
        if keys is None:
            continue  # "Approximately N seconds until results available"
        if stripped.startswith("</"):
            table = None
            continue
        if stripped.startswith("<") and stripped.endswith(">"):
            table = stripped[1:-1]
            tables[table] = []
            continue
        parts = stripped.split()
        if table is not None:
            tables[table].append(parts)
        elif len(parts) >= 2:
            keys[parts[0]] = parts[1]
        elif len(parts) == 1:
            keys[parts[0]] = ""
    return blocks


def seconds_to_ms(keys: Mapping[str, str], key: str) -> float | None:
    return to_ms(keys.get(key), "s")


def machine_delays(keys: Mapping[str, str], suffix: str = "") -> dict[str, float | None]:
    """``MIN``/``MEDIAN``/``MAX``/``PDV`` (seconds; ``suffix`` ``_FWD``/``_BCK`` for twping's halves) as
    :class:`~collectors.delay.DelaySummary` fields; absent when every packet was lost."""
    names = {**_DELAY_KEYS, "jitter_ms": "PDV"}
    return {key: seconds_to_ms(keys, f"{name.upper()}{suffix}") for key, name in names.items()}


def int_key(keys: Mapping[str, str], key: str) -> int | None:
    raw = keys.get(key)
    return int(raw) if raw not in (None, "") else None


def ttl_range(keys: Mapping[str, str], suffix: str = "") -> tuple[int | None, int | None]:
    ttl_min, ttl_max = int_key(keys, f"MINTTL{suffix}"), int_key(keys, f"MAXTTL{suffix}")
    # With no TTL data owamp prints MINTTL 255 / MAXTTL 0.
    if ttl_min is None or ttl_max is None or ttl_min > ttl_max:
        return None, None
    return ttl_min, ttl_max


def ntp_key(keys: Mapping[str, str], key: str) -> datetime | None:
    raw = keys.get(key)
    return ntp_to_datetime(int(raw)) if raw and raw.isdigit() else None


# --- the -R records


@dataclass(frozen=True)
class Timestamp:
    ntp: int
    synced: bool
    error_s: Decimal  # Decimal: the printed "2.32831e-10" sums without float noise


@dataclass(frozen=True)
class OneWayPacket:
    seq: int
    send: Timestamp
    recv: Timestamp
    ttl: int

    @property
    def lost(self) -> bool:
        return self.recv.ntp == 0  # owping_out_opts.man: "Lost ... RECVTIME of 0"

    @property
    def delay_ms(self) -> float:
        return round_ms((self.recv.ntp - self.send.ntp) * 1000 / NTP_FRACTION)

    @property
    def clocks_synced(self) -> bool:
        """The sender's clock said it was synchronised, and so did the receiver's if the packet arrived (a lost
        packet's receive time is no reading of that clock)."""
        return self.send.synced and (self.lost or self.recv.synced)


def timestamp(fields_: Sequence[str]) -> Timestamp:
    return Timestamp(ntp=int(fields_[0]), synced=fields_[1] == "1", error_s=Decimal(fields_[2]))


def one_way_packet(parts: Sequence[str]) -> OneWayPacket:
    return OneWayPacket(seq=int(parts[0]), send=timestamp(parts[1:4]), recv=timestamp(parts[4:7]), ttl=int(parts[7]))


# --- stderr

NTP_UNSYNC = re.compile(r"NTP: Status UNSYNC.*$", re.MULTILINE)
# "owping: FILE=owping.c, LINE=515, owp_fetch_sid:Server denied ..." (debug builds / old versions)
SOURCE_PREFIX = re.compile(r"^FILE=[^,]+, LINE=\d+, ")
PROGRAM_PREFIX = re.compile(r"^(?:owping|twping|owstats|powstream)(?:\[\d+\])?: ")


def ntp_unsynced(stderr: str) -> str | None:
    """owamp's "NTP: Status UNSYNC ..." warning (the local clock is not synchronised), if printed."""
    match = NTP_UNSYNC.search(stderr)
    return match.group(0).strip() if match else None


def parse_error(stderr: str) -> str | None:
    """The first owamp error message in ``stderr``, ignoring the NTP warnings."""
    for line in stderr.splitlines():
        stripped = line.strip()
        prefix = PROGRAM_PREFIX.match(stripped)
        if prefix is None:
            continue  # not a message of an owamp program (e.g. a wrapped continuation line)
        message = stripped[prefix.end() :]
        if message and not message.startswith("NTP:"):
            return SOURCE_PREFIX.sub("", message)
    return None
