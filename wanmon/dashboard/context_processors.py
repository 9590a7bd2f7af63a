"""Template context of every page: the navigation, the time zone shown and the user's role."""

from __future__ import annotations

from django.urls import NoReverseMatch, Resolver404, resolve, reverse
from django.utils import timezone

from wanmon.core.permissions import user_is_operator
from wanmon.dashboard.constants import REFRESH_INTERVAL_S

#: (label, URL name or path, section prefix). Pages of other apps appear once they exist.
NAV = (
    ("Overview", "home", "/"),
    ("Map", "dashboard-map", "/map/"),
    ("Findings", "dashboard-finding-list", "/findings/"),
    ("Incidents", "/incidents/", "/incidents/"),
    ("Maintenance", "/maintenance/", "/maintenance/"),
    ("Equipment", "dashboard-equipment-list", "/equipment/"),
    ("Explore", "dashboard-explore", "/explore/"),
)


def _href(target: str) -> str | None:
    if target.startswith("/"):
        try:
            resolve(target)
        except Resolver404:
            return None
        return target
    try:
        return reverse(target)
    except NoReverseMatch:
        return None


def navigation(request) -> dict:
    items = []
    current = request.path
    for label, target, prefix in NAV:
        href = _href(target)
        if href is None:
            continue
        active = current == "/" if prefix == "/" else current.startswith(prefix) or (
            prefix == "/equipment/" and current.startswith("/trunks/")
        ) or (prefix == "/" and current.startswith("/paths/"))
        items.append({"label": label, "href": href, "active": active})
    tz = timezone.get_current_timezone()
    user = getattr(request, "user", None)
    return {
        "wanmon_nav": items,
        "wanmon_time_zone": getattr(tz, "key", str(tz)),
        # Called lazily by the template engine: one query only on pages that ask.
        "wanmon_is_operator": lambda: user_is_operator(user),
        "wanmon_refresh_s": REFRESH_INTERVAL_S,
    }
