"""Wording of SHARED_EQUIPMENT_SUSPECT: the element degraded paths share, or whose load rose when a path degraded."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wanmon.diagnosis import constants as k
from wanmon.diagnosis import text


def shared_equipment_suspect(f: Mapping[str, Any]) -> tuple[str, str, list[str]]:
    """SHARED_EQUIPMENT_SUSPECT. Facts with ``suspect`` (a ``shared_elements.SuspectElement``): ``lower`` (the
    next suspects ranked below it), ``episodes`` ((path, start, end) of the degraded directions). Facts with
    ``load_rise`` (the candidate of a load rise: score, interface_rise, paths, verdict, spare_bps,
    exonerated_by): ``element``, ``rank``, ``key``, ``onset``, ``throughput_before_bps``, ``throughput_after_bps``."""
    if "suspect" in f:
        return _shared(f)
    return _load(f)


def _shared(f: Mapping[str, Any]) -> tuple[str, str, list[str]]:
    s = f["suspect"]
    exoneration = []
    if s.healthy_same_direction:
        exoneration.append(f"Healthy in the same direction: {', '.join(s.healthy_same_direction)}")
    if s.healthy_other_ports:
        exoneration.append(f"Healthy through other ports: {', '.join(s.healthy_other_ports)}")
    if s.healthy_reverse:
        exoneration.append(f"Healthy only in the opposite direction: {', '.join(s.healthy_reverse)}")
    why_lower = "; ".join(
        f"{r.element} (score {r.score:.2f}"
        + (f", also crossed by healthy {', '.join(r.healthy_same_direction)}" if r.healthy_same_direction else "")
        + (", a path end point" if r.endpoint else "")
        + ")"
        for r in f["lower"]
    )
    degraded = "; ".join(f"{key} {start:%H:%M}-{end:%H:%M} UTC" for key, start, end in f["episodes"])
    explanation = (
        f"{len(s.degraded)} degraded path directions in overlapping windows ({degraded}) all "
        f"cross {s.element}. "
        + ("; ".join(exoneration) + ". " if exoneration else "No healthy measured path crosses it. ")
        + f"Score = {len(s.degraded)} degraded - healthy weights"
        + (" + corroboration" if s.corroboration else "")
        + f" = {s.score:.2f} (same direction counts {k.HEALTHY_WEIGHT_SAME_DIRECTION:g}, other ports "
        f"{k.HEALTHY_WEIGHT_OTHER_PORTS:g}, opposite direction {k.HEALTHY_WEIGHT_REVERSE:g}: one fibre of a pair can "
        f"be bad while the other is clean)."
        + (f" Corroborated by {', '.join(s.corroboration)}." if s.corroboration else "")
        + (f" Ranked lower: {why_lower}." if why_lower else "")
    )
    summary = f"#{s.rank} {s.element}: shared by degraded {', '.join(s.degraded)}" + (
        f"; healthy same-direction {', '.join(s.healthy_same_direction)}" if s.healthy_same_direction else ""
    )
    actions = [
        f"Ask the operator of {s.element} to check it for the direction(s) {', '.join(s.degraded)}: interface "
        "errors, optical levels, patch panels, line cards.",
        "Confirm with tests to or from a point next to it (before/after the element) if available.",
    ]
    return summary, explanation, actions


def _load(f: Mapping[str, Any]) -> tuple[str, str, list[str]]:
    c, e, key = f["load_rise"], f["element"], f["key"]
    before_thr, after_thr = f["throughput_before_bps"], f["throughput_after_bps"]
    parts = []
    ir = c["interface_rise"]
    if ir:
        util = f" ({text.pct(ir['after_utilisation'])} of {text.rate(ir['speed_bps'])})" if ir["speed_bps"] else ""
        parts.append(
            f"the load on {ir['interface']} at the time of its tests (the polls covering them) rose from "
            f"{text.rate(ir['before_bps'])} to {text.rate(ir['after_bps'])}{util}"
        )
    for r in c["paths"]:
        verb = "started" if r["started"] else "rose"
        parts.append(
            f"traffic on {r['path']} {verb} ({text.rate(r['before_bps'])} -> {text.rate(r['after_bps'])}) "
            f"and shares {e} with {key}"
        )
    spare = c.get("spare_bps")
    verdict = c.get("verdict")
    if verdict == "spare":
        because = (
            f"The tests got {text.rate(after_thr)} of the {text.rate(spare)} the other traffic left them: the link "
            "was full at the time of the tests, and the load predicts their result. A busy shared link, not a "
            "fault. "
        )
    elif verdict == "limits":
        because = (
            f"The link stayed far below its capacity: the other traffic left {text.rate(spare)} at the time of the "
            f"tests, room for about the {text.rate(before_thr)} the path reached before, so this is not plain "
            "congestion: "
            "equipment close to its limits (buffers, bursts from Reno senders) degrades the path when extra traffic "
            "arrives. "
        )
    else:
        because = "Extra traffic through a shared element coincides with the degradation. "
    explanation = (
        f"{key} degraded at {f['onset']:%H:%M} UTC"
        + (f" from {text.rate(before_thr)} to {text.rate(after_thr)}" if before_thr and after_thr else "")
        + f" when {'; and '.join(parts)}. "
        + because
        + (f"Exonerated in part by healthy {', '.join(c['exonerated_by'])}." if c.get("exonerated_by") else "")
    )
    if verdict == "spare":
        summary = f"#{f['rank']} {e}: {key} got the capacity the other traffic through it left"
        actions = [
            f"Nothing to repair: tests through {e} get what its other traffic leaves; plan capacity if this busy "
            "hour hurts the transfers.",
        ]
        return summary, explanation.rstrip(), actions
    summary = f"#{f['rank']} {e}: {key} degraded when load through it rose" + (
        f" ({', '.join(r['path'] for r in c['paths'])})" if c["paths"] else ""
    )
    actions = [
        f"Check buffers, drops and queue statistics of {e} while the extra traffic runs; pace the senders "
        "(fq + pacing, BBR or FAST-like stacks) or move one flow to another route.",
    ]
    return summary, explanation.rstrip(), actions
