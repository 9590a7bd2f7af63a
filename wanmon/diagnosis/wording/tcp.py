"""Wording of the TCP performance findings: WINDOW_LIMITED, LOSS_LIMITED, TCP_ONLY_DEGRADATION."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wanmon.diagnosis import constants as k
from wanmon.diagnosis import text


def window_limited(f: Mapping[str, Any]) -> tuple[str, str, list[str]]:
    """WINDOW_LIMITED. Facts: ``key``, ``src``, ``dst``, ``matches`` and ``tests`` (counts), ``throughput_bps``,
    ``window_limited_rate_bps``, ``window_bytes``, ``requested_window_bytes``, ``window_caps``, ``rtt_ms``,
    ``streams``, ``capacity_bps``, ``fill_rate_bps``, ``nic_host`` (the host whose NIC bounds the fill rate, or
    None), ``bdp_bytes``, ``recommended_window_bytes``, ``target_bps``, ``streams_needed``, ``nic_bound``,
    ``at_linux_cap``, ``beyond_cap``, ``usable_window_bytes``, ``cap_streams``, ``window_setting_bytes``,
    ``sysctl``."""
    key, thr, r_w, window, rtt, cap = (
        f["key"],
        f["throughput_bps"],
        f["window_limited_rate_bps"],
        f["window_bytes"],
        f["rtt_ms"],
        f["fill_rate_bps"],
    )
    requested, caps, nic_host, need = (
        f["requested_window_bytes"],
        f["window_caps"],
        f["nic_host"],
        f["recommended_window_bytes"],
    )
    streams, capacity = f["streams"], f["capacity_bps"]
    if f["nic_bound"]:
        return _nic_bound(f)
    cap_note = (
        f" The requested window ({text.size(requested)}) was cut to {text.size(window)} by {', '.join(caps)}."
        if caps and requested and requested > window
        else ""
    )
    nic = f" (NIC of {nic_host})" if nic_host else ""
    summary = (
        f"{key}: {text.rate(thr)} = {text.pct(thr / r_w)} of the window limit {text.rate(r_w)} "
        f"({text.size(window)} at {text.ms(rtt)}); {text.rate(cap)}{nic} needs {text.size(need)}"
    )
    explanation = (
        f"{f['matches']} of {f['tests']} TCP tests on {key} ran at {text.rate(thr)} (median), "
        f"{text.pct(thr / r_w)} of what {streams} stream(s) with a {text.size(window)} window can carry at "
        f"{text.ms(rtt)} RTT: W*8/RTT = {text.rate(r_w)}, only {text.pct(r_w / capacity)} of the "
        f"{text.rate(capacity)} capacity. The window, not the network, is the limit.{cap_note} "
        + (
            f"One stream cannot leave {nic_host} faster than its {text.rate(cap)} NIC: filling that takes "
            f"BDP = {text.rate(cap)} x RTT / 8 = {text.size(f['bdp_bytes'])}"
            if nic_host
            else f"Filling this path takes BDP = C*RTT/8 = {text.size(f['bdp_bytes'])}"
        )
        + f"; with 2 x BDP = {text.size(need)} a single stream keeps the pipe full even after halving its window "
        f"on a loss."
    )
    window_bytes = f["window_setting_bytes"]
    actions = [
        (
            f"Use Linux's largest window, {text.size(f['usable_window_bytes'])} ({window_bytes} bytes), with "
            f"{f['cap_streams']} parallel streams for {key}: 2 x BDP = {text.size(need)} is beyond what one socket "
            f"may have"
            if f["beyond_cap"]
            else f"Use a TCP window of at least {text.size(need)} ({window_bytes} bytes) for {key}"
        )
        + f", e.g. nuttcp -w{window_bytes >> 20}m or globus-url-copy -tcp-bs {window_bytes}.",
        f"Allow it on the hosts at {f['src']} and {f['dst']}: " + "; ".join(f["sysctl"]) + ".",
    ]
    n_streams = f["streams_needed"]
    if f["at_linux_cap"]:
        explanation += (
            f" The window is already at Linux's cap of {text.size(k.LINUX_MAX_SOCKET_BUFFER_BYTES)} per socket: no "
            f"setting reaches 2 x BDP here, so this is the limit of one stream, not a mistuned host."
        )
        actions = [
            f"Use {n_streams or 2} or more parallel streams for transfers on {key} (one stream cannot "
            f"carry more than {text.rate(r_w / streams)} here)."
        ]
    elif n_streams and n_streams > 1:
        actions.append(
            f"Until then, {n_streams} parallel streams of the current window reach ~{text.rate(f['target_bps'])} "
            f"({text.rate(r_w / streams)} each)."
        )
    return summary, explanation, actions


def _nic_bound(f: Mapping[str, Any]) -> tuple[str, str, list[str]]:
    """WINDOW_LIMITED when the sending host's NIC, not the window, holds the stream."""
    key, thr, r_w, cap, host = (
        f["key"],
        f["throughput_bps"],
        f["window_limited_rate_bps"],
        f["fill_rate_bps"],
        f["nic_host"],
    )
    window, rtt = f["window_bytes"], f["rtt_ms"]
    summary = (
        f"{key}: {text.rate(thr)}; the {text.rate(cap)} NIC of {host} holds one stream, not its "
        f"window ({text.size(window)} at {text.ms(rtt)} carries {text.rate(r_w)})"
    )
    explanation = (
        f"{f['matches']} of {f['tests']} TCP tests on {key} ran at {text.rate(thr)} (median) with "
        f"{f['streams']} stream(s) and a {text.size(window)} window at {text.ms(rtt)} RTT: W*8/RTT = "
        f"{text.rate(r_w)}, {text.pct(r_w / cap)} of what the {text.rate(cap)} NIC of {host} "
        f"sends, on a {text.rate(f['capacity_bps'])} path. One stream never leaves a host faster than its NIC: "
        f"the NIC, not the window, is the limit, and a larger window does not help."
    )
    actions = [
        f"The {text.rate(cap)} NIC of {host} is the limit of one stream on {key}: a faster "
        f"NIC, or transfers spread over several hosts, carry more; no window setting does."
    ]
    return summary, explanation, actions


