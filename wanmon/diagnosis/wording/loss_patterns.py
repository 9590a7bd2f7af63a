"""Wording of the loss pattern findings: PERIODIC_LOSS (on the path and on the receiving host) and REORDERING."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wanmon.diagnosis import constants as k
from wanmon.diagnosis import text


def _poll_text(f: Mapping[str, Any]) -> str:
    dst, matches, polls, aligned = f["dst"], f["poll_matches"], f["known_polls"], f["aligned_with_host_reads"]
    if matches:
        poll_txt = f"It matches the agent poll interval at {dst} ({'; '.join(matches)})."
    elif polls:
        poll_txt = f"It does not match the agent poll intervals known at {dst} ({'; '.join(polls)})."
    else:
        poll_txt = f"The poll schedule of the agent at {dst} is not known, so it cannot be compared."
    if aligned is not None and aligned >= 0.8:
        poll_txt += f" {text.pct(aligned)} of the loss events coincide with the agent's host reads at {dst}."
    return poll_txt


def periodic_loss(f: Mapping[str, Any]) -> tuple[str, str, list[str]]:
    """PERIODIC_LOSS. Facts: ``key``, ``src``, ``dst``, the pattern's evidence (``period_s``, ``events``,
    ``source``, ``first``, ``last``, ``regular_share``, ``chance_share``, ``chance_probability``,
    ``loss_per_event``), ``poll_matches`` and ``known_polls`` (agent poll labels), ``aligned_with_host_reads``,
    ``reverse_clean``; with ``suspect`` (the receiving host or site): the finding naming the receiving end."""
    key, dst, period = f["key"], f["dst"], f["period_s"]
    actions = [
        f"Look for a process on the receiving host at {dst} running every {text.duration(period)} (monitoring "
        "agents, cron jobs, netstat/ss, /proc readers); stop it briefly and watch whether the loss stops.",
        "If hosts are clean, ask the carriers for periodic events (polling, timers) on the path.",
    ]
    if "suspect" in f:
        summary, explanation = _receiving_end(f)
        return summary, explanation, actions[:1]
    per_event = f.get("loss_per_event")
    event_txt = f", each losing a median {text.pct(per_event)} of the session's packets" if per_event else ""
    summary = f"{key}: loss every {text.duration(period)} ({f['events']} events)" + (
        " -- matches the agent poll interval" if f["poll_matches"] else ""
    )
    explanation = (
        f"Loss on {key} is not random: {f['events']} loss events ({f['source']}) from "
        f"{f['first']:%H:%M} to {f['last']:%H:%M} UTC recur every {text.duration(period)} "
        f"({text.pct(f['regular_share'])} of the intervals fit, where random loss at the same rate would "
        f"fit {text.pct(f['chance_share'])} and match this well with probability "
        f"{f['chance_probability']:.1g}){event_txt}. {_poll_text(f)} A periodic process "
        f"is at work: on a receiving Linux host even monitoring that reads /proc/net/tcp (netstat) drops packets, "
        f"or a periodic network event. All streams lose packets together, the worst case for TCP recovery."
    )
    return summary, explanation, actions


def _receiving_end(f: Mapping[str, Any]) -> tuple[str, str]:
    key, dst, suspect, aligned = f["key"], f["dst"], f["suspect"], f["aligned_with_host_reads"]
    period = text.duration(f["period_s"])
    reasons = (
        ([f"the period matches {', '.join(f['poll_matches'])}"] if f["poll_matches"] else [])
        + (
            [f"{text.pct(aligned)} of the events coincide with its agent's reads"]
            if aligned is not None and aligned >= 0.8
            else []
        )
        + ([f"the reverse direction {dst}->{f['src']} shows no such pattern"] if f["reverse_clean"] else [])
    )
    summary = f"receiving host {suspect} suspected: loss every {period} on {key}"
    explanation = (
        f"The periodic loss on {key} (every {period}) points at the receiving end {suspect}: "
        + "; ".join(reasons)
        + ". Reading /proc/net/tcp or running netstat on a receiving host has been seen to drop "
        "10-70 % of the packets in the following second."
    )
    return summary, explanation


def reordering(f: Mapping[str, Any]) -> tuple[str, str, list[str]]:
    """REORDERING. Facts: ``key``, ``reordered``, ``packets``, ``fraction``, ``sessions`` (with reordering),
    ``all_sessions``, ``duplicates``, ``ceiling_if_loss_bps`` (None: no ceiling)."""
    key, frac, ceiling, dups = f["key"], f["fraction"], f["ceiling_if_loss_bps"], f["duplicates"]
    summary = f"{key}: {text.pct(frac)} of owamp packets reordered in {f['sessions']} sessions"
    explanation = (
        f"owamp on {key} saw {f['reordered']:,} of {f['packets']:,} packets out of order ({text.loss(frac)}) in "
        f"{f['sessions']} of {f['all_sessions']} sessions "
        f"(threshold {text.pct(k.REORDERING_MIN_FRACTION)})."
        + (f" {dups} duplicate packets too." if dups else "")
        + " TCP takes three duplicate ACKs for a loss: if the reordering is that deep it costs like loss, "
        + (f"capping a stream near {text.rate(ceiling)} at this fraction. " if ceiling else "")
        + "Parallel paths with per-packet load balancing, or equipment known to reorder, are the usual "
        "causes."
    )
    actions = [
        "Check for per-packet load balancing or parallel links on the path and for equipment with "
        "known reordering issues; prefer per-flow hashing.",
    ]
    return summary, explanation, actions
