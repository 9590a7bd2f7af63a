"""``{% test_now_card pairs finding=... incident=... %}``: the "Test now" form (operators) and the latest tests of a
finding, an incident or a site pair, on their pages."""

from __future__ import annotations

from django import template

from wanmon.core.permissions import user_is_operator
from wanmon.ondemand.forms import TestNowForm
from wanmon.ondemand.selectors import (
    finding_tested_lines,
    job_list_for_finding,
    job_list_for_incident,
    job_list_for_path,
)

register = template.Library()


def _pairs(pairs) -> list[str]:
    out: list[str] = []
    for pair in pairs or []:
        text = pair if isinstance(pair, str) else f"{pair[0]}->{pair[1]}"
        if text not in out:
            out.append(text)
    return out


@register.inclusion_tag("ondemand/_test_now.html", takes_context=True)
def test_now_card(context, pairs, finding=None, incident=None):
    """The card: ``pairs`` are the page's paths ('SRC->DST' or (src, dst)), the first one chosen."""
    request = context.get("request")
    pairs = _pairs(pairs)
    tested: list[dict] = []
    if finding is not None:
        jobs = job_list_for_finding(finding)
        tested = finding_tested_lines(finding)
    elif incident is not None:
        jobs = job_list_for_incident(incident)
    elif pairs:
        src, _, dst = pairs[0].partition("->")
        jobs = job_list_for_path(src, dst)
    else:
        jobs = []
    operator = request is not None and user_is_operator(request.user)
    form = TestNowForm(
        pairs=pairs,
        initial={"pair": pairs[0] if pairs else "", "finding": finding, "incident": incident,
                 "next": request.get_full_path() if request is not None else ""},
    ) if operator and pairs else None  # fmt: skip
    return {"form": form, "jobs": jobs, "operator": operator, "csrf_token": context.get("csrf_token"), "tested": tested}


@register.filter
def job_result(job) -> str:
    """The figures a test brought back, in one line."""
    result = job.result or {}
    if result.get("error"):
        return result["error"]
    parts: list[str] = []
    if result.get("throughput_bps") is not None:
        parts.append(f"{result['throughput_bps'] / 1e6:,.1f} Mb/s")
    if result.get("retransmits") is not None:
        parts.append(f"{result['retransmits']} retransmits")
    if result.get("packets_sent"):
        parts.append(f"{result.get('packets_lost') or 0}/{result['packets_sent']} lost")
    if result.get("delay_median_ms") is not None:
        parts.append(f"delay {result['delay_median_ms']:.2f} ms")
    if result.get("pmtu_bytes") is not None:
        parts.append(f"path MTU {result['pmtu_bytes']} bytes")
    if result.get("hops"):
        parts.append(f"{len(result['hops'])} hops")
    return ", ".join(parts)
