"""What an import of carrier notices reports, per window and per notice (plain dataclasses).

The import commands print it, the API answers it, and each notice keeps its own (``CarrierNotice.report``).
The JSON keeps the names it had when carrier notices were called notifications (``notifications``,
``notification_id``, ``totals.notifications``) beside the current ones: clients read either.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from wanmon.maintenance.choices import CarrierNoticeStatus, Review

__all__ = ["CarrierNoticeReport", "ImportReport", "WindowReport"]


@dataclass
class WindowReport:
    """What one announced window did: created, updated, unchanged or ignored (older), and its objects."""

    reference: str
    uid: str
    sequence: int | None
    start: str
    end: str
    status: str | None
    action: str
    window_id: int | None = None
    reason: str = ""
    matched: list[str] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)
    review: str = ""
    #: why its times are doubtful: the window is held for review (plausibility.py)
    doubts: list[str] = field(default_factory=list)
    #: what else an operator should know, e.g. an announced circuit that is another carrier's
    notes: list[str] = field(default_factory=list)


@dataclass
class CarrierNoticeReport:
    """The outcome of one carrier notice (a file, a message, a URL)."""

    origin: str
    notice_id: int | None = None
    duplicate: bool = False
    parser: str = ""
    status: str = CarrierNoticeStatus.PARSED
    carrier: str | None = None
    windows: list[WindowReport] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    trusted: bool = False
    trust: str = ""

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["notification_id"] = self.notice_id  # the former name, kept for clients
        return data


@dataclass
class ImportReport:
    """Reports of every carrier notice of one import (one file, a mailbox, a URL)."""

    notices: list[CarrierNoticeReport] = field(default_factory=list)

    def totals(self) -> dict[str, int]:
        counts = {"notices": len(self.notices), "duplicates": 0, "failed": 0, "held": 0}
        for n in self.notices:
            counts["duplicates"] += n.duplicate
            counts["failed"] += n.status == CarrierNoticeStatus.FAILED
            for w in n.windows:
                counts[w.action] = counts.get(w.action, 0) + 1
                counts["held"] += w.review == Review.HELD
                counts["unmatched_objects"] = counts.get("unmatched_objects", 0) + len(w.unmatched)
        return counts

    def as_dict(self) -> dict[str, Any]:
        totals = self.totals()
        notices = [n.as_dict() for n in self.notices]
        # ``notifications`` (key and count): the former names, kept for clients.
        return {"totals": {**totals, "notifications": totals["notices"]}, "notices": notices, "notifications": notices}
