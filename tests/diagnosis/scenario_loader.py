"""A small pure loader: scenario YAML (docs/scenario-format.md) -> EvidenceBundle, for tests only.

The real replay goes through the database; this loader mimics what the
selectors do so the rules can be tested on scenario files directly:
measurements are grouped per path direction over the scenario's whole timeline,
the baseline is the earliest third of it, SNMP counters become rates with
wrap- and reset-safe arithmetic.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from wanmon.diagnosis.evidence import (
    AgentSchedule,
    CounterDiscontinuity,
    EquipmentInfo,
    EvidenceBundle,
    HostTcpEvidence,
    InterfaceEvidence,
    InterfaceRate,
    InterfaceStatus,
    KnownHost,
    MaintenanceEvidence,
    OwampTest,
    PathEvidence,
    ThroughputTest,
    TracerouteObservation,
    TrunkEvidence,
    summarise_path,
)

BASELINE_FRACTION = 1.0 / 3.0


def ts(value: Any) -> datetime:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))


@dataclass(frozen=True)
class Scenario:
    name: str
    now: datetime
    bundle: EvidenceBundle
    expect: dict


def _given(m: dict, *keys: str) -> dict[str, Any]:
    """The values of ``keys`` in a measurement, None where the file leaves one out."""
    return {key: m.get(key) for key in keys}


def _throughput(m: dict, i: int) -> ThroughputTest:
    return ThroughputTest(
        time=ts(m["time"]),
        protocol=m.get("protocol", "tcp"),
        streams=m.get("streams", 1),
        **_given(m, "throughput_bps", "duration_s", "window_bytes", "mss_bytes", "rtt_ms", "retransmits"),
        **_given(m, "offered_bps", "packets_sent", "packets_lost", "src_host", "dst_host", "error", "tool"),
        measurement_id=i,
    )


def _owamp(m: dict, i: int) -> OwampTest:
    return OwampTest(
        time=ts(m["time"]),
        packets_sent=m["packets_sent"],
        packets_lost=m["packets_lost"],
        duplicates=m.get("duplicates", 0),
        reordered=m.get("reordered", 0),
        **_given(m, "delay_min_ms", "delay_median_ms", "delay_max_ms", "jitter_ms", "clock_error_ms"),
        lost_at=tuple(ts(t) for t in m.get("lost_at", ())),
        measurement_id=i,
    )


COUNTER64 = {"hc_in_octets", "hc_out_octets", "hc_in_ucast_pkts", "hc_out_ucast_pkts"}


def counter_rates(
    samples: list[dict], speed_bps: float | None
) -> tuple[list[InterfaceRate], list[CounterDiscontinuity]]:
    """Wrap- and reset-safe rates from consecutive SNMP samples (the measurements app owns the real one)."""
    rates: list[InterfaceRate] = []
    gaps: list[CounterDiscontinuity] = []
    samples = sorted(samples, key=lambda m: ts(m["time"]))
    for prev, cur in zip(samples, samples[1:], strict=False):
        t0, t1 = ts(prev["time"]), ts(cur["time"])
        dt = (t1 - t0).total_seconds()
        if dt <= 0:
            continue
        up0, up1 = prev.get("sys_uptime_ticks"), cur.get("sys_uptime_ticks")
        if up0 is not None and up1 is not None and up1 < up0:
            gaps.append(CounterDiscontinuity(t1, "sysuptime_reset", t0))
            continue
        if prev.get("counter_discontinuity_ticks") != cur.get("counter_discontinuity_ticks"):
            gaps.append(CounterDiscontinuity(t1, "discontinuity_time", t0))
            continue
        c0, c1 = prev.get("counters", {}), cur.get("counters", {})
        deltas: dict[str, float] = {}
        bad = False
        for name in c1:
            if name not in c0:
                continue
            d = c1[name] - c0[name]
            if d < 0:
                d += 2**64 if name in COUNTER64 else 2**32
                if name.endswith("octets") and speed_bps and d * 8 / dt > 1.05 * speed_bps:
                    bad = True
            deltas[name] = d
        if bad:
            gaps.append(CounterDiscontinuity(t1, "counter_backwards", t0))
            continue

        def rate(*names: str, scale: float = 1.0, deltas=deltas, dt=dt) -> float | None:
            for n in names:
                if n in deltas:
                    return deltas[n] * scale / dt
            return None

        rates.append(
            InterfaceRate(
                time=t1,
                in_bps=rate("hc_in_octets", "in_octets", scale=8.0),
                out_bps=rate("hc_out_octets", "out_octets", scale=8.0),
                in_errors_per_s=rate("in_errors"),
                out_errors_per_s=rate("out_errors"),
                in_discards_per_s=rate("in_discards"),
                out_discards_per_s=rate("out_discards"),
                in_pkts_per_s=rate("hc_in_ucast_pkts"),
                out_pkts_per_s=rate("hc_out_ucast_pkts"),
                oper_status=cur.get("oper_status"),
                interval_s=dt,
            )
        )
    return rates, gaps


def load_scenario(path: str | Path) -> Scenario:
    doc = yaml.safe_load(Path(path).read_text())
    topo = doc.get("topology", {})
    measurements = doc.get("measurements", [])
    times = [ts(m["time"]) for m in measurements]
    now = ts(doc["now"]) if doc.get("now") else max(times)
    start = min(times) if times else now
    baseline_end = start + (now - start) * BASELINE_FRACTION

    by_path: dict[tuple[str, str], dict[str, list]] = defaultdict(lambda: defaultdict(list))
    snmp: dict[tuple[str, str], list[dict]] = defaultdict(list)
    hosts: list[HostTcpEvidence] = []
    for i, m in enumerate(measurements):
        kind = m["type"]
        if kind == "throughput":
            by_path[(m["src"], m["dst"])]["tests"].append(_throughput(m, i))
        elif kind == "owamp":
            by_path[(m["src"], m["dst"])]["owamp"].append(_owamp(m, i))
        elif kind == "traceroute":
            by_path[(m["src"], m["dst"])]["traceroutes"].append(
                TracerouteObservation(ts(m["time"]), tuple(m.get("hops", ())), m.get("pmtu_bytes"), i)
            )
        elif kind == "snmp":
            snmp[(m["equipment"], m["interface"])].append(m)
        elif kind == "host_tcp":
            hosts.append(
                HostTcpEvidence(
                    site=m["site"],
                    host=m["host"],
                    time=ts(m["time"]),
                    rmem_max=m.get("rmem_max"),
                    wmem_max=m.get("wmem_max"),
                    tcp_rmem=tuple(m["tcp_rmem"]) if m.get("tcp_rmem") else None,
                    tcp_wmem=tuple(m["tcp_wmem"]) if m.get("tcp_wmem") else None,
                    congestion_control=m.get("congestion_control"),
                    mtu=m.get("mtu"),
                    address=m.get("address"),
                )
            )

    known = tuple(KnownHost(h["site"], h["name"], h.get("address")) for h in topo.get("hosts", []) or [])
    addr = {kh.name: kh.address for kh in known}
    hosts = [HostTcpEvidence(**{**h.__dict__, "address": h.address or addr.get(h.host)}) for h in hosts]

    paths = []
    for p in topo.get("paths", []):
        data = by_path.get((p["src"], p["dst"]), {})
        tests, owamp, trs = data.get("tests", []), data.get("owamp", []), data.get("traceroutes", [])
        paths.append(
            PathEvidence(
                src=p["src"],
                dst=p["dst"],
                capacity_bps=p["capacity_mbps"] * 1e6,
                hops=tuple(p["hops"]),
                throughput_tests=tuple(tests),
                owamp_tests=tuple(owamp),
                traceroutes=tuple(trs),
                baseline=summarise_path(tests, owamp, trs, start, baseline_end),
            )
        )

    speeds = {(i["equipment"], i["name"]): i.get("speed_mbps") for i in topo.get("interfaces", []) or []}
    mtus = {(i["equipment"], i["name"]): i.get("mtu") for i in topo.get("interfaces", []) or []}
    ifaces: dict[str, InterfaceEvidence] = {}
    for (eq, name), samples in snmp.items():
        speed = speeds.get((eq, name))
        speed_bps = speed * 1e6 if speed else None
        rates, gaps = counter_rates(samples, speed_bps)
        status = tuple(InterfaceStatus(ts(s["time"]), s["oper_status"]) for s in samples if s.get("oper_status"))
        ifaces[f"{eq}:{name}"] = InterfaceEvidence(
            eq, name, speed_bps, tuple(rates), tuple(gaps), status, mtus.get((eq, name))
        )
    for (eq, name), mtu in mtus.items():
        if f"{eq}:{name}" not in ifaces:
            speed = speeds.get((eq, name))
            ifaces[f"{eq}:{name}"] = InterfaceEvidence(eq, name, speed * 1e6 if speed else None, mtu_bytes=mtu)
    trunks = []
    for t in topo.get("trunks", []) or []:
        members = []
        for mname in t["members"]:
            eq, _, name = mname.partition(":")
            members.append(
                ifaces.pop(mname, None) or InterfaceEvidence(eq, name, (speeds.get((eq, name)) or 0) * 1e6 or None)
            )
        trunks.append(TrunkEvidence(t["name"], tuple(members)))

    maintenance = tuple(
        MaintenanceEvidence(
            reference=w["reference"],
            start=ts(w["start"]),
            end=ts(w["end"]),
            impact=w.get("impact", "outage"),
            affects=tuple(w.get("affects", ())),
            carrier=w.get("carrier"),
            description=w.get("description"),
        )
        for w in doc.get("maintenance", []) or []
    )
    equipment = tuple(
        EquipmentInfo(e["name"], e.get("site"), e.get("carrier"), e.get("role")) for e in topo.get("equipment", [])
    )
    schedules = tuple(
        AgentSchedule(a["site"], a.get("collector", "host_tcp"), a["interval_s"], a.get("host"))
        for a in doc.get("agents", []) or []
    )
    bundle = EvidenceBundle(
        paths=tuple(paths),
        window_start=start - timedelta(seconds=1),
        hosts=tuple(hosts),
        known_hosts=known,
        interfaces=tuple(ifaces.values()),
        trunks=tuple(trunks),
        maintenance=maintenance,
        equipment=equipment,
        agent_schedules=schedules,
    )
    return Scenario(doc["scenario"], now, bundle, doc.get("expect", {}) or {})
