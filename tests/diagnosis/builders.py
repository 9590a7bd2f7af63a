"""Builders of synthetic evidence for the rule tests (times in minutes after T0)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from wanmon.diagnosis import constants as k
from wanmon.diagnosis.engine import diagnose
from wanmon.diagnosis.evidence import (
    EvidenceBundle,
    HostTcpEvidence,
    InterfaceEvidence,
    InterfaceRate,
    OwampTest,
    PathEvidence,
    RuleFinding,
    ThroughputTest,
    TracerouteObservation,
    summarise_path,
)

T0 = datetime(2026, 3, 1, 6, 0, tzinfo=UTC)
NOW = T0 + timedelta(hours=6)
MiB = 1 << 20


def at(minute: float) -> datetime:
    return T0 + timedelta(minutes=minute)


def tcp(minute: float, throughput_bps: float, **kw) -> ThroughputTest:
    kw.setdefault("duration_s", 10)
    kw.setdefault("mss_bytes", 8948)
    kw.setdefault("retransmits", 0)
    return ThroughputTest(time=at(minute), protocol="tcp", throughput_bps=throughput_bps, **kw)


def failed(minute: float, error: str = "connect: Connection refused") -> ThroughputTest:
    return ThroughputTest(time=at(minute), protocol="tcp", throughput_bps=None, error=error)


def udp(minute: float, offered_bps: float, sent: int, lost: int, **kw) -> ThroughputTest:
    kw.setdefault("duration_s", 10)
    return ThroughputTest(
        time=at(minute),
        protocol="udp",
        throughput_bps=offered_bps * (1 - lost / sent),
        offered_bps=offered_bps,
        packets_sent=sent,
        packets_lost=lost,
        **kw,
    )


def owamp(minute: float, dmin: float, lost: int = 0, sent: int = 600, **kw) -> OwampTest:
    kw.setdefault("delay_median_ms", dmin + 0.3)
    kw.setdefault("delay_max_ms", dmin + 2.0)
    kw.setdefault("clock_error_ms", 0.2)
    return OwampTest(time=at(minute), packets_sent=sent, packets_lost=lost, delay_min_ms=dmin, **kw)


def every(step_min: float, fn: Callable[[float], object], start: float = 0, end: float = 360) -> list:
    out = []
    m = start
    while m <= end:
        item = fn(m)
        if item is not None:
            out.append(item)
        m += step_min
    return out


def trace(minute: float, hops: Iterable[str], pmtu: int | None = None) -> TracerouteObservation:
    return TracerouteObservation(at(minute), tuple(hops), pmtu)


def path(
    src: str,
    dst: str,
    capacity_bps: float,
    hops: Iterable[str],
    tests=(),
    sessions=(),
    traces=(),
    baseline=None,
    baseline_end_min: float | None = None,
) -> PathEvidence:
    tests, sessions, traces = tuple(tests), tuple(sessions), tuple(traces)
    if baseline is None and baseline_end_min is not None:
        baseline = settled_baseline(tests, sessions, traces, baseline_end_min)
    return PathEvidence(src, dst, capacity_bps, tuple(hops), tests, sessions, traces, baseline)


def settled_baseline(tests, sessions, traces, end_min: float, history_s: float = k.HISTORY_MIN_SPAN_S):
    """The baseline of a path whose results from T0 to ``end_min`` are what it gave every such period of the
    ``history_s`` before (the TCP tests repeated back in time): a path with enough history for relative
    judgements (constants.HISTORY_MIN_SPAN_S), as the rule tests assume; their probes are counted once."""
    period = [t for t in tests if T0 <= t.time <= at(end_min)]
    copies = max(1, math.ceil(history_s / 60 / end_min)) if end_min > 0 else 0
    history = [replace(t, time=t.time - timedelta(minutes=end_min * c)) for c in range(1, copies + 1) for t in period]
    return summarise_path([*history, *tests], sessions, traces, at(-end_min * copies), at(end_min))


def host(
    site: str, name: str, buf: int = 4 * MiB, cc: str = "cubic", mtu: int = 1500, address=None, minute: float = 300
) -> HostTcpEvidence:
    return HostTcpEvidence(
        site=site,
        host=name,
        time=at(minute),
        rmem_max=buf,
        wmem_max=buf,
        tcp_rmem=(4096, 87380, buf),
        tcp_wmem=(4096, 65536, buf),
        congestion_control=cc,
        mtu=mtu,
        address=address,
    )


def iface(equipment: str, name: str, speed_bps: float, rows: Iterable[InterfaceRate] = (), **kw) -> InterfaceEvidence:
    return InterfaceEvidence(equipment, name, speed_bps, tuple(rows), **kw)


def rate_row(minute: float, in_bps: float = 0.0, out_bps: float = 0.0, **kw) -> InterfaceRate:
    kw.setdefault("interval_s", 60.0)
    return InterfaceRate(time=at(minute), in_bps=in_bps, out_bps=out_bps, **kw)


def bundle(*paths: PathEvidence, **kw) -> EvidenceBundle:
    kw.setdefault("window_start", T0 - timedelta(seconds=1))
    return EvidenceBundle(paths=tuple(paths), **kw)


def run(b: EvidenceBundle, now: datetime = NOW) -> list[RuleFinding]:
    return diagnose(b, now)


def codes_of(findings: Iterable[RuleFinding]) -> set[str]:
    return {f.code for f in findings}


def find(findings: Iterable[RuleFinding], code: str, **subject: str) -> list[RuleFinding]:
    return [f for f in findings if f.code == code and all(f.subject.get(key) == v for key, v in subject.items())]


def one(findings: Iterable[RuleFinding], code: str, **subject: str) -> RuleFinding:
    hits = find(findings, code, **subject)
    assert len(hits) == 1, f"expected one {code} {subject}, got {[(f.code, dict(f.subject)) for f in findings]}"
    return hits[0]


# A healthy 1 Gb/s European path: 9.8 ms RTT, jumbo frames, 2 x BDP window.
EU_HOPS = ("cern-border", "geant-gva", "geant-fra", "dfn-fra", "fzk-border")
EU_HOPS_BACK = tuple(reversed(EU_HOPS))  # the same route from FZK to CERN


def eu_path(
    src: str,
    dst: str,
    hops: Iterable[str],
    thr: Callable[[float], float],
    dmin: Callable[[float], float] = lambda m: 4.9,
    lost: Callable[[float], int] = lambda m: 0,
    *,
    traces=(),
    baseline_end_min: float | None = None,
    **tcp_kw,
) -> PathEvidence:
    """A 1 Gb/s path of the CERN-FZK kind (2.45 MB window, 9.8 ms): a TCP test reaching ``thr(m)`` every 30 min and
    an owamp session every 5 min with minimum delay ``dmin(m)`` and ``lost(m)`` packets lost."""
    tests = every(30, lambda m: tcp(m, thr(m), window_bytes=2_450_000, rtt_ms=9.8, **tcp_kw))
    sessions = every(5, lambda m: owamp(m, dmin(m), lost=lost(m)))
    return path(src, dst, 1e9, hops, tests, sessions, traces, baseline_end_min=baseline_end_min)


def healthy_eu(src="CERN", dst="FZK", hops=EU_HOPS, rtt=9.8, thr=9.2e8, owd=4.9, **kw) -> PathEvidence:
    tests = every(30, lambda m: tcp(m, thr * (1 + 0.02 * ((m // 30) % 3 - 1)), window_bytes=2_450_000, rtt_ms=rtt))
    sessions = every(5, lambda m: owamp(m, owd))
    return path(src, dst, 1e9, hops, tests, sessions, **kw)
