"""Show times in the user's time zone (UTC unless the user chose another on the preferences page)."""

from __future__ import annotations

import zoneinfo

from django.utils import timezone

from wanmon.dashboard.constants import DEFAULT_TIME_ZONE, SESSION_TIME_ZONE_KEY
from wanmon.dashboard.services import preference_time_zone


class UserTimeZoneMiddleware:
    """Activate the user's time zone for the request; the preference is cached in the session."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        name = DEFAULT_TIME_ZONE
        user = getattr(request, "user", None)
        session = getattr(request, "session", None)
        if user is not None and user.is_authenticated and session is not None:
            name = session.get(SESSION_TIME_ZONE_KEY)
            if name is None:
                name = preference_time_zone(user)
                session[SESSION_TIME_ZONE_KEY] = name
        try:
            timezone.activate(zoneinfo.ZoneInfo(name))
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            timezone.activate(zoneinfo.ZoneInfo(DEFAULT_TIME_ZONE))
        try:
            return self.get_response(request)
        finally:
            timezone.deactivate()