def loss_limited(f: Mapping[str, Any]) -> tuple[str, str, list[str]]:
    """LOSS_LIMITED. Facts: ``key``, ``hops``, ``throughput_bps``, ``tests`` (count), ``expected_bps``,
    ``loss_fraction``, ``loss_source``, ``loss_described``, ``streams``, ``mathis_conservative_bps``,
    ``mathis_reno_bps``, ``stack_ceiling_bps``, ``congestion_control`` (None: unknown), ``target_bps``,
    ``loss_needed_for_target``, ``rtt_ms``, ``mss_bytes``, ``jumbo_mss_bytes``."""
    key, thr, p, conservative, target, p_needed = (
        f["key"],
        f["throughput_bps"],
        f["loss_fraction"],
        f["mathis_conservative_bps"],
        f["target_bps"],
        f["loss_needed_for_target"],
    )
    ceiling, streams, mss, jumbo_mss = f["stack_ceiling_bps"], f["streams"], f["mss_bytes"], f["jumbo_mss_bytes"]
    cc = f["congestion_control"] or "unknown (Linux default CUBIC assumed)"
    summary = (
        f"{key}: {text.rate(thr)} matches the Mathis rate {text.rate(conservative)} for loss "
        f"{text.loss(p)} ({f['loss_source']}); {text.rate(target)} needs loss below {p_needed:.1e}"
    )
    explanation = (
        f"TCP on {key} reached {text.rate(thr)} (median of {f['tests']} tests) although window and capacity "
        f"allow {text.rate(f['expected_bps'])}. The measured loss {text.loss(p)} ({f['loss_described']}) caps "
        f"{streams} Reno-like stream(s) at C*MSS*8/(RTT*sqrt(p)) = {text.rate(conservative)} with C=0.7 and "
        f"{text.rate(f['mathis_reno_bps'])} with C=1.22; the ceiling used for congestion control {cc} is "
        f"{text.rate(ceiling)}. "
        f"The measured rate is {thr / conservative:.2g} x the conservative figure: loss, not the window, limits "
        f"this path. To reach {text.rate(target)} at {text.ms(f['rtt_ms'])} with MSS {mss} B the loss must stay "
        f"below {p_needed:.1e}."
    )
    actions = [
        f"Find where {key} loses packets (loss must fall from {p:.1e} to below {p_needed:.1e}): check interface "
        f"errors and discards on {', '.join(f['hops'])}; run owamp/UDP tests towards intermediate points.",
        "Meanwhile a loss-tolerant congestion control (CUBIC, H-TCP; BBR ignores random loss) or more parallel "
        f"streams (each adds ~{text.rate(ceiling / streams)}) soften the impact.",
    ]
    if mss < jumbo_mss:
        actions.append(
            f"Jumbo frames end to end (MSS {jumbo_mss} B) would raise the Mathis ceiling {jumbo_mss / mss:.1f}-fold."
        )
    return summary, explanation, actions


