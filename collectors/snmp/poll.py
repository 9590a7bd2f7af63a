"""One device polled through any :class:`~collectors.snmp.oids.SnmpTransport`: the scalars, the walks,
the readings and records, or the error that stopped the poll (:func:`poll_with_transport`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time as _time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from collectors.records import SnmpRecord
from collectors.snmp.oids import (
    ERROR_DEADLINE,
    ERROR_INTERNAL,
    ERROR_NO_DATA,
    ERROR_RESPONSE,
    PRIMARY_COLUMNS,
    SCALAR_OIDS,
    SELECTION_COLUMNS,
    SnmpError,
    SnmpPollError,
    SnmpTransport,
    SnmpValue,
    index_column,
)
from collectors.snmp.reading import (
    DeviceReading,
    InterfaceReading,
    InterfaceSelection,
    PollWarning,
    as_utc,
    fallback_columns,
    read_device,
    records_from_reading,
)
from collectors.snmp_config import SnmpDeviceConfig

# --- one device through a transport ------------------------------------------------------------


@dataclass(frozen=True)
class DevicePoll:
    """The outcome of polling one device: records, or no records and ``error``.

    ``notices`` are everything this poll ignored; ``warnings`` the messages to log as warnings
    now and ``repeated`` those of kinds the device already reported (:class:`WarningMemory`;
    without one, every notice is a warning).
    """

    equipment: str
    host: str
    port: int
    time: datetime
    elapsed_s: float
    records: tuple[SnmpRecord, ...] = ()
    interfaces: tuple[InterfaceReading, ...] = ()
    error: SnmpPollError | None = None
    warnings: tuple[str, ...] = ()
    repeated: tuple[str, ...] = ()
    notices: tuple[PollWarning, ...] = ()
    uptime_source: str | None = None

    @property
    def ok(self) -> bool:
        """True when the device answered and gave records (possibly none, see ``warnings``)."""
        return self.error is None


class WarningMemory:
    """Which notice kinds each device has reported: a kind is a warning once per device, then debug only.

    A Junos SRX reports ifMtu 2147483647 on its internal interfaces at every poll; said every
    minute that would be 1 440 warnings a day about one harmless value.
    """

    def __init__(self) -> None:
        self._reported: dict[tuple[str, str, int], set[str]] = {}

    def split(
        self, config: SnmpDeviceConfig, notices: Iterable[PollWarning]
    ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(new warnings, repeated ones) for this poll of ``config``'s device; remembers the new kinds."""
        reported = self._reported.setdefault((config.equipment, config.host, config.port), set())
        new: list[str] = []
        repeated: list[str] = []
        for notice in notices:
            (repeated if notice.kind in reported else new).append(notice.message)
            reported.add(notice.kind)
        return tuple(new), tuple(repeated)


