"""TCP-on-long-paths physics used by every diagnosis rule (docs/diagnosis.md#the-physics).

Pure functions, units in the names: ``_bps`` bit/s, ``_bytes``, ``_ms``, ``_s``.

The Mathis model: a Reno-like TCP stream with random loss fraction ``p`` cannot
exceed ``R = C * MSS * 8 / (RTT * sqrt(p))``.  Two constants are in use:

* ``C = 0.7`` (``MATHIS_C_CONSERVATIVE``): the value of the HPC tutorials. It is
  conservative: in an emulated 100 ms path at p = 0.11 % real Linux Reno reached
  4.7 Mb/s where C = 0.7 predicts 2.4 Mb/s.
* ``C = sqrt(3/2) ~ 1.22`` (``MATHIS_C_RENO``): the periodic-loss derivation for
  classic Reno; it predicts 4.1 Mb/s in the same test, close to the measurement.

CUBIC reached about 8.5 Mb/s in that test (about twice the Reno figure) and BBR
about 89 Mb/s: BBR largely ignores random loss.  The rules therefore use the
Mathis rate as a *ceiling* for Reno-like stacks (scaled for CUBIC), never as a
point estimate, and not at all for BBR.
"""

from __future__ import annotations

import math

from wanmon.diagnosis import constants as k

__all__ = [
    "bdp_bytes",
    "counter_wrap_time_s",
    "fibre_km_for_delay_ms",
    "great_circle_km",
    "loss_for_rate",
    "mathis_rate_bps",
    "mss_from_mtu",
    "propagation_delay_ms",
    "recommended_window_bytes",
    "reno_responsiveness_s",
    "retransmit_loss_fraction",
    "window_limited_rate_bps",
]


def _rtt_s(rtt_ms: float) -> float:
    if rtt_ms <= 0:
        raise ValueError(f"rtt_ms must be positive, got {rtt_ms!r}")
    return rtt_ms / 1000.0


def bdp_bytes(capacity_bps: float, rtt_ms: float) -> float:
    """Bandwidth-delay product: the bytes in flight needed to fill the path, C * RTT / 8."""
    return capacity_bps * _rtt_s(rtt_ms) / 8.0


def window_limited_rate_bps(window_bytes: float, rtt_ms: float) -> float:
    """Ceiling of one stream whose window is ``window_bytes``: W * 8 / RTT."""
    return window_bytes * 8.0 / _rtt_s(rtt_ms)


def recommended_window_bytes(capacity_bps: float, rtt_ms: float) -> float:
    """Window to configure: 2 * BDP, so that the stream keeps the pipe full after halving on a single loss."""
    return k.RECOMMENDED_WINDOW_BDP_FACTOR * bdp_bytes(capacity_bps, rtt_ms)


def mathis_rate_bps(mss_bytes: float, rtt_ms: float, loss_fraction: float, c: float = k.MATHIS_C_CONSERVATIVE) -> float:
    """Loss-limited rate of one Reno-like stream: c * MSS * 8 / (RTT * sqrt(p)).

    ``c`` defaults to the conservative 0.7; pass ``constants.MATHIS_C_RENO`` (sqrt(3/2))
    for the classic Reno figure.  Returns ``math.inf`` for p = 0 (loss does not limit).
    """
    if loss_fraction < 0 or loss_fraction > 1:
        raise ValueError(f"loss_fraction must be within [0, 1], got {loss_fraction!r}")
    if loss_fraction == 0:
        return math.inf
    return c * mss_bytes * 8.0 / (_rtt_s(rtt_ms) * math.sqrt(loss_fraction))


def loss_for_rate(rate_bps: float, mss_bytes: float, rtt_ms: float, c: float = k.MATHIS_C_CONSERVATIVE) -> float:
    """Largest random loss fraction that still lets one Reno-like stream reach ``rate_bps``.

    The inverse of the Mathis formula: p = (c * MSS * 8 / (RTT * R))^2.
    """
    if rate_bps <= 0:
        raise ValueError(f"rate_bps must be positive, got {rate_bps!r}")
    return min(1.0, (c * mss_bytes * 8.0 / (_rtt_s(rtt_ms) * rate_bps)) ** 2)


def reno_responsiveness_s(capacity_bps: float, rtt_ms: float, mss_bytes: float) -> float:
    """Time Reno needs to return to full rate after one loss: C * RTT^2 / (2 * MSS * 8).

    After a loss the window halves and grows again by one MSS per RTT; refilling
    half a BDP (C * RTT / 2 bits) at MSS * 8 bits per RTT takes C * RTT^2 / (2 * MSS * 8) s.
    """
    rtt_s = _rtt_s(rtt_ms)
    return capacity_bps * rtt_s * rtt_s / (2.0 * mss_bytes * 8.0)


def counter_wrap_time_s(bits: int, capacity_bps: float) -> float:
    """Seconds an octet counter of ``bits`` width takes to wrap at full ``capacity_bps``: 2^bits * 8 / C."""
    return (2**bits) * 8.0 / capacity_bps


def propagation_delay_ms(distance_km: float) -> float:
    """One-way propagation in fibre: light covers ~200 km per ms (5 us per km)."""
    return distance_km / k.FIBRE_KM_PER_MS


def fibre_km_for_delay_ms(delay_ms: float) -> float:
    """Fibre length a one-way delay corresponds to (inverse of ``propagation_delay_ms``)."""
    return delay_ms * k.FIBRE_KM_PER_MS


def great_circle_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Great-circle distance on a spherical Earth (lower bound of any fibre route)."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * k.EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(a)))


def mss_from_mtu(mtu_bytes: int, timestamps: bool = False) -> int:
    """MSS for an MTU: MTU - 40 (IPv4 + TCP headers), 12 bytes less with TCP timestamps (Linux default)."""
    overhead = k.TCP_IP_HEADER_BYTES + (k.TCP_TIMESTAMP_OPTION_BYTES if timestamps else 0)
    if mtu_bytes <= overhead:
        raise ValueError(f"mtu_bytes must exceed {overhead}, got {mtu_bytes!r}")
    return mtu_bytes - overhead


def retransmit_loss_fraction(
    retransmits: int | None, throughput_bps: float | None, duration_s: float | None, mss_bytes: float | None
) -> float | None:
    """Loss fraction a TCP test implies: retransmits / segments sent.

    Segments delivered = throughput * duration / 8 / MSS (the estimate of docs/diagnosis.md#the-physics);
    the denominator adds the retransmitted segments themselves so the fraction stays
    within [0, 1] on very lossy paths (for small loss both forms agree).  ``None``
    (unknown) when the retransmit count or any other input is missing: unknown is never 0.
    """
    if retransmits is None or throughput_bps is None or not duration_s or not mss_bytes:
        return None
    delivered = throughput_bps * duration_s / 8.0 / mss_bytes
    sent = delivered + retransmits
    if sent <= 0:
        return None
    return retransmits / sent
