"""Wording of CLOCK_UNSYNC, on a path direction and on the site whose clock is to blame."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wanmon.diagnosis import text


def describe_problem(item: Mapping[str, Any]) -> str:
    """One inconsistency of a direction's owamp data (an evidence row of ``rules.clock``) in words."""
    kind = item["kind"]
    if kind == "negative_delay":
        return f"negative one-way delay in {item['sessions']} session(s) (down to {text.ms(item['min_ms'])})"
    if kind == "clock_error":
        return (
            f"reported clock error up to {text.ms(item['max_error_ms'])} in {item['sessions']} sessions "
            f"(limit {text.ms(item['threshold_ms'])} for delays of this size)"
        )
    if kind == "one_way_above_rtt":
        return (
            f"one-way minimum delay {text.ms(item['max_ms'])} exceeds the whole RTT {text.ms(item['rtt_ms'])} "
            f"in {item['sessions']} session(s)"
        )
    if kind == "sum_vs_rtt":
        return (
            f"forward + reverse minimum delay {text.ms(item['sum_median_ms'])} is far from the RTT "
            f"{text.ms(item['rtt_ms'])} (tolerance {text.ms(item['tolerance_ms'])}) in {item['sessions']} pairs"
        )
    if kind == "offset_drift":
        return (
            f"the clock offset has moved steadily since {item['time']:%H:%M} UTC "
            f"({text.ms(item['offset_change_ms'])} by the first impossible session): a clock drifting"
        )
    return (
        f"the clock offset jumped by {text.ms(item['offset_change_ms'])} at {item['time']:%H:%M} UTC while the "
        f"round trip stayed the same (change {text.ms(item['sum_change_ms'])})"
    )


def clock_unsync(f: Mapping[str, Any]) -> tuple[str, str, list[str]]:
    """CLOCK_UNSYNC. Path facts: ``key``, ``src``, ``dst``, ``problems`` (the evidence rows). Site facts (with
    ``site``): ``site``, ``pairs`` (the flagged directions), ``partners``, ``good_partners`` (partners with
    consistent data elsewhere), ``flagged_pairs`` (count of site pairs)."""
    if "site" in f:
        return _site(f)
    key, items = f["key"], f["problems"]
    desc = "; ".join(describe_problem(i) for i in items)
    summary = f"{key}: one-way delays not trustworthy ({', '.join(sorted({i['kind'] for i in items}))})"
    explanation = (
        f"The owamp data of {key} cannot come from synchronised clocks: {desc}. With a clock offset d "
        f"the forward delay reads D+d and the reverse D-d; only their sum is immune. One-way delay "
        f"figures of {f['src']} and {f['dst']} are ignored by the delay rules until NTP is fixed."
    )
    actions = [
        f"Check NTP on the owamp hosts at {f['src']} and {f['dst']} (ntpq -p / chronyc tracking): synchronised, "
        "several good servers, small offset and dispersion.",
    ]
    return summary, explanation, actions


def _site(f: Mapping[str, Any]) -> tuple[str, str, list[str]]:
    site, good = f["site"], f["good_partners"]
    summary = f"{site}: clock not synchronised (flagged with {', '.join(sorted(f['partners']))})"
    explanation = f"One-way delays are inconsistent on {', '.join(sorted(f['pairs']))}; " + (
        f"the partners {', '.join(sorted(good))} have consistent "
        f"data with other sites, so their clocks are fine and {site}'s is not."
        if good
        else f"{site} is the common end of {f['flagged_pairs']} inconsistent pairs."
    )
    return summary, explanation, [f"Fix NTP on the measurement hosts of {site}."]
