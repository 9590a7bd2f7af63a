"""Incident page actions of the case memory."""

from django.urls import path

from wanmon.cases import views

app_name = "cases"

urlpatterns = [
    path("incidents/<int:pk>/resolve", views.incident_resolve, name="incident-resolve"),
    path("incidents/<int:pk>/notes", views.incident_note, name="incident-note"),
]
