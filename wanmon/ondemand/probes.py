"""Diagnosis-driven tests (pure: no Django, no database): which test separates the two explanations a finding's
evidence leaves open, and what that test's result says about the finding.

``probe_requests(code, subject, evidence)`` gives the discriminating test(s) of a finding; ``probe_verdict(code,
evidence, results)`` turns their results (the records the agents uploaded) into a verdict: ``confirmed``,
``refuted`` or ``inconclusive``, with the reason in words and the figures it rests on. docs/diagnosis.md
(*Diagnosis-driven tests*) gives the physics of each.

====================== ========================== =========================================================
finding                test                       confirmed / refuted
====================== ========================== =========================================================
TCP_ONLY_DEGRADATION   UDP at the TCP rate, same  clean: the network carries the rate, TCP alone suffers /
                       direction                  UDP loses what explains TCP's rate: it is loss
WINDOW_LIMITED         N parallel streams         ~N x one stream, each at W*8/RTT / no gain: the path (a
                                                  bottleneck or loss), not the window, limits
MTU_MISMATCH           tracepath                  path MTU below the ends' MTU / the path carries it
ASYMMETRIC_PATH        the reverse direction      the reverse still much faster / as slow: not the path's
                                                  direction (the hosts or a shared element)
TRUNK_IMBALANCE        one TCP test per far host  the rates split by address parity / they do not
                       address across the LAG
====================== ========================== =========================================================
"""

from __future__ import annotations

import ipaddress
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from wanmon.diagnosis import constants as dk
from wanmon.diagnosis import physics

__all__ = [
    "PROBE_CODES",
    "ProbeRequest",
    "ProbeVerdict",
    "Verdict",
    "probe_requests",
    "probe_verdict",
]

STREAMS = 4
"""Parallel streams of the WINDOW_LIMITED test: enough to show N-fold scaling, few enough to stay far below the
capacity of a path whose one stream is held at a fraction of it."""

WINDOW_SCALING_MIN = 0.6
"""N streams held by their windows carry at least this share of N x W*8/RTT: each spends its slow start and its
connection set-up inside a short test (4 streams of 64 KiB at 100 ms carried 72 % of it in a 4 s test in the lab).
Far above what no gain gives (NO_GAIN_MAX / N = 37 % with 4 streams)."""

NO_GAIN_MAX = 1.5
"""N streams carrying less than this many times one stream: adding streams did not add rate."""

MIN_EXPECTED_LOSSES = 3.0
"""A clean UDP test refutes a loss only if that loss would have cost it at least this many packets."""

UDP_PACKET_BYTES = 1500 * 8  # nuttcp's UDP datagram of 1500 bytes (bits), to count the packets a rate sends

MIN_RATE_BPS = 1e6  # a UDP test slower than this sends too few packets to see a loss of 1e-4 in 10 s


class Verdict(StrEnum):
    """What a discriminating test says about its finding."""

    CONFIRMED = "confirmed"
    REFUTED = "refuted"
    INCONCLUSIVE = "inconclusive"


@dataclass(frozen=True)
class ProbeRequest:
    """One discriminating test: the direction it measures (``src`` -> ``dst``), what it runs, and the ``key`` that
    is unique per finding (one pending test per finding and key). ``host``: the far address to test towards
    (TRUNK_IMBALANCE tests each host address), instead of the agent's configured host."""

    probe: str
    key: str
    src: str
    dst: str
    kind: str
    protocol: str | None = None
    rate_bps: float | None = None
    streams: int | None = None
    duration_s: float | None = None
    host: str = ""
    purpose: str = ""


@dataclass(frozen=True)
class ProbeVerdict:
    """A verdict, its reason, the figures it rests on and the one line a page shows ("UDP at 9.4 Mb/s clean ->
    TCP-only confirmed")."""

    verdict: Verdict
    reason: str
    line: str
    figures: Mapping[str, Any] = field(default_factory=dict)


def _mbps(bps: float | None) -> str:
    return f"{(bps or 0) / 1e6:.3g} Mb/s"