def tcp_only_degradation(f: Mapping[str, Any]) -> tuple[str, str, list[str]]:
    """TCP_ONLY_DEGRADATION. Facts: ``key``, ``slow_tests`` and ``tests`` (counts), ``slow_throughput_median_bps``,
    ``predicted_bps``, ``udp_rate_bps``, ``udp_clean_tests`` (count), ``loss_described``, ``slow_hosts``,
    ``normal_hosts``, ``trunks``."""
    key, slow, slow_bps, predicted, udp_rate = (
        f["key"],
        f["slow_tests"],
        f["slow_throughput_median_bps"],
        f["predicted_bps"],
        f["udp_rate_bps"],
    )
    slow_hosts, fast_hosts, trunks = f["slow_hosts"], f["normal_hosts"], f["trunks"]
    host_note = ""
    if slow_hosts:
        host_note = f" The slow tests went to {', '.join(slow_hosts)}"
        host_note += f"; tests to {', '.join(fast_hosts)} were normal." if fast_hosts else "."
    trunk_note = (
        f" The path crosses the trunk(s) {', '.join(trunks)}: per-flow hashing is a prime suspect." if trunks else ""
    )
    summary = (
        f"{key}: {slow} TCP tests at {text.rate(slow_bps)} (predicted {text.rate(predicted)}) while UDP at "
        f"{text.rate(udp_rate)} is clean"
    )
    explanation = (
        f"{slow} of {f['tests']} TCP tests on {key} reached only {text.rate(slow_bps)} (median), below "
        f"{k.TCP_ONLY_MAX_FRACTION:.0%} of the {text.rate(predicted)} that capacity, window and the probe loss "
        f"({f['loss_described']}) predict. {f['udp_clean_tests']} UDP test(s) at {text.rate(udp_rate)} -- at least "
        f"{k.UDP_COMPARABLE_FACTOR:g} x the TCP rate -- crossed the same path without loss that could explain it. "
        f"The network carries the rate; something treats TCP differently: a duplex mismatch (UDP one way does not "
        f"reveal it), per-flow load balancing or hashing on a bundle, a middlebox, or reordering that TCP "
        f"takes for loss.{host_note}{trunk_note}"
    )
    actions = [
        "Check speed/duplex negotiation on every interface of the path (a half-duplex end shows late collisions "
        "and CRC errors only under two-way TCP traffic).",
        "Check load-sharing / LAG hashing on bundled links of the path; compare TCP to several hosts (odd and even "
        "addresses).",
        "Look for firewalls or TCP-inspecting middleboxes; run a TCP test with tcpdump to see reordering or "
        "window clamping.",
    ]
    return summary, explanation, actions
