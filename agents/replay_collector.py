"""``[[replay]]``: replay a scenario file's timeline (docs/scenario-format.md) as this agent's measurements.

A simulated site agent: instead of running tools, the collector takes the ``measurements`` of a
scenario file, moves them to the present and hands them to the scheduler like any collector, so
they go through the agent's own validation, spool and upload to ``POST /api/v1/ingest`` -- the
path real measurements take. ``scripts/demo`` runs one such agent per LHC site.

```toml
[[replay]]
file = "/path/to/lhc-demo.yaml"   # a scenario file (YAML, or JSON which is valid YAML and 100x faster to read)
speed = 1                         # optional: scenario seconds per real second
shift = "end-at-now"              # optional: or an RFC 3339 time, e.g. "2026-03-01T12:00:00Z"
loop = false                      # optional: after the end, start the timeline again, shifted forward
equipment = ["geant-fra"]         # optional: equipment whose snmp records this agent sends
interval_s = 60                   # optional: how often new records are handed over
```

Time shift. The scenario's end -- its ``now``, by default its last measurement -- is mapped to the
*anchor*: with ``shift = "end-at-now"`` the time of the collector's first run (kept in the spool
directory, so a restarted agent continues the same timeline), or the given time. A measurement
at scenario time ``t`` is sent with the time ``anchor + (t - end) / speed``: the first run
backfills the whole history up to now, later runs send what became due since the previous run.
Each run emits exactly the records whose shifted time lies in (previous run, now], so nothing is
sent twice, not even across restarts (the cursor is kept with the anchor).

Loop. With ``loop = true`` the timeline repeats every *period* P: ``end - first measurement``
when the file's ``now`` lies after its last measurement (a 48 h file whose ``now`` closes the
last 5-min interval repeats every 48 h), else the span plus the median spacing of its
measurement times. Iteration k is shifted by k * P. A first run, or one after a long stop,
sends at most one period of history. SNMP counters and sysUpTime keep increasing across
iterations (each counter continues at its average rate over the file), so the centre sees no
counter reset; with ``speed`` other than 1 the counter increments are divided by ``speed`` so that
rates stay what the file says.

Filtering. The agent sends only what it may send (docs/contracts.md#ingest-api): path tests
(``throughput``, ``owamp``, ``traceroute``) whose ``src`` is its site -- so that with one agent per
site each test is sent once --, ``host_tcp`` records of its site, and ``snmp`` records of the
``equipment`` listed (which the centre must have assigned to the agent). Path tests without
``schedule_interval_s`` get the spacing of their series in the file (divided by ``speed``), not the
replay collector's own ``interval_s``.

State. ``<spool_dir>/replay-<hash of the file path>.json`` holds the file's digest, the anchor and
the cursor. It is written only while this process holds the spool's lock (``run`` and ``once``);
``once --dry-run`` prints what would be sent and changes nothing. A changed file (another digest)
or another explicit ``shift`` starts the replay afresh.

Reading. JSON files are decoded with msgspec (a 10 MB scenario in 0.1 s); YAML files need PyYAML,
imported only then (it is not part of the agent's own dependencies).
"""

from __future__ import annotations

import bisect
import contextlib
import errno
import fcntl
import hashlib
import json
import logging
import math
import os
import re
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from collectors.counters import COUNTER_SPECS, TICKS_PER_S, TIMETICKS_MODULUS
from collectors.records import PATH_TEST_TYPES, Record, RecordError, SnmpRecord, decode_records
from collectors.records.types import iso_z
from collectors.table import field_meta

__all__ = [
    "END_AT_NOW",
    "ReplayCollector",
    "ReplayError",
    "ReplayTarget",
    "Timeline",
    "load_timeline",
    "timeline_bounds",
]

logger = logging.getLogger(__name__)

END_AT_NOW = "end-at-now"
_MAX_INTERVAL_S = 7 * 86400.0
_SCHEDULE_FIELD = "schedule_interval_s"
_STATE_VERSION = 1


