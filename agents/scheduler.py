"""Run every collector at its own interval; one slow, hung or broken collector never holds up another.

A collector is any object with:

* ``name: str`` (unique; used in logs) and ``interval_s: float`` (its period);
* ``collect(now) -> list[Record | dict]``, a plain or an ``async`` function. Plain ones run in
  a thread of their own (they run tools and block); one may also return an awaitable;
* optionally ``timeout_s`` (default: ``interval_s``), ``exclusive_group`` and/or
  ``exclusive_groups`` (collectors sharing a group never run at the same time: two throughput
  tests would measure each other, and two active tests towards the same far host, e.g. nuttcp
  and owping to one perfSONAR node, would disturb each other; see :mod:`agents.adapters`), and
  ``error_records(now, message) -> list`` (records describing a failed run: a test that hangs
  is evidence about the path too).

A run takes all its groups at once, when none of them is busy, and never holds one while
waiting for another: a throughput test queued behind another one does not block an owping
session to its own host meanwhile, and overlapping groups cannot deadlock. Its timeout starts
once it holds them.

Every run's output goes through :func:`agents.validation.check_records` (invalid records are
logged and dropped, so they cannot poison a batch) and the valid records to the ``sink`` (the
spool, or stdout for ``once --dry-run``). Records of path tests get the collector's
``interval_s`` as ``schedule_interval_s``: the centre compares periodic loss with it.

Scheduling is fixed-rate: run k starts at ``first + k * interval_s``, where ``first`` is drawn
uniformly in ``[0, min(interval_s, start_jitter_s)]`` so that agents (and collectors) restarted
together do not all poll at once. A run that overruns its slot makes the next slots be skipped
(logged), never queued. A sync collector that outlives its timeout keeps its thread until the
tool returns (threads cannot be killed); its next runs are skipped until then, so hung threads
never pile up. The threads are daemon threads: a hung tool never blocks the agent's exit.

Time comes from an injectable :class:`~agents.clock.Clock` (the records' time, the schedule and
every sleep between runs), so tests can run hours of schedule in seconds. With a ``poll_log``
(:class:`~agents.polls.PollLog`) every run, and when the next one is due, is recorded in the
spool directory, where ``wanmon-agent spool`` shows it.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import random
import threading
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol, runtime_checkable

from agents.clock import SYSTEM_CLOCK, Clock, stopped_within
from agents.polls import PollLog
from agents.validation import check_records
from collectors.records import Record
from collectors.records.types import iso_z

__all__ = [
    "Collector",
    "RecordSink",
    "RunResult",
    "Scheduler",
    "exclusive_groups",
    "run_in_daemon_thread",
    "stopped_within",
]

logger = logging.getLogger(__name__)


@runtime_checkable
class Collector(Protocol):
    """What the scheduler runs (see the module docstring for the optional attributes)."""

    name: str
    interval_s: float

    def collect(self, now: datetime) -> Any:
        """Measure once; return records (Records or dicts), or an awaitable of them."""
        ...


RecordSink = Callable[[Any, list[Record]], None]
"""Receives each run's valid records: ``sink(collector, records)``. Must not lose them on return."""


@dataclass
class RunResult:
    """One run of one collector."""

    collector: str
    started: datetime
    duration_s: float = 0.0
    records: list[Record] = field(default_factory=list)
    invalid: int = 0
    error: str | None = None
    timed_out: bool = False
    skipped: bool = False


@dataclass
class _State:
    running: bool = False  # a run (or its thread, after a timeout) is still going
    runs: int = 0
    skipped: int = 0
    dropped_fields_logged: bool = False


