"""Case memory API routes, included under /api/v1/ by wanmon/urls.py."""

from django.urls import path
from rest_framework.routers import SimpleRouter

from wanmon.cases.api import views

router = SimpleRouter(trailing_slash=False)
router.register("cases", views.CaseViewSet, basename="case")

urlpatterns = [
    path("incidents/<int:pk>/resolve", views.IncidentResolveView.as_view(), name="incident-resolve"),
    path("incidents/<int:pk>/notes", views.IncidentNoteView.as_view(), name="incident-notes"),
    *router.urls,
]