def parse_time(value: Any) -> datetime | None:
    """An aware datetime (UTC) from an RFC 3339 string or a datetime; None when there is no zone or no time."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip())
        except ValueError:
            return None
    if not isinstance(value, datetime) or value.tzinfo is None:
        return None
    return value.astimezone(UTC)


@dataclass(frozen=True)
class ReplayTarget:
    """One ``[[replay]]`` table (module docstring)."""

    file: Path
    speed: float = field(default=1.0, metadata=field_meta(gt=0, le=1_000_000))
    shift: str = END_AT_NOW
    loop: bool = False
    equipment: tuple[str, ...] = ()
    interval_s: float = field(default=60.0, metadata=field_meta(ge=1, le=_MAX_INTERVAL_S))

    def __post_init__(self) -> None:
        if self.shift != END_AT_NOW and parse_time(self.shift) is None:
            raise ValueError(
                f'shift: must be "{END_AT_NOW}" or an RFC 3339 time with a zone (2026-03-01T12:00:00Z), '
                f"got {self.shift!r}"
            )
        if not self.file.is_file():
            raise ValueError(f"file: {self.file}: no such file")

    @property
    def anchor(self) -> datetime | None:
        """The explicit anchor, or None for end-at-now."""
        return None if self.shift == END_AT_NOW else parse_time(self.shift)


class ReplayError(ValueError):
    """The scenario file cannot be replayed (unreadable, not a scenario, invalid measurements)."""


# --------------------------------------------------------------------------- the timeline of one agent


@dataclass
class _CounterSeries:
    """The SNMP samples of one interface: first values and average rates, to continue them."""

    t0: float
    uptime0: int | None
    start: dict[str, int]
    rate_per_s: dict[str, float]


_SeriesRow = tuple[_CounterSeries, float, dict[str, int]]  # an SNMP record's series, seconds into it, growth


@dataclass
class Timeline:
    """The records one agent may send, sorted by scenario time, and what shifting them needs."""

    file: Path
    digest: str
    name: str
    first: float  # scenario times (epoch seconds) over the whole file, not only this agent's records
    last: float
    end: float
    period: float
    records: list[Record]
    times: list[float]
    total: int  # measurements in the file
    snmp: dict[int, _SeriesRow] = field(default_factory=dict)

    def between(
        self, *, anchor: datetime, lower: datetime | None, upper: datetime, loop: bool, speed: float
    ) -> list[Record]:
        """Records whose shifted time lies in (lower, upper]; lower None: from the beginning (one period with loop)."""
        a = anchor.timestamp()
        hi = self.end + (upper.timestamp() - a) * speed
        if lower is None:
            lo = hi - self.period if loop else -math.inf
        else:
            lo = self.end + (lower.timestamp() - a) * speed
            if loop:
                lo = max(lo, hi - self.period)
        if hi <= lo or not self.times:
            return []
        if loop:
            k_min = 0 if lo == -math.inf else max(0, math.floor((lo - self.last) / self.period))
            k_max = math.floor((hi - self.first) / self.period)
        else:
            k_min = k_max = 0
        out: list[Record] = []
        for k in range(k_min, k_max + 1):
            offset = k * self.period
            start = bisect.bisect_right(self.times, lo - offset)
            stop = bisect.bisect_right(self.times, hi - offset)
            out.extend(self._shifted(i, k, a, speed) for i in range(start, stop))
        return out

    def _shifted(self, i: int, k: int, anchor: float, speed: float) -> Record:
        record = self.records[i]
        t = self.times[i] + k * self.period
        wall = datetime.fromtimestamp(round(anchor + (t - self.end) / speed, 6), UTC)
        if not isinstance(record, SnmpRecord) or (k == 0 and speed == 1):
            return msgspec.structs.replace(record, time=wall)
        series, elapsed, cum = self.snmp[i]
        values = {}
        for name, first in series.start.items():
            modulus = COUNTER_SPECS[name].modulus
            grown = (cum[name] + k * series.rate_per_s[name] * self.period) / speed
            values[name] = (first + round(grown)) % modulus
        uptime = None
        if series.uptime0 is not None:
            uptime = (series.uptime0 + round((elapsed + k * self.period) / speed * TICKS_PER_S)) % TIMETICKS_MODULUS
        return msgspec.structs.replace(
            record,
            time=wall,
            counters=msgspec.structs.replace(record.counters, **values),
            sys_uptime_ticks=uptime if uptime is not None else record.sys_uptime_ticks,
            counter_discontinuity_ticks=None,  # relative to the original sysUpTime: meaningless once moved
        )


def _read_document(path: Path) -> tuple[Any, str]:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ReplayError(f"{path}: cannot read: {exc.strerror or exc}") from None
    digest = hashlib.sha256(raw).hexdigest()
    if raw.lstrip()[:1] == b"{":
        with contextlib.suppress(msgspec.DecodeError):
            return msgspec.json.decode(raw), digest
    try:
        import yaml  # noqa: PLC0415 - optional: only YAML scenario files need it
    except ImportError:
        raise ReplayError(
            f"{path}: not JSON, and reading YAML needs PyYAML (pip install PyYAML), or convert the file to JSON"
        ) from None
    try:
        return yaml.load(raw, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)), digest  # noqa: S506 - safe
    except yaml.YAMLError as exc:
        raise ReplayError(f"{path}: not valid YAML: {exc}") from None


def _own(item: Any, site: str, equipment: frozenset[str]) -> bool:
    if not isinstance(item, dict):
        return False
    kind = item.get("type")
    if kind in PATH_TEST_TYPES:
        return item.get("src") == site
    if kind == "host_tcp":
        return item.get("site") == site
    if kind == "snmp":
        return item.get("equipment") in equipment
    return False


def _median_gap(times: list[float]) -> float | None:
    distinct = sorted(set(times))
    gaps = [b - a for a, b in zip(distinct, distinct[1:], strict=False)]
    return statistics.median(gaps) if gaps else None


def timeline_bounds(doc: Any, *, name: str = "scenario") -> tuple[list[float], float, float, float, float]:
    """Of a scenario document: every measurement's time, the first, the last, the end and the loop period.

    Times are epoch seconds. The end is the document's ``now``, else its last measurement. The period
    is ``end - first`` when ``now`` lies after the last measurement, else the span plus the median
    spacing of the measurement times (at least one second). Raises ReplayError naming ``name``.
    """
    if not isinstance(doc, dict) or not isinstance(doc.get("measurements"), list):
        raise ReplayError(f"{name}: not a scenario: no measurements list (docs/scenario-format.md)")
    times: list[float] = []
    for i, item in enumerate(doc["measurements"]):
        moment = parse_time(item.get("time")) if isinstance(item, dict) else None
        if moment is None:
            raise ReplayError(f"{name}: measurements[{i}].time: an RFC 3339 time with a zone is required")
        times.append(moment.timestamp())
    if not times:
        raise ReplayError(f"{name}: the scenario has no measurements")
    first, last = min(times), max(times)
    end = last
    if doc.get("now") is not None:
        now = parse_time(doc["now"])
        if now is None:
            raise ReplayError(f"{name}: now: must be an RFC 3339 time with a zone")
        end = now.timestamp()
    period = end - first if end > last else (last - first) + (_median_gap(times) or 1.0)
    return times, first, last, end, max(period, 1.0)


def load_timeline(path: Path, *, site: str, equipment: tuple[str, ...] = (), speed: float = 1.0) -> Timeline:
    """Read a scenario file and keep the records ``site``'s agent may send (module docstring)."""
    doc, digest = _read_document(path)
    times, first, last, end, period = timeline_bounds(doc, name=str(path))
    items = doc["measurements"]

    wanted = frozenset(equipment)
    own_index = [i for i, item in enumerate(items) if _own(item, site, wanted)]
    try:
        decoded = decode_records([items[i] for i in own_index], path="measurements")
    except RecordError as exc:
        errors = [
            re.sub(r"^measurements\[(\d+)\]", lambda m: f"measurements[{own_index[int(m.group(1))]}]", e["path"])
            + f": {e['message']}"
            for e in exc.errors[:5]
        ]
        raise ReplayError(f"{path}: " + "; ".join(errors)) from None
    order = sorted(range(len(decoded)), key=lambda j: times[own_index[j]])
    records = [decoded[j] for j in order]
    own_times = [times[own_index[j]] for j in order]
    records = _with_schedules(records, own_times, speed)
    timeline = Timeline(
        file=path,
        digest=digest,
        name=str(doc.get("scenario") or path.stem),
        first=first,
        last=last,
        end=end,
        period=period,
        records=records,
        times=own_times,
        total=len(items),
    )
    timeline.snmp = _counter_series(records, own_times)
    return timeline


