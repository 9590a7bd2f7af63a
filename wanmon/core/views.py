"""Health endpoints (the home page is the dashboard's overview).

- ``/livez``: the web process answers (no database, Redis or Celery): for load balancers and the TLS
  proxy, which must not wait on anything but web itself;
- ``/readyz``: web can serve: the database answers a trivial query (compose's web healthcheck);
- ``/healthz``: database, TimescaleDB, Redis and Celery workers, 200 when all are up, 503 otherwise.
  Anyone sees the status of each part; versions, worker names and error messages only staff.
"""

from django.http import JsonResponse
from django.views import View
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from drf_spectacular.views import SpectacularSwaggerSplitView

from wanmon.core.selectors import database_ping, health_report


@never_cache
@require_GET
def livez(request):
    """The process is up and answers; nothing else is checked."""
    return JsonResponse({"status": "ok"})


@never_cache
@require_GET
def readyz(request):
    """What web needs to serve: the database (1 s limit). Redis and Celery are not web's own needs."""
    status = database_ping()
    body = {"status": "ok" if status.ok else "error", "database": {"ok": status.ok}}
    return JsonResponse(body, status=200 if status.ok else 503)


@never_cache
@require_GET
def healthz(request):
    """JSON health of database (with TimescaleDB version), Redis and Celery workers; 503 when one is down."""
    ok, report = health_report()
    user = getattr(request, "user", None)
    if not (user is not None and user.is_authenticated and user.is_staff):
        report = {k: ({"ok": v["ok"]} if isinstance(v, dict) else v) for k, v in report.items()}
    return JsonResponse(report, status=200 if ok else 503)


class ApiDocsView(SpectacularSwaggerSplitView):
    """/api/docs/: Swagger UI from our own static files (drf-spectacular-sidecar, settings.SPECTACULAR_SETTINGS)
    with its start-up script served as a file, so the site-wide policy (scripts from 'self' only) holds here too."""

    def options(self, request, *args, **kwargs):
        # DRF answers OPTIONS with metadata for a renderer, and this view's one renderer is the page's template,
        # which has no template for it: a 500. Django's plain answer lists the methods.
        return View.options(self, request, *args, **kwargs)
