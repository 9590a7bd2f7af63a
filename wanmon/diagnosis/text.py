"""Number formatting for summaries and explanations (humans read these in e-mails)."""

from __future__ import annotations

import math
from collections.abc import Mapping


def rate(bps: float | None) -> str:
    """1.5e9 -> '1.5 Gb/s', 2.68e8 -> '268 Mb/s'."""
    if bps is None or (isinstance(bps, float) and math.isnan(bps)):
        return "unknown"
    if math.isinf(bps):
        return "unlimited"
    for factor, unit in ((1e9, "Gb/s"), (1e6, "Mb/s"), (1e3, "kb/s")):
        if abs(bps) >= factor:
            return f"{_sig(bps / factor)} {unit}"
    return f"{_sig(bps)} b/s"


def size(n_bytes: float | None) -> str:
    """Bytes in decimal units: 41250000 -> '41.2 MB'; exact powers of two as MiB ('4 MiB')."""
    if n_bytes is None:
        return "unknown"
    if n_bytes >= 1 << 20 and int(n_bytes) == n_bytes and int(n_bytes) % (1 << 20) == 0:
        return f"{int(n_bytes) >> 20} MiB"
    for factor, unit in ((1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
        if n_bytes >= factor:
            return f"{_sig(n_bytes / factor)} {unit}"
    return f"{int(n_bytes)} B"


def duration(seconds: float | None) -> str:
    """3.4 -> '3.4 s', 6164 -> '1.7 h', 1.48e10 -> '468 years'."""
    if seconds is None:
        return "unknown"
    if seconds < 1:
        return f"{_sig(seconds * 1000)} ms"
    if seconds < 120:
        return f"{_sig(seconds)} s"
    if seconds < 7200:
        return f"{_sig(seconds / 60)} min"
    if seconds < 3 * 86400:
        return f"{_sig(seconds / 3600)} h"
    if seconds < 2 * 365.25 * 86400:
        return f"{_sig(seconds / 86400)} days"
    return f"{_sig(seconds / (365.25 * 86400))} years"


def loss(fraction: float | None) -> str:
    """6.4e-5 -> '6.4e-05 (0.0064 %)'; 0.0397 -> '3.97 %'."""
    if fraction is None:
        return "unknown"
    if fraction == 0:
        return "0"
    if fraction >= 1e-3:
        return f"{_sig(fraction * 100)} %"
    return f"{fraction:.2g} ({_sig(fraction * 100)} %)"


def ms(value: float | None) -> str:
    return "unknown" if value is None else f"{_sig(value)} ms"


def pct(fraction: float | None) -> str:
    return "unknown" if fraction is None else f"{_sig(fraction * 100)} %"


def _sig(x: float) -> str:
    """Three significant figures without scientific notation for everyday magnitudes."""
    if x == 0:
        return "0"
    ax = abs(x)
    if ax >= 100:
        return f"{x:.0f}"
    if ax >= 10:
        return f"{x:.1f}".rstrip("0").rstrip(".")
    if ax >= 1:
        return f"{x:.2f}".rstrip("0").rstrip(".")
    if ax >= 0.01:
        return f"{x:.3f}".rstrip("0").rstrip(".")
    return f"{x:.2g}"


def subject_label(subject: Mapping[str, str]) -> str:
    """A finding's subject as people write it, whatever the order of its keys: ``FZK->CERN``,
    ``geant-fra:xe-1/0/0``, ``geant-fra``, ``ral-lag``, ``ral-lag/janet-lon:xe-0/0/1`` (a member of the bundle),
    ``ASGC/asgc-dt01``, ``ASGC``."""
    if "src" in subject and "dst" in subject:
        return f"{subject['src']}->{subject['dst']}"
    if subject.get("equipment"):
        return f"{subject['equipment']}:{subject['interface']}" if subject.get("interface") else subject["equipment"]
    if "trunk" in subject:
        return f"{subject['trunk']}/{subject['member']}" if subject.get("member") else str(subject["trunk"])
    if "site" in subject:
        return f"{subject['site']}/{subject['host']}" if subject.get("host") else str(subject["site"])
    return ";".join(f"{k}={v}" for k, v in sorted(subject.items()))
