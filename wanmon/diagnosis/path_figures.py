"""The figures of one path direction that its TCP tests and its hosts give: RTT, MSS, the sender's congestion
control, the window a test could really use and the per-stream capacity over the trunks it crosses."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from wanmon.diagnosis import constants as k
from wanmon.diagnosis import physics
from wanmon.diagnosis.evidence import EvidenceBundle, PathEvidence, ThroughputTest
from wanmon.diagnosis.host_matching import latest_hosts, match_host
from wanmon.diagnosis.path_elements import trunks_on_path


def flow_capacity(bundle: EvidenceBundle, path: PathEvidence, streams: int) -> float:
    """A flow hashes onto one member of each LAG: the per-stream ceiling is the member speed."""
    cap = path.capacity_bps
    for t in trunks_on_path(bundle, path):
        speeds = [m.speed_bps for m in t.members if m.speed_bps]
        if speeds:
            cap = min(cap, max(1, streams) * min(speeds))
    return cap


def effective_window(bundle: EvidenceBundle, path: PathEvidence, t: ThroughputTest) -> tuple[float | None, str | None]:
    """The window a test could really use: the requested one capped by the hosts' buffer maxima.

    Linux silently caps SO_SNDBUF/SO_RCVBUF at net.core.wmem_max/rmem_max, and
    autotuning (no explicit window) at the third value of tcp_wmem/tcp_rmem.
    """
    sender = match_host(bundle, path.src, t.src_host, t.mss_bytes)
    receiver = match_host(bundle, path.dst, t.dst_host, t.mss_bytes)
    caps: list[tuple[float, str]] = []
    if t.window_bytes:
        if receiver and receiver.rmem_max:
            caps.append((receiver.rmem_max, f"net.core.rmem_max of {receiver.host}"))
        if sender and sender.wmem_max:
            caps.append((sender.wmem_max, f"net.core.wmem_max of {sender.host}"))
        window = float(t.window_bytes)
        for cap, why in caps:
            if cap < window:
                return float(cap), why
        return window, None
    if receiver and receiver.tcp_rmem:
        caps.append((receiver.tcp_rmem[2], f"net.ipv4.tcp_rmem max of {receiver.host}"))
    if sender and sender.tcp_wmem:
        caps.append((sender.tcp_wmem[2], f"net.ipv4.tcp_wmem max of {sender.host}"))
    if caps:
        cap, why = min(caps)
        return float(cap), why
    return None, None


def sender_cc(bundle: EvidenceBundle, path: PathEvidence, tests: Sequence[ThroughputTest]) -> str | None:
    ccs = []
    for t in tests:
        h = match_host(bundle, path.src, t.src_host, t.mss_bytes)
        if h and h.congestion_control:
            ccs.append(h.congestion_control.lower())
    if ccs:
        return max(set(ccs), key=ccs.count)
    site_ccs = {
        h.congestion_control.lower() for h in latest_hosts(bundle) if h.site == path.src and h.congestion_control
    }
    return site_ccs.pop() if len(site_ccs) == 1 else None


def path_rtt(
    bundle: EvidenceBundle, path: PathEvidence, tcp: Sequence[ThroughputTest], owamp
) -> tuple[float | None, str]:
    rtts = [t.rtt_ms for t in tcp if t.rtt_ms]
    if rtts:
        return statistics.median(rtts), "median of the TCP tests"
    rev = bundle.path(path.dst, path.src)
    fwd_min = min((o.delay_min_ms for o in owamp if o.delay_min_ms is not None and o.delay_min_ms > 0), default=None)
    if rev is not None and fwd_min is not None:
        rev_min = min(
            (o.delay_min_ms for o in rev.owamp_tests if o.delay_min_ms is not None and o.delay_min_ms > 0), default=None
        )
        if rev_min is not None:
            return fwd_min + rev_min, "sum of the one-way minimum delays"
    if path.baseline and path.baseline.rtt_ms:
        return path.baseline.rtt_ms, "baseline"
    if fwd_min is not None:
        return 2 * fwd_min, "twice the one-way minimum delay"
    return None, "unknown"


def path_mss(bundle: EvidenceBundle, path: PathEvidence, tcp: Sequence[ThroughputTest]) -> tuple[int, str]:
    msss = [t.mss_bytes for t in tcp if t.mss_bytes]
    if msss:
        return int(statistics.median(msss)), "TCP tests"
    if path.baseline and path.baseline.mss_bytes:
        return path.baseline.mss_bytes, "baseline"
    mtus = [h.mtu for h in latest_hosts(bundle) if h.site in (path.src, path.dst) and h.mtu]
    if mtus:
        return physics.mss_from_mtu(min(mtus), timestamps=True), "host MTU"
    return k.DEFAULT_MSS_BYTES, "assumed (MTU 1500)"
