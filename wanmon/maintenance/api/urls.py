"""Maintenance API routes, included under /api/v1/ by wanmon/urls.py."""

from django.urls import path
from rest_framework.routers import SimpleRouter

from wanmon.maintenance.api import views

router = SimpleRouter(trailing_slash=False)
router.register("maintenance/windows", views.WindowViewSet, basename="maintenance-window")
router.register("maintenance/notices", views.CarrierNoticeViewSet, basename="maintenance-notice")
# The carrier notices' former path, kept for clients: the same view answers it (docs: wanmon/maintenance/README.md).
router.register("maintenance/notifications", views.CarrierNoticeViewSet, basename="maintenance-notification")
router.register("maintenance/feed-tokens", views.FeedTokenViewSet, basename="maintenance-feed-token")
router.register("maintenance/sources", views.SourceViewSet, basename="maintenance-source")

urlpatterns = [
    path("maintenance/imports/file", views.FileImportView.as_view(), name="maintenance-import-file"),
    path("maintenance/imports/maildir", views.MaildirImportView.as_view(), name="maintenance-import-maildir"),
    path("maintenance/imports/url", views.UrlImportView.as_view(), name="maintenance-import-url"),
    path("maintenance/matches", views.MatchView.as_view(), name="maintenance-matches"),
    path("maintenance/skipped-paths", views.SkippedPathsView.as_view(), name="maintenance-skipped-paths"),
    *router.urls,
]