def _num(evidence: Mapping[str, Any], *names: str) -> float | None:
    for name in names:
        value = evidence.get(name)
        if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
            return float(value)
    derived = evidence.get("derived") or {}
    for name in names:
        value = derived.get(name)
        if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
            return float(value)
    return None


def _split_path(path: str) -> tuple[str, str] | None:
    src, sep, dst = path.partition("->")
    return (src, dst) if sep and src and dst else None


# --------------------------------------------------------------------------- which test


def _tcp_only(subject: Mapping[str, str], evidence: Mapping[str, Any], duration_s: float) -> list[ProbeRequest]:
    tcp_bps = _num(evidence, "slow_throughput_median_bps")
    if not tcp_bps:
        return []
    rate = max(dk.UDP_COMPARABLE_FACTOR * tcp_bps, MIN_RATE_BPS)
    return [
        ProbeRequest(
            "udp_at_tcp_rate",
            "udp_at_tcp_rate",
            subject["src"],
            subject["dst"],
            "throughput",
            protocol="udp",
            rate_bps=round(rate),
            duration_s=duration_s,
            purpose=f"TCP_ONLY_DEGRADATION or loss? UDP at {_mbps(rate)} (TCP reached {_mbps(tcp_bps)})",
        )  # fmt: skip
    ]


def _window(subject: Mapping[str, str], evidence: Mapping[str, Any], duration_s: float) -> list[ProbeRequest]:
    streams = int(_num(evidence, "streams") or 1)
    if evidence.get("nic_bound") or evidence.get("at_linux_cap") or not _num(evidence, "throughput_median_bps"):
        return []  # a NIC or Linux's cap holds the stream: the advice is already parallel streams
    n = streams * STREAMS
    return [
        ProbeRequest(
            "parallel_streams",
            "parallel_streams",
            subject["src"],
            subject["dst"],
            "throughput",
            protocol="tcp",
            streams=n,
            duration_s=duration_s,
            purpose=f"WINDOW_LIMITED or the path? {n} parallel streams against {streams}",
        )  # fmt: skip
    ]


def _mtu(subject: Mapping[str, str], evidence: Mapping[str, Any], duration_s: float) -> list[ProbeRequest]:
    del duration_s
    return [
        ProbeRequest(
            "tracepath",
            "tracepath",
            subject["src"],
            subject["dst"],
            "tracepath",
            purpose=f"MTU_MISMATCH? tracepath's path MTU against the ends' {evidence.get('endpoint_mtu') or '?'} B",
        )  # fmt: skip
    ]


def _asymmetric(subject: Mapping[str, str], evidence: Mapping[str, Any], duration_s: float) -> list[ProbeRequest]:
    del evidence
    return [
        ProbeRequest(
            "reverse_direction",
            "reverse_direction",
            subject["dst"],
            subject["src"],
            "throughput",
            protocol="tcp",
            duration_s=duration_s,
            purpose=f"ASYMMETRIC_PATH? the reverse direction {subject['dst']}->{subject['src']} now",
        )  # fmt: skip
    ]


def _trunk(subject: Mapping[str, str], evidence: Mapping[str, Any], duration_s: float) -> list[ProbeRequest]:
    del subject
    out: list[ProbeRequest] = []
    for split in evidence.get("host_splits") or []:
        ends = _split_path(str(split.get("path", "")))
        if ends is None or split.get("address_field", "dst_host") != "dst_host":
            continue  # only the far host's address can be chosen by the agent of the source
        for host in sorted({*split.get("slow_hosts", ()), *split.get("fast_hosts", ())}):
            out.append(
                ProbeRequest(
                    "per_address",
                    f"per_address:{ends[0]}->{ends[1]}:{host}",
                    ends[0],
                    ends[1],
                    "throughput",
                    protocol="tcp",
                    duration_s=duration_s,
                    host=host,
                    purpose=f"TRUNK_IMBALANCE? TCP {ends[0]}->{ends[1]} to {host} (address parity {_parity(host)})",
                )  # fmt: skip
            )
    return out


