"""Error pages in the site's layout (header, navigation, skip link), and JSON for the API's paths.

Django calls these for an exception no view handled (``handler400`` ... ``handler500`` in ``wanmon/urls.py``):
a bad parameter (BadRequest), a refused action (PermissionDenied), a missing page (Http404) and a crash.
Each says what happened and where to go; none shows a stack trace.
"""

from __future__ import annotations

import logging

from django.http import HttpResponse, JsonResponse
from django.template.loader import render_to_string

logger = logging.getLogger(__name__)

TITLES = {400: "Bad request", 403: "Not allowed", 404: "Page not found", 500: "Server error"}


def _message(exception) -> str:
    # Our own messages name the parameter or object (BadRequest("range: ..."), Http404("finding 12")); Django's
    # resolver puts a dict in its Resolver404, which says nothing to a reader.
    if exception is None or not exception.args or not isinstance(exception.args[0], str):
        return ""
    return exception.args[0][:300]


def _answer(request, status: int, message: str) -> HttpResponse:
    if request.path.startswith("/api/"):
        return JsonResponse({"errors": [{"path": "", "message": message or TITLES[status]}]}, status=status)
    context = {"status": status, "title": TITLES[status], "message": message}
    try:
        html = render_to_string(f"errors/{status}.html", context, request=request)
    except Exception:  # the layout needs the session (database): a broken database must still get a page
        logger.exception("error page %s rendered without the layout", status)
        html = render_to_string("errors/plain.html", context)
    return HttpResponse(html, status=status)


def bad_request(request, exception=None):
    return _answer(request, 400, _message(exception))


def permission_denied(request, exception=None):
    return _answer(request, 403, _message(exception))


def page_not_found(request, exception=None):
    return _answer(request, 404, _message(exception))


def server_error(request):
    return _answer(request, 500, "")
