"""Incident and silence pages (the e-mails link to /incidents/<id>)."""

from django.urls import path

from wanmon.alerts import views

app_name = "alerts"

urlpatterns = [
    path("incidents/", views.incident_list, name="incident-list"),
    path("incidents/<int:pk>", views.incident_detail, name="incident-detail"),
    path("incidents/<int:pk>/acknowledge", views.incident_acknowledge, name="incident-acknowledge"),
    path("incidents/<int:pk>/silence", views.incident_silence, name="incident-silence"),
    path("silences/", views.silence_list, name="silence-list"),
    path("silences/<int:pk>/expire", views.silence_expire, name="silence-expire"),
]
