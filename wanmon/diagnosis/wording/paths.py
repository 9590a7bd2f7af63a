"""Wording of the path-direction findings: ASYMMETRIC_PATH, DELAY_LEVEL_SHIFT, ROUTE_CHANGE."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wanmon.diagnosis import text


def asymmetric_path(f: Mapping[str, Any]) -> tuple[str, str, list[str]]:
    """ASYMMETRIC_PATH. Facts: ``key``, ``reverse_key``, ``hops``, ``throughput_bps`` and
    ``reverse_throughput_bps`` (None: unknown), ``throughput_compared`` (both rates judged), ``probe_loss_fraction``,
    ``reverse_probe_loss_fraction``, ``reverse_detection_limit``, ``efficiency``, ``reverse_efficiency``,
    ``reverse_spurious_retransmits`` (the reverse direction's TCP retransmit fraction when its probes saw no loss:
    ACKs lost on this direction; None otherwise)."""
    key, rev_key = f["key"], f["reverse_key"]
    parts = []
    if f["throughput_compared"]:
        raw = f["throughput_bps"] / f["reverse_throughput_bps"]
        parts.append(
            f"{key} carries {text.pct(raw)} of the reverse direction's rate "
            f"({text.rate(f['throughput_bps'])} vs {text.rate(f['reverse_throughput_bps'])} on {rev_key})"
        )
    if f["probe_loss_fraction"]:
        rev_probe, rev_limit = f["reverse_probe_loss_fraction"], f["reverse_detection_limit"]
        rev = text.loss(rev_probe) if rev_probe else (f"none seen (below {rev_limit:.1e})" if rev_limit else "unknown")
        parts.append(f"probe loss {text.loss(f['probe_loss_fraction'])} vs {rev} on {rev_key}")
    ack_note = ""
    if f["reverse_spurious_retransmits"] is not None:
        ack_note = (
            f" {rev_key} shows TCP retransmissions of {text.loss(f['reverse_spurious_retransmits'])} although its own "
            f"probes saw no loss: spurious retransmissions caused by ACKs lost on {key}."
        )
    summary = f"{'; '.join(parts)}"
    explanation = (
        f"Over the same period, {'; '.join(parts)}. "
        f"Efficiency (throughput / what window and capacity allow) is "
        f"{text.pct(f['efficiency'])} on {key} against {text.pct(f['reverse_efficiency'])} on {rev_key}. "
        f"Something lies on the {key} route only: a dirty or misaligned fibre or patch panel on one fibre of a "
        f"pair, a faulty line card, or a different return route. A bad return path also hurts the good direction, "
        f"because the ACKs of {rev_key} travel on {key}.{ack_note}"
    )
    actions = [
        f"Test the {key} direction hop by hop (owamp/UDP towards intermediate points of {', '.join(f['hops'])}) "
        f"and compare with {rev_key}.",
        f"Check receive-side optical levels, CRC errors and discards on the interfaces carrying {key}; ask the "
        f"carriers on the path to do the same.",
    ]
    return summary, explanation, actions


def delay_level_shift(f: Mapping[str, Any]) -> tuple[str, str, list[str]]:
    """DELAY_LEVEL_SHIFT. Facts: ``key``, ``levels`` ((median_ms, sessions) of each level), ``jumps`` (count of
    all level changes), ``unexplained_jumps`` (count), ``jump_times`` (of the unexplained jumps), ``step_ms``,
    ``extra_fibre_km``, ``traceroute_confirmed`` (every jump bracketed by identical traceroutes), ``traceroutes``."""
    key, levels = f["key"], f["levels"]
    level_txt = ", ".join(f"{text.ms(median_ms)} ({samples} sessions)" for median_ms, samples in levels)
    times = ", ".join(f"{t:%H:%M}" for t in f["jump_times"])
    route_txt = (
        f"The {f['traceroutes']} traceroute(s) show the same hop list around these jumps"
        if f["traceroute_confirmed"]
        else "No traceroute brackets every jump, so a route change cannot be excluded"
    )
    summary = (
        f"{key}: minimum delay switches between {len(levels)} levels ({level_txt}); "
        f"{f['unexplained_jumps']} jump(s) without route change"
    )
    explanation = (
        f"The minimum one-way delay of {key} takes {len(levels)} distinct levels: {level_txt}. It jumped "
        f"{f['jumps']} time(s), by up to {text.ms(f['step_ms'])} -- about "
        f"{f['extra_fibre_km']:.0f} km of extra fibre -- at {times} UTC. {route_txt}: the "
        f"IP route is unchanged, so the light path changed below IP -- a SONET/SDH protection switch or an "
        f"optical restoration."
    )
    actions = [
        "Ask the carriers of the path whether a protection switch or restoration happened at these times; "
        "a path that keeps switching has a flapping working span.",
    ]
    return summary, explanation, actions


def route_change(f: Mapping[str, Any]) -> tuple[str, str, list[str]]:
    """ROUTE_CHANGE. Facts: ``key``, ``changes`` (the evidence's: time, before and after hop lists), ``new_hops``
    (on the route now, not before the first change), ``back`` (on its original route again), ``degraded_after``,
    ``delay_before_ms`` and ``delay_after_ms`` (minimum one-way delays around the first change; None: unknown or
    untrusted), ``fibre_km`` (the fibre length of their difference), ``alternation`` (only routes the path took
    before, with no delay step: ECMP)."""
    key, changes, new, back = f["key"], f["changes"], f["new_hops"], f["back"]
    alternation = f.get("alternation", False)
    desc = "; ".join(
        f"at {c['time']:%H:%M} UTC {' > '.join(c['before'])} became {' > '.join(c['after'])}" for c in changes
    )
    before, after = f["delay_before_ms"], f["delay_after_ms"]
    delay_note = ""
    if before is not None and after is not None:
        delay_note = (
            f" The minimum one-way delay went from {text.ms(before)} to {text.ms(after)} "
            f"({after - before:+.2f} ms, ~{f['fibre_km']:.0f} km of fibre)."
        )
    summary = f"{key}: route changed {len(changes)} time(s)" + (
        f", now via {', '.join(new)}" if new else (", back on the original route" if back else "")
    )
    explanation = (
        f"The traceroute of {key} changed: {desc}.{delay_note}"
        + (f" New elements on the path: {', '.join(new)}." if new else "")
        + (" The path is back on its original route." if back else "")
        + (
            " The path only alternates between routes it took before and its delay did not move: equal-cost "
            "multipath, normal, and no explanation of any degradation."
            if alternation
            else (" The path degraded right after the change." if f["degraded_after"] else "")
        )
    )
    actions = [
        "Check with the carriers why traffic was rerouted and whether the new route has the expected capacity and MTU.",
    ]
    return summary, explanation, actions
