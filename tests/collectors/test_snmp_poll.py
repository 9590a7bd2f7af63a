"""SNMP collector: one device polled through a fake transport and through pysnmp (replaced), the uptime and the
records' time, interface selection, warnings once per device and kind."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from collectors import snmp
from collectors.counters import rate_between, sample_from_snmp
from collectors.snmp import (
    ALL_COLUMNS,
    ERROR_AUTH,
    ERROR_DEADLINE,
    ERROR_INTERNAL,
    ERROR_NO_DATA,
    ERROR_RESOLVE,
    ERROR_RESPONSE,
    ERROR_TIMEOUT,
    FALLBACK_COLUMNS,
    IF_ADMIN_STATUS,
    IF_COUNTER_DISCONTINUITY_TIME,
    IF_HC_IN_OCTETS,
    IF_HC_OUT_OCTETS,
    IF_IN_ERRORS,
    IF_IN_OCTETS,
    IF_MTU,
    IF_NAME,
    IF_OPER_STATUS,
    IF_TYPE,
    PRIMARY_COLUMNS,
    SYS_UPTIME,
    FakeSnmpTransport,
    SnmpDeviceConfig,
    SnmpError,
    SnmpPoller,
    SnmpTransport,
    build_records,
    poll_with_transport,
    pysnmp_transport,
    read_device,
)
from collectors.snmp import poll as snmp_poll
from tests.collectors.test_snmp import NOW, SCALARS, by_name, legacy_walks, router_walks

# --- polling through a fake transport ----------------------------------------------------------


class FakeTransport(FakeSnmpTransport):
    """The in-memory device, by default the router of :func:`router_walks` with :data:`SCALARS`."""

    def __init__(self, walks=None, scalars=None, **options):
        super().__init__(
            router_walks() if walks is None else walks, dict(SCALARS) if scalars is None else scalars, **options
        )


def config(**options):
    return SnmpDeviceConfig(**{"equipment": "geant-par", "host": "192.0.2.1", "community": "public", **options})


def test_fake_transport_satisfies_the_protocol():
    assert isinstance(FakeTransport(), SnmpTransport)


def test_poll_walks_primary_columns_only_when_hc_counters_exist():
    transport = FakeTransport()

    poll = asyncio.run(poll_with_transport(transport, config(), now=NOW))

    assert poll.ok and poll.error is None and poll.warnings == ()
    assert sorted(transport.walked) == sorted(PRIMARY_COLUMNS)
    expected = build_records("geant-par", router_walks(), SCALARS, poll.time, host="192.0.2.1")
    assert by_name(poll.records) == by_name(expected)
    # the records' time is when the uptime was answered: `now` plus the time that first request took
    assert NOW <= poll.time < NOW + timedelta(seconds=1)
    assert {r.time for r in poll.records} == {poll.time}


def test_poll_walks_fallback_columns_for_a_device_without_hc_counters():
    transport = FakeTransport(legacy_walks(), {SYS_UPTIME: 5})

    poll = asyncio.run(poll_with_transport(transport, config(), now=NOW))

    assert sorted(transport.walked) == sorted(ALL_COLUMNS)
    assert set(transport.walked[len(PRIMARY_COLUMNS) :]) == set(FALLBACK_COLUMNS)
    assert by_name(poll.records)["eth0"].counters.in_octets == 4294967295
    assert by_name(poll.records)["eth0"].speed_mbps == 100.0


def test_poll_limits_parallel_walks_per_device():
    transport = FakeTransport(delay_s=0.01)

    asyncio.run(poll_with_transport(transport, config(max_parallel_requests=3), now=NOW))

    assert transport.max_in_flight == 3


def test_poll_without_now_stamps_the_current_utc_time():
    before = datetime.now(UTC)
    poll = asyncio.run(poll_with_transport(FakeTransport(), config()))
    assert before <= poll.records[0].time <= datetime.now(UTC)


def test_a_timeout_fails_the_device_with_no_records():
    transport = FakeTransport(fail={"get": SnmpError(ERROR_TIMEOUT, "no response")})

    poll = asyncio.run(poll_with_transport(transport, config(), now=NOW))

    assert not poll.ok and poll.records == ()
    assert poll.error.kind == ERROR_TIMEOUT
    assert transport.walked == []  # the reachability probe failed: no burst of walks
    assert str(poll.error).startswith("SNMP poll of geant-par (192.0.2.1:161) failed after")
    assert poll.error.as_dict()["kind"] == "timeout"


def test_a_failing_walk_cancels_the_others_and_fails_the_device():
    transport = FakeTransport(
        fail={IF_HC_IN_OCTETS: SnmpError(ERROR_AUTH, "Wrong SNMP PDU digest")}, hang_columns=[IF_MTU]
    )

    started = time.monotonic()
    poll = asyncio.run(poll_with_transport(transport, config(), now=NOW))

    assert poll.error.kind == ERROR_AUTH and "digest" in poll.error.message
    assert time.monotonic() - started < 5  # the hanging walk was cancelled, not awaited


def test_an_error_status_on_one_column_leaves_that_column_out():
    transport = FakeTransport(
        fail={IF_COUNTER_DISCONTINUITY_TIME: SnmpError(ERROR_RESPONSE, "agent answered genErr for ...")}
    )

    poll = asyncio.run(poll_with_transport(transport, config(), now=NOW))

    assert poll.ok and len(poll.records) == 2
    assert all(r.counter_discontinuity_ticks is None for r in poll.records)
    assert poll.warnings == (f"column {IF_COUNTER_DISCONTINUITY_TIME} left out: agent answered genErr for ...",)


def test_the_per_device_deadline_bounds_a_slow_device():
    transport = FakeTransport(hang_columns=[IF_HC_OUT_OCTETS])

    poll = asyncio.run(poll_with_transport(transport, config(timeout_s=0.1, retries=0, deadline_s=0.3), now=NOW))

    assert poll.error.kind == ERROR_DEADLINE
    assert 0.29 <= poll.elapsed_s < 1.0
    assert "deadline of 0.3 s" in poll.error.message


def test_a_device_without_interfaces_is_an_error():
    poll = asyncio.run(poll_with_transport(FakeTransport(walks={}), config(), now=NOW))

    assert poll.error.kind == ERROR_NO_DATA and "IF-MIB" in poll.error.message


def test_an_unexpected_exception_is_reported_not_raised():
    transport = FakeTransport(fail={IF_NAME: KeyError("boom")})

    poll = asyncio.run(poll_with_transport(transport, config(), now=NOW))

    assert poll.error.kind == ERROR_INTERNAL and "KeyError" in poll.error.message


def test_poll_devices_runs_devices_concurrently_and_keeps_their_order():
    transports = {
        "slow": FakeTransport(hang_columns=[IF_NAME]),
        "fast": FakeTransport(delay_s=0.01),
        "legacy": FakeTransport(legacy_walks(), {SYS_UPTIME: 1}, delay_s=0.01),
    }

    async def factory(cfg):
        if cfg.equipment == "unresolvable":
            raise SnmpError(ERROR_RESOLVE, "cannot resolve")
        return transports[cfg.equipment]

    configs = [
        config(equipment="slow", timeout_s=0.2, retries=0, deadline_s=0.5),
        config(equipment="fast"),
        config(equipment="unresolvable"),
        config(equipment="legacy"),
    ]

    async def run():
        async with SnmpPoller(transport_factory=factory) as poller:
            return await poller.poll_devices(configs, now=NOW)

    started = time.monotonic()
    polls = asyncio.run(run())
    elapsed = time.monotonic() - started

    assert [p.equipment for p in polls] == ["slow", "fast", "unresolvable", "legacy"]
    assert [p.error.kind if p.error else None for p in polls] == [ERROR_DEADLINE, None, ERROR_RESOLVE, None]
    assert polls[1].elapsed_s < 0.3  # not delayed by the slow device
    assert elapsed < 1.5
    assert len(polls[1].records) == 2 and len(polls[3].records) == 2


def test_poll_devices_limits_concurrent_devices():
    active = {"now": 0, "max": 0}

    class Counting(FakeTransport):
        async def get(self, oids):
            active["now"] += 1
            active["max"] = max(active["max"], active["now"])
            try:
                await asyncio.sleep(0.02)
                return await super().get(oids)
            finally:
                active["now"] -= 1

    async def factory(cfg):
        return Counting()

    async def run():
        async with SnmpPoller(transport_factory=factory, max_concurrent_devices=2) as poller:
            return await poller.poll_devices([config(equipment=f"r{i}") for i in range(6)], now=NOW)

    polls = asyncio.run(run())
    assert all(p.ok for p in polls) and active["max"] == 2


def test_a_poller_belongs_to_one_event_loop():
    async def factory(cfg):
        return FakeTransport()

    poller = SnmpPoller(transport_factory=factory)
    asyncio.run(poller.poll_device(config(), now=NOW))

    with pytest.raises(RuntimeError, match="event loop"):
        asyncio.run(poller.poll_device(config(), now=NOW))
    poller.close()
    with pytest.raises(RuntimeError, match="closed"):
        asyncio.run(poller.poll_device(config(), now=NOW))


# --- the pysnmp transport, with pysnmp replaced ------------------------------------------------


class _Timeout:
    """Stands in for pysnmp.proto.errind.RequestTimedOut (matched by class name)."""

    def __bool__(self):
        return True

    def __str__(self):
        return "No SNMP response received before timeout"


_Timeout.__name__ = "RequestTimedOut"


def test_bulk_walk_stops_at_the_first_timeout_instead_of_retrying_forever(monkeypatch):
    calls = {"yields": 0, "closed": False}

    async def fake_bulk_walk_cmd(*args, **options):
        assert options == {"lookupMib": False, "lexicographicMode": False}
        try:
            while True:  # what pysnmp 7.1 does after a timeout: yield it, then send the request again
                calls["yields"] += 1
                yield _Timeout(), 0, 0, ()
        finally:
            calls["closed"] = True

    class FakeHlapi:
        bulk_walk_cmd = staticmethod(fake_bulk_walk_cmd)

        @staticmethod
        def ContextData(**kwargs):  # noqa: N802 - pysnmp's name
            return kwargs

        @staticmethod
        def CommunityData(*args, **kwargs):  # noqa: N802
            return args

        @staticmethod
        def ObjectType(value):  # noqa: N802
            return value

        @staticmethod
        def ObjectIdentity(value):  # noqa: N802
            return value

    monkeypatch.setattr(pysnmp_transport, "_hlapi", lambda: FakeHlapi)
    transport = pysnmp_transport._PysnmpTransport(object(), config(timeout_s=1, retries=1), object())

    with pytest.raises(SnmpError) as excinfo:
        asyncio.run(transport.bulk_walk(IF_HC_IN_OCTETS))

    assert excinfo.value.kind == ERROR_TIMEOUT
    assert "within 1 s x 2 tries" in excinfo.value.message and "wrong community" in excinfo.value.message
    assert calls == {"yields": 1, "closed": True}


def test_importing_the_collector_loads_neither_pysnmp_nor_the_central_stack():
    code = textwrap.dedent(
        """\
        import sys
        import collectors.snmp
        bad = sorted({m.split('.')[0] for m in sys.modules} & {'django', 'wanmon', 'celery', 'pysnmp'})
        print(','.join(bad))
        """
    )
    repo = Path(__file__).resolve().parents[2]
    result = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == ""


# --- the uptime and the records' time ----------------------------------------------------------


class FakeClock:
    """Stands in for ``time`` in collectors.snmp.poll: a monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now_s = 1000.0

    def monotonic(self) -> float:
        return self.now_s


