"""Tests-on-demand routes, included under /api/v1/ by wanmon/urls.py."""

from django.urls import path

from wanmon.ondemand.api import views

urlpatterns = [
    path("tests", views.TestListView.as_view(), name="test-list"),
    path("tests/<int:pk>", views.TestDetailView.as_view(), name="test-detail"),
    path("agent/jobs", views.AgentJobsView.as_view(), name="agent-jobs"),
]
