"""The physics oracle of the noise corpus (docs/diagnosis.md#the-physics), written independently of the engine.

Every throughput, delay and loss figure the generator writes comes from these functions, so that a
scenario is physically possible whatever the diagnosis engine believes: a single TCP stream never
exceeds min(capacity, window limit, loss limit, host limit), a one-way delay is the propagation
delay plus queueing (plus the clock offset between the two ends), and an owamp session loses a
binomial number of its packets.
"""

from __future__ import annotations

import math

FIBRE_KM_PER_MS = 200.0  # light in glass, n ~ 1.5
ROUTE_FACTOR = 1.25  # fibre follows roads and coasts: ~25 % longer than the great circle between PoPs
PER_HOP_MS = 0.05  # one-way forwarding and serialisation per router
EARTH_RADIUS_KM = 6371.0
IP_TCP_HEADER_BYTES = 40
TCP_TIMESTAMP_BYTES = 12  # on by default in Linux
ETHERNET_OVERHEAD_BYTES = 38  # preamble 8 + header 14 + FCS 4 + inter-frame gap 12
LINUX_MAX_SOCKET_BUFFER_BYTES = 2**31 - 1
#: With autotuning, Linux advertises part of the receive buffer as window (tcp_adv_win_scale = 1: half).
AUTOTUNED_WINDOW_FRACTION = 0.5
#: Mathis constant of classic Reno, sqrt(3/2).
MATHIS_C_RENO = math.sqrt(1.5)
#: CUBIC tolerated about twice Reno's rate at 0.11 % loss in the emulated 100 ms test of docs/diagnosis.md#the-physics
#: (8.5 vs 4.1-4.7 Mb/s); at low loss its cubic growth does better still (RFC 8312 section 5.1).
CUBIC_RENO_FACTOR = 2.0
CUBIC_C = 0.4
CUBIC_BETA = 0.7
LOSS_BASED_CUBIC_LIKE = ("cubic", "htcp")
#: BBR paces at the bottleneck rate and largely ignores random loss below ~2 % (BBRv2 reacts there).
BBR_LOSS_THRESHOLD = 0.02


def great_circle_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Distance on the sphere between two points given in degrees."""
    p1, p2, dl = math.radians(lat1), math.radians(lat2), math.radians(lon2 - lon1)
    c = math.sin(p1) * math.sin(p2) + math.cos(p1) * math.cos(p2) * math.cos(dl)
    return EARTH_RADIUS_KM * math.acos(max(-1.0, min(1.0, c)))


def one_way_delay_ms(route_km: float, hops: int) -> float:
    """Propagation over ``route_km`` of fibre (already including detours) plus per-hop forwarding."""
    return route_km / FIBRE_KM_PER_MS + hops * PER_HOP_MS


def mss_bytes(mtu_bytes: int, timestamps: bool = True) -> int:
    """TCP payload per segment: MTU minus IPv4+TCP headers (minus the timestamp option when on)."""
    return mtu_bytes - IP_TCP_HEADER_BYTES - (TCP_TIMESTAMP_BYTES if timestamps else 0)


def goodput_fraction(mtu_bytes: int, timestamps: bool = True) -> float:
    """Share of the line rate TCP payload can use: MSS over the frame on the wire."""
    return mss_bytes(mtu_bytes, timestamps) / (mtu_bytes + ETHERNET_OVERHEAD_BYTES)


def bdp_bytes(capacity_bps: float, rtt_ms: float) -> float:
    """Bandwidth-delay product C * RTT / 8."""
    return capacity_bps * rtt_ms / 1e3 / 8


def window_limit_bps(window_bytes: float, rtt_ms: float, autotuned: bool = True) -> float:
    """W * 8 / RTT; with autotuning W is the buffer maximum and only part of it is advertised."""
    effective = window_bytes * (AUTOTUNED_WINDOW_FRACTION if autotuned else 1.0)
    return effective * 8 / (rtt_ms / 1e3)


def mathis_bps(mss: int, rtt_ms: float, loss: float, congestion_control: str, c: float = MATHIS_C_RENO) -> float:
    """Loss-limited ceiling of one stream: C * MSS * 8 / (RTT * sqrt(p)); infinite without loss.

    BBR is not limited by random loss below BBR_LOSS_THRESHOLD; above it, it behaves like CUBIC. ``c`` is the
    Mathis constant (Reno's sqrt(3/2) unless a case study measured another).
    """
    if loss <= 0:
        return math.inf
    cc = congestion_control.lower()
    if cc.startswith("bbr") and loss < BBR_LOSS_THRESHOLD:
        return math.inf
    rtt_s = rtt_ms / 1e3
    reno = c * mss * 8 / (rtt_s * math.sqrt(loss))
    if cc not in LOSS_BASED_CUBIC_LIKE and not cc.startswith("bbr"):
        return reno
    # RFC 8312: average CUBIC window (C (3 + beta) / (4 (1 - beta)))^(1/4) * RTT^(3/4) / p^(3/4) segments.
    factor = (CUBIC_C * (3 + CUBIC_BETA) / (4 * (1 - CUBIC_BETA))) ** 0.25
    cubic_segments = factor * rtt_s**0.75 / loss**0.75
    return max(CUBIC_RENO_FACTOR * reno, cubic_segments * mss * 8 / rtt_s)


def loss_for_rate(mss: int, rtt_ms: float, rate_bps: float) -> float:
    """Inverse Mathis for Reno: the loss fraction at which one Reno stream is held to ``rate_bps``."""
    return (MATHIS_C_RENO * mss * 8 / (rtt_ms / 1e3 * rate_bps)) ** 2


def tcp_ceiling_bps(
    *,
    capacity_bps: float,
    available_bps: float,
    mtu_bytes: int,
    window_bytes: float,
    autotuned: bool,
    rtt_ms: float,
    loss: float,
    congestion_control: str,
    host_limit_bps: float,
) -> float:
    """What one TCP stream can reach: the smallest of line rate (goodput), free capacity, window, loss, host."""
    line = min(capacity_bps, available_bps) * goodput_fraction(mtu_bytes)
    return min(
        line,
        window_limit_bps(window_bytes, rtt_ms, autotuned),
        mathis_bps(mss_bytes(mtu_bytes), rtt_ms, loss, congestion_control),
        host_limit_bps,
    )


def packets(rate_bps: float, duration_s: float, mss: int) -> float:
    """Segments carried by a stream of ``rate_bps`` payload for ``duration_s``."""
    return rate_bps * duration_s / 8 / mss


def counter32_wrap_s(speed_bps: float) -> float:
    """Time for a 32-bit octet counter to wrap at full rate (why HC counters are polled)."""
    return 2**32 * 8 / speed_bps
