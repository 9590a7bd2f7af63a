"""Findings: the list, a finding and its acknowledgement."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from wanmon.core.http import found
from wanmon.core.permissions import user_is_operator
from wanmon.dashboard import presenters as p
from wanmon.dashboard import selectors as s
from wanmon.dashboard.forms import AcknowledgeForm
from wanmon.dashboard.views.common import (
    respond,
)
from wanmon.diagnosis.choices import Code, FindingStatus, Severity
from wanmon.diagnosis.services import finding_acknowledge as finding_acknowledge_service


@login_required
def finding_list(request):
    filters = {name: request.GET.get(name, "") for name in ("status", "severity", "code", "site", "element")}
    filters["status"] = filters["status"] or "active"
    page = Paginator(s.finding_list_filtered(**filters), 50).get_page(request.GET.get("page"))
    rows = [(f, p.finding_url(f.pk), *p.subject_link(f.subject, p.finding_query_for(f))) for f in page]
    context = {
        "page": page, "rows": rows, "filters": filters,
        "statuses": [("active", "active (open + acknowledged)"), *FindingStatus.choices, ("all", "all")],
        "severities": Severity.choices, "codes": Code.choices,
        "filter_query": urlencode({key: value for key, value in filters.items() if value}),
    }
    return respond(request, "dashboard/finding_list.html", context,
                    fragments={"table": "dashboard/_finding_table.html"})


@login_required
def finding_detail(request, pk: int):
    finding = found(s.finding_get(pk), f"finding {pk}")
    rows, tables = p.evidence_view({key: value for key, value in (finding.evidence or {}).items()
                                    if key != "derived"})
    derived_rows, _ = p.evidence_view((finding.evidence or {}).get("derived") or {})
    subject_text, subject_url = p.subject_link(finding.subject, p.finding_query_for(finding))
    return render(request, "dashboard/finding_detail.html", {
        "finding": finding,
        "subject_text": subject_text,
        "subject_url": subject_url,
        "evidence_rows": rows,
        "evidence_tables": tables,
        "derived_rows": derived_rows,
        "events": list(finding.events.all()),
        "can_acknowledge": user_is_operator(request.user),
        "form": AcknowledgeForm(),
        "test_pairs": _finding_pairs(finding),
    })


def _finding_pairs(finding) -> list[str]:
    """The site pair a "Test now" of the finding page tests: a path finding's subject (element findings name none)."""
    subject = finding.subject or {}
    return [f"{subject['src']}->{subject['dst']}"] if subject.get("src") and subject.get("dst") else []


@login_required
@require_POST
def finding_acknowledge(request, pk: int):
    """Operators take a finding in hand; viewers are refused (403)."""
    if not user_is_operator(request.user):
        raise PermissionDenied("acknowledging needs the operator role")
    finding = found(s.finding_get(pk), f"finding {pk}")
    form = AcknowledgeForm(request.POST)
    note = form.cleaned_data["note"] if form.is_valid() else ""
    try:
        finding_acknowledge_service(finding=finding, user=request.user, note=note, now=timezone.now())
    except ValueError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Finding {finding.code} acknowledged.")
    return redirect("dashboard-finding", pk=pk)