async def poll_with_transport(
    transport: SnmpTransport,
    config: SnmpDeviceConfig,
    *,
    now: datetime | None = None,
    started: float | None = None,
    memory: WarningMemory | None = None,
) -> DevicePoll:
    """Poll one device through ``transport`` within ``config.effective_deadline_s``.

    Never raises for anything the device, the network or pysnmp does (only cancellation
    propagates): failures are ``DevicePoll.error``. The records' time is the moment the first
    request (the uptime) was answered: ``now`` (default: the UTC clock) plus the time since
    ``started`` (``time.monotonic()`` when the poll began, if before this call: name
    resolution). ``memory`` turns notice kinds the device already reported into ``repeated``.
    """
    started = _time.monotonic() if started is None else started
    start_time = datetime.now(UTC)
    base_time = as_utc(now) if now is not None else start_time - timedelta(seconds=_time.monotonic() - started)
    deadline_s = config.effective_deadline_s
    try:
        async with asyncio.timeout(max(0.0, deadline_s - (_time.monotonic() - started))):
            reading, answered, column_notices = await _read(transport, config)
        if reading.interfaces_seen == 0:
            raise SnmpError(
                ERROR_NO_DATA,
                "the device returned no IF-MIB interface rows (is IF-MIB in the view of this community/user?)",
            )
        poll_time = base_time + timedelta(seconds=answered - started)
        records = records_from_reading(reading, equipment=config.equipment, time=poll_time, host=config.host)
    except TimeoutError:
        return failed_poll(
            config,
            start_time,
            started,
            ERROR_DEADLINE,
            f"poll did not finish within its deadline of {deadline_s:g} s",
        )
    except SnmpError as exc:
        return failed_poll(config, start_time, started, exc.kind, exc.message)
    except Exception as exc:  # one device's surprise must not abort the cycle
        return failed_poll(config, start_time, started, ERROR_INTERNAL, f"{type(exc).__name__}: {exc}")
    notices = column_notices + reading.notices
    if memory is None:
        warnings, repeated = tuple(notice.message for notice in notices), ()
    else:
        warnings, repeated = memory.split(config, notices)
    return DevicePoll(
        equipment=config.equipment,
        host=config.host,
        port=config.port,
        time=poll_time,
        elapsed_s=_time.monotonic() - started,
        records=tuple(records),
        interfaces=reading.interfaces,
        warnings=warnings,
        repeated=repeated,
        notices=notices,
        uptime_source=reading.uptime_source,
    )


async def _read(
    transport: SnmpTransport, config: SnmpDeviceConfig
) -> tuple[DeviceReading, float, tuple[PollWarning, ...]]:
    """The reading, the monotonic time the uptime was answered, and the notices of refused columns."""
    scalars = await transport.get(SCALAR_OIDS)
    answered = _time.monotonic()
    limit = asyncio.Semaphore(config.max_parallel_requests)
    notices: list[PollWarning] = []
    selection = InterfaceSelection.from_config(config)
    columns = PRIMARY_COLUMNS + (SELECTION_COLUMNS if selection.if_types is not None else ())
    walks = await _walk_columns(transport, columns, limit, notices)
    # Octet counters decide the selection only once the Counter32 fallback is known too.
    first_round = dataclasses.replace(selection, require_octet_counters=False)
    extra = fallback_columns(read_device(walks, scalars, selection=first_round))
    if extra:
        walks.update(await _walk_columns(transport, extra, limit, notices))
    return read_device(walks, scalars, selection=selection), answered, tuple(notices)


async def _walk_columns(
    transport: SnmpTransport, columns: Sequence[str], limit: asyncio.Semaphore, notices: list[PollWarning]
) -> dict[str, dict[int, SnmpValue]]:
    async def walk(column: str) -> dict[int, SnmpValue]:
        async with limit:
            try:
                return index_column(column, await transport.bulk_walk(column))
            except SnmpError as exc:
                if exc.kind != ERROR_RESPONSE:
                    raise
                notices.append(PollWarning(f"column {column}", f"column {column} left out: {exc.message}"))
                return {}

    try:
        async with asyncio.TaskGroup() as group:
            tasks = {column: group.create_task(walk(column)) for column in columns}
    except BaseExceptionGroup as group_error:
        # The first failure cancelled the other walks; report it (they failed for the same reason).
        raise _first_leaf(group_error) from None
    return {column: task.result() for column, task in tasks.items()}


def _first_leaf(group: BaseExceptionGroup) -> BaseException:
    first = group.exceptions[0]
    return _first_leaf(first) if isinstance(first, BaseExceptionGroup) else first


def failed_poll(config: SnmpDeviceConfig, start_time: datetime, started: float, kind: str, message: str) -> DevicePoll:
    elapsed = _time.monotonic() - started
    error = SnmpPollError(
        equipment=config.equipment,
        host=config.host,
        port=config.port,
        kind=kind,
        message=message,
        time=start_time,
        elapsed_s=elapsed,
    )
    return DevicePoll(
        equipment=config.equipment, host=config.host, port=config.port, time=start_time, elapsed_s=elapsed, error=error
    )
