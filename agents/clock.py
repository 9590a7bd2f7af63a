"""The agent's sense of time, injectable: the scheduler and the upload loop only wait through a :class:`Clock`.

The daemon uses :data:`SYSTEM_CLOCK`. Tests pass a clock of their own to run hours of the
agent's life in seconds (an hour-long central outage: sixty one-minute collection runs, the
upload loop's backoff up to its cap) while the network, the spool and the centre stay real.

Three things make a clock:

* ``now()``: the wall-clock time of a run, the ``time`` of the records it produces (UTC, aware);
* ``monotonic()``: seconds on a monotonic scale, for fixed-rate scheduling;
* ``wait(stop, delay_s)``: sleep ``delay_s`` seconds of this clock, or less if ``stop`` is set
  first; returns True when ``stop`` is set. Every sleep of the daemon's loops goes through it.

Timeouts of work in progress (a collector's ``timeout_s``, HTTP timeouts) stay in real time:
they bound real tools and real sockets.
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from typing import Protocol, runtime_checkable

__all__ = ["SYSTEM_CLOCK", "Clock", "SystemClock", "stopped_within"]


@runtime_checkable
class Clock(Protocol):
    """What the scheduler and the upload loop need to know about time."""

    def now(self) -> datetime:
        """The current wall-clock time, UTC."""
        ...

    def monotonic(self) -> float:
        """Seconds on a monotonic scale (only differences mean anything)."""
        ...

    async def wait(self, stop: asyncio.Event, delay_s: float) -> bool:
        """Sleep ``delay_s`` seconds, or until ``stop`` is set; True when ``stop`` is set."""
        ...


class SystemClock:
    """Real time: the system's UTC clock, ``time.monotonic`` (asyncio's own scale), real sleeps."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()

    async def wait(self, stop: asyncio.Event, delay_s: float) -> bool:
        return await stopped_within(stop, delay_s)


SYSTEM_CLOCK = SystemClock()


async def stopped_within(stop: asyncio.Event, delay_s: float) -> bool:
    """Wait up to ``delay_s`` real seconds; True as soon as ``stop`` is set."""
    if stop.is_set():
        return True
    try:
        await asyncio.wait_for(stop.wait(), timeout=max(0.0, delay_s))
    except TimeoutError:
        return False
    return True
