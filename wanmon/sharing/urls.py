"""The carrier's page behind a share link, included at the site root by wanmon/urls.py."""

from django.urls import re_path

from wanmon.sharing import views

# any last segment: a mistyped link gets this app's 404, without the navigation of the internal pages
TOKEN = r"(?P<token>[^/]{1,300})"

urlpatterns = [
    re_path(rf"^share/{TOKEN}$", views.share_page, name="sharing-page"),
]