def test_a_slow_first_request_does_not_make_a_false_restart(monkeypatch):
    # The scheduler starts a poll at `now`; the uptime GET is answered 12 s later (a lost datagram
    # retried, slow name resolution). The next poll, 60 s after, is answered at once. The device's
    # uptime advanced 48 s between the two answers: stamped at `now`, the records would say 60 s
    # passed, 12 s more than the uptime (beyond the centre's 10 s + 1 % tolerance): a false restart.
    clock = FakeClock()
    monkeypatch.setattr(snmp_poll, "_time", clock)
    boot_s = clock.now_s - 8_834_122.0

    class AnswersAfter(FakeTransport):
        def __init__(self, delay_s: float) -> None:
            super().__init__()
            self.answer_after_s = delay_s

        async def get(self, oids):
            clock.now_s += self.answer_after_s
            self.scalars = {SYS_UPTIME: round((clock.now_s - boot_s) * 100)}
            return await super().get(oids)

    first = asyncio.run(poll_with_transport(AnswersAfter(12.0), config(), now=NOW))
    clock.now_s = 1060.0
    second = asyncio.run(poll_with_transport(AnswersAfter(0.0), config(), now=NOW + timedelta(seconds=60)))

    assert first.time == NOW + timedelta(seconds=12) and second.time == NOW + timedelta(seconds=60)
    prev, cur = (sample_from_snmp(by_name(poll.records)["xe-0/0/0"]) for poll in (first, second))
    assert cur.sys_uptime_ticks - prev.sys_uptime_ticks == 4800
    result = rate_between(prev, cur)
    assert result.discontinuity is None
    assert result.interval_s == 48.0


