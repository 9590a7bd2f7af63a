"""Pages of the dashboard (mounted at the site root; the overview is ``home``)."""

from django.urls import path

from wanmon.dashboard import views

urlpatterns = [
    path("", views.overview, name="home"),
    path("map/", views.network_map, name="dashboard-map"),
    path("paths/<str:src>/<str:dst>/", views.path_detail, name="dashboard-path"),
    path("paths/<str:src>/<str:dst>/both/", views.pair_detail, name="dashboard-pair"),
    path("equipment/", views.equipment_list, name="dashboard-equipment-list"),
    path("equipment/<str:name>/", views.equipment_detail, name="dashboard-equipment"),
    # Interface names contain '/' (xe-1/0/0): the path converter takes the rest of the URL.
    path("equipment/<str:name>/interfaces/<path:interface>/", views.interface_detail, name="dashboard-interface"),
    path("trunks/<str:name>/", views.trunk_detail, name="dashboard-trunk"),
    path("findings/", views.finding_list, name="dashboard-finding-list"),
    path("findings/<int:pk>/", views.finding_detail, name="dashboard-finding"),
    path("findings/<int:pk>/acknowledge/", views.finding_acknowledge, name="dashboard-finding-acknowledge"),
    path("explore/", views.explore, name="dashboard-explore"),
    # The charts of an incident page (the alerting app's, below the dashboard: it links here and loads them).
    path("incidents/<int:pk>/charts/", views.incident_charts, name="dashboard-incident-charts"),
    path("preferences/", views.preferences, name="dashboard-preferences"),
]
