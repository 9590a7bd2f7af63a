"""Exact configuration advice computed from the physics (sysctl lines, windows, streams)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from wanmon.diagnosis import constants as k
from wanmon.diagnosis.evidence import HostTcpEvidence


@dataclass(frozen=True)
class FillRate:
    """The rate a window must fill on a path: its capacity, or the slowest known NIC of the hosts at its ends
    when that is lower (a window beyond what fills the NIC helps nothing). ``nic_host`` names that host."""

    rate_bps: float
    nic_host: HostTcpEvidence | None = None


def fill_rate(capacity_bps: float, hosts: Iterable[HostTcpEvidence | None]) -> FillRate:
    """min(path capacity, NIC speeds of ``hosts`` that reported one)."""
    best = FillRate(capacity_bps)
    for h in hosts:
        if h is not None and h.nic_speed_mbps and h.nic_speed_mbps * 1e6 < best.rate_bps:
            best = FillRate(h.nic_speed_mbps * 1e6, h)
    return best


def round_up_bytes(n_bytes: float, step: int = k.HOST_BUFFER_ROUND_BYTES) -> int:
    """Round up to a whole number of ``step`` bytes (MiB by default)."""
    return int(math.ceil(n_bytes / step) * step)


def sysctl_lines(buffer_bytes: float, host: HostTcpEvidence | None = None) -> list[str]:
    """Linux sysctl lines that let one connection use ``buffer_bytes`` of send and receive buffer.

    The min/default values of tcp_rmem/tcp_wmem are kept from the host when it
    reported them (they matter for the many short connections), only the maxima change.
    """
    # never above what Linux accepts (a larger value is silently clamped, or refused by older kernels)
    n = min(round_up_bytes(buffer_bytes), k.LINUX_MAX_SOCKET_BUFFER_BYTES)
    rmem = host.tcp_rmem if host and host.tcp_rmem else (*k.DEFAULT_TCP_RMEM, 0)
    wmem = host.tcp_wmem if host and host.tcp_wmem else (*k.DEFAULT_TCP_WMEM, 0)
    return [
        f"net.core.rmem_max = {n}",
        f"net.core.wmem_max = {n}",
        f"net.ipv4.tcp_rmem = {rmem[0]} {rmem[1]} {n}",
        f"net.ipv4.tcp_wmem = {wmem[0]} {wmem[1]} {n}",
    ]


def streams_needed(target_bps: float, per_stream_bps: float) -> int | None:
    """Parallel streams needed to reach ``target_bps`` when each is capped at ``per_stream_bps``."""
    if not per_stream_bps or per_stream_bps <= 0 or math.isinf(per_stream_bps):
        return None
    return max(1, math.ceil(target_bps / per_stream_bps))