def test_counter_columns_are_walked_first():
    transport = FakeTransport()

    asyncio.run(poll_with_transport(transport, config(max_parallel_requests=4), now=NOW))

    assert set(transport.walked[:2]) == {IF_HC_IN_OCTETS, IF_HC_OUT_OCTETS}


# --- interface selection -----------------------------------------------------------------------


def selection_walks() -> dict[str, dict[int, object]]:
    """Five interfaces: three Ethernet ports (one admin down), a LAG and a loopback without counters."""
    return {
        IF_NAME: {1: b"xe-0/0/0", 2: b"xe-0/0/1", 3: b"ae0", 4: b"lo0", 5: b"xe-0/0/2"},
        IF_TYPE: {1: 6, 2: 6, 3: 161, 4: 24, 5: 6},
        IF_ADMIN_STATUS: {1: 1, 2: 2, 3: 1, 4: 1, 5: 1},
        IF_OPER_STATUS: {1: 1, 2: 2, 3: 1, 4: 1, 5: 1},
        IF_HC_IN_OCTETS: {1: 10, 2: 20, 3: 30},
        IF_IN_OCTETS: {5: 50},  # 32-bit only: counts as an octet counter
        IF_IN_ERRORS: {4: 0},  # not traffic
    }


@pytest.mark.parametrize(
    ("selection", "names"),
    [
        (snmp.InterfaceSelection(), ["xe-0/0/0", "xe-0/0/1", "ae0", "lo0", "xe-0/0/2"]),
        (snmp.InterfaceSelection(require_octet_counters=True), ["xe-0/0/0", "xe-0/0/1", "ae0", "xe-0/0/2"]),
        (snmp.InterfaceSelection(include=("xe-*",)), ["xe-0/0/0", "xe-0/0/1", "xe-0/0/2"]),
        (snmp.InterfaceSelection(include=("xe-*", "ae*"), exclude=("*/1",)), ["xe-0/0/0", "ae0", "xe-0/0/2"]),
        (snmp.InterfaceSelection(include=("XE-*",)), []),  # case-sensitive, as the device spells names
        (snmp.InterfaceSelection(if_types=(161, 24)), ["ae0", "lo0"]),
        (snmp.InterfaceSelection(admin_status=("up",)), ["xe-0/0/0", "ae0", "lo0", "xe-0/0/2"]),
        (
            snmp.InterfaceSelection(if_types=(6,), admin_status=("up",), require_octet_counters=True),
            ["xe-0/0/0", "xe-0/0/2"],
        ),
        (snmp.InterfaceSelection(require_octet_counters=True, if_index_names={4: "loopback0"}),
         ["xe-0/0/0", "xe-0/0/1", "ae0", "loopback0", "xe-0/0/2"]),  # named by ifIndex: always reported
    ],
)  # fmt: skip
def test_selection_filters(selection, names):
    reading = read_device(selection_walks(), SCALARS, selection=selection)

    assert [row.name for row in reading.interfaces] == names
    assert reading.interfaces_seen == 5


