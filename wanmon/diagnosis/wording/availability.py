"""Wording of the availability findings: PATH_DOWN and MEASUREMENT_GAP."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wanmon.diagnosis import constants as k
from wanmon.diagnosis import text

KIND_LABELS = {"tcp": "throughput tests", "udp": "UDP tests", "owamp": "owamp sessions"}


def _kind(kind: str) -> str:
    return KIND_LABELS.get(kind, kind)


def path_down(f: Mapping[str, Any]) -> tuple[str, str, list[str]]:
    """PATH_DOWN. Facts: ``key``, ``dst``, ``hops``, ``start``, ``end``, ``ongoing``, ``failed`` (count),
    ``reasons`` (of the failed measurements), ``interfaces_down`` ((name, start, end, polls) of each port down)."""
    parts = []
    if f["failed"]:
        parts.append(f"{f['failed']} failed measurement(s) ({'; '.join(f['reasons'])})")
    for name, s, e, n in f["interfaces_down"]:
        parts.append(f"{name} oper-status down in {n} poll(s) from {s:%H:%M} to {e:%H:%M} UTC")
    key = f["key"]
    summary = f"{key} down from {f['start']:%Y-%m-%d %H:%M} UTC" + (
        " (ongoing)" if f["ongoing"] else f" to {f['end']:%H:%M}"
    )
    explanation = (
        f"{key} did not carry traffic: {'; '.join(parts)}. A single failed test can be a busy server; "
        f"at least {k.PATH_DOWN_MIN_OBSERVATIONS} in a row, or one confirmed by another kind of "
        f"measurement or by a port of the path down, with no other measurement getting through, "
        f"means an outage."
    )
    actions = [
        f"Check reachability of the {f['dst']} test host and the state of {', '.join(f['hops'])}.",
        "Check the carriers' maintenance calendars and trouble tickets for the elements of this path.",
    ]
    return summary, explanation, actions


def measurement_gap(f: Mapping[str, Any]) -> tuple[str, str, list[str]]:
    """MEASUREMENT_GAP. Facts: ``key``, ``src``, ``dst``, ``stopped`` and ``failing`` (the rule's evidence rows),
    ``still_measured_by`` (kinds still carrying results)."""
    parts = []
    for s in f["stopped"]:
        parts.append(
            f"{_kind(s['kind'])} stopped arriving after {s['last']:%Y-%m-%d %H:%M} UTC "
            f"(normally every {text.duration(s['interval_s'])}; none for {text.duration(s['silent_s'])})"
        )
    for x in f["failing"]:
        parts.append(
            f"{x['failures']} {_kind(x['kind'])} in a row failed from {x['start']:%H:%M} to "
            f"{x['end']:%H:%M} UTC ({'; '.join(x['reasons'])}) while "
            f"{' and '.join(_kind(c) for c in x['carried_by'])} got packets through"
        )
    key, still = f["key"], f["still_measured_by"]
    summary = f"{key}: monitoring blind -- " + "; ".join(parts)[:160]
    explanation = (
        f"The monitoring of {key} has a gap: {'; '.join(parts)}. "
        + (
            f"Other measurements of the path ({', '.join(_kind(x) for x in still)}) show it "
            "carrying traffic, so this is the test set-up (server busy or refusing, credentials, "
            "scheduler, agent), not the network. "
            if still
            else "Nothing else measures this path meanwhile: its state is unknown, not down. "
        )
        + "No network finding is drawn from the missing or failed tests."
    )
    actions = [
        f"Check the test hosts and the agent of {f['src']} and {f['dst']}: is the measurement "
        "scheduled, does the server accept it (limits, authentication), is the agent uploading?",
    ]
    return summary, explanation, actions
