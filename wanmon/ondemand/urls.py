"""The page view of the tests on demand (the "Test now" button), included at the root by wanmon/urls.py."""

from django.urls import path

from wanmon.ondemand import views

urlpatterns = [
    path("tests/now", views.test_now, name="ondemand-test-now"),
]