def test_selection_from_config_resolves_iftype_names_and_defaults_to_interfaces_with_octet_counters():
    device = config(if_types=["ethernetCsmacd", "IEEE8023ADLAG", 24, "131"], admin_status=["UP"])

    selection = snmp.InterfaceSelection.from_config(device)

    assert device.if_types == (6, 161, 24, 131)
    assert selection.if_types == (6, 161, 24, 131) and selection.admin_status == ("up",)
    assert selection.require_octet_counters is True
    assert snmp.InterfaceSelection.from_config(config(require_octet_counters=False)).require_octet_counters is False


def test_poll_walks_iftype_only_when_selecting_by_type():
    plain, typed = FakeTransport(selection_walks()), FakeTransport(selection_walks())

    default = asyncio.run(poll_with_transport(plain, config(), now=NOW))
    lags = asyncio.run(poll_with_transport(typed, config(if_types=["ieee8023adLag"]), now=NOW))

    assert snmp.IF_TYPE not in plain.walked and snmp.IF_TYPE in typed.walked
    # the default leaves out lo0 (no octet counter), after the 32-bit round found xe-0/0/2's
    assert [r.interface for r in default.records] == ["xe-0/0/0", "xe-0/0/1", "ae0", "xe-0/0/2"]
    assert by_name(default.records)["xe-0/0/2"].counters.in_octets == 50
    assert [r.interface for r in lags.records] == ["ae0"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"interfaces": ["ae0"], "include": ["xe-*"]}, "interfaces: lists the interfaces exactly and cannot be"),
        ({"if_types": ["ethernetCsmcd"]}, 'if_types: unknown ifType .*did you mean "ethernetCsmacd"'),
        ({"if_types": [0]}, "if_types: 0 is not an ifType number"),
        ({"admin_status": ["upp"]}, "admin_status: 'upp' is not an ifAdminStatus"),
        ({"include": "xe-*"}, "include: must be a list of names"),
        ({"if_index_names": {"3": "a", "7": "a"}}, "if_index_names: ifIndex 3 and 7 are both named 'a'"),
    ],
)
def test_selection_problems_are_refused_with_their_key(options, message):
    with pytest.raises(snmp.SnmpConfigError, match=message) as caught:
        config(**options)
    assert caught.value.problems[0][0] == message.split(":")[0]


