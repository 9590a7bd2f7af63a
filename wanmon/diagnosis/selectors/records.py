"""One SQL row -> one evidence dataclass, for every read of the package (the row's columns as the tables name
them; a bucketed owamp row also carries ``n``, the sessions it aggregates), and the measurement tables read
per path direction with the columns their dataclass needs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from operator import itemgetter
from typing import Any

from wanmon.diagnosis.evidence import InterfaceRate, OwampTest, ThroughputTest, TracerouteObservation


def throughput_test_of(r: dict) -> ThroughputTest:
    return ThroughputTest(
        time=r["time"],
        protocol=r["protocol"],
        throughput_bps=r["throughput_bps"],
        duration_s=r["duration_s"],
        streams=r["streams"] or 1,
        window_bytes=r["window_bytes"],
        mss_bytes=r["mss_bytes"],
        rtt_ms=r["rtt_ms"],
        retransmits=r["retransmits"],
        offered_bps=r["offered_bps"],
        packets_sent=r["packets_sent"],
        packets_lost=r["packets_lost"],
        src_host=r["src_host"],
        dst_host=r["dst_host"],
        error=r["error"],
        tool=r["tool"],
        measurement_id=f"throughput:{r['id']}",
    )


def owamp_test_of(r: dict) -> OwampTest:
    n = r.get("n", 1)
    return OwampTest(
        time=r["time"],
        packets_sent=int(r["packets_sent"]),
        packets_lost=int(r["packets_lost"] or 0),
        duplicates=int(r["duplicates"] or 0),
        reordered=int(r["reordered"] or 0),
        delay_min_ms=r["delay_min_ms"],
        delay_median_ms=r["delay_median_ms"],
        delay_max_ms=r["delay_max_ms"],
        jitter_ms=r["jitter_ms"],
        clock_error_ms=r["clock_error_ms"],
        measurement_id=f"owamp:{r['id']}" if n == 1 else f"owamp:{r['id']}+{n - 1}",
        session_times=tuple(r.get("session_times") or ()),
    )


def traceroute_of(r: dict) -> TracerouteObservation:
    return TracerouteObservation(r["time"], tuple(r["hops"]), r["pmtu_bytes"], f"traceroute:{r['id']}")


def _columns(cls: type, **renamed: str) -> Callable[[dict], tuple]:
    """The row's values of ``cls``'s fields in their order: each the column of the field's name, or the one
    ``renamed`` gives (a getter made once: rows become evidence by the hundred thousand a cycle)."""
    return itemgetter(*(renamed.get(f.name, f.name) for f in fields(cls)))


_INTERFACE_RATE = _columns(InterfaceRate, in_pkts_per_s="in_pps", out_pkts_per_s="out_pps")


def interface_rate_of(r: dict) -> InterfaceRate:
    return InterfaceRate(*_INTERFACE_RATE(r))


@dataclass(frozen=True)
class DirectionTable:
    """A measurement table of path directions (src_id, dst_id): the columns besides id, time, src_id and dst_id
    that ``record_of`` reads, and the condition a row must meet to be evidence (SQL on the table as ``t``)."""

    name: str
    columns: str
    record_of: Callable[[dict], Any]
    condition: str = "TRUE"


THROUGHPUT_TESTS = DirectionTable(
    "measurements_throughputtest",
    "t.protocol, t.throughput_bps, t.duration_s, t.streams, t.window_bytes, t.mss_bytes, t.rtt_ms, t.retransmits, "
    "t.offered_bps, t.packets_sent, t.packets_lost, t.src_host, t.dst_host, t.error, t.tool",
    throughput_test_of,
)
OWAMP_TESTS = DirectionTable(
    "measurements_owamptest",
    "t.packets_sent, t.packets_lost, t.duplicates, t.reordered, t.delay_min_ms, t.delay_median_ms, t.delay_max_ms, "
    "t.jitter_ms, t.clock_error_ms, t.error",
    owamp_test_of,
    "t.packets_sent IS NOT NULL",
)
TRACEROUTES = DirectionTable("measurements_traceroute", "t.hops, t.pmtu_bytes", traceroute_of, "t.error IS NULL")
