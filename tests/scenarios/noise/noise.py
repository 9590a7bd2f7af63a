"""Noise models of real perfSONAR/SNMP data (docs/diagnosis.md#what-the-rules-tolerate) and the seeded random helpers.

Each stream of random numbers is its own ``random.Random`` seeded from the case seed and a label,
so that adding a measurement type or a fault does not shift the numbers of every other stream.
"""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass


def rng(seed: int, *labels: object) -> random.Random:
    """A random stream that depends only on the seed and the labels (not on Python's hash seed)."""
    text = ":".join(str(x) for x in (seed, *labels))
    return random.Random(int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big"))


def poisson(r: random.Random, mean: float) -> int:
    """Poisson sample (Knuth for small means, normal approximation above 30)."""
    if mean <= 0:
        return 0
    if mean > 30:
        return max(0, round(r.gauss(mean, math.sqrt(mean))))
    limit, k, p = math.exp(-mean), 0, 1.0
    while True:
        p *= r.random()
        if p <= limit:
            return k
        k += 1


def binomial(r: random.Random, n: int, p: float) -> int:
    """Binomial sample: Poisson for rare events, normal approximation for common ones."""
    if p <= 0 or n <= 0:
        return 0
    if p >= 1:
        return n
    if n * p < 30:
        return min(n, poisson(r, n * p))
    return min(n, max(0, round(r.gauss(n * p, math.sqrt(n * p * (1 - p))))))


@dataclass(frozen=True)
class NoiseSpec:
    """How noisy a mesh is; defaults are what LHCOPN/LHCONE perfSONAR data shows on healthy paths."""

    #: A throughput test fails once (server busy, connection refused) between successes.
    tcp_fail_prob: float = 0.015
    fail_reasons: tuple[str, ...] = (
        "nuttcp-t: Error: server busy (another test is running)",
        "nuttcp-t: v8.2.2: Error: connect: Connection refused",
        "pscheduler: run failed: remote host busy, try again later",
    )
    #: The test host is sometimes busy (CPU, disk, another transfer): an isolated slow result.
    busy_host_prob: float = 0.02
    busy_host_factor: tuple[float, float] = (0.3, 0.6)
    #: Host-limited single streams vary this much run to run (uniform in [1 - spread, 1] of the host level).
    host_run_spread: float = 0.28
    #: Network-limited streams vary a few per cent.
    network_run_spread: float = 0.03
    #: Tests piled up against a ceiling (line rate): this share of them falls into a tail spread below it
    #: (uniform in this range of the ceiling: a burst of cross traffic, a slower moment of the host). 0: none.
    capped_tail_prob: float = 0.0
    capped_tail_factor: tuple[float, float] = (0.70, 0.96)
    #: owamp: a session loses one packet now and then, rarely a short burst.
    owamp_single_loss_prob: float = 0.03
    owamp_burst_prob: float = 0.002
    owamp_burst_packets: tuple[int, int] = (2, 4)
    #: delay_max spikes of tens of ms (a busy receiver, an interrupt storm).
    delay_spike_prob: float = 0.03
    delay_spike_ms: tuple[float, float] = (10.0, 60.0)
    #: Clock error estimate of each host (NTP): the session reports the sum of both ends, 0.2-1 ms.
    host_clock_error_ms: tuple[float, float] = (0.1, 0.5)
    #: SNMP poll times jitter by seconds around the nominal schedule.
    poll_jitter_s: float = 4.0
    #: Input discards on a 100G port: a few per minute (about 1e-8 of the packets).
    in_discards_per_min_100g: float = 3.0
    #: Self-induced retransmits per Gb/s of a 10 s test: CUBIC/Reno fill a queue somewhere and lose a few
    #: segments each time (hundreds at tens of Gb/s); BBR paces and loses far fewer.
    retransmits_per_gbps_loss_based: tuple[float, float] = (4.0, 30.0)
    retransmits_per_gbps_bbr: tuple[float, float] = (0.2, 3.0)
    #: Traceroutes: a router that rate-limits ICMP leaves a '*' in the middle now and then.
    traceroute_star_prob: float = 0.03
    #: Tests that pile up at a ceiling (97 % of a 10G line) with the rest spreading below it: this share of the
    #: results meets transfers on the hosts' LAN and lands anywhere in ``below_cap_factor`` of the ceiling.
    below_cap_prob: float = 0.0
    below_cap_factor: tuple[float, float] = (0.7, 0.95)
