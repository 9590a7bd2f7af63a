"""Health endpoints (the home page is the dashboard's overview).

- ``/livez``: the web process answers (no database, Redis or Celery): for load balancers and the TLS
  proxy, which must not wait on anything but web itself;
- ``/readyz``: web can serve: the database answers a trivial query (compose's web healthcheck);
- ``/healthz``: database, TimescaleDB, Redis and Celery workers, 200 when all are up, 503 otherwise.
  Anyone sees the status of each part; versions, worker names and error messages only staff.
"""

from urllib.parse import urlsplit

from django.conf import settings
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from drf_spectacular.settings import spectacular_settings
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
    """/api/docs/: Swagger UI with its start-up script served as a file (no inline script), and a policy that
    also allows the origin drf-spectacular loads the Swagger UI assets from (SWAGGER_UI_DIST)."""

    def get(self, request, *args, **kwargs):
        response = super().get(request, *args, **kwargs)
        dist = urlsplit(str(spectacular_settings.SWAGGER_UI_DIST))
        policy = getattr(settings, "WANMON_CSP", "")
        if policy and dist.scheme in ("http", "https") and dist.netloc:
            origin = f"{dist.scheme}://{dist.netloc}"
            widened = ("script-src", "style-src", "img-src")
            policy = "; ".join(
                f"{part.strip()} {origin}" if part.split()[0] in widened else part.strip()
                for part in policy.split(";")
                if part.strip()
            )
            response["Content-Security-Policy"] = policy
        return response
