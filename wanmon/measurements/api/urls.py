from django.urls import path

from wanmon.measurements.api.views import IngestView, QueryView

urlpatterns = [
    path("ingest", IngestView.as_view(), name="ingest"),
    path("query", QueryView.as_view(), name="query"),
]
