"""The scheduler: every collector at its pace; a hung, slow or broken one never holds up the others."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from datetime import UTC, datetime, timedelta

import pytest

from agents.polls import PollLog, read_poll_log
from agents.scheduler import Scheduler
from collectors.records import HostTcpRecord, ThroughputRecord
from tests.agents.harness import VirtualClock


def throughput(now: datetime, **over) -> dict:
    record = {
        "type": "throughput",
        "time": now,
        "src": "RAL",
        "dst": "FZK",
        "tool": "nuttcp",
        "protocol": "tcp",
        "duration_s": 10.0,
        "throughput_bps": 9.0e8,
        "direction": "forward",
        "command": "nuttcp -t fzk",
    }
    record.update(over)
    return record


def host_tcp(now: datetime) -> HostTcpRecord:
    return HostTcpRecord(
        time=now,
        site="RAL",
        host="ral-dt01",
        tcp_rmem=[4096, 87380, 4194304],
        tcp_wmem=[4096, 65536, 4194304],
        rmem_max=4194304,
        wmem_max=4194304,
        congestion_control="cubic",
        mtu=9000,
    )


class Fake:
    """A collector whose behaviour is a function of the run number."""

    def __init__(self, name: str, interval_s: float, behave, *, timeout_s: float | None = None, group=None, groups=()):
        self.name, self.interval_s, self.timeout_s, self.exclusive_group = name, interval_s, timeout_s, group
        self.exclusive_groups = groups
        self.behave = behave
        self.calls = 0

    def collect(self, now):
        self.calls += 1
        return self.behave(now, self.calls)

    def error_records(self, now, message):
        return [throughput(now, throughput_bps=None, error=message)]


class Sink:
    def __init__(self):
        self.records: dict[str, list] = {}

    def __call__(self, collector, records):
        self.records.setdefault(collector.name, []).extend(records)


def run_for(scheduler: Scheduler, seconds: float, *, grace_s: float = 0.2) -> None:
    async def go():
        stop = asyncio.Event()
        asyncio.get_running_loop().call_later(seconds, stop.set)
        await scheduler.run_forever(stop, grace_s=grace_s)

    asyncio.run(go())


def test_a_hung_collector_never_delays_the_others(caplog):
    release = threading.Event()
    fast = Fake("fast", 0.1, lambda now, n: [throughput(now)])
    hung = Fake("hung", 0.2, lambda now, n: release.wait(30) and [], timeout_s=0.3)
    sink = Sink()

    started = time.monotonic()
    with caplog.at_level(logging.INFO):
        run_for(Scheduler([hung, fast], sink=sink, start_jitter_s=0), 1.2)
    elapsed_s = time.monotonic() - started
    release.set()

    assert elapsed_s < 2.0  # shutdown does not wait for the hung thread
    assert fast.calls >= 8  # every 0.1 s (12 slots), undisturbed
    assert len(sink.records["fast"]) == fast.calls
    assert hung.calls == 1  # its thread never ended: later runs are skipped, threads do not pile up
    # the timeout itself is evidence: an error record with the test's parameters
    (error_record,) = sink.records["hung"]
    assert error_record.error == "hung did not finish within 0.3 s" and error_record.throughput_bps is None
    skipped = [r for r in caplog.records if r.getMessage().startswith("previous run still going")]
    assert skipped and all(r.collector == "hung" for r in skipped)


def test_a_collector_that_raises_costs_one_run_not_the_agent(caplog):
    def flaky(now, n):
        if n == 1:
            raise RuntimeError("parser bug")
        return [throughput(now)]

    collector = Fake("flaky", 0.1, flaky)
    sink = Sink()

    with caplog.at_level(logging.ERROR):
        run_for(Scheduler([collector], sink=sink, start_jitter_s=0), 0.45)

    assert collector.calls >= 3
    first, *rest = sink.records["flaky"]
    assert first.error == "flaky failed: RuntimeError: parser bug" and first.throughput_bps is None
    assert all(r.throughput_bps == 9.0e8 for r in rest) and rest
    assert any(r.getMessage() == "collector raised" and r.exc_info for r in caplog.records)


def test_an_invalid_record_is_dropped_and_logged_without_its_neighbours(caplog):
    def mixed(now, n):
        return [
            throughput(now),
            throughput(now, dst="RAL"),  # src == dst: the centre would refuse the whole batch
            throughput(now, time=now + timedelta(hours=1)),  # clock far ahead
            "not a record",
            host_tcp(now),
        ]

    sink = Sink()
    with caplog.at_level(logging.ERROR):
        (result,) = asyncio.run(Scheduler([Fake("mixed", 60, mixed)], sink=sink).run_once())

    assert [type(r) for r in sink.records["mixed"]] == [ThroughputRecord, HostTcpRecord]
    assert (len(result.records), result.invalid) == (2, 3)
    logged = [r for r in caplog.records if r.getMessage().startswith("invalid record dropped")]
    assert [(r.index, r.errors[0]["path"]) for r in logged] == [(1, "dst"), (2, "time"), (3, "")]


def test_records_carry_the_collectors_schedule_where_the_schema_has_it():
    sink = Sink()
    collector = Fake(
        "t", 1800, lambda now, n: [throughput(now), throughput(now, schedule_interval_s=60.0), host_tcp(now)]
    )

    asyncio.run(Scheduler([collector], sink=sink).run_once())

    first, explicit, settings = sink.records["t"]
    assert first.schedule_interval_s == 1800.0
    assert explicit.schedule_interval_s == 60.0  # a collector that knows better is not overridden
    assert not hasattr(settings, "schedule_interval_s")


def test_async_collectors_run_in_the_loop_and_are_cancelled_on_timeout():
    cancelled = []

    class Async:
        name, interval_s, timeout_s = "async", 60, 0.2

        async def collect(self, now):
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                cancelled.append(True)
                raise

    class Quick:
        name, interval_s = "quick", 60

        async def collect(self, now):
            return [throughput(now)]

    started = time.monotonic()
    slow, quick = asyncio.run(Scheduler([Async(), Quick()], sink=Sink()).run_once())

    assert time.monotonic() - started < 1.0
    assert slow.timed_out and cancelled == [True]
    assert len(quick.records) == 1 and quick.error is None


def test_a_plain_collect_may_hand_back_a_coroutine():
    class Handing:
        name, interval_s = "handing", 60

        def collect(self, now):
            async def poll():
                return [throughput(now)]

            return poll()

    (result,) = asyncio.run(Scheduler([Handing()], sink=Sink()).run_once())
    assert len(result.records) == 1


def test_an_exclusive_group_runs_one_test_at_a_time():
    active, peak = [0], [0]
    lock = threading.Lock()

    def test(now, n):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.2)
        with lock:
            active[0] -= 1
        return []

    a = Fake("a", 60, test, group="throughput")
    b = Fake("b", 60, test, group="throughput")
    c = Fake("c", 60, test)  # not in the group: runs alongside

    started = time.monotonic()
    asyncio.run(Scheduler([a, b, c], sink=Sink()).run_once())

    assert 0.4 <= time.monotonic() - started < 0.8
    assert peak[0] == 2  # c overlapped one of them, a and b never overlapped each other


def test_a_failing_sink_is_logged_as_lost_records_and_the_agent_goes_on(caplog):
    def full_disk(collector, records):
        raise OSError(28, "No space left on device")

    with caplog.at_level(logging.CRITICAL):
        (result,) = asyncio.run(Scheduler([Fake("t", 60, lambda now, n: [throughput(now)])], sink=full_disk).run_once())

    assert len(result.records) == 1
    (lost,) = [r for r in caplog.records if r.levelno == logging.CRITICAL]
    assert lost.records_lost == 1


def test_start_is_jittered_within_the_interval_and_runs_are_fixed_rate():
    times = []
    collector = Fake("t", 0.2, lambda now, n: times.append(time.monotonic()) or [])

    class Rng:
        def uniform(self, low, high):
            return high  # the latest start allowed

    started = time.monotonic()
    run_for(Scheduler([collector], sink=Sink(), start_jitter_s=0.15, rng=Rng()), 0.95)

    offsets = [t - started for t in times]
    assert offsets[0] == pytest.approx(0.15, abs=0.08)
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert len(gaps) >= 2 and all(g == pytest.approx(0.2, abs=0.08) for g in gaps)


def test_collector_names_must_be_unique():
    with pytest.raises(ValueError, match="unique: x"):
        Scheduler([Fake("x", 1, None), Fake("x", 2, None)], sink=Sink())


def test_run_time_is_utc_aware():
    seen = []
    asyncio.run(Scheduler([Fake("t", 60, lambda now, n: seen.append(now) or [])], sink=Sink()).run_once())
    assert seen[0].tzinfo is not None and seen[0].utcoffset() == timedelta(0)
    assert abs((datetime.now(UTC) - seen[0]).total_seconds()) < 5


def test_a_test_queued_for_one_group_does_not_hold_its_other_groups():
    """nuttcp to B waits for the throughput group (nuttcp to A runs): owping to B must not wait behind it."""
    release_a = threading.Event()
    order = []

    def nuttcp_a(now, n):
        order.append("nuttcp-a")
        release_a.wait(30)  # runs until the owping to B has run
        return []

    def owping_b(now, n):
        order.append("owping-b")
        release_a.set()
        return []

    collectors = [
        Fake("nuttcp-a", 60, nuttcp_a, groups=("throughput", "host:a")),
        Fake("nuttcp-b", 60, lambda now, n: order.append("nuttcp-b") or [], groups=("throughput", "host:b")),
        Fake("owping-b", 60, owping_b, groups=("host:b",)),
        Fake("owping-a", 60, lambda now, n: order.append("owping-a") or [], groups=("host:a",)),
    ]
    started = time.monotonic()
    asyncio.run(asyncio.wait_for(Scheduler(collectors, sink=Sink()).run_once(), 60))

    assert time.monotonic() - started < 20  # owping-b never waited for nuttcp-a's 30 s
    assert sorted(order[:2]) == ["nuttcp-a", "owping-b"]  # their threads may start in either order
    assert sorted(order[2:]) == ["nuttcp-b", "owping-a"]


def test_overlapping_groups_neither_deadlock_nor_overlap():
    active: dict[str, int] = {}
    overlaps = []
    lock = threading.Lock()

    def make(groups):
        def run(now, n):
            with lock:
                if any(active.get(g) for g in groups):
                    overlaps.append(groups)
                for g in groups:
                    active[g] = active.get(g, 0) + 1
            time.sleep(0.02)
            with lock:
                for g in groups:
                    active[g] -= 1
            return []

        return run

    specs = [("x", "y"), ("y", "x"), ("y", "z"), ("z", "x"), ("x",), ("z",), ("y", "z", "x")]
    collectors = [Fake(f"c{i}", 60, make(g), groups=g) for i, g in enumerate(specs * 3)]

    results = asyncio.run(asyncio.wait_for(Scheduler(collectors, sink=Sink()).run_once(), 60))

    assert overlaps == [] and len(results) == 21 and not any(r.skipped or r.error for r in results)


def test_every_run_and_the_next_due_time_are_recorded_in_the_poll_log(tmp_path):
    start = datetime(2026, 3, 1, 11, 0, tzinfo=UTC)
    clock = VirtualClock(start)

    def flaky(now, n):
        if n == 3:
            raise RuntimeError("tool crashed")
        return [host_tcp(now)]

    poll_log = PollLog(tmp_path / "polls.json")
    scheduler = Scheduler(
        [Fake("snmp", 60, lambda now, n: [host_tcp(now)] * 4), Fake("flaky", 120, flaky)],
        sink=Sink(),
        start_jitter_s=0,
        clock=clock,
        poll_log=poll_log,
    )

    async def go():
        stop = asyncio.Event()
        task = asyncio.create_task(scheduler.run_forever(stop, grace_s=5))
        await clock.advance(300, sleepers=2)  # runs at 0, 60, ..., 300 s and 0, 120, 240 s
        stop.set()
        await task

    asyncio.run(go())

    polls = read_poll_log(tmp_path / "polls.json")
    assert polls["snmp"] == {
        "interval_s": 60.0,
        "last_started": "2026-03-01T11:05:00.000Z",
        "last_finished": "2026-03-01T11:05:00.000Z",
        "last_duration_s": polls["snmp"]["last_duration_s"],
        "last_records": 4,
        "last_invalid": 0,
        "last_error": None,
        "last_timed_out": False,
        "last_success": "2026-03-01T11:05:00.000Z",
        "last_skipped": None,
        "next_due": "2026-03-01T11:06:00.000Z",
        "runs": 6,
        "failed_runs": 0,
        "skipped_runs": 0,
    }
    flaky_entry = polls["flaky"]
    assert (flaky_entry["runs"], flaky_entry["failed_runs"]) == (3, 1)
    assert flaky_entry["last_started"] == "2026-03-01T11:04:00.000Z"
    assert flaky_entry["last_error"] == "flaky failed: RuntimeError: tool crashed"
    assert flaky_entry["last_success"] == "2026-03-01T11:02:00.000Z"
    assert flaky_entry["next_due"] == "2026-03-01T11:06:00.000Z"


def test_the_poll_log_goes_on_across_restarts_and_forgets_removed_collectors(tmp_path):
    path = tmp_path / "polls.json"
    clock = VirtualClock(datetime(2026, 3, 1, tzinfo=UTC))

    def life(names):
        scheduler = Scheduler(
            [Fake(name, 60, lambda now, n: [host_tcp(now)]) for name in names],
            sink=Sink(),
            start_jitter_s=0,
            clock=clock,
            poll_log=PollLog(path),
        )

        async def go():
            stop = asyncio.Event()
            task = asyncio.create_task(scheduler.run_forever(stop, grace_s=5))
            await clock.advance(clock.t + 60, sleepers=len(names))
            stop.set()
            await task

        asyncio.run(go())

    life(["a", "b"])
    life(["a"])

    polls = read_poll_log(path)
    assert sorted(polls) == ["a"] and polls["a"]["runs"] == 4  # two runs per life
    assert read_poll_log(tmp_path / "missing.json") == {}
