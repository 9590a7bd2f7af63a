"""Wording of UNEXPLAINED_DEGRADATION: a degradation, or a delay rise, no rule explains."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wanmon.diagnosis import text


def _ruled_out(ruled_out: Mapping[str, str]) -> str:
    return "; ".join(f"{code}: {why}" for code, why in ruled_out.items())


def unexplained_degradation(f: Mapping[str, Any]) -> tuple[str, str, list[str]]:
    """UNEXPLAINED_DEGRADATION. Facts: ``key``, ``hops``, ``ruled_out`` (the evidence's: why each rule does not
    apply); with ``delay`` (the evidence's now_ms, baseline_ms, limit_ms): a delay rise; else a degradation:
    ``start``, ``end``, ``observations`` (count of bad ones), ``reasons``, ``slow`` (TCP results among them),
    ``throughput_bps``, ``reference_bps``, ``reference_source``, ``loss_fraction``, ``loss_described``, and
    optionally ``history`` (``degradation.history_of``: the span and number of the results the reference was
    learned from)."""
    key = f["key"]
    if "delay" in f:
        d = f["delay"]
        summary = f"{key}: median one-way delay {text.ms(d['now_ms'])} vs baseline {text.ms(d['baseline_ms'])}"
        explanation = (
            f"The median one-way delay of {key} rose to {text.ms(d['now_ms'])} from the baseline's "
            f"{text.ms(d['baseline_ms'])} (more than {text.ms(d['limit_ms'])}), with no level shift, route change "
            f"or congested link to explain it. Ruled out: " + _ruled_out(f["ruled_out"]) + "."
        )
        return summary, explanation, [f"Look for queueing on the elements of {key} ({', '.join(f['hops'])})."]
    start, end, thr, reference = f["start"], f["end"], f["throughput_bps"], f["reference_bps"]
    ref = f"its reference {text.rate(reference)} ({f['reference_source']})" if reference else "its expected rate"
    history = f.get("history")
    if reference and history and history["results"]:
        ref += f", learned from {history['results']} results over {text.duration(history['span_s'])}"
    if f["slow"] and thr and reference:
        figures = f": {text.rate(thr)} vs {text.rate(reference)}"
    elif f["loss_fraction"]:
        figures = f": loss {text.loss(f['loss_fraction'])}"  # a loss-only episode: its TCP rate may be the usual one
    else:
        figures = ""
    summary = f"{key} degraded {start:%H:%M}-{end:%H:%M} UTC{figures}; no rule explains it"
    explanation = (
        f"{key} was degraded from {start:%Y-%m-%d %H:%M} to {end:%H:%M} UTC ({f['observations']} bad observations: "
        f"{'; '.join(f['reasons'])}), compared with {ref}. Loss in the period: {f['loss_described']}. No rule "
        "explains it: " + _ruled_out(f["ruled_out"]) + "."
    )
    actions = [
        f"Investigate {key} by hand: run tests towards intermediate points of {', '.join(f['hops'])} and "
        "collect interface counters from the carriers on the path.",
        "If a new rule is needed, export this period as a scenario (manage.py replay) and add it to the corpus.",
    ]
    return summary, explanation, actions
