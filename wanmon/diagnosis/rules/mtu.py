"""MTU_MISMATCH: jumbo frames are not available end to end."""

from __future__ import annotations

from wanmon.diagnosis import codes, physics
from wanmon.diagnosis import constants as k
from wanmon.diagnosis.assessment import PathAssessment
from wanmon.diagnosis.context import RuleContext, path_finding
from wanmon.diagnosis.evidence import RuleFinding
from wanmon.diagnosis.host_matching import latest_hosts, match_host
from wanmon.diagnosis.stats import median


def _site_mtu(ctx: RuleContext, a: PathAssessment, site: str, field: str) -> int | None:
    """MTU of the hosts the tests used at ``site`` (by address), else the largest MTU of the site's hosts."""
    mtus = []
    for f in a.tcp:
        h = match_host(ctx.bundle, site, getattr(f.test, field), None) if getattr(f.test, field) else None
        if h and h.mtu:
            mtus.append(h.mtu)
    if mtus:
        return int(median(mtus) or mtus[0])
    site_mtus = [h.mtu for h in latest_hosts(ctx.bundle) if h.site == site and h.mtu]
    return max(site_mtus) if site_mtus else None


def mtu_mismatch(ctx: RuleContext) -> list[RuleFinding]:
    """MTU_MISMATCH on a path whose MTU is below what its endpoints use.

    Evidence: host_tcp MTUs of both ends (matched by test address, else the
    site's hosts), traceroute path MTU (the window's traceroutes, else the last
    one before the window, its age in the evidence), the MSS of the TCP tests
    and of the baseline, and the MTU of interfaces that are hops of the path.

    Criterion: with E = min(sender MTU, receiver MTU) (one host's MTU when only
    one reports, else the MTU the tests' MSS implies), any of: traceroute path
    MTU below MTU_MISMATCH_RATIO x E; test MSS below MTU_MISMATCH_RATIO x the MSS
    of E (with timestamps); test MSS below MTU_MISMATCH_RATIO x the baseline's
    MSS; an interface hop with an MTU below MTU_MISMATCH_RATIO x E.  The ratio
    ignores 9000 vs 9216 differences and catches 1500 on a jumbo path.

    Why: the Mathis ceiling and the Reno recovery speed are proportional to the
    MSS: 1448 instead of 8948 bytes costs a factor 6 in loss tolerance.  A path
    MTU below the hosts' MTU also risks black holes when ICMP is filtered.
    """
    out: list[RuleFinding] = []
    for a in ctx.assessments():
        src_mtu = _site_mtu(ctx, a, a.path.src, "src_host")
        dst_mtu = _site_mtu(ctx, a, a.path.dst, "dst_host")
        observed_mss = median(f.test.mss_bytes for f in a.tcp if f.test.mss_bytes)
        known = [m for m in (src_mtu, dst_mtu) if m]
        if len(known) == 2:
            endpoint, endpoint_source = min(known), "both hosts"
        elif known:
            endpoint, endpoint_source = known[0], "the one host reporting"
        elif observed_mss:
            # TCP negotiated this MSS, so both ends use at least MSS + headers (+ timestamps)
            endpoint = int(observed_mss) + k.TCP_IP_HEADER_BYTES + k.TCP_TIMESTAMP_OPTION_BYTES
            endpoint_source = "the MSS the tests negotiated"
        else:
            endpoint, endpoint_source = None, None
        reasons: list[str] = []
        evidence: dict = {
            "sender_mtu": src_mtu,
            "receiver_mtu": dst_mtu,
            "endpoint_mtu": endpoint,
            "endpoint_mtu_source": endpoint_source,
        }
        expected_mss = physics.mss_from_mtu(endpoint, timestamps=True) if endpoint else None
        times: list = []  # when the path showed the small MTU: its onset is the first of them
        start = a.window_start
        trs = [
            t for t in a.path.traceroutes if t.pmtu_bytes and (start is None or t.time >= start) and t.time <= ctx.now
        ]
        # traceroutes are slower than the window: without one in it, the last one before it says the path MTU
        before = [t for t in a.path.traceroutes if t.pmtu_bytes and start is not None and t.time < start]
        if not trs and before:
            trs = [max(before, key=lambda t: t.time)]
            evidence["path_mtu_age_s"] = (ctx.now - trs[0].time).total_seconds()
        if endpoint and trs:
            pmtu = min(t.pmtu_bytes for t in trs)
            evidence["path_mtu_bytes"] = pmtu
            if pmtu < k.MTU_MISMATCH_RATIO * endpoint:
                reasons.append(f"traceroute path MTU {pmtu} B while the ends use {endpoint} B ({endpoint_source})")
                times += [t.time for t in trs if t.pmtu_bytes == pmtu]
        if expected_mss and observed_mss and observed_mss < k.MTU_MISMATCH_RATIO * expected_mss:
            reasons.append(
                f"TCP tests negotiated MSS {observed_mss:.0f} B where MTU {endpoint} B gives {expected_mss} B"
            )
        b = a.path.baseline
        if b and b.mss_bytes and observed_mss and observed_mss < k.MTU_MISMATCH_RATIO * b.mss_bytes:
            reasons.append(f"MSS fell from {b.mss_bytes} B in the baseline to {observed_mss:.0f} B")
        # the tests that negotiated the small MSS, not every test of the window: those before the MTU fell are
        # the path as it was, and the first of them would put the onset hours early
        normal = [m for m in (expected_mss, b.mss_bytes if b else None) if m]
        times += [
            f.test.time for f in a.tcp
            if f.test.mss_bytes and any(f.test.mss_bytes < k.MTU_MISMATCH_RATIO * m for m in normal)
        ]
        if endpoint:
            hops = set(a.path.hops)
            for iface in ctx.all_interfaces():
                if iface.name in hops and iface.mtu_bytes and iface.mtu_bytes < k.MTU_MISMATCH_RATIO * endpoint:
                    reasons.append(f"interface {iface.name} on the path has MTU {iface.mtu_bytes} B")
        if not reasons:
            continue
        small = observed_mss or (
            physics.mss_from_mtu(evidence.get("path_mtu_bytes"), True) if evidence.get("path_mtu_bytes") else None
        )
        big = expected_mss or (b.mss_bytes if b and b.mss_bytes else None)
        evidence.update({"observed_mss_bytes": observed_mss, "expected_mss_bytes": expected_mss, "reasons": reasons})
        times = times or [f.test.time for f in a.tcp] or [ctx.now]
        out.append(
            path_finding(
                a,
                codes.MTU_MISMATCH,
                start=min(times),
                end=max(times),
                facts={
                    "key": a.key,
                    "reasons": reasons,
                    "small_mss_bytes": small,
                    "big_mss_bytes": big,
                    "endpoint_mtu": endpoint,
                },
                evidence=evidence,
            )
        )
    return out
