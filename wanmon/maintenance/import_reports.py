"""What an import of carrier notifications reports, per window and per notification (plain dataclasses).

The import commands print it, the API answers it, and each notification keeps its own (``CarrierNotification.report``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from wanmon.maintenance.choices import CarrierNotificationStatus, Review

__all__ = ["CarrierNotificationReport", "ImportReport", "WindowReport"]


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
class CarrierNotificationReport:
    """The outcome of one notification (a file, a message, a URL)."""

    origin: str
    notification_id: int | None = None
    duplicate: bool = False
    parser: str = ""
    status: str = CarrierNotificationStatus.PARSED
    carrier: str | None = None
    windows: list[WindowReport] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    trusted: bool = False
    trust: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ImportReport:
    """Reports of every notification of one import (one file, a mailbox, a URL)."""

    notifications: list[CarrierNotificationReport] = field(default_factory=list)

    def totals(self) -> dict[str, int]:
        counts = {"notifications": len(self.notifications), "duplicates": 0, "failed": 0, "held": 0}
        for n in self.notifications:
            counts["duplicates"] += n.duplicate
            counts["failed"] += n.status == CarrierNotificationStatus.FAILED
            for w in n.windows:
                counts[w.action] = counts.get(w.action, 0) + 1
                counts["held"] += w.review == Review.HELD
                counts["unmatched_objects"] = counts.get("unmatched_objects", 0) + len(w.unmatched)
        return counts

    def as_dict(self) -> dict[str, Any]:
        return {"totals": self.totals(), "notifications": [n.as_dict() for n in self.notifications]}
