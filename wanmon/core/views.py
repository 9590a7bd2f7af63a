"""The health endpoint (the home page is the dashboard's overview)."""

from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from wanmon.core.selectors import health_report


@never_cache
@require_GET
def healthz(request):
    """JSON health of database (with TimescaleDB version), Redis and Celery workers; 503 when one is down."""
    ok, report = health_report()
    return JsonResponse(report, status=200 if ok else 503)
