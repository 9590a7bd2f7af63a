"""Wording of the host findings: HOST_TCP_TUNING and MTU_MISMATCH."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wanmon.diagnosis import constants as k
from wanmon.diagnosis import text


def mtu_mismatch(f: Mapping[str, Any]) -> tuple[str, str, list[str]]:
    """MTU_MISMATCH. Facts: ``key``, ``reasons`` (the evidence's), ``small_mss_bytes`` and ``big_mss_bytes`` (the
    segment sizes compared, None when unknown), ``endpoint_mtu`` (None: unknown)."""
    key, reasons, small, big = f["key"], f["reasons"], f["small_mss_bytes"], f["big_mss_bytes"]
    factor = (big / small) if (big and small) else None
    summary = f"{key}: " + "; ".join(reasons)
    explanation = (
        f"Jumbo frames are not available end to end on {key}: {'; '.join(reasons)}. "
        + (
            f"The Mathis ceiling and Reno's recovery speed scale with the MSS, so {small:.0f}-byte "
            f"segments instead of {big:.0f} cost a factor {factor:.1f} in rate at a given loss. "
            if factor
            else ""
        )
        + "A path MTU below the hosts' MTU also risks black holes when ICMP 'fragmentation needed' is "
        "filtered."
    )
    actions = [
        f"Find the hop of {key} with the small MTU (tracepath shows where the PMTU drops) and configure "
        f"{f['endpoint_mtu'] or 9000} B end to end, or lower the host MTU consistently.",
    ]
    return summary, explanation, actions


def _problems(f: Mapping[str, Any]) -> list[str]:
    """The host's problems, each 'what: why' (the summary keeps the part before the colon)."""
    problems = []
    if f["too_small"]:
        fill = (
            f"{text.rate(f['fill_rate_bps'])} (the NIC of {f['host']}; the path carries {text.rate(f['capacity_bps'])})"
            if f["nic_limited"]
            else text.rate(f["capacity_bps"])
        )
        problems.append(
            f"{', '.join(f'{n} = {v}' for n, v in f['too_small'])} below the BDP of its longest path "
            f"{f['longest_path']} ({fill} x {text.ms(f['rtt_ms'])} = {text.size(f['bdp_bytes'])}): one stream is "
            f"capped at {text.size(f['smallest_buffer_bytes'])} x 8 / RTT = {text.rate(f['capped_rate_bps'])}"
        )
    cc = f["problem_congestion_control"]
    if cc:
        why = k.PROBLEM_CONGESTION_CONTROLS[cc]
        if f["reno_recovery_s"] is not None:
            why += f"; on {f['longest_path']} Reno needs {text.duration(f['reno_recovery_s'])} to regain full rate "
            why += "after one loss"
        short = f.get("short_paths")
        if short:
            why += f"; the results fall short of what {', '.join(short)} give(s)"
        elif short is not None:
            why += "; its tests still reach what its paths give (advice: switching costs nothing)"
        problems.append(f"congestion control '{cc}': {why}")
    return problems


def host_tcp_tuning(f: Mapping[str, Any]) -> tuple[str, str, list[str]]:
    """HOST_TCP_TUNING. Facts: ``host``, ``site``, ``too_small`` ((setting, bytes) below the floor, empty when the
    buffers are fine), ``longest_path`` (None: no path), ``capacity_bps``, ``fill_rate_bps``, ``nic_limited``,
    ``rtt_ms``, ``bdp_bytes``, ``recommended_window_bytes``, ``streams_at_cap`` (streams that carry 2 x BDP at
    Linux's largest window), ``smallest_buffer_bytes``, ``capped_rate_bps``,
    ``problem_congestion_control`` (None: fine), ``reno_recovery_s``, ``short_paths`` (the paths the site sends
    on whose results fall short, None: not judged), ``window_limited_paths`` (keys of the WINDOW_LIMITED findings
    that confirm it), ``sysctl``."""
    host, need, key = f["host"], f["recommended_window_bytes"], f["longest_path"]
    problems = _problems(f)
    small_buffers = bool(f["too_small"])
    seen = f["window_limited_paths"]
    confirm = " Throughput tests confirm it: WINDOW_LIMITED on " + ", ".join(seen) + "." if seen else ""
    advice_note = ""
    if need and small_buffers and key is not None:
        if need <= k.LINUX_MAX_SOCKET_BUFFER_BYTES:
            advice_note = (
                f" Set the maxima to 2 x BDP = {text.size(need)} so one stream can fill {key}"
                + (f" as fast as the {text.rate(f['fill_rate_bps'])} NIC sends" if f["nic_limited"] else "")
                + " and survive a loss."
            )
        else:
            advice_note = (
                f" Set the maxima to Linux's cap of {text.size(k.LINUX_MAX_SOCKET_BUFFER_BYTES)}; 2 x BDP "
                f"({text.size(need)}) is beyond any setting, so use at least "
                f"{f['streams_at_cap']} parallel streams on "
                f"{key}."
            )
    summary = f"{host} ({f['site']}): " + "; ".join(p.split(":")[0] for p in problems)
    explanation = f"TCP settings of {host} at {f['site']}: " + "; ".join(problems) + "." + advice_note + confirm
    actions = [f"On {host}, in /etc/sysctl.d/90-wan.conf: " + "; ".join(f["sysctl"]) + " (then sysctl --system)."]
    if need and small_buffers:
        actions.append(
            f"Applications that set their own window (nuttcp -w, GridFTP -tcp-bs) must also ask for {text.size(need)}."
        )
    return summary, explanation, actions