def _series_key(record: Record) -> tuple:
    kind = type(record).__struct_config__.tag
    return (kind, record.src, record.dst, getattr(record, "protocol", None), getattr(record, "tool", None))


def _with_schedules(records: list[Record], times: list[float], speed: float) -> list[Record]:
    """Path tests get their series' spacing as schedule_interval_s (divided by speed) unless they state it."""
    series: dict[tuple, list[float]] = defaultdict(list)
    for record, t in zip(records, times, strict=True):
        if _SCHEDULE_FIELD in record.__struct_fields__:
            series[_series_key(record)].append(t)
    gaps = {key: _median_gap(ts) for key, ts in series.items()}
    out = []
    for record in records:
        if _SCHEDULE_FIELD in record.__struct_fields__:
            given = getattr(record, _SCHEDULE_FIELD)
            interval = given if given is not None else gaps.get(_series_key(record))
            if interval:
                record = msgspec.structs.replace(record, **{_SCHEDULE_FIELD: min(interval / speed, _MAX_INTERVAL_S)})
        out.append(record)
    return out


def _counter_series(records: list[Record], times: list[float]) -> dict[int, _SeriesRow]:
    """For each SNMP record: its interface's series, seconds since the series' first sample, and how much
    each counter grew since then (wraps unwrapped; a sysUpTime that went back is a reset from zero)."""
    by_iface: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, record in enumerate(records):
        if isinstance(record, SnmpRecord):
            by_iface[(record.equipment, record.interface)].append(i)
    out: dict[int, _SeriesRow] = {}
    for indexes in by_iface.values():
        head = records[indexes[0]]
        start = {k: v for k, v in msgspec.structs.asdict(head.counters).items() if v is not None}
        cum = dict.fromkeys(start, 0)
        rows = []
        prev = head
        for i in indexes:
            record = records[i]
            if record is not head:
                values = msgspec.structs.asdict(record.counters)
                reset = (
                    prev.sys_uptime_ticks is not None
                    and record.sys_uptime_ticks is not None
                    and record.sys_uptime_ticks < prev.sys_uptime_ticks
                )
                for name in cum:
                    old, new = getattr(prev.counters, name), values.get(name)
                    if new is None or old is None:
                        continue
                    modulus = COUNTER_SPECS[name].modulus
                    cum[name] += new if reset else (new - old) % modulus
                prev = record
            rows.append((i, times[i] - times[indexes[0]], dict(cum)))
        span = times[indexes[-1]] - times[indexes[0]]
        series = _CounterSeries(
            t0=times[indexes[0]],
            uptime0=head.sys_uptime_ticks,
            start=start,
            rate_per_s={name: (cum[name] / span if span > 0 else 0.0) for name in start},
        )
        for i, elapsed, grown in rows:
            out[i] = (series, elapsed, grown)
    return out


