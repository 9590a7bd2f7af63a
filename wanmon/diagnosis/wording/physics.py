"""The path physics sentence that ends every path-direction finding's explanation."""

from __future__ import annotations

from wanmon.diagnosis import text
from wanmon.diagnosis.evidence import DerivedFigures


def path_figures(key: str, d: DerivedFigures, *, rtt_source: str, mss_source: str) -> str:
    """One sentence quoting the path's derived figures ``d`` (``PathAssessment.derived``): capacity, RTT, BDP,
    window, MSS, loss with its Mathis ceiling, Reno's recovery time."""
    parts = [f"Path figures for {key}: capacity {text.rate(d.capacity_bps)}"]
    if d.rtt_ms:
        parts.append(f"RTT {text.ms(d.rtt_ms)} ({rtt_source})")
        parts.append(f"BDP {text.size(d.bdp_bytes)}")
        parts.append(f"required window (2 x BDP) {text.size(d.required_window_bytes)}")
    else:
        parts.append("RTT unknown, so BDP and window figures cannot be computed")
    parts.append(f"MSS {d.mss_bytes} B ({mss_source})")
    if d.window_bytes:
        parts.append(f"window {text.size(d.window_bytes)} -> at most {text.rate(d.window_limited_rate_bps)}")
    if d.loss_fraction:
        parts.append(
            f"loss {text.loss(d.loss_fraction)} from {d.loss_source}{_packets(d)} -> Mathis ceiling "
            f"{text.rate(d.mathis_ceiling_bps)} per stream (C=0.7; {text.rate(d.mathis_reno_bps)} with C=1.22)"
        )
    elif d.loss_fraction == 0:
        parts.append(f"no loss seen (below {d.loss_detection_limit:.1e})")
    else:
        parts.append("loss unknown")
    if d.responsiveness_s:
        parts.append(f"Reno needs {text.duration(d.responsiveness_s)} to recover from one loss at full rate")
    return "; ".join(parts) + "."


def _packets(d: DerivedFigures) -> str:
    """How many packets stand behind the loss figure (its leading source's: wanmon/diagnosis/loss.py)."""
    if not d.loss_packets:
        return ""
    unit = "segments" if d.loss_source == "tcp_retransmits" else "packets"
    return f" ({d.loss_packets:,.0f} {unit})"