_REQUESTS = {
    "TCP_ONLY_DEGRADATION": _tcp_only,
    "WINDOW_LIMITED": _window,
    "MTU_MISMATCH": _mtu,
    "ASYMMETRIC_PATH": _asymmetric,
    "TRUNK_IMBALANCE": _trunk,
}
PROBE_CODES = frozenset(_REQUESTS)


def probe_requests(
    code: str, subject: Mapping[str, str], evidence: Mapping[str, Any], *, duration_s: float = 10.0
) -> list[ProbeRequest]:
    """The test(s) that separate the explanations a finding of ``code`` leaves open ([] for other codes, and when
    the evidence lacks what the test needs)."""
    build = _REQUESTS.get(code)
    if build is None:
        return []
    if code != "TRUNK_IMBALANCE" and not ({"src", "dst"} <= set(subject)):
        return []
    return build(subject, evidence, duration_s)


# --------------------------------------------------------------------------- what it says


def _rate(result: Mapping[str, Any]) -> float | None:
    value = result.get("throughput_bps")
    return float(value) if isinstance(value, int | float) and value > 0 else None


def _verdict_tcp_only(evidence: Mapping[str, Any], results: Sequence[Mapping[str, Any]]) -> ProbeVerdict:
    r = results[0]
    sent, lost = r.get("packets_sent"), r.get("packets_lost")
    rate = r.get("offered_bps") or _rate(r)
    tcp_bps = _num(evidence, "slow_throughput_median_bps") or 0.0
    rtt_ms, mss = _num(evidence, "rtt_ms"), _num(evidence, "mss_bytes") or 1448.0
    if not sent or lost is None or not rate or not rtt_ms or not tcp_bps:
        return ProbeVerdict(Verdict.INCONCLUSIVE, "the UDP test reported no packet counts", "UDP test: no counts")
    p = lost / sent
    # the loss that would hold one Reno-like stream at TCP's rate (conservative Mathis, C = 0.7)
    p_explains = physics.loss_for_rate(tcp_bps, mss, rtt_ms)
    figures = {"udp_rate_bps": rate, "packets_sent": sent, "packets_lost": lost, "loss_fraction": p,
               "loss_that_explains_tcp": p_explains, "tcp_bps": tcp_bps}  # fmt: skip
    ceiling = physics.mathis_rate_bps(mss, rtt_ms, p) if p else None
    if p and ceiling is not None and ceiling < dk.UDP_COMPARABLE_FACTOR * tcp_bps:
        return ProbeVerdict(
            Verdict.REFUTED,
            f"UDP at {_mbps(rate)} lost {lost} of {sent} packets ({p:.2%}): that loss holds TCP to {_mbps(ceiling)} "
            f"(Mathis, C = 0.7), enough to explain its {_mbps(tcp_bps)}: it is loss, not TCP alone",
            f"UDP at {_mbps(rate)} lost {p:.2%} -> loss, TCP-only refuted", figures,
        )  # fmt: skip
    if sent * p_explains < MIN_EXPECTED_LOSSES:
        return ProbeVerdict(
            Verdict.INCONCLUSIVE,
            f"UDP at {_mbps(rate)} sent {sent} packets: too few to see the {p_explains:.1e} loss that would explain "
            f"TCP's {_mbps(tcp_bps)}",
            f"UDP at {_mbps(rate)}: too few packets", figures,
        )  # fmt: skip
    clean = "clean" if not lost else f"{p:.2%} loss, too little to matter"
    return ProbeVerdict(
        Verdict.CONFIRMED,
        f"UDP at {_mbps(rate)} ({dk.UDP_COMPARABLE_FACTOR:g} x TCP's {_mbps(tcp_bps)}) in the same direction lost "
        f"{lost} of {sent} packets; a loss explaining TCP's rate ({p_explains:.1e}) would have cost "
        f"{sent * p_explains:.0f}: the network carries the rate, TCP alone suffers",
        f"UDP at {_mbps(rate)} {clean} -> TCP-only confirmed", figures,
    )  # fmt: skip


