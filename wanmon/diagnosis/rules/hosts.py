"""HOST_TCP_TUNING: a transfer host's TCP settings cannot serve its site's longest path."""

from __future__ import annotations

from wanmon.diagnosis import advice, codes, physics
from wanmon.diagnosis import constants as k
from wanmon.diagnosis.assessment import PathAssessment
from wanmon.diagnosis.context import RuleContext, finding
from wanmon.diagnosis.degradation import BASELINE_REFERENCE
from wanmon.diagnosis.evidence import HostTcpEvidence, RuleFinding
from wanmon.diagnosis.host_matching import latest_hosts
from wanmon.diagnosis.stats import median


def longest_path(ctx: RuleContext, site: str, host: HostTcpEvidence | None = None) -> PathAssessment | None:
    """The path from or to ``site`` with the largest bandwidth-delay product (RTT known), its rate capped at the
    NIC speed of ``host`` when known."""
    best = None
    for p in ctx.bundle.paths:
        if site not in (p.src, p.dst):
            continue
        a = ctx.assessment(p)
        if a.rtt_ms is None:
            continue
        bdp = physics.bdp_bytes(advice.fill_rate(p.capacity_bps, [host]).rate_bps, a.rtt_ms)
        if best is None or bdp > best[0]:
            best = (bdp, a)
    return best[1] if best else None


def _buffer_settings(h: HostTcpEvidence) -> list[tuple[str, int]]:
    out = []
    if h.rmem_max is not None:
        out.append(("net.core.rmem_max", h.rmem_max))
    if h.wmem_max is not None:
        out.append(("net.core.wmem_max", h.wmem_max))
    if h.tcp_rmem:
        out.append(("net.ipv4.tcp_rmem (max)", h.tcp_rmem[2]))
    if h.tcp_wmem:
        out.append(("net.ipv4.tcp_wmem (max)", h.tcp_wmem[2]))
    return out


