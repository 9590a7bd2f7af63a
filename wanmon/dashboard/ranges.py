"""The time range a page shows: a span from the picker (6 h to 1 y) ending now or at a chosen time; and the instant
the overview and the map show (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from urllib.parse import urlencode

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

    def query(self, **overrides: str) -> str:
        """The query string that reproduces this range (for links), with optional overrides."""
        params = {"range": self.key}
        if self.anchored:
            params["end"] = iso_utc(self.end)
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
        return urlencode({"end": iso_utc(self.at)}) if self.at_param else ""

    def gap_href(self, path: str, latest: datetime | None) -> str | None:
        """A link to page ``path`` at the newest data when it shows now and nothing arrived for
        DATA_GAP_NOTICE_AFTER (a page of greys is then a gap in the data, not a network down); else None."""
        if latest is None or self.at_param or self.now - latest <= k.DATA_GAP_NOTICE_AFTER:
            return None
        return f"{path}?{urlencode({'at': iso_utc(latest)})}"


def iso_utc(moment: datetime) -> str:
    """``2026-03-01T12:00:00Z``: the form of times in links."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str | None, tz: tzinfo) -> datetime | None:
    """An ISO 8601 time from a link or a form; naive times are wall-clock times of ``tz``. None if invalid."""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace(" ", "T"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=tz)
    return moment.astimezone(UTC)


def resolve_range(*, key: str | None, end: datetime | None, now: datetime) -> TimeRange:
    """The picker's range ``key`` (default 24 h) ending at ``end`` (default: now, not anchored)."""
    key = key if key in k.RANGES else k.DEFAULT_RANGE
    span, bucket_s = k.RANGES[key]
    anchored = end is not None
    end = end or now
    return TimeRange(key=key, start=end - span, end=end, bucket_s=bucket_s, anchored=anchored)
