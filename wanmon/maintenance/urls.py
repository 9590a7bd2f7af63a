"""Maintenance pages and iCalendar feeds, included at the site root by wanmon/urls.py."""

from django.urls import path, re_path

from wanmon.maintenance import views

CODE = r"(?P<code>[A-Za-z0-9][A-Za-z0-9_.-]{0,31})"
TOKEN = r"(?P<token>[A-Za-z0-9_-]{10,200})"

urlpatterns = [
    path("maintenance/", views.calendar_page, name="maintenance-calendar"),
    path("maintenance/new/", views.window_create_page, name="maintenance-window-create"),
    path("maintenance/import/", views.import_page, name="maintenance-import"),
    path("maintenance/feeds/", views.feed_token_page, name="maintenance-feed-tokens"),
    path("maintenance/review/", views.review_page, name="maintenance-review"),
    path("maintenance/<int:pk>/", views.window_page, name="maintenance-window"),
    path("maintenance/<int:pk>/edit/", views.window_edit_page, name="maintenance-window-edit"),
    path("maintenance/<int:pk>/cancel/", views.window_cancel_page, name="maintenance-window-cancel"),
    path("maintenance/<int:pk>/comment/", views.window_comment_page, name="maintenance-window-comment"),
    path("maintenance/<int:pk>/review/", views.window_review_page, name="maintenance-window-review"),
    path("maintenance/notices/<int:pk>/raw/", views.carrier_notice_raw_page, name="maintenance-carrier-notice-raw"),
    # The former address of the same page, kept for links and bookmarks.
    path("maintenance/notifications/<int:pk>/raw/", views.carrier_notice_raw_page, name="maintenance-notification-raw"),
    re_path(rf"^maintenance/feeds/{TOKEN}/all\.ics$", views.feed, {"scope": "all"}, name="maintenance-feed-all"),
    re_path(rf"^maintenance/feeds/{TOKEN}/site/{CODE}\.ics$", views.feed, {"scope": "site"},
            name="maintenance-feed-site"),
    re_path(rf"^maintenance/feeds/{TOKEN}/carrier/{CODE}\.ics$", views.feed, {"scope": "carrier"},
            name="maintenance-feed-carrier"),
]