def host_tcp_tuning(ctx: RuleContext) -> list[RuleFinding]:
    """HOST_TCP_TUNING on a host whose sysctls cannot fill its site's longest path.

    Evidence: the latest host_tcp report of each host, the last one before the
    window when none arrived in it (rmem_max, wmem_max, tcp_rmem, tcp_wmem,
    congestion control, MTU, NIC speed; its age), and the capacity and
    measured RTT of every path from or to its site.

    Criterion: a buffer maximum below HOST_BUFFER_MIN_BDP_FACTOR x the BDP of the
    site's longest path (largest R * RTT, R = min(C, the host's NIC speed): a
    window beyond what fills the NIC carries nothing more) and below Linux's cap
    (LINUX_MAX_SOCKET_BUFFER_BYTES: a host at the cap cannot do more), or a
    congestion control listed in PROBLEM_CONGESTION_CONTROLS whose Reno-like
    recovery on that path takes longer than HOST_CC_MAX_RESPONSIVENESS_S.

    Why: with buffers below one BDP a stream cannot fill the path whatever the
    network does (window limit W*8/RTT); 2 x BDP lets it survive a loss; one
    stream never leaves the host faster than its NIC.  Reno's
    recovery time C*RTT^2/(2*MSS*8) reaches hours on long fast paths.  The
    advice gives exact sysctl lines computed from that path.

    Severity: warning, except a congestion control alone (buffers large enough)
    whose host's results do not fall short (``reno_costs``): the hosts reach what
    their paths give, and switching is advice (info), not a fault.
    """
    out: list[RuleFinding] = []
    confirmed = ctx.findings_with(codes.WINDOW_LIMITED)
    for h in sorted(latest_hosts(ctx.bundle), key=lambda h: (h.site, h.host)):
        a = longest_path(ctx, h.site, h)
        lines: list[str] = []
        facts: dict = {
            "host": h.host,
            "site": h.site,
            "too_small": [],
            "longest_path": a.key if a is not None else None,
            "recommended_window_bytes": None,
            "problem_congestion_control": None,
            "reno_recovery_s": None,
        }
        evidence: dict = {
            "rmem_max": h.rmem_max,
            "wmem_max": h.wmem_max,
            "tcp_rmem": h.tcp_rmem,
            "tcp_wmem": h.tcp_wmem,
            "congestion_control": h.congestion_control,
            "mtu": h.mtu,
            "nic_speed_mbps": h.nic_speed_mbps,
        }
        if a is not None:
            fill = advice.fill_rate(a.path.capacity_bps, [h])
            bdp = physics.bdp_bytes(fill.rate_bps, a.rtt_ms)
            need = physics.recommended_window_bytes(fill.rate_bps, a.rtt_ms)
            # a setting already at Linux's cap cannot be raised: there the advice is parallel streams (see
            # WINDOW_LIMITED), and the host is not mistuned
            floor = min(k.HOST_BUFFER_MIN_BDP_FACTOR * bdp, k.LINUX_MAX_SOCKET_BUFFER_BYTES)
            small = [(name, v) for name, v in _buffer_settings(h) if v < floor]
            if small:
                smallest = min(v for _, v in small)
                facts["smallest_buffer_bytes"] = smallest
                facts["capped_rate_bps"] = physics.window_limited_rate_bps(smallest, a.rtt_ms)
                lines += advice.sysctl_lines(need, h)
            facts.update(
                too_small=small,
                capacity_bps=a.path.capacity_bps,
                fill_rate_bps=fill.rate_bps,
                nic_limited=fill.nic_host is not None,
                rtt_ms=a.rtt_ms,
                bdp_bytes=bdp,
                recommended_window_bytes=need,
                streams_at_cap=advice.streams_needed(need, k.LINUX_MAX_SOCKET_BUFFER_BYTES),
            )
            evidence.update(
                {
                    "longest_path": a.key,
                    "capacity_bps": a.path.capacity_bps,
                    "fill_rate_bps": fill.rate_bps,
                    "nic_limited": fill.nic_host is not None,
                    "rtt_ms": a.rtt_ms,
                    "bdp_bytes": bdp,
                    "recommended_buffer_bytes": advice.round_up_bytes(need),
                    "too_small": dict(small),
                }
            )
        cc = (h.congestion_control or "").lower()
        if cc in k.PROBLEM_CONGESTION_CONTROLS:
            rho = None
            if a is not None:
                mss = physics.mss_from_mtu(h.mtu, timestamps=True) if h.mtu else a.mss_bytes
                rho = physics.reno_responsiveness_s(a.path.capacity_bps, a.rtt_ms, mss)
            # on short paths Reno recovers in minutes: a choice, not a problem worth a warning; without a path of
            # the site in the evidence (the cycle's elements shard holds hosts and no path) nothing says what it
            # costs, and the shards holding the site's paths judge it
            if rho is not None and rho > k.HOST_CC_MAX_RESPONSIVENESS_S:
                facts.update(problem_congestion_control=cc, reno_recovery_s=rho)
                lines.append(f"net.ipv4.tcp_congestion_control = {k.RECOMMENDED_CONGESTION_CONTROL}")
        costs = reno_costs(ctx, h) if facts["problem_congestion_control"] else None
        evidence["short_paths"] = facts["short_paths"] = costs
        if not facts["too_small"] and not facts["problem_congestion_control"]:
            continue
        seen = [f for f in confirmed if h.site in (f.subject.get("src"), f.subject.get("dst"))]
        facts["window_limited_paths"] = [f"{f.subject['src']}->{f.subject['dst']}" for f in seen]
        evidence["sysctl"] = facts["sysctl"] = lines
        t = h.time or ctx.now
        # reports come every few hours: the latest may predate the window, and says how old the settings read are
        evidence["settings_age_s"] = (ctx.now - h.time).total_seconds() if h.time else None
        # the congestion control alone is worth a warning only when the host's results show what it costs
        severity = codes.WARNING if facts["too_small"] or costs else codes.INFO
        out.append(
            finding(
                codes.HOST_TCP_TUNING,
                severity=severity,
                subject={"site": h.site, "host": h.host},
                start=t,
                end=max(t, ctx.now) if h.time is None else t,
                facts=facts,
                evidence=evidence,
            )
        )
    return out


def reno_costs(ctx: RuleContext, h: HostTcpEvidence) -> list[str] | None:
    """The paths on which the host sends whose TCP results fall short of what the path gives: the median below
    UNDERPERFORMANCE_FRACTION of the path's baseline (its level before), or of min(capacity, W*8/RTT) without one.
    The congestion control acts at the sender: a Reno host that still reaches what its paths give (10 Gb/s across
    Europe, where one loss costs it minutes) is not held back by it.  The last test before the window counts too
    (tests every few hours).  None: the site sent no TCP test at all (nothing says whether Reno costs)."""
    short, judged = [], 0
    for p in ctx.bundle.paths:
        if p.src != h.site:
            continue
        a = ctx.assessment(p)
        tests = [f for f in a.tcp_before_window + a.tcp if f.test.throughput_bps]
        if not tests:
            continue
        judged += 1
        level = a.reference_bps if a.reference_source == BASELINE_REFERENCE and a.reference_bps else None
        level = min(level or a.expected_bps, a.expected_bps)
        thr = median(f.test.throughput_bps for f in tests) or 0.0
        if thr < k.UNDERPERFORMANCE_FRACTION * level:
            short.append(a.key)
    return short if judged else None
