"""Wording of the interface findings: INTERFACE_ERRORS, LINK_CONGESTION, COUNTER_DISCONTINUITY."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from wanmon.diagnosis import constants as k
from wanmon.diagnosis import text


def _loss_note(f: Mapping[str, Any]) -> str:
    frac, pkts = f["error_fraction"], f["packets_per_s"]
    if not frac:
        return ""
    note = f" That is {text.loss(frac)} of the packets" + (
        f" ({pkts:,.0f} packets/s received)." if pkts else " (packets estimated from the bit rate)."
    )
    if f["capped_path"] is not None:
        note += (
            f" At that loss one stream on {f['capped_path']} ({text.ms(f['capped_path_rtt_ms'])}) is capped at "
            f"{text.rate(f['capped_rate_bps'])}."
        )
    return note


def interface_errors(f: Mapping[str, Any]) -> tuple[str, str, list[str]]:
    """INTERFACE_ERRORS. Facts: ``name``, ``polls`` (with errors) and ``intervals`` (valid), ``start``, ``end``,
    ``events_per_s``, ``in_errors_per_s``, ``in_discards_per_s``, ``out_discards_per_s``, ``error_fraction``,
    ``crc_error_fraction``, ``discard_fraction``, ``packets_per_s`` (None: unknown), ``capped_path`` (the longest
    path through it, None when no ceiling), ``capped_path_rtt_ms``, ``capped_rate_bps``, ``degraded_paths``,
    ``paths``."""
    name, frac, err_frac, disc_frac = f["name"], f["error_fraction"], f["crc_error_fraction"], f["discard_fraction"]
    degraded, through = f["degraded_paths"], f["paths"]
    path_note = (
        "Paths degraded meanwhile: " + ", ".join(degraded) + "."
        if degraded
        else ("Paths through it: " + ", ".join(through) + "." if through else "")
    )
    what = (
        " and ".join(w for w, x in (("CRC/errors", err_frac), ("discards", disc_frac)) if x is not None and x > 0)
        or "errors"
    )
    if err_frac:
        cause = (
            "A clean optical link counts none: the physical layer is suspect -- a dirty or misaligned "
            "connector, a bad patch panel, a failing optic."
        )
        actions = [
            f"Read the optical receive/transmit levels (DOM) of {name} and its far end.",
            "Clean and re-seat the fibre connectors and patch-panel couplers on this link; swap the optic if "
            "errors persist.",
        ]
    else:
        cause = (
            "Discards at this share are queue drops: output discards below full load are micro-bursts "
            "overflowing a shallow buffer in front of a slower or busier port; input discards are drops in "
            "the ingress pipeline (policers, oversubscribed line card)."
        )
        actions = [
            f"Check the queue and buffer statistics of {name} (per-queue drops, buffer profile).",
            "Pace bulk flows (fq qdisc with pacing) or give the port a deeper buffer profile.",
        ]
    summary = (
        f"{name}: {what} in {f['polls']} consecutive polls"
        + (f", {text.loss(frac)} of the packets" if frac and math.isfinite(frac) else "")
        + f" (in_errors {f['in_errors_per_s']:.2g}/s, in_discards {f['in_discards_per_s']:.2g}/s, out_discards "
        f"{f['out_discards_per_s']:.2g}/s)"
    )
    explanation = (
        f"{name} counted {what} in {f['polls']} of {f['intervals']} valid polling intervals, in runs of "
        f"at least {k.INTERFACE_ERRORS_MIN_INTERVALS} consecutive polls, between {f['start']:%H:%M} and "
        f"{f['end']:%H:%M} UTC, median {f['events_per_s']:.2g} events/s (thresholds: errors "
        f"{k.INTERFACE_ERROR_FRACTION:.0e} and discards {k.INTERFACE_DISCARD_FRACTION:.0e} of the "
        f"packets; a few discards a minute on a busy port are normal).{_loss_note(f)} {cause} {path_note}"
    )
    return summary, explanation, actions


def link_congestion(f: Mapping[str, Any]) -> tuple[str, str, list[str]]:
    """LINK_CONGESTION. Facts: ``name``, ``speed_bps``, ``direction`` ('in' or 'out'), ``utilisation_median``,
    ``utilisation_peak``, ``intervals``, ``start``, ``end``, ``out_discards_per_s``, ``implausible_intervals``,
    ``degraded_paths``."""
    name, med, direction, degraded = f["name"], f["utilisation_median"], f["direction"], f["degraded_paths"]
    implausible = f["implausible_intervals"]
    summary = f"{name}: {text.pct(med)} of {text.rate(f['speed_bps'])} ({direction}) for {f['intervals']} polls" + (
        f"; degraded: {', '.join(degraded)}" if degraded else ""
    )
    explanation = (
        f"{name} carried a median {text.pct(med)} (peak {text.pct(f['utilisation_peak'])}) of its "
        f"{text.rate(f['speed_bps'])} {direction}bound over {f['intervals']} consecutive valid polling "
        f"intervals from {f['start']:%H:%M} to {f['end']:%H:%M} UTC (threshold "
        f"{text.pct(k.CONGESTION_UTILISATION)} for {k.CONGESTION_MIN_INTERVALS} intervals). "
        f"Output discards: {f['out_discards_per_s']:.2g}/s. Queues and loss form in front of a link this full; it is "
        f"the tight link of "
        + (", ".join(degraded) if degraded else "the paths crossing it")
        + "."
        + (
            f" {implausible} interval(s) above {text.pct(k.IMPLAUSIBLE_UTILISATION)} of the speed "
            "were ignored as counter artefacts."
            if implausible
            else ""
        )
    )
    actions = [
        f"Add capacity or move traffic off {name} (another route, or schedule bulk transfers).",
        "Pace bulk flows (fq qdisc with pacing, BBR) so that bursts do not overflow the queue.",
    ]
    return summary, explanation, actions


def counter_discontinuity(f: Mapping[str, Any]) -> tuple[str, str, list[str]]:
    """COUNTER_DISCONTINUITY. Facts: ``name``, ``equipment``, ``times`` (of the resets), ``reasons``,
    ``same_device_interfaces`` (other interfaces of the equipment reset at the same time)."""
    name, equipment, reasons, same_device = f["name"], f["equipment"], f["reasons"], f["same_device_interfaces"]
    times = ", ".join(f"{t:%Y-%m-%d %H:%M}" for t in f["times"])
    summary = f"{name}: counters reset at {times} ({', '.join(reasons)}); interval(s) discarded"
    explanation = (
        f"The counters of {name} were reset {len(f['times'])} time(s) ({', '.join(reasons)}) at "
        f"{times} UTC. A counter that goes backwards with sysUpTime, or a changed "
        f"ifCounterDiscontinuityTime, is a restart and not a wrap, so the interval across it was "
        f"discarded instead of becoming a false rate spike."
        + (
            f" Other interfaces of {equipment} reset at the same time ({', '.join(same_device)}): "
            f"the device or its SNMP agent restarted."
            if same_device
            else ""
        )
    )
    return summary, explanation, [f"Check the log of {equipment} for a reboot or line-card/agent restart at {times}."]
