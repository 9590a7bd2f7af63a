"""Wording of MAINTENANCE_EXPLAINED."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wanmon.diagnosis import text


def maintenance_explained(f: Mapping[str, Any]) -> tuple[str, str, list[str]]:
    """MAINTENANCE_EXPLAINED. Facts: the finding's evidence -- ``reference``, ``carrier``, ``impact``,
    ``window_start``, ``window_end``, ``element``, ``paths``, ``episodes`` (path, start, end) and ``explains``
    (code, subject of each finding covered)."""
    ref, element, paths, start, end = f["reference"], f["element"], f["paths"], f["window_start"], f["window_end"]
    symptom_txt = ", ".join(f"{x['code']} {text.subject_label(x['subject'])}" for x in f["explains"])
    ep_txt = "; ".join(f"{m['path']} {m['start']:%H:%M}-{m['end']:%H:%M} UTC" for m in f["episodes"])
    summary = f"{ref} ({f['impact']}) on {element} explains " + (", ".join(paths) if paths else symptom_txt)
    explanation = (
        f"Scheduled work {ref}"
        + (f" by {f['carrier']}" if f["carrier"] else "")
        + f" on {element} from {start:%Y-%m-%d %H:%M} to {end:%H:%M} UTC "
        f"with impact '{f['impact']}' covers "
        + (f"the degradation of {ep_txt}" if ep_txt else "")
        + (f"{' and ' if ep_txt else ''}the findings {symptom_txt}" if symptom_txt else "")
        + ". Known and expected: shown, not alerted."
        + (f" Duration of the work: {text.duration((end - start).total_seconds())}.")
    )
    return (
        summary,
        explanation,
        [f"None while {ref} runs; re-check {', '.join(paths) or element} after {end:%H:%M} UTC."],
    )
