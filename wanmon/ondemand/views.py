"""The "Test now" button of the finding, incident and path pages: a POST to this thin view, which calls the same
service as POST /api/v1/tests and goes back to the page with the verdict (the page lists the test and its result)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.utils import timezone
from django.views.decorators.http import require_POST

from wanmon.core.pages import next_redirect
from wanmon.core.permissions import user_is_operator
from wanmon.core.units import bps_from_mbps
from wanmon.ondemand.forms import TestNowForm
from wanmon.ondemand.services import JobRequest, job_request


def _errors_text(errors: dict) -> str:
    return "; ".join(f"{field}: {' '.join(map(str, messages_))}" for field, messages_ in errors.items())


@login_required
@require_POST
def test_now(request):
    """Operators ask for a test now; viewers are refused (403)."""
    if not user_is_operator(request.user):
        raise PermissionDenied("a test on demand needs the operator role")
    form = TestNowForm(request.POST, pairs=[request.POST.get("pair", "")])
    if not form.is_valid():
        messages.error(request, f"Test not asked for: {_errors_text(form.errors)}")
        return next_redirect(request, "/")
    data = form.cleaned_data
    src, dst = data["pair"]
    kind = data["kind"]
    throughput = kind == "throughput"
    ask = JobRequest(
        src=src, dst=dst, kind=kind, protocol=data["protocol"] or None if throughput else None,
        duration_s=data["duration_s"], rate_bps=bps_from_mbps(data["rate_mbps"]) if throughput else None,
        streams=data["streams"] if throughput else None, reverse=data["reverse"], finding=data["finding"],
        incident=data["incident"],
    )  # fmt: skip
    try:
        job, refusal = job_request(request=ask, requested_by=request.user, now=timezone.now())
    except ValidationError as exc:
        messages.error(request, f"Test not asked for: {_errors_text(exc.message_dict)}")
        return next_redirect(request, "/")
    if refusal is not None:
        messages.error(request, f"Test {job.pk} refused: {refusal.reason}")
    else:
        messages.success(request, f"Test {job.pk} ({kind} {src}->{dst}) queued: the agent of {src} fetches it "
                                  "within seconds; reload this page for its result.")  # fmt: skip
    return next_redirect(request, "/")
