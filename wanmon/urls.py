"""URL configuration: pages, the REST API under /api/v1/, its schema and the health endpoints."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

from wanmon.core import views as core_views

urlpatterns = [
    path("healthz", core_views.healthz, name="healthz"),
    path("livez", core_views.livez, name="livez"),
    path("readyz", core_views.readyz, name="readyz"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("api/v1/", include("wanmon.measurements.api.urls")),
    path("api/v1/", include("wanmon.diagnosis.api.urls")),
    path("api/v1/", include("wanmon.inventory.api.urls")),
    path("api/v1/", include("wanmon.maintenance.api.urls")),
    path("", include("wanmon.maintenance.urls")),
    # /api/v1/incidents/<id>/share before the alerting's incident routes; the carrier's page at /share/<token>
    path("api/v1/", include("wanmon.sharing.api.urls")),
    path("", include("wanmon.sharing.urls")),
    path("api/v1/", include("wanmon.alerts.api.urls")),
    path("api/v1/", include("wanmon.ondemand.api.urls")),
    path("", include("wanmon.alerts.urls")),
    path("", include("wanmon.ondemand.urls")),
    path("api/v1/", include("wanmon.cases.api.urls")),
    path("", include("wanmon.cases.urls")),
    path("", include("wanmon.perfsonar.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", core_views.ApiDocsView.as_view(url_name="api-schema"), name="api-docs"),
    # The NOC dashboard: the overview at "/" (name "home") and its pages.
    path("", include("wanmon.dashboard.urls")),
]

# Error pages in the site's layout (JSON under /api/): wanmon/dashboard/errors.py
handler400 = "wanmon.dashboard.errors.bad_request"
handler403 = "wanmon.dashboard.errors.permission_denied"
handler404 = "wanmon.dashboard.errors.page_not_found"
handler500 = "wanmon.dashboard.errors.server_error"