def run_in_daemon_thread(function: Callable[..., Any], *args: Any, name: str) -> asyncio.Future[Any]:
    """``function(*args)`` in a new daemon thread; a future of its result on the running loop.

    Unlike ``asyncio.to_thread``, a thread that never returns does not occupy a pool slot for
    ever nor block interpreter exit.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(method: str, value: Any) -> None:
        if not future.done():  # the waiter may have given up (timeout, shutdown)
            getattr(future, method)(value)

    def target() -> None:
        try:
            result = function(*args)
        except BaseException as exc:  # reported to the awaiting side, whatever it is
            outcome = ("set_exception", exc)
        else:
            outcome = ("set_result", result)
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
            loop.call_soon_threadsafe(settle, *outcome)

    threading.Thread(target=target, name=f"collector:{name}", daemon=True).start()
    return future


class Scheduler:
    """Runs collectors periodically (:meth:`run_forever`) or once each (:meth:`run_once`)."""

    def __init__(
        self,
        collectors: Sequence[Any],
        *,
        sink: RecordSink,
        start_jitter_s: float = 60.0,
        rng: random.Random | None = None,
        clock: Clock = SYSTEM_CLOCK,
        poll_log: PollLog | None = None,
    ) -> None:
        names = [c.name for c in collectors]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"collector names must be unique: {', '.join(duplicates)}")
        self.collectors = list(collectors)
        self._sink = sink
        self._start_jitter_s = start_jitter_s
        self._rng = rng or random.Random()
        self._clock = clock
        self._poll_log = poll_log
        self._states = {c.name: _State() for c in collectors}
        self._busy: set[str] = set()  # exclusive groups held by running collectors
        self._group_waiters: list[asyncio.Future[None]] = []
        self._stop: asyncio.Event | None = None  # set while run_forever runs

    # -- entry points -------------------------------------------------------------------------

    async def run_once(self) -> list[RunResult]:
        """Run every collector once, concurrently (exclusive groups one after the other)."""

        async def one(collector: Any) -> RunResult:
            result = await self.run_collector(collector)
            self._record(collector, result, next_due=None)
            return result

        return list(await asyncio.gather(*(one(c) for c in self.collectors)))

    async def run_forever(self, stop: asyncio.Event, *, grace_s: float = 10.0) -> None:
        """Run each collector at its interval until ``stop`` is set.

        Runs in progress then get ``grace_s`` seconds to finish (their records are spooled),
        after which they are abandoned.
        """
        self._stop = stop
        if self._poll_log is not None:
            self._poll_log.keep_only(c.name for c in self.collectors)
        tasks = [asyncio.create_task(self._loop(c, stop), name=f"collector:{c.name}") for c in self.collectors]
        if not tasks:
            await stop.wait()
            return
        try:
            await stop.wait()
            _, pending = await asyncio.wait(tasks, timeout=grace_s)
            if pending:
                logger.warning(
                    "collectors still running at shutdown abandoned",
                    extra={"collectors": sorted(t.get_name().removeprefix("collector:") for t in pending)},
                )
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    # -- one collector ------------------------------------------------------------------------

    async def _loop(self, collector: Any, stop: asyncio.Event) -> None:
        clock = self._clock
        interval_s = float(collector.interval_s)
        next_at = clock.monotonic() + self._rng.uniform(0.0, min(interval_s, self._start_jitter_s))
        if self._poll_log is not None:
            self._poll_log.scheduled(collector.name, interval_s=interval_s, next_due=self._wall(next_at))
        while not await clock.wait(stop, next_at - clock.monotonic()):
            result = await self.run_collector(collector)
            next_at += interval_s
            late_s = clock.monotonic() - next_at
            if late_s >= 0 and not stop.is_set():
                missed = int(late_s // interval_s) + 1
                next_at += missed * interval_s
                logger.warning(
                    "collector run overran its interval; skipping the missed runs",
                    extra={"collector": collector.name, "missed_runs": missed, "interval_s": interval_s},
                )
            self._record(collector, result, next_due=None if stop.is_set() else self._wall(next_at))
            if stop.is_set():
                return

    def _wall(self, monotonic_at: float) -> datetime:
        """The wall-clock time of a point on the monotonic scale."""
        return self._clock.now() + timedelta(seconds=monotonic_at - self._clock.monotonic())

    def _record(self, collector: Any, result: RunResult, *, next_due: datetime | None) -> None:
        if self._poll_log is not None:
            self._poll_log.ran(
                result, interval_s=float(collector.interval_s), finished=self._clock.now(), next_due=next_due
            )

    @contextlib.asynccontextmanager
    async def _exclusive(self, groups: list[str]) -> AsyncIterator[None]:
        """Hold all of ``groups``: wait until none is busy, then take them together."""
        wanted = set(groups)
        while not self._busy.isdisjoint(wanted):
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._group_waiters.append(waiter)
            try:
                await waiter
            finally:
                with contextlib.suppress(ValueError):
                    self._group_waiters.remove(waiter)
        self._busy |= wanted
        try:
            yield
        finally:
            # Synchronous, so that it also happens when the run is cancelled (shutdown).
            self._busy -= wanted
            waiters, self._group_waiters = self._group_waiters, []
            for waiter in waiters:  # in arrival order; each checks its groups again
                if not waiter.done():
                    waiter.set_result(None)

    async def run_collector(self, collector: Any) -> RunResult:
        """One run: call, bound in time, validate, hand to the sink. Never raises (but CancelledError)."""
        # A test on demand (agents/jobs.py) is run once through here, outside the schedule: it gets its state now.
        state = self._states.setdefault(collector.name, _State())
        if state.running:
            state.skipped += 1
            logger.warning(
                "previous run still going (hung tool?): this run is skipped",
                extra={"collector": collector.name, "skipped_runs": state.skipped},
            )
            return RunResult(collector.name, self._clock.now(), skipped=True)
        async with self._exclusive(exclusive_groups(collector)):
            if self._stop is not None and self._stop.is_set():
                # Waited for its group's lock past shutdown: starting a test now would only be abandoned.
                return RunResult(collector.name, self._clock.now(), skipped=True)
            return await self._run(collector, state)

    async def _run(self, collector: Any, state: _State) -> RunResult:
        started = self._clock.now()
        result = RunResult(collector.name, started)
        timeout_s = float(getattr(collector, "timeout_s", None) or collector.interval_s)
        t0 = time.monotonic()
        state.runs += 1
        output: Any = None
        try:
            output = await asyncio.wait_for(self._call(collector, started, state), timeout_s)
        except TimeoutError:
            result.timed_out = True
            result.error = f"{collector.name} did not finish within {timeout_s:g} s"
        except Exception as exc:  # a collector bug must cost one run, not the agent
            result.error = f"{collector.name} failed: {type(exc).__name__}: {exc}"
            logger.error("collector raised", exc_info=True, extra={"collector": collector.name})
        result.duration_s = time.monotonic() - t0
        if result.error is not None:
            logger.error(result.error, extra={"collector": collector.name, "timed_out": result.timed_out})
            output = self._error_records(collector, started, result.error)

        # A test on demand is not periodic: its records carry no schedule_interval_s (PERIODIC_LOSS compares with it).
        period_s = None if getattr(collector, "on_demand", False) else float(collector.interval_s)
        checked = check_records(output, now=self._clock.now(), schedule_interval_s=period_s)
        result.records = checked.records
        result.invalid = len(checked.invalid)
        for invalid in checked.invalid:
            logger.error(
                "invalid record dropped (the centre would refuse it)",
                extra={
                    "collector": collector.name,
                    "index": invalid.index,
                    "record_type": invalid.record_type,
                    "errors": invalid.errors,
                },
            )
        if checked.dropped_fields and not state.dropped_fields_logged:
            state.dropped_fields_logged = True  # once per collector: the same keys come every run
            logger.debug(
                "fields unknown to the wire schema not sent",
                extra={"collector": collector.name, "fields": sorted(checked.dropped_fields)},
            )
        if checked.records:
            try:
                self._sink(collector, checked.records)
            except Exception:
                # Typically a full or read-only disk. Nothing else can keep them: say how many were lost.
                logger.critical(
                    "records could not be stored and are lost",
                    exc_info=True,
                    extra={"collector": collector.name, "records_lost": len(checked.records)},
                )
        logger.info(
            "collector run",
            extra={
                "collector": collector.name,
                "started": iso_z(started, "milliseconds"),
                "records": len(checked.records),
                "invalid": result.invalid,
                "duration_s": round(result.duration_s, 3),
                "error": result.error,
            },
        )
        return result

    async def _call(self, collector: Any, now: datetime, state: _State) -> Any:
        state.running = True
        if inspect.iscoroutinefunction(collector.collect):
            try:
                return await collector.collect(now)
            finally:
                state.running = False

        def call() -> Any:
            try:
                return collector.collect(now)
            finally:
                state.running = False  # only when the thread really ends, even after a timeout

        output = await run_in_daemon_thread(call, name=collector.name)
        if inspect.isawaitable(output):  # a plain function that hands back a coroutine (e.g. an asyncio SNMP poll)
            output = await output
        return output

    @staticmethod
    def _error_records(collector: Any, now: datetime, message: str) -> list[Any]:
        make = getattr(collector, "error_records", None)
        if make is None:
            return []
        try:
            return list(make(now, message))
        except Exception:
            logger.exception("error_records failed", extra={"collector": collector.name})
            return []


def exclusive_groups(collector: Any) -> list[str]:
    """The sorted exclusive groups of a collector (``exclusive_group`` and ``exclusive_groups`` together)."""
    groups = set(getattr(collector, "exclusive_groups", None) or ())
    single = getattr(collector, "exclusive_group", None)
    if single:
        groups.add(single)
    return sorted(groups)
