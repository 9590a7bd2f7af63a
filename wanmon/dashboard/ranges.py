"""The time range a page shows: a span from the picker (6 h to 1 y) ending now or at a chosen time; and the instant
the overview and the map show (pure)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from urllib.parse import urlencode

from collectors.records.types import iso_z
from wanmon.core.guard import year_problem
from wanmon.dashboard import constants as k


@dataclass(frozen=True)
class TimeRange:
    """[start, end) of a page, the bucket its charts use, and whether the end was chosen (anchored)."""

    key: str
    start: datetime
    end: datetime
    bucket_s: int
    anchored: bool = False

    @property
    def raw_tests(self) -> bool:
        """Whether every single test is drawn (short ranges) rather than averages per bucket."""
        return self.bucket_s <= k.RAW_TESTS_MAX_BUCKET_S

    @property
    def custom(self) -> bool:
        """Whether the range was given by its start and end (a zoom) rather than a span."""
        return self.key == CUSTOM

    def query(self, **overrides: str) -> str:
        """The query string that reproduces this range (for links), with optional overrides."""
        params = {"start": iso_z(self.start, "seconds", utc=True)} if self.custom else {"range": self.key}
        if self.anchored:
            params["end"] = iso_z(self.end, "seconds", utc=True)
        params.update({name: value for name, value in overrides.items() if value is not None})
        return urlencode(params)


@dataclass(frozen=True)
class AsOf:
    """The instant the overview and the map show: the one chosen (``at_param``, from ``?at=``), or ``now``."""

    now: datetime
    at_param: datetime | None = None

    @property
    def at(self) -> datetime:
        return self.at_param or self.now

    @property
    def query(self) -> str:
        """What the page's links to other pages carry: the chosen instant as their range's end (none for now)."""
        return urlencode({"end": iso_z(self.at, "seconds", utc=True)}) if self.at_param else ""

    def gap_href(self, path: str, latest: datetime | None) -> str | None:
        """A link to page ``path`` at the newest data when it shows now and nothing arrived for
        DATA_GAP_NOTICE_AFTER (a page of greys is then a gap in the data, not a network down); else None."""
        if latest is None or self.at_param or self.now - latest <= k.DATA_GAP_NOTICE_AFTER:
            return None
        return f"{path}?{urlencode({'at': iso_z(latest, 'seconds', utc=True)})}"




class RangeError(ValueError):
    """A time parameter that cannot be read: ``field`` names it (the page answers 400 saying so)."""

    def __init__(self, field_name: str, message: str):
        super().__init__(f"{field_name}: {message}")
        self.field = field_name
        self.message = message


#: The key of a range given by ``start`` and ``end`` (a zoom, a shared link).
CUSTOM = "custom"
_SPAN = re.compile(r"^(\d{1,4})(min|m|h|d|w|y)$")
_SPAN_UNITS = {"min": 60, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400, "y": 365 * 86400}
#: Shortest and longest span a page shows.
MIN_SPAN = timedelta(minutes=5)
MAX_SPAN = timedelta(days=3660)
#: Bucket widths the interface rollups answer exactly, finest first; a range takes the finest giving at most
#: MAX_BUCKETS points per series (the picker's spans get the widths of constants.RANGES).
BUCKET_WIDTHS_S = (60, 300, 3600, 3 * 3600, 86400)
MAX_BUCKETS = 400


def parse_span(text: str) -> timedelta | None:
    """``6h``, ``2d``, ``90min``, ``2w``, ``1y`` as a timedelta; None when it is not such a span."""
    match = _SPAN.match(text.strip().lower())
    if not match or int(match.group(1)) == 0:
        return None
    return timedelta(seconds=int(match.group(1)) * _SPAN_UNITS[match.group(2)])


def bucket_for_span(span: timedelta) -> int:
    """The finest rollup width giving at most MAX_BUCKETS buckets over ``span``."""
    for width in BUCKET_WIDTHS_S:
        if span.total_seconds() / width <= MAX_BUCKETS:
            return width
    return BUCKET_WIDTHS_S[-1]


def parse_time_param(name: str, text: str | None, tz: tzinfo) -> datetime | None:
    """The pages' one reader of a time parameter (``at``, ``start``, ``end``): ISO 8601, naive times wall-clock
    times of ``tz``, in UTC. Text that is no time, or a time outside the years wanmon accepts (year 1 or 9999
    overflows the range and lead times computed from it), is a RangeError naming ``name``."""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace(" ", "T"))
    except ValueError:
        raise RangeError(name, f"{text[:40]!r} is not a time (use ISO 8601, e.g. 2026-03-01T12:00:00Z)") from None
    # before the zone is applied: 0001-01-01T00:00+01:00 in UTC is in year 0, which Python cannot hold
    if problem := year_problem(moment.year):
        raise RangeError(name, problem)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=tz)
    return moment.astimezone(UTC)


def range_from_params(*, range_text: str | None, start_text: str | None, end_text: str | None, tz: tzinfo,
                      now: datetime) -> TimeRange:
    """The range of a page from its ``range``, ``start`` and ``end`` parameters, each checked (RangeError).

    ``start`` and ``end``: exactly that (a zoom); ``start`` alone: from it to now; ``range`` (a picker key or any
    span such as ``2d`` or ``90min``) ending at ``end`` or now; nothing: the default range."""
    start = parse_time_param("start", start_text, tz)
    end = parse_time_param("end", end_text, tz)
    if start is not None:
        if range_text:
            raise RangeError("range", "give either range or start, not both")
        stop = end or now
        if stop <= start:
            raise RangeError("start", "must be before end")
        if stop - start < MIN_SPAN or stop - start > MAX_SPAN:
            raise RangeError("start", "the range must span 5 minutes to 10 years")
        return TimeRange(key=CUSTOM, start=start, end=stop, bucket_s=bucket_for_span(stop - start),
                         anchored=end is not None)
    if range_text and range_text not in k.RANGES:
        span = parse_span(range_text)
        if span is None or not MIN_SPAN <= span <= MAX_SPAN:
            raise RangeError("range", f"{range_text[:20]!r} is not a span from 5min to 10y "
                                      f"(one of {', '.join(k.RANGES)}, or e.g. 2d, 90min, 2w)")
        stop = end or now
        return TimeRange(key=range_text.strip().lower(), start=stop - span, end=stop, bucket_s=bucket_for_span(span),
                         anchored=end is not None)
    return resolve_range(key=range_text, end=end, now=now)


def parse_time(text: str | None, tz: tzinfo) -> datetime | None:
    """:func:`parse_time_param` of a time from a link or a form, None where that would refuse it."""
    try:
        return parse_time_param("time", text, tz)
    except RangeError:
        return None


def resolve_range(*, key: str | None, end: datetime | None, now: datetime) -> TimeRange:
    """The picker's range ``key`` (default 24 h) ending at ``end`` (default: now, not anchored)."""
    key = key if key in k.RANGES else k.DEFAULT_RANGE
    span, bucket_s = k.RANGES[key]
    anchored = end is not None
    end = end or now
    return TimeRange(key=key, start=end - span, end=end, bucket_s=bucket_s, anchored=anchored)
