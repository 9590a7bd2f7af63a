"""HOST_TCP_TUNING: a transfer host's TCP settings cannot serve its site's longest path."""

from __future__ import annotations

from wanmon.diagnosis import advice, codes, physics, text
from wanmon.diagnosis import constants as k
from wanmon.diagnosis.assessment import PathAssessment
from wanmon.diagnosis.context import RuleContext
from wanmon.diagnosis.evidence import HostTcpEvidence, RuleFinding
from wanmon.diagnosis.host_matching import latest_hosts


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

    Evidence: the latest host_tcp report of each host (rmem_max, wmem_max,
    tcp_rmem, tcp_wmem, congestion control, MTU, NIC speed) and the capacity and
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
    """
    out: list[RuleFinding] = []
    confirmed = ctx.findings_with(codes.WINDOW_LIMITED)
    for h in sorted(latest_hosts(ctx.bundle), key=lambda h: (h.site, h.host)):
        a = longest_path(ctx, h.site, h)
        problems: list[str] = []
        lines: list[str] = []
        evidence: dict = {
            "rmem_max": h.rmem_max,
            "wmem_max": h.wmem_max,
            "tcp_rmem": h.tcp_rmem,
            "tcp_wmem": h.tcp_wmem,
            "congestion_control": h.congestion_control,
            "mtu": h.mtu,
            "nic_speed_mbps": h.nic_speed_mbps,
        }
        bdp = need = None
        small_buffers = False
        if a is not None:
            fill = advice.fill_rate(a.path.capacity_bps, [h])
            bdp = physics.bdp_bytes(fill.rate_bps, a.rtt_ms)
            need = physics.recommended_window_bytes(fill.rate_bps, a.rtt_ms)
            fill_text = (
                f"{text.rate(fill.rate_bps)} (the NIC of {h.host}; the path carries {text.rate(a.path.capacity_bps)})"
                if fill.nic_host
                else text.rate(a.path.capacity_bps)
            )
            # a setting already at Linux's cap cannot be raised: there the advice is parallel streams (see
            # WINDOW_LIMITED), and the host is not mistuned
            floor = min(k.HOST_BUFFER_MIN_BDP_FACTOR * bdp, k.LINUX_MAX_SOCKET_BUFFER_BYTES)
            small = [(name, v) for name, v in _buffer_settings(h) if v < floor]
            if small:
                small_buffers = True
                smallest = min(v for _, v in small)
                rate = physics.window_limited_rate_bps(smallest, a.rtt_ms)
                problems.append(
                    f"{', '.join(f'{n} = {v}' for n, v in small)} below the BDP of its longest path {a.key} "
                    f"({fill_text} x {text.ms(a.rtt_ms)} = {text.size(bdp)}): one stream is "
                    f"capped at {text.size(smallest)} x 8 / RTT = {text.rate(rate)}"
                )
                lines += advice.sysctl_lines(need, h)
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
            why = k.PROBLEM_CONGESTION_CONTROLS[cc]
            rho = None
            if a is not None:
                mss = physics.mss_from_mtu(h.mtu, timestamps=True) if h.mtu else a.mss_bytes
                rho = physics.reno_responsiveness_s(a.path.capacity_bps, a.rtt_ms, mss)
                why += f"; on {a.key} Reno needs {text.duration(rho)} to regain full rate after one loss"
            # on short paths Reno recovers in minutes: a choice, not a problem worth a warning
            if rho is None or rho > k.HOST_CC_MAX_RESPONSIVENESS_S:
                problems.append(f"congestion control '{cc}': {why}")
                lines.append(f"net.ipv4.tcp_congestion_control = {k.RECOMMENDED_CONGESTION_CONTROL}")
        if not problems:
            continue
        seen = [f for f in confirmed if h.site in (f.subject.get("src"), f.subject.get("dst"))]
        confirm = (
            " Throughput tests confirm it: WINDOW_LIMITED on "
            + ", ".join(f"{f.subject['src']}->{f.subject['dst']}" for f in seen)
            + "."
            if seen
            else ""
        )
        evidence["sysctl"] = lines
        t = h.time or ctx.now
        out.append(
            RuleFinding(
                code=codes.HOST_TCP_TUNING,
                severity=codes.WARNING,
                subject={"site": h.site, "host": h.host},
                start=t,
                end=max(t, ctx.now) if h.time is None else t,
                summary=f"{h.host} ({h.site}): " + "; ".join(p.split(":")[0] for p in problems),
                explanation=(
                    f"TCP settings of {h.host} at {h.site}: "
                    + "; ".join(problems)
                    + "."
                    + (
                        f" Set the maxima to 2 x BDP = {text.size(need)} so one stream can fill {a.key}"
                        + (f" as fast as the {text.rate(fill.rate_bps)} NIC sends" if fill.nic_host else "")
                        + " and survive a loss."
                        if need and small_buffers and a is not None and need <= k.LINUX_MAX_SOCKET_BUFFER_BYTES
                        else (
                            f" Set the maxima to Linux's cap of {text.size(k.LINUX_MAX_SOCKET_BUFFER_BYTES)}; 2 x BDP "
                            f"({text.size(need)}) is beyond any setting, so use at least "
                            f"{advice.streams_needed(need, k.LINUX_MAX_SOCKET_BUFFER_BYTES)} parallel streams on "
                            f"{a.key}."
                            if need and small_buffers and a is not None
                            else ""
                        )
                    )
                    + confirm
                ),
                evidence=evidence,
                actions=tuple(
                    [f"On {h.host}, in /etc/sysctl.d/90-wan.conf: " + "; ".join(lines) + " (then sysctl --system)."]
                    + (
                        [
                            "Applications that set their own window (nuttcp -w, GridFTP -tcp-bs) must also ask for "
                            f"{text.size(need)}."
                        ]
                        if need and small_buffers
                        else []
                    )
                ),
            )
        )
    return out
