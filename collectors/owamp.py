"""OWAMP/TWAMP one-way delay collector: pure parsers, argv builder, test runner.

Parsers (all pure, for the output of OWAMP 5.2.3; older 3.x text too):

* :func:`parse_summary`: the default text report of ``owping`` / ``owstats``
  (one ``--- owping statistics from [A]:p to [B]:q ---`` block per session);
* :func:`parse_machine`: the ``-M`` key/value report of ``owping``,
  ``owstats`` and powstream ``.sum`` files (``SUMMARY 3.00`` blocks);
* :func:`parse_raw`: the ``-R`` per-packet records (statistics computed here);
* :func:`parse_twamp_summary`, :func:`parse_twamp_machine`,
  :func:`parse_twamp_raw`: the same three formats from ``twping``;
* :func:`ntp_unsynced` / :func:`parse_error`: owamp's stderr.

``owping`` runs two sessions by default and prints the "to" session
(this host -> remote) before the "from" session (remote -> this host): see
``owping.c``. :func:`assign_directions` maps sessions to directions, and
:func:`run_test` turns them into per-direction ``owamp`` records
(docs/scenario-format.md#measurement-records) with ``src``/``dst`` site codes.

Clock synchronisation matters for the CLOCK_UNSYNC diagnosis. OWAMP only
reports an error estimate (``err=``/``MAXERR``) that means something when
both clocks are NTP-synchronised; otherwise it prints ``(unsync)`` / ``SYNC 0``.
Records then carry ``clock_synced: false`` and ``clock_error_ms: null``
(unknown, not small).
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from collectors.runner import CommandResult, CommandRunner, excerpt, utc_time

TOOL = "owping"

TO = "to"  # session sent by this host to the remote host (src -> dst)
FROM = "from"  # session sent by the remote host to this host (dst -> src)
# Record "direction" values, shared with the nuttcp collector.
RECORD_DIRECTION = {TO: "forward", FROM: "reverse"}

# OWAMP timestamps: 64-bit NTP format, seconds since 1900 in the high 32 bits.
NTP_FRACTION = 2**32
NTP_UNIX_OFFSET_S = 2_208_988_800
# Senders set TTL 255; the receiver's TTL gives the hop count (owping_report.man).
OWAMP_SEND_TTL = 255

_MS_PER_UNIT = {"s": Decimal(1000), "ms": Decimal(1), "us": Decimal("0.001"), "ns": Decimal("0.000001")}

# owping's default packet interval is exponential with this mean; with -L the
# loss timeout. The results arrive after the last packet plus the timeout.
DEFAULT_TIMEOUT_MARGIN_S = 30.0


class OwampParseError(ValueError):
    """The text is not owamp output of the expected kind."""


# ---------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class OwampSession:
    """Statistics of one one-way session (one direction).

    Delays are in milliseconds. ``clock_error_ms`` is owamp's error estimate
    and is only set when ``clock_synced`` is true; ``max_error_ms`` is the raw
    figure owamp computed either way. ``hops`` values come from the received
    TTLs (255 - TTL). ``None`` means "not reported / not computable".
    """

    output_format: str  # "summary", "machine" or "raw"
    packets_sent: int
    packets_lost: int
    duplicates: int | None = None
    reordered: int | None = None
    delay_min_ms: float | None = None
    delay_median_ms: float | None = None
    delay_max_ms: float | None = None
    jitter_ms: float | None = None
    clock_synced: bool | None = None
    clock_error_ms: float | None = None
    max_error_ms: float | None = None
    ttl_min: int | None = None
    ttl_max: int | None = None
    hops_min: int | None = None
    hops_max: int | None = None
    sid: str | None = None
    from_host: str | None = None
    from_addr: str | None = None
    from_port: str | None = None
    to_host: str | None = None
    to_addr: str | None = None
    to_port: str | None = None
    start_time: datetime | None = None
    end_time: datetime | None = None
    session_finished: bool | None = None
    bucket_width_ms: float | None = None
    reordering_pct: float | None = None
    percentiles_ms: Mapping[float, float | None] = field(default_factory=dict)

    @property
    def loss_pct(self) -> float | None:
        """Lost packets in percent of the sent ones (None when nothing was sent)."""
        if not self.packets_sent:
            return None
        return 100.0 * self.packets_lost / self.packets_sent

    @property
    def hops(self) -> int | None:
        """Hop count when every packet saw the same one."""
        if self.hops_min is not None and self.hops_min == self.hops_max:
            return self.hops_min
        return None


@dataclass(frozen=True)
class DelayStats:
    """min/median/max/jitter of one kind of delay, milliseconds."""

    min_ms: float | None = None
    median_ms: float | None = None
    max_ms: float | None = None
    jitter_ms: float | None = None
    error_ms: float | None = None


@dataclass(frozen=True)
class TwampSession:
    """A twping (TWAMP) session: round trip plus its send and reflect halves.

    TWAMP cannot tell in which direction a packet was lost, so there is no
    per-direction loss: this is kept apart from :class:`OwampSession`.
    """

    output_format: str
    packets_sent: int
    packets_lost: int
    send_duplicates: int | None = None
    reflect_duplicates: int | None = None
    round_trip: DelayStats = field(default_factory=DelayStats)
    send: DelayStats = field(default_factory=DelayStats)
    reflect: DelayStats = field(default_factory=DelayStats)
    processing_min_ms: float | None = None
    processing_max_ms: float | None = None
    clock_synced: bool | None = None
    clocks_offset: bool = False
    send_hops_min: int | None = None
    send_hops_max: int | None = None
    reflect_hops_min: int | None = None
    reflect_hops_max: int | None = None
    sid: str | None = None
    from_host: str | None = None
    to_host: str | None = None
    percentiles_ms: Mapping[float, float | None] = field(default_factory=dict)


# ---------------------------------------------------------------------------
# Small conversions
# ---------------------------------------------------------------------------


def _to_ms(value: str | None, unit: str = "ms") -> float | None:
    """A printed delay in ``unit`` to milliseconds; ``nan``/``XXX``/missing -> None."""
    if value is None:
        return None
    try:
        number = Decimal(value)
    except InvalidOperation:
        return None
    if not number.is_finite():
        return None
    factor = _MS_PER_UNIT.get(unit)
    if factor is None:
        raise OwampParseError(f"unknown time unit {unit!r}")
    return float(number * factor)


def ntp_to_datetime(timestamp: int) -> datetime:
    """OWAMP/NTP 64-bit timestamp (as printed by ``-M``/``-R``) to a UTC datetime."""
    seconds = timestamp / NTP_FRACTION - NTP_UNIX_OFFSET_S
    return datetime.fromtimestamp(seconds, UTC)


def _hops_from_ttl(ttl_min: int | None, ttl_max: int | None) -> tuple[int | None, int | None]:
    if ttl_min is None or ttl_max is None:
        return None, None
    return OWAMP_SEND_TTL - ttl_max, OWAMP_SEND_TTL - ttl_min


def _without_empty_claims(session: OwampSession) -> OwampSession:
    """An empty session (0 sent) proves nothing about clocks or reordering.

    owamp still prints "(err=0 ms)" and "no reordering" for it (see the
    perfsonar/project#836 output); those must not read as "synchronised" and
    "no reordering".
    """
    if session.packets_sent:
        return session
    return replace(session, clock_synced=None, clock_error_ms=None, reordered=None, reordering_pct=None)


def _round_ms(value: float) -> float:
    """Round a delay computed from NTP timestamps to 1 ns (6 decimals in ms).

    The 32-bit binary fraction would otherwise print as 0.03600004129111767;
    owamp's own clock error estimate (~2.3e-10 s per timestamp) is finer than
    1 ns, so nothing real is lost.
    """
    return round(value, 6)


def _reordered_count(pct: float, received: int) -> int:
    # owamp prints 100 * rn[0] / rnumseqno with %f (6 decimals), rnumseqno
    # being the records received: the count is recovered exactly by rounding.
    return round(pct * received / 100.0)


# ---------------------------------------------------------------------------
# Default text summary (owping, owstats)
# ---------------------------------------------------------------------------

_HEADER = re.compile(
    r"^--- (?P<tool>owping|twping) statistics from \[(?P<from_host>.*?)\]:(?P<from_port>\S+)"
    r" to \[(?P<to_host>.*?)\]:(?P<to_port>\S+) ---\s*$"
)
_SID = re.compile(r"^SID:\s+(?P<sid>[0-9a-fA-F]+)\s*$")
_OW_COUNTS = re.compile(
    r"^(?P<sent>\d+) sent, (?P<lost>\d+) lost \((?P<loss_pct>[\d.]+)%\), (?P<dups>\d+) duplicates\s*$"
)
_TW_COUNTS = re.compile(
    r"^(?P<sent>\d+) sent, (?P<lost>\d+) lost \((?P<loss_pct>[\d.]+)%\), "
    r"(?P<send_dups>\d+) send duplicates, (?P<reflect_dups>\d+) reflect duplicates\s*$"
)
_DELAY = re.compile(
    r"^(?P<kind>one-way delay|round-trip time|send time|reflect time) min/median/max = "
    r"(?P<min>[^/\s]+)/(?P<median>[^/\s]+)/(?P<max>\S+) (?P<unit>\w+), "
    r"\((?:err=(?P<err>\S+) (?P<err_unit>\w+)|(?P<unsync>unsync))\)\s*$"
)
_PROC = re.compile(r"^reflector processing time min/max = (?P<min>[^/\s]+)/(?P<max>\S+) (?P<unit>\w+)\s*$")
_JITTER = re.compile(r"^(?P<kind>one-way|two-way|send|reflect) jitter = (?P<value>\S+) (?P<unit>\w+) \(P95-P50\)\s*$")
_PERCENTILE = re.compile(r"^\s+(?P<pct>\d+(?:\.\d+)?): (?P<value>\S+) (?P<unit>\w+)\s*$")
_HOPS_ONE = re.compile(r"^(?P<kind>send |reflect )?hops = (?P<hops>\d+) \(consistently\)\s*$")
_HOPS_MANY = re.compile(
    r"^(?P<kind>send |reflect )?hops takes \d+ values; min hops = (?P<min>\d+), max hops = (?P<max>\d+)\s*$"
)
_REORDER = re.compile(r"^1-reordering = (?P<pct>[\d.]+)%\s*$")
_OFFSET_WARNING = "Directional delays may be inaccurate due to out of sync clocks!"


def _split_text_sessions(text: str) -> list[tuple[re.Match[str], list[str], bool]]:
    """Blocks of (header match, following lines, clocks-offset warning seen before it)."""
    blocks: list[tuple[re.Match[str], list[str], bool]] = []
    current: tuple[re.Match[str], list[str], bool] | None = None
    offset_warning = False
    for raw_line in text.splitlines():
        line = raw_line.rstrip("\n")
        if line.strip() == _OFFSET_WARNING:
            offset_warning = True
            continue
        header = _HEADER.match(line.strip())
        if header:
            current = (header, [], offset_warning)
            blocks.append(current)
            offset_warning = False
            continue
        if current is not None:
            current[1].append(line)
    return blocks


def _summary_block(header: re.Match[str], lines: list[str]) -> OwampSession | None:
    values: dict[str, Any] = {
        "from_host": header["from_host"],
        "from_port": header["from_port"],
        "to_host": header["to_host"],
        "to_port": header["to_port"],
    }
    percentiles: dict[float, float | None] = {}
    counts = None
    in_percentiles = False
    reorder_pct: float | None = None
    no_reordering = False
    for line in lines:
        stripped = line.strip()
        if in_percentiles:
            match = _PERCENTILE.match(line)
            if match:
                percentiles[float(match["pct"])] = _to_ms(match["value"], match["unit"])
                continue
            in_percentiles = False
        if match := _SID.match(stripped):
            values["sid"] = match["sid"]
        elif match := _OW_COUNTS.match(stripped):
            counts = match
        elif match := _DELAY.match(stripped):
            unit = match["unit"]
            values["delay_min_ms"] = _to_ms(match["min"], unit)
            values["delay_median_ms"] = _to_ms(match["median"], unit)
            values["delay_max_ms"] = _to_ms(match["max"], unit)
            if match["unsync"]:
                values["clock_synced"] = False
            else:
                values["clock_synced"] = True
                values["max_error_ms"] = values["clock_error_ms"] = _to_ms(match["err"], match["err_unit"])
        elif match := _JITTER.match(stripped):
            values["jitter_ms"] = _to_ms(match["value"], match["unit"])
        elif stripped == "Percentiles:":
            in_percentiles = True
        elif match := _HOPS_ONE.match(stripped):
            values["hops_min"] = values["hops_max"] = int(match["hops"])
        elif match := _HOPS_MANY.match(stripped):
            values["hops_min"], values["hops_max"] = int(match["min"]), int(match["max"])
        elif stripped == "no reordering":
            no_reordering = True
        elif match := _REORDER.match(stripped):
            reorder_pct = float(match["pct"])
    if counts is None:
        # owping -v prints the header once more before the per-packet lines;
        # such a block holds no statistics.
        return None
    sent, lost, dups = int(counts["sent"]), int(counts["lost"]), int(counts["dups"])
    if no_reordering:
        values["reordered"], values["reordering_pct"] = 0, 0.0
    elif reorder_pct is not None:
        values["reordering_pct"] = reorder_pct
        values["reordered"] = _reordered_count(reorder_pct, sent - lost + dups)
    if values.get("hops_min") is not None:
        values["ttl_min"] = OWAMP_SEND_TTL - values["hops_max"]
        values["ttl_max"] = OWAMP_SEND_TTL - values["hops_min"]
    return OwampSession(
        output_format="summary",
        packets_sent=sent,
        packets_lost=lost,
        duplicates=dups,
        percentiles_ms=percentiles,
        **values,
    )


def parse_summary(text: str) -> list[OwampSession]:
    """Sessions of an ``owping``/``owstats`` default text report, in printed order.

    Lines that are not part of the report (``Approximately ...``, owping's
    own error messages mixed into the output) are ignored. ``nan`` values
    (an empty session) become ``None``.
    """
    sessions: list[OwampSession] = []
    for header, lines, _offset in _split_text_sessions(text):
        if header["tool"] != "owping":
            continue
        session = _summary_block(header, lines)
        if session is not None:
            sessions.append(_without_empty_claims(session))
    return sessions


# ---------------------------------------------------------------------------
# Machine-readable (-M) summary (owping, owstats, powstream .sum)
# ---------------------------------------------------------------------------


def _machine_blocks(text: str) -> list[tuple[dict[str, str], dict[str, list[list[str]]]]]:
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


def _seconds_to_ms(keys: Mapping[str, str], key: str) -> float | None:
    return _to_ms(keys.get(key), "s")


def _int_key(keys: Mapping[str, str], key: str) -> int | None:
    raw = keys.get(key)
    return int(raw) if raw not in (None, "") else None


def _ttl_range(keys: Mapping[str, str], suffix: str = "") -> tuple[int | None, int | None]:
    ttl_min, ttl_max = _int_key(keys, f"MINTTL{suffix}"), _int_key(keys, f"MAXTTL{suffix}")
    # With no TTL data owamp prints MINTTL 255 / MAXTTL 0.
    if ttl_min is None or ttl_max is None or ttl_min > ttl_max:
        return None, None
    return ttl_min, ttl_max


def _ntp_key(keys: Mapping[str, str], key: str) -> datetime | None:
    raw = keys.get(key)
    return ntp_to_datetime(int(raw)) if raw and raw.isdigit() else None


def parse_machine(text: str) -> list[OwampSession]:
    """Sessions of an owamp ``-M`` report (one per ``SUMMARY`` block), in printed order.

    Times in ``-M`` are seconds; they are converted to milliseconds.
    ``MIN``/``MEDIAN``/``MAX``/``PDV`` are absent when every packet was lost.
    """
    sessions: list[OwampSession] = []
    for keys, tables in _machine_blocks(text):
        if "SENT" not in keys:
            raise OwampParseError("owamp -M block without SENT")
        if "MIN_FWD" in keys or "DUPS_FWD" in keys:
            raise OwampParseError("this is twping -M output: use parse_twamp_machine")
        synced = keys.get("SYNC") == "1"
        max_error_ms = _seconds_to_ms(keys, "MAXERR")
        ttl_min, ttl_max = _ttl_range(keys)
        hops_min, hops_max = _hops_from_ttl(ttl_min, ttl_max)
        reordered = None
        for row in tables.get("NREORDERING", []):
            if len(row) >= 2 and row[0] == "1":
                reordered = int(row[1])
        sent = int(keys["SENT"])
        lost = int(keys.get("LOST", "0"))
        sessions.append(
            _without_empty_claims(
                OwampSession(
                    output_format="machine",
                    packets_sent=sent,
                    packets_lost=lost,
                    duplicates=_int_key(keys, "DUPS"),
                    reordered=reordered,
                    delay_min_ms=_seconds_to_ms(keys, "MIN"),
                    delay_median_ms=_seconds_to_ms(keys, "MEDIAN"),
                    delay_max_ms=_seconds_to_ms(keys, "MAX"),
                    jitter_ms=_seconds_to_ms(keys, "PDV"),
                    clock_synced=synced,
                    clock_error_ms=max_error_ms if synced else None,
                    max_error_ms=max_error_ms,
                    ttl_min=ttl_min,
                    ttl_max=ttl_max,
                    hops_min=hops_min,
                    hops_max=hops_max,
                    sid=keys.get("SID"),
                    from_host=keys.get("FROM_HOST"),
                    from_addr=keys.get("FROM_ADDR"),
                    from_port=keys.get("FROM_PORT"),
                    to_host=keys.get("TO_HOST"),
                    to_addr=keys.get("TO_ADDR"),
                    to_port=keys.get("TO_PORT"),
                    start_time=_ntp_key(keys, "START_TIME"),
                    end_time=_ntp_key(keys, "END_TIME"),
                    session_finished=keys.get("SESSION_FINISHED") == "1" if "SESSION_FINISHED" in keys else None,
                    bucket_width_ms=_seconds_to_ms(keys, "BUCKET_WIDTH"),
                )
            )
        )
    return sessions


# ---------------------------------------------------------------------------
# Raw (-R) records
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Timestamp:
    ntp: int
    synced: bool
    error_s: Decimal  # Decimal: the printed "2.32831e-10" sums without float noise


@dataclass(frozen=True)
class _OneWayPacket:
    seq: int
    send: _Timestamp
    recv: _Timestamp
    ttl: int

    @property
    def lost(self) -> bool:
        return self.recv.ntp == 0  # owping_out_opts.man: "Lost ... RECVTIME of 0"

    @property
    def delay_ms(self) -> float:
        return _round_ms((self.recv.ntp - self.send.ntp) * 1000 / NTP_FRACTION)


def _timestamp(fields_: Sequence[str]) -> _Timestamp:
    return _Timestamp(ntp=int(fields_[0]), synced=fields_[1] == "1", error_s=Decimal(fields_[2]))


def _one_way_packet(parts: Sequence[str]) -> _OneWayPacket:
    return _OneWayPacket(seq=int(parts[0]), send=_timestamp(parts[1:4]), recv=_timestamp(parts[4:7]), ttl=int(parts[7]))


def _nearest_rank(sorted_values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile (the value below which ``fraction`` of the sample lies)."""
    rank = max(1, math.ceil(fraction * len(sorted_values)))
    return sorted_values[rank - 1]


def _split_raw_sessions(packets: list[_OneWayPacket]) -> list[list[_OneWayPacket]]:
    """Split concatenated sessions (owping -R prints both with no separator).

    A sequence number seen again with a *different* send time starts a new
    session; with the same send time it is a duplicate of the same packet.
    """
    sessions: list[list[_OneWayPacket]] = []
    current: list[_OneWayPacket] = []
    send_time_by_seq: dict[int, int] = {}
    for packet in packets:
        known = send_time_by_seq.get(packet.seq)
        if known is not None and known != packet.send.ntp:
            sessions.append(current)
            current, send_time_by_seq = [], {}
        send_time_by_seq.setdefault(packet.seq, packet.send.ntp)
        current.append(packet)
    if current:
        sessions.append(current)
    return sessions


def _raw_session(packets: list[_OneWayPacket]) -> OwampSession:
    seen: set[int] = set()
    lost_seqs: set[int] = set()
    delays: list[float] = []
    duplicates = 0
    reordered = 0
    previous_seq: int | None = None
    ttls: list[int] = []
    max_error_s = Decimal(0)
    for packet in packets:
        max_error_s = max(max_error_s, packet.send.error_s + packet.recv.error_s)
        if packet.lost:
            lost_seqs.add(packet.seq)
            continue
        # owamp's 1-reordering: a packet arriving after one with a higher
        # sequence number (stats.c, j-reordering with j = 1).
        if previous_seq is not None and packet.seq < previous_seq:
            reordered += 1
        previous_seq = packet.seq
        if packet.seq in seen:
            duplicates += 1
            continue
        seen.add(packet.seq)
        delays.append(packet.delay_ms)
        ttls.append(packet.ttl)
    delays.sort()
    synced = all(p.send.synced and (p.lost or p.recv.synced) for p in packets)
    ttl_min, ttl_max = (min(ttls), max(ttls)) if ttls else (None, None)
    hops_min, hops_max = _hops_from_ttl(ttl_min, ttl_max)
    send_times = [p.send.ntp for p in packets]
    max_error_ms = float(max_error_s * 1000)
    median = _nearest_rank(delays, 0.5) if delays else None
    return OwampSession(
        output_format="raw",
        packets_sent=len(seen | lost_seqs),
        packets_lost=len(lost_seqs - seen),
        duplicates=duplicates,
        reordered=reordered,
        delay_min_ms=delays[0] if delays else None,
        delay_median_ms=median,
        delay_max_ms=delays[-1] if delays else None,
        jitter_ms=_round_ms(_nearest_rank(delays, 0.95) - median) if median is not None else None,
        clock_synced=synced,
        clock_error_ms=max_error_ms if synced else None,
        max_error_ms=max_error_ms,
        ttl_min=ttl_min,
        ttl_max=ttl_max,
        hops_min=hops_min,
        hops_max=hops_max,
        start_time=ntp_to_datetime(min(send_times)) if send_times else None,
        end_time=ntp_to_datetime(max(send_times)) if send_times else None,
    )


def parse_raw(text: str) -> list[OwampSession]:
    """Sessions from owamp ``-R`` records (``SEQNO STIME SS SERR RTIME RS RERR TTL``).

    Statistics are computed from the packets: exact nearest-rank median and
    P95 - P50 jitter (owamp itself uses a histogram of ``-b`` wide buckets, so
    its medians are quantised), duplicates, 1-reordering, max error estimate.
    """
    packets: list[_OneWayPacket] = []
    for number, line in enumerate(text.splitlines(), start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) == 16:
            raise OwampParseError("this is twping -R output: use parse_twamp_raw")
        if len(parts) != 8 or not parts[0].isdigit():
            raise OwampParseError(f"line {number}: not an owamp raw record: {line.strip()!r}")
        packets.append(_one_way_packet(parts))
    return [_raw_session(group) for group in _split_raw_sessions(packets)]


def parse(text: str) -> list[OwampSession]:
    """Sessions from any owping/owstats output format (``-M``, default text or ``-R``)."""
    if re.search(r"^SUMMARY\s", text, re.MULTILINE):
        return parse_machine(text)
    if _HEADER.search(text) or re.search(r"^--- owping statistics", text, re.MULTILINE):
        return parse_summary(text)
    if re.search(r"^\d+ \d+ [01] \S+ \d+ [01] \S+ \d+\s*$", text, re.MULTILINE):
        return parse_raw(text)
    return []


# ---------------------------------------------------------------------------
# TWAMP (twping)
# ---------------------------------------------------------------------------


def parse_twamp_summary(text: str) -> list[TwampSession]:
    """Sessions of a ``twping`` default text report."""
    sessions: list[TwampSession] = []
    for header, lines, offset_warning in _split_text_sessions(text):
        if header["tool"] != "twping":
            continue
        stats: dict[str, dict[str, float | None]] = {"round-trip time": {}, "send time": {}, "reflect time": {}}
        jitter: dict[str, float | None] = {}
        hops: dict[str, tuple[int, int]] = {}
        percentiles: dict[float, float | None] = {}
        counts = None
        values: dict[str, Any] = {"sid": None, "clock_synced": None}
        in_percentiles = False
        for line in lines:
            stripped = line.strip()
            if in_percentiles:
                if match := _PERCENTILE.match(line):
                    percentiles[float(match["pct"])] = _to_ms(match["value"], match["unit"])
                    continue
                in_percentiles = False
            if match := _SID.match(stripped):
                values["sid"] = match["sid"]
            elif match := _TW_COUNTS.match(stripped):
                counts = match
            elif match := _DELAY.match(stripped):
                unit = match["unit"]
                stats[match["kind"]] = {
                    "min_ms": _to_ms(match["min"], unit),
                    "median_ms": _to_ms(match["median"], unit),
                    "max_ms": _to_ms(match["max"], unit),
                    "error_ms": _to_ms(match["err"], match["err_unit"]) if match["err"] else None,
                }
                values["clock_synced"] = not match["unsync"]
            elif match := _PROC.match(stripped):
                values["processing_min_ms"] = _to_ms(match["min"], match["unit"])
                values["processing_max_ms"] = _to_ms(match["max"], match["unit"])
            elif match := _JITTER.match(stripped):
                jitter[match["kind"]] = _to_ms(match["value"], match["unit"])
            elif stripped == "Percentiles:":
                in_percentiles = True
            elif match := _HOPS_ONE.match(stripped):
                hops[(match["kind"] or "").strip()] = (int(match["hops"]), int(match["hops"]))
            elif match := _HOPS_MANY.match(stripped):
                hops[(match["kind"] or "").strip()] = (int(match["min"]), int(match["max"]))
        if counts is None:
            continue
        send_hops = hops.get("send", (None, None))
        reflect_hops = hops.get("reflect", (None, None))
        sessions.append(
            TwampSession(
                output_format="summary",
                packets_sent=int(counts["sent"]),
                packets_lost=int(counts["lost"]),
                send_duplicates=int(counts["send_dups"]),
                reflect_duplicates=int(counts["reflect_dups"]),
                round_trip=DelayStats(**stats["round-trip time"], jitter_ms=jitter.get("two-way")),
                send=DelayStats(**stats["send time"], jitter_ms=jitter.get("send")),
                reflect=DelayStats(**stats["reflect time"], jitter_ms=jitter.get("reflect")),
                clocks_offset=offset_warning,
                send_hops_min=send_hops[0],
                send_hops_max=send_hops[1],
                reflect_hops_min=reflect_hops[0],
                reflect_hops_max=reflect_hops[1],
                from_host=header["from_host"],
                to_host=header["to_host"],
                percentiles_ms=percentiles,
                **values,
            )
        )
    return sessions


def parse_twamp_machine(text: str) -> list[TwampSession]:
    """Sessions of a ``twping -M`` report (``*_FWD``/``*_BCK``/``*_PROC`` keys, seconds)."""
    sessions: list[TwampSession] = []
    for keys, _tables in _machine_blocks(text):
        synced = keys.get("SYNC") == "1"

        def stats(suffix: str, error_key: str, keys: Mapping[str, str] = keys, synced: bool = synced) -> DelayStats:
            error_ms = _seconds_to_ms(keys, error_key)
            return DelayStats(
                min_ms=_seconds_to_ms(keys, f"MIN{suffix}"),
                median_ms=_seconds_to_ms(keys, f"MEDIAN{suffix}"),
                max_ms=_seconds_to_ms(keys, f"MAX{suffix}"),
                jitter_ms=_seconds_to_ms(keys, f"PDV{suffix}"),
                error_ms=error_ms if synced else None,
            )

        send_ttl = _ttl_range(keys, "_FWD")
        reflect_ttl = _ttl_range(keys, "_BCK")
        send_hops = _hops_from_ttl(*send_ttl)
        reflect_hops = _hops_from_ttl(*reflect_ttl)
        sessions.append(
            TwampSession(
                output_format="machine",
                packets_sent=int(keys["SENT"]),
                packets_lost=int(keys.get("LOST", "0")),
                send_duplicates=_int_key(keys, "DUPS_FWD"),
                reflect_duplicates=_int_key(keys, "DUPS_BCK"),
                round_trip=stats("", "MAXERR"),
                send=stats("_FWD", "MAXERR_FWD"),
                reflect=stats("_BCK", "MAXERR_BCK"),
                processing_min_ms=_seconds_to_ms(keys, "MIN_PROC"),
                processing_max_ms=_seconds_to_ms(keys, "MAX_PROC"),
                clock_synced=synced,
                send_hops_min=send_hops[0],
                send_hops_max=send_hops[1],
                reflect_hops_min=reflect_hops[0],
                reflect_hops_max=reflect_hops[1],
                sid=keys.get("SID"),
                from_host=keys.get("FROM_HOST"),
                to_host=keys.get("TO_HOST"),
            )
        )
    return sessions


def _delay_stats(delays: list[float], error_ms: float | None) -> DelayStats:
    if not delays:
        return DelayStats(error_ms=error_ms)
    delays = sorted(delays)
    median = _nearest_rank(delays, 0.5)
    return DelayStats(
        min_ms=delays[0],
        median_ms=median,
        max_ms=delays[-1],
        jitter_ms=_round_ms(_nearest_rank(delays, 0.95) - median),
        error_ms=error_ms,
    )


def parse_twamp_raw(text: str) -> TwampSession:
    """One session from ``twping -R`` (16 fields: the sent half then the reflected half).

    Fields: ``SSEQ STIME SS SERR SRTIME SRS SRERR STTL`` (sender -> reflector)
    then ``RSEQ RSTIME RSS RSERR RTIME RS RERR RTTL`` (reflector -> sender).
    Round trip = (RTIME - STIME) - (RSTIME - SRTIME), as owamp computes it.
    """
    sent: list[_OneWayPacket] = []
    reflected: list[_OneWayPacket] = []
    for number, line in enumerate(text.splitlines(), start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 16:
            raise OwampParseError(f"line {number}: not a twping raw record: {line.strip()!r}")
        sent.append(_one_way_packet(parts[:8]))
        reflected.append(_one_way_packet(parts[8:]))
    lost = {fwd.seq for fwd, back in zip(sent, reflected, strict=True) if fwd.lost or back.lost}
    fwd_delays, back_delays, rtts, processing = [], [], [], []
    for fwd, back in zip(sent, reflected, strict=True):
        if fwd.seq in lost:
            continue
        fwd_delays.append(fwd.delay_ms)
        back_delays.append(back.delay_ms)
        processing.append(_round_ms((back.send.ntp - fwd.recv.ntp) * 1000 / NTP_FRACTION))
        rtts.append(_round_ms(fwd.delay_ms + back.delay_ms))
    packets = sent + reflected
    synced = all(p.send.synced and (p.lost or p.recv.synced) for p in packets)

    def error(pairs: list[_OneWayPacket]) -> float | None:
        return float(max((p.send.error_s + p.recv.error_s) * 1000 for p in pairs)) if pairs and synced else None

    send_ttls = [p.ttl for p in sent if p.seq not in lost]
    back_ttls = [p.ttl for p in reflected if p.seq not in lost]
    send_hops = _hops_from_ttl(min(send_ttls), max(send_ttls)) if send_ttls else (None, None)
    back_hops = _hops_from_ttl(min(back_ttls), max(back_ttls)) if back_ttls else (None, None)
    fwd_error, back_error = error(sent), error(reflected)
    return TwampSession(
        output_format="raw",
        packets_sent=len({p.seq for p in sent}),
        packets_lost=len(lost),
        round_trip=_delay_stats(rtts, None if fwd_error is None or back_error is None else fwd_error + back_error),
        send=_delay_stats(fwd_delays, fwd_error),
        reflect=_delay_stats(back_delays, back_error),
        processing_min_ms=min(processing) if processing else None,
        processing_max_ms=max(processing) if processing else None,
        clock_synced=synced,
        clocks_offset=any(d < 0 for d in fwd_delays + back_delays),
        send_hops_min=send_hops[0],
        send_hops_max=send_hops[1],
        reflect_hops_min=back_hops[0],
        reflect_hops_max=back_hops[1],
    )


# ---------------------------------------------------------------------------
# stderr
# ---------------------------------------------------------------------------

_NTP_UNSYNC = re.compile(r"NTP: Status UNSYNC.*$", re.MULTILINE)
# "owping: FILE=owping.c, LINE=515, owp_fetch_sid:Server denied ..." (debug builds / old versions)
_SOURCE_PREFIX = re.compile(r"^FILE=[^,]+, LINE=\d+, ")
_PROGRAM_PREFIX = re.compile(r"^(?:owping|twping|owstats|powstream)(?:\[\d+\])?: ")


def ntp_unsynced(stderr: str) -> str | None:
    """owamp's "NTP: Status UNSYNC ..." warning (the local clock is not synchronised), if printed."""
    match = _NTP_UNSYNC.search(stderr)
    return match.group(0).strip() if match else None


def parse_error(stderr: str) -> str | None:
    """The first owamp error message in ``stderr``, ignoring the NTP warnings."""
    for line in stderr.splitlines():
        stripped = line.strip()
        prefix = _PROGRAM_PREFIX.match(stripped)
        if prefix is None:
            continue  # not a message of an owamp program (e.g. a wrapped continuation line)
        message = stripped[prefix.end() :]
        if message and not message.startswith("NTP:"):
            return _SOURCE_PREFIX.sub("", message)
    return None


# ---------------------------------------------------------------------------
# Directions
# ---------------------------------------------------------------------------


def _host_only(host: str) -> str:
    """``[2001:db8::1]:861`` / ``host:861`` / ``host`` -> the host part."""
    if host.startswith("["):
        return host[1 : host.index("]")] if "]" in host else host
    if host.count(":") == 1:
        return host.split(":", 1)[0]
    return host


def _direction_by_address(session: OwampSession, remote: str) -> str | None:
    remote_is_sender = remote in (session.from_host, session.from_addr)
    remote_is_receiver = remote in (session.to_host, session.to_addr)
    if remote_is_receiver and not remote_is_sender:
        return TO
    if remote_is_sender and not remote_is_receiver:
        return FROM
    return None


def assign_directions(
    sessions: Sequence[OwampSession],
    *,
    requested: Sequence[str] = (TO, FROM),
    remote_host: str | None = None,
    stderr: str = "",
) -> dict[str, OwampSession]:
    """Map owping's printed sessions to ``"to"`` (src -> dst) and ``"from"`` (dst -> src).

    owping prints the "to" session first, then the "from" session. When a
    session is missing (its data could not be fetched) the remaining one is
    identified by the remote host's name/address in its FROM/TO fields, or by
    owping's "Unable to fetch data" message, which only the "to" session
    path prints. If it still cannot be told, nothing is assigned: a wrong
    direction would blame the wrong path.
    """
    expected = [direction for direction in (TO, FROM) if direction in requested]
    if len(sessions) >= len(expected):
        return dict(zip(expected, sessions, strict=False))
    if not sessions:
        return {}
    assigned: dict[str, OwampSession] = {}
    remote = _host_only(remote_host) if remote_host else None
    for session in sessions:
        direction = _direction_by_address(session, remote) if remote else None
        if direction is None and len(sessions) == 1 and len(expected) == 2:
            if "Unable to fetch data" in stderr or "for to session" in stderr:
                direction = FROM
        if direction in expected and direction not in assigned:
            assigned[direction] = session
    return assigned


# ---------------------------------------------------------------------------
# Configuration, argv, records, run_test
# ---------------------------------------------------------------------------


def _plain_number(value: float) -> str:
    return format(Decimal(str(value)).normalize(), "f")


@dataclass(frozen=True)
class OwampConfig:
    """One ``[[owamp]]`` block of the agent configuration (docs/agent.md#configuration-toml).

    ``host`` is the remote owampd (``name``, ``name:port`` or ``[v6]:port``).
    ``packets`` per session, ``packet_interval_s`` mean gap between packets,
    ``loss_timeout_s`` after which a packet counts as lost, ``bucket_width_s``
    the histogram resolution of medians (owping's default is 100 µs).
    ``directions``: ``"both"``, ``"to"`` (src -> dst only) or ``"from"``.
    """

    dst: str
    host: str
    packets: int = 100
    packet_interval_s: float = 0.1
    loss_timeout_s: float = 10.0
    bucket_width_s: float | None = 0.00001
    port_range: str | None = None
    source_address: str | None = None
    padding_bytes: int | None = None
    directions: str = "both"
    interval_s: float | None = None  # scheduling period, used by the agent's scheduler
    binary: str = "owping"
    timeout_margin_s: float = DEFAULT_TIMEOUT_MARGIN_S

    def __post_init__(self) -> None:
        if self.packets < 1:
            raise ValueError("owamp packets must be >= 1")
        if self.packet_interval_s <= 0 or self.loss_timeout_s <= 0:
            raise ValueError("owamp packet_interval_s and loss_timeout_s must be > 0")
        if self.directions not in ("both", TO, FROM):
            raise ValueError("owamp directions must be 'both', 'to' or 'from'")

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> OwampConfig:
        """Build from a TOML table; unknown keys are an error."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown owamp option(s): {', '.join(unknown)}")
        return cls(**dict(data))

    @property
    def requested(self) -> tuple[str, ...]:
        """Session directions owping is asked for, in the order it prints them."""
        return (TO, FROM) if self.directions == "both" else (self.directions,)

    @property
    def timeout_s(self) -> float:
        """Deadline for one owping run: the packets, the loss timeout, then a margin."""
        return self.packets * self.packet_interval_s + self.loss_timeout_s + self.timeout_margin_s


def build_argv(config: OwampConfig) -> list[str]:
    """owping argv for ``config``, asking for the ``-M`` machine-readable report."""
    argv = [
        config.binary,
        "-M",
        "-c",
        str(config.packets),
        "-i",
        _plain_number(config.packet_interval_s),
        "-L",
        _plain_number(config.loss_timeout_s),
    ]
    if config.bucket_width_s is not None:
        argv += ["-b", _plain_number(config.bucket_width_s)]
    if config.port_range:
        argv += ["-P", config.port_range]
    if config.source_address:
        argv += ["-S", config.source_address]
    if config.padding_bytes is not None:
        argv += ["-s", str(config.padding_bytes)]
    if config.directions == TO:
        argv.append("-t")
    elif config.directions == FROM:
        argv.append("-f")
    argv.append(config.host)
    return argv


def _endpoints(direction: str, src_site: str, dst_site: str, host: str) -> dict[str, str]:
    if direction == TO:
        return {"src": src_site, "dst": dst_site, "dst_host": host}
    return {"src": dst_site, "dst": src_site, "src_host": host}


def session_to_record(
    session: OwampSession,
    *,
    direction: str,
    src_site: str,
    dst_site: str,
    host: str,
    time: datetime,
    ntp_warning: str | None = None,
) -> dict[str, Any]:
    """An ``owamp`` record (docs/scenario-format.md#measurement-records) for one session.

    ``direction`` is ``"to"`` (src_site -> dst_site) or ``"from"`` (reverse).
    ``ntp_warning`` is owamp's stderr UNSYNC line: it marks the clock as
    unsynchronised even if the session data did not.
    """
    endpoints = _endpoints(direction, src_site, dst_site, _host_only(host))
    synced = session.clock_synced
    if ntp_warning:
        synced = False
    record: dict[str, Any] = {
        "type": "owamp",
        "time": utc_time(time),
        "src": endpoints["src"],
        "dst": endpoints["dst"],
        "packets_sent": session.packets_sent,
        "packets_lost": session.packets_lost,
        "duplicates": session.duplicates,
        "reordered": session.reordered,
        "delay_min_ms": session.delay_min_ms,
        "delay_median_ms": session.delay_median_ms,
        "delay_max_ms": session.delay_max_ms,
        "jitter_ms": session.jitter_ms,
        "clock_error_ms": session.clock_error_ms if synced else None,
        "tool": TOOL,
        "clock_synced": synced,
        "direction": RECORD_DIRECTION[direction],
    }
    extras = {
        "src_host": endpoints.get("src_host"),
        "dst_host": endpoints.get("dst_host"),
        "hops": session.hops,
        "hops_min": session.hops_min,
        "hops_max": session.hops_max,
        "ttl_min": session.ttl_min,
        "ttl_max": session.ttl_max,
        "max_error_ms": session.max_error_ms,
        "bucket_width_ms": session.bucket_width_ms,
        "sid": session.sid,
        "ntp_warning": ntp_warning,
    }
    record.update({key: value for key, value in extras.items() if value is not None})
    if session.packets_sent == 0:
        record["error"] = "owamp session holds no packets (0 sent): no data for this direction"
    return record


def error_record(
    *,
    direction: str,
    src_site: str,
    dst_site: str,
    host: str,
    time: datetime,
    error: str,
    command: CommandResult | None = None,
    argv: list[str] | None = None,
) -> dict[str, Any]:
    """An ``owamp`` record for a direction that produced no session (no measurement fields)."""
    endpoints = _endpoints(direction, src_site, dst_site, _host_only(host))
    record: dict[str, Any] = {
        "type": "owamp",
        "time": utc_time(time),
        "src": endpoints["src"],
        "dst": endpoints["dst"],
        "tool": TOOL,
        "direction": RECORD_DIRECTION[direction],
        "error": error,
    }
    record.update({k: v for k, v in endpoints.items() if k.endswith("_host")})
    if command is not None:
        record["exit_code"] = command.exit_code
        stderr_excerpt = excerpt(command.stderr)
        if stderr_excerpt:
            record["stderr_excerpt"] = stderr_excerpt
        raw = excerpt(command.stdout)
        if raw:
            record["raw_excerpt"] = raw
        warning = ntp_unsynced(command.stderr)
        if warning:
            record["clock_synced"] = False
            record["ntp_warning"] = warning
    if argv:
        record["command"] = shlex.join(argv)
    return record


def run_test(
    runner: CommandRunner,
    config: OwampConfig,
    *,
    src_site: str,
    dst_site: str,
    now: datetime,
) -> list[dict[str, Any]]:
    """Run owping once and return one ``owamp`` record per requested direction.

    Never raises for what owping or the network does: a missing binary, a
    timeout, an unreachable server or a missing session become error records.
    """
    time = utc_time(now)
    argv = build_argv(config)
    result = runner.run(argv, config.timeout_s)
    common = {"src_site": src_site, "dst_site": dst_site, "host": config.host, "time": time}

    if result.error is not None:
        message = result.error
        if result.exit_code == 127:
            message = f"owping is not installed ({result.error})"
        return [error_record(direction=d, **common, error=message, command=result, argv=argv) for d in config.requested]

    try:
        sessions = parse(result.stdout)
    except OwampParseError as exc:
        return [
            error_record(direction=d, **common, error=f"unparseable owping output: {exc}", command=result, argv=argv)
            for d in config.requested
        ]
    assigned = assign_directions(
        sessions, requested=config.requested, remote_host=config.host, stderr=result.stderr + result.stdout
    )
    ntp_warning = ntp_unsynced(result.stderr)
    records: list[dict[str, Any]] = []
    for direction in config.requested:
        session = assigned.get(direction)
        if session is None:
            message = parse_error(result.stderr) or parse_error(result.stdout)
            if message is None:
                message = f"owping printed no {direction!r} session (exit status {result.exit_code})"
            records.append(error_record(direction=direction, **common, error=message, command=result, argv=argv))
            continue
        record = session_to_record(session, direction=direction, ntp_warning=ntp_warning, **common)
        record["command"] = shlex.join(argv)
        record["packets_requested"] = config.packets
        if result.exit_code != 0:
            record["exit_code"] = result.exit_code
        stderr_excerpt = excerpt(result.stderr)
        if stderr_excerpt:
            record["stderr_excerpt"] = stderr_excerpt
        records.append(record)
    return records
