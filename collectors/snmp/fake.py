"""An in-memory :class:`~collectors.snmp.oids.SnmpTransport`: a device as plain columns, for tests and benches.

As ``collectors.runner.FakeCommandRunner`` stands in for the tools, :class:`FakeSnmpTransport`
stands in for a device: ``walks`` (column OID -> {ifIndex: value}) and ``scalars`` (OID ->
value), with optional failures, delays and hanging columns, and a record of what was walked.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence

from collectors.snmp.oids import SnmpError, SnmpValue

__all__ = ["FakeSnmpTransport"]


class FakeSnmpTransport:
    """In-memory agent: ``walks`` (column -> {ifIndex: value}) and ``scalars``; optional failures.

    ``fail`` maps a column OID, or ``"get"``, to the :class:`SnmpError` its request raises;
    every request first sleeps ``delay_s``; a walk of a column in ``hang_columns`` never ends.
    ``walked`` lists the columns in the order their walks began; ``max_in_flight`` is the most
    walks that were running at once.
    """

    def __init__(
        self,
        walks: Mapping[str, Mapping[int, SnmpValue]] | None = None,
        scalars: Mapping[str, SnmpValue] | None = None,
        *,
        fail: Mapping[str, SnmpError] | None = None,
        delay_s: float = 0.0,
        hang_columns: Iterable[str] = (),
    ) -> None:
        self.walks = dict(walks or {})
        self.scalars = dict(scalars or {})
        self.fail = dict(fail or {})
        self.delay_s = delay_s
        self.hang_columns = set(hang_columns)
        self.walked: list[str] = []
        self.in_flight = 0
        self.max_in_flight = 0

    async def get(self, oids: Sequence[str]) -> dict[str, SnmpValue]:
        """The scalars asked for (None for absent ones, as noSuchObject)."""
        await asyncio.sleep(self.delay_s)
        if "get" in self.fail:
            raise self.fail["get"]
        return {oid: self.scalars.get(oid) for oid in oids}

    async def bulk_walk(self, oid: str) -> dict[str, SnmpValue]:
        """The rows of one column, as full OIDs."""
        self.walked.append(oid)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.delay_s)
            if oid in self.hang_columns:
                await asyncio.Event().wait()
            if oid in self.fail:
                raise self.fail[oid]
            return {f"{oid}.{index}": value for index, value in self.walks.get(oid, {}).items()}
        finally:
            self.in_flight -= 1
