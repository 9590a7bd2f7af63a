"""Share API routes, included under /api/v1/ by wanmon/urls.py before the alerting's incident routes."""

from django.urls import path

from wanmon.sharing.api import views

urlpatterns = [
    path("incidents/<int:pk>/share", views.IncidentShareView.as_view(), name="incident-share"),
]
