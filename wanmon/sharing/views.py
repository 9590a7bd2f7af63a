"""The page a carrier opens from its link, without a login: HTML (with a print layout) or ``?format=txt``."""

from __future__ import annotations

from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils import timezone
from django.views.decorators.http import require_GET

from wanmon.core.auth import client_ip
from wanmon.sharing.choices import ShareFormat
from wanmon.sharing.report import share_report
from wanmon.sharing.selectors import share_link_by_token
from wanmon.sharing.services import share_access_record

GONE = 410


def _refusal(request, status: int, message: str, fmt: str) -> HttpResponse:
    """A refused link in the site's error layout (no navigation: the reader has no account), or as text."""
    if fmt == ShareFormat.TXT:
        return HttpResponse(f"{status} {message}\n", status=status, content_type="text/plain; charset=utf-8")
    title = "Link no longer valid" if status == GONE else "Page not found"
    return render(request, "sharing/error.html", {"status": status, "title": title, "message": message},
                  status=status)


@require_GET
def share_page(request, token: str):
    """The evidence of one incident for one carrier: 404 for a token no link has, 410 once expired or revoked;
    every request to a known link is logged with its time and address."""
    fmt = ShareFormat.TXT if request.GET.get("format") == "txt" else ShareFormat.HTML
    if request.GET.get("format") not in (None, "", "txt", "html"):
        return HttpResponse("400 format: use txt or html\n", status=400, content_type="text/plain; charset=utf-8")
    now = timezone.now()
    link = share_link_by_token(token)
    if link is None:
        return _refusal(request, 404, "No shared evidence is known at this address.", fmt)
    log = {"link": link, "now": now, "address": client_ip(request), "user_agent": request.META.get(
        "HTTP_USER_AGENT", ""), "fmt": fmt}
    if link.revoked_at is not None or link.expires_at <= now:
        share_access_record(**log, status=GONE)
        why = "was revoked" if link.revoked_at is not None else "has expired"
        return _refusal(request, GONE, f"This link {why}: ask the operators of the network for a new one.", fmt)
    report = share_report(incident_id=link.incident_id, carrier=link.carrier.code, now=now)
    if report is None:
        raise Http404("incident")
    share_access_record(**log, status=200)
    context = {"report": report, "link": link, "expires": link.expires_at}
    if fmt == ShareFormat.TXT:
        body = render_to_string("sharing/share.txt", context)
        response = HttpResponse(body, content_type="text/plain; charset=utf-8")
    else:
        response = render(request, "sharing/share.html", context)
    # the URL is the secret: not cached by proxies, not sent on as a referrer, not indexed
    response["Cache-Control"] = "no-store"
    response["Referrer-Policy"] = "no-referrer"
    response["X-Robots-Tag"] = "noindex, nofollow"
    return response