# --- warnings: once per device and kind --------------------------------------------------------


def junos_like_walks() -> dict[str, dict[int, object]]:
    walks = router_walks()
    walks[IF_MTU] = {1: 2**31 - 1, 2: 2**31 - 1}  # what a Junos SRX's internal interfaces report
    return walks


def test_a_poller_warns_once_per_device_and_kind_then_only_at_debug_level(caplog):
    transports = {"srx-1": FakeTransport(junos_like_walks()), "srx-2": FakeTransport(junos_like_walks())}

    async def factory(device):
        return transports[device.equipment]

    async def run():
        async with SnmpPoller(transport_factory=factory) as poller:
            polls = [await poller.poll_device(config(equipment="srx-1"), now=NOW) for _ in range(3)]
            transports["srx-1"].scalars = {}  # the view loses sysUpTime: a new kind, reported once
            polls += [await poller.poll_device(config(equipment="srx-1"), now=NOW) for _ in range(2)]
            polls.append(await poller.poll_device(config(equipment="srx-2"), now=NOW))
            return polls

    with caplog.at_level(logging.DEBUG, logger="collectors.snmp"):
        polls = asyncio.run(run())

    mtu = "ifMtu: not a number within 0..65536, left out (ifIndex 1 2147483647, ifIndex 2 2147483647)"
    assert [poll.warnings for poll in polls] == [(mtu,), (), (), (polls[3].warnings[0],), (), (mtu,)]
    assert polls[3].warnings[0].startswith("no sysUpTime.0 in this device's view: restart detection is limited")
    assert [len(poll.repeated) for poll in polls] == [0, 1, 1, 1, 2, 0]
    assert all(len(poll.records) == 2 for poll in polls)  # the values are left out, not the interfaces
    debug = [r for r in caplog.records if r.levelno == logging.DEBUG and r.name == "collectors.snmp"]
    assert len(debug) == 5
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_without_a_memory_every_notice_is_a_warning():
    poll = asyncio.run(poll_with_transport(FakeTransport(junos_like_walks()), config(), now=NOW))
    again = asyncio.run(poll_with_transport(FakeTransport(junos_like_walks()), config(), now=NOW))

    assert len(poll.warnings) == len(again.warnings) == 1 and again.repeated == ()
