"""One SQL row -> one evidence dataclass, for every read of the package (the row's columns as the tables name
them; a bucketed owamp row also carries ``n``, the sessions it aggregates)."""

from __future__ import annotations

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
    )


def traceroute_of(r: dict) -> TracerouteObservation:
    return TracerouteObservation(r["time"], tuple(r["hops"]), r["pmtu_bytes"], f"traceroute:{r['id']}")


def interface_rate_of(r: dict) -> InterfaceRate:
    return InterfaceRate(
        time=r["time"],
        in_bps=r["in_bps"],
        out_bps=r["out_bps"],
        in_errors_per_s=r["in_errors_per_s"],
        out_errors_per_s=r["out_errors_per_s"],
        in_discards_per_s=r["in_discards_per_s"],
        out_discards_per_s=r["out_discards_per_s"],
        in_pkts_per_s=r["in_pps"],
        out_pkts_per_s=r["out_pps"],
        oper_status=r["oper_status"],
        interval_s=r["interval_s"],
    )
