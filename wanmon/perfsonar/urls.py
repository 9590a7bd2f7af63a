from django.urls import path

from wanmon.perfsonar import views

urlpatterns = [
    path("api/v1/perfsonar/archive", views.ArchiveView.as_view(), name="perfsonar-archive"),
    path("api/v1/perfsonar/parked", views.ParkedRunListView.as_view(), name="perfsonar-parked-api"),
    path("api/v1/perfsonar/mappings", views.MappingView.as_view(), name="perfsonar-mappings"),
    path("perfsonar/", views.parked_page, name="perfsonar-parked"),
    path("perfsonar/map", views.map_page, name="perfsonar-map"),
    path("perfsonar/psconfig/<str:token>.json", views.psconfig_template, name="perfsonar-psconfig"),
]