def _verdict_window(evidence: Mapping[str, Any], results: Sequence[Mapping[str, Any]]) -> ProbeVerdict:
    r = results[0]
    one_stream = _num(evidence, "throughput_median_bps") or 0.0
    streams_before = int(_num(evidence, "streams") or 1)
    window_limit = _num(evidence, "window_limited_rate_bps") or 0.0  # of streams_before streams
    total, n = _rate(r), int(r.get("streams") or STREAMS * streams_before)
    if not total or not one_stream or not window_limit:
        return ProbeVerdict(Verdict.INCONCLUSIVE, "the parallel test reported no rate", "parallel streams: no rate")
    expected = window_limit * n / streams_before
    gain = total / one_stream
    figures = {"streams": n, "throughput_bps": total, "before_streams": streams_before, "before_bps": one_stream,
               "gain": gain, "window_limit_bps": expected, "share_of_window_limit": total / expected}  # fmt: skip
    head = f"{n} streams {_mbps(total)} vs {streams_before} {_mbps(one_stream)} (x{gain:.2g})"
    if total >= WINDOW_SCALING_MIN * expected:
        return ProbeVerdict(
            Verdict.CONFIRMED,
            f"{n} parallel streams carried {_mbps(total)}, {total / expected:.0%} of {n} x W*8/RTT = {_mbps(expected)} "
            f"and {gain:.2g} x what {streams_before} stream(s) reached: each stream runs at its window's limit, the "
            "path has room: the window limits",
            f"{head} -> window limit confirmed", figures,
        )  # fmt: skip
    if gain < NO_GAIN_MAX:
        return ProbeVerdict(
            Verdict.REFUTED,
            f"{n} parallel streams carried {_mbps(total)}, only {gain:.2g} x what {streams_before} stream(s) "
            f"reached: more window in flight did not add rate, so the path (a bottleneck or its loss), not the "
            "window, is the limit",
            f"{head} -> no gain, window limit refuted", figures,
        )  # fmt: skip
    return ProbeVerdict(
        Verdict.INCONCLUSIVE,
        f"{n} parallel streams carried {_mbps(total)}: more than one stream ({gain:.2g} x) but only "
        f"{total / expected:.0%} of {n} x W*8/RTT: the window and something else (loss) both hold it",
        f"{head} -> partly window", figures,
    )  # fmt: skip


def _verdict_mtu(evidence: Mapping[str, Any], results: Sequence[Mapping[str, Any]]) -> ProbeVerdict:
    pmtu = results[0].get("pmtu_bytes")
    endpoint = _num(evidence, "endpoint_mtu")
    if not pmtu or not endpoint:
        return ProbeVerdict(
            Verdict.INCONCLUSIVE, "tracepath reported no path MTU (or the ends' MTU is unknown)", "tracepath: no PMTU"
        )
    figures = {"path_mtu_bytes": pmtu, "endpoint_mtu_bytes": endpoint}
    if pmtu < dk.MTU_MISMATCH_RATIO * endpoint:
        return ProbeVerdict(
            Verdict.CONFIRMED, f"tracepath found a path MTU of {pmtu} B while the ends use {endpoint:.0f} B",
            f"tracepath PMTU {pmtu} B < {endpoint:.0f} B -> MTU mismatch confirmed", figures,
        )  # fmt: skip
    return ProbeVerdict(
        Verdict.REFUTED, f"tracepath found a path MTU of {pmtu} B: the path carries the ends' {endpoint:.0f} B",
        f"tracepath PMTU {pmtu} B -> MTU mismatch refuted", figures,
    )  # fmt: skip