# --------------------------------------------------------------------------- the collector


def _spool_held_here(spool_dir: Path) -> bool:
    """True when this process holds the spool's write lock (``run``/``once``; not ``once --dry-run``)."""
    path = spool_dir / "lock"
    try:
        holder = path.read_text(encoding="utf-8").strip()
    except OSError:
        return False
    if holder != str(os.getpid()):
        return False
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        return exc.errno in (errno.EWOULDBLOCK, errno.EACCES)  # held, and the pid in it is ours
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)  # nobody holds it: a file left by an earlier process
        return False
    finally:
        os.close(fd)



class ReplayCollector:
    """A ``[[replay]]`` table: each run returns the scenario records that became due (module docstring).

    ``state_dir`` is the spool directory; ``persist`` forces (True) or forbids (False) keeping the
    anchor and cursor there; None: only while this process holds the spool's lock.
    """

    exclusive_group = None
    timeout_s = 900.0  # the first run reads the file and backfills the whole history

    def __init__(
        self,
        target: ReplayTarget,
        *,
        index: int,
        site: str,
        state_dir: str | os.PathLike[str] | None = None,
        persist: bool | None = None,
    ) -> None:
        self.target = target
        self.site = site
        self.name = f"replay[{index}]:{target.file.stem}"
        self.interval_s = float(target.interval_s)
        self.state_dir = Path(state_dir) if state_dir is not None else None
        self.persist = persist
        self.anchor: datetime | None = target.anchor
        self.cursor: datetime | None = None
        self._timeline: Timeline | None = None
        self._restored = False

    @property
    def state_path(self) -> Path | None:
        if self.state_dir is None:
            return None
        key = hashlib.sha256(str(self.target.file.resolve()).encode()).hexdigest()[:16]
        return self.state_dir / f"replay-{key}.json"

    def timeline(self) -> Timeline:
        """The file's records for this agent (read on first use)."""
        if self._timeline is None:
            t = self.target
            self._timeline = load_timeline(t.file, site=self.site, equipment=t.equipment, speed=t.speed)
            logger.info(
                "replay: scenario loaded",
                extra={
                    "collector": self.name,
                    "scenario": self._timeline.name,
                    "measurements": self._timeline.total,
                    "records_for_this_agent": len(self._timeline.records),
                    "period_s": self._timeline.period,
                    "loop": t.loop,
                    "speed": t.speed,
                },
            )
        return self._timeline

    def collect(self, now: datetime) -> list[Record]:
        """The records whose shifted time lies in (previous run, ``now``]."""
        timeline = self.timeline()
        if not self._restored:
            self._restore(timeline)
            self._restored = True
        if self.anchor is None:  # end-at-now: the scenario's end is this first run
            self.anchor = now.astimezone(UTC).replace(microsecond=0)
        records = timeline.between(
            anchor=self.anchor, lower=self.cursor, upper=now, loop=self.target.loop, speed=self.target.speed
        )
        self.cursor = now if self.cursor is None else max(self.cursor, now)  # a clock stepping back sends nothing twice
        self._save(timeline)  # before the records are spooled: a crash may lose one run's records, never doubles them
        return records

    # -- state

    def _persisting(self) -> bool:
        if self.state_dir is None:
            return False
        if self.persist is not None:
            return self.persist
        return _spool_held_here(self.state_dir)

    def _restore(self, timeline: Timeline) -> None:
        path = self.state_path
        if path is None or not self._persisting():
            return
        try:
            state = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return
        except (OSError, ValueError) as exc:
            logger.warning("replay: state unreadable, starting afresh", extra={"path": str(path), "error": str(exc)})
            return
        anchor, cursor = parse_time(state.get("anchor")), parse_time(state.get("cursor"))
        explicit = self.target.anchor
        if state.get("digest") != timeline.digest or anchor is None or (explicit is not None and anchor != explicit):
            logger.info(
                "replay: the scenario file or the shift changed: the timeline starts afresh",
                extra={"collector": self.name, "path": str(path)},
            )
            return
        self.anchor, self.cursor = anchor, cursor

    def _save(self, timeline: Timeline) -> None:
        path = self.state_path
        if path is None or not self._persisting():
            return
        state = {
            "version": _STATE_VERSION,
            "file": str(self.target.file),
            "digest": timeline.digest,
            "anchor": iso_z(self.anchor, utc=True),
            "cursor": iso_z(self.cursor, utc=True),
        }
        tmp = path.with_name(path.name + ".tmp")
        try:
            tmp.write_text(json.dumps(state, indent=1) + "\n", encoding="utf-8")
            os.replace(tmp, path)
        except OSError as exc:
            logger.error("replay: cannot keep the replay state", extra={"path": str(path), "error": str(exc)})