def _verdict_asymmetric(evidence: Mapping[str, Any], results: Sequence[Mapping[str, Any]]) -> ProbeVerdict:
    reverse = _rate(results[0])
    bad = _num(evidence, "throughput_bps")
    if not reverse or not bad:
        return ProbeVerdict(Verdict.INCONCLUSIVE, "the reverse test reported no rate", "reverse direction: no rate")
    ratio = bad / reverse
    figures = {"reverse_throughput_bps": reverse, "throughput_bps": bad, "ratio": ratio}
    head = f"reverse {_mbps(reverse)} vs {_mbps(bad)}"
    if ratio < dk.ASYMMETRY_MAX_RATIO:
        return ProbeVerdict(
            Verdict.CONFIRMED,
            f"the reverse direction carries {_mbps(reverse)} now, the finding's direction {_mbps(bad)} "
            f"({ratio:.0%}): one direction of the path is the problem",
            f"{head} -> asymmetry confirmed", figures,
        )  # fmt: skip
    if ratio >= 1 - dk.ASYMMETRY_MAX_RATIO:
        return ProbeVerdict(
            Verdict.REFUTED,
            f"the reverse direction is as slow now ({_mbps(reverse)} against {_mbps(bad)}): both directions suffer, "
            "so a host or an element both share, not one direction of the path",
            f"{head} -> both slow, asymmetry refuted", figures,
        )  # fmt: skip
    return ProbeVerdict(
        Verdict.INCONCLUSIVE, f"the reverse direction carries {_mbps(reverse)}, {ratio:.0%} of the finding's",
        f"{head} -> unclear", figures,
    )  # fmt: skip


def _parity(address: str) -> str | None:
    try:
        return "odd" if int(ipaddress.ip_address(address)) & 1 else "even"
    except ValueError:
        return None


def _verdict_trunk(evidence: Mapping[str, Any], results: Sequence[Mapping[str, Any]]) -> ProbeVerdict:
    del evidence
    groups: dict[str, list[float]] = {"odd": [], "even": []}
    by_host: dict[str, float] = {}
    for r in results:
        rate, parity = _rate(r), _parity(str(r.get("dst_host") or ""))
        if rate and parity:
            groups[parity].append(rate)
            by_host[str(r["dst_host"])] = rate
    if not groups["odd"] or not groups["even"]:
        return ProbeVerdict(
            Verdict.INCONCLUSIVE, "the tests did not reach both odd and even host addresses", "per address: one parity"
        )
    odd, even = statistics.median(groups["odd"]), statistics.median(groups["even"])
    slow, fast = ("odd", "even") if odd < even else ("even", "odd")
    ratio = min(odd, even) / max(odd, even)
    figures = {"by_host_bps": by_host, "odd_bps": odd, "even_bps": even, "ratio": ratio}
    head = f"odd {_mbps(odd)}, even {_mbps(even)}"
    if ratio <= dk.BIMODAL_MAX_RATIO:
        return ProbeVerdict(
            Verdict.CONFIRMED,
            f"TCP to the {slow} addresses reached {_mbps(min(odd, even))}, to the {fast} ones {_mbps(max(odd, even))} "
            f"({ratio:.0%}): the split follows the address, as a LAG's hashing puts it on one member",
            f"{head} -> split by address, hashing confirmed", figures,
        )  # fmt: skip
    return ProbeVerdict(
        Verdict.REFUTED,
        f"TCP to odd ({_mbps(odd)}) and even ({_mbps(even)}) addresses ran alike now ({ratio:.0%}): no split by "
        "address",
        f"{head} -> no split, hashing refuted", figures,
    )  # fmt: skip


_VERDICTS = {
    "TCP_ONLY_DEGRADATION": _verdict_tcp_only,
    "WINDOW_LIMITED": _verdict_window,
    "MTU_MISMATCH": _verdict_mtu,
    "ASYMMETRIC_PATH": _verdict_asymmetric,
    "TRUNK_IMBALANCE": _verdict_trunk,
}


def probe_verdict(code: str, evidence: Mapping[str, Any], results: Sequence[Mapping[str, Any]]) -> ProbeVerdict:
    """What the discriminating test's result(s) (the records as uploaded, one per request) say about a finding of
    ``code`` with ``evidence``. A failed test (its ``error``) is inconclusive with the error as the reason."""
    errors = [str(r["error"]) for r in results if r.get("error")]
    if errors or not results:
        reason = f"the test failed: {errors[0]}" if errors else "no result"
        return ProbeVerdict(Verdict.INCONCLUSIVE, reason, reason)
    return _VERDICTS[code](evidence, results)
