"""Per-user settings of the dashboard."""

from zoneinfo import available_timezones

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from wanmon.dashboard.constants import DEFAULT_TIME_ZONE


def validate_time_zone(value: str) -> None:
    if value != "UTC" and value not in available_timezones():
        raise ValidationError(f"unknown time zone {value!r}; use an IANA name such as Europe/Zurich")


class UserPreference(models.Model):
    """A user's display preferences: the time zone every page shows times in (UTC unless chosen)."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="dashboard_preference")
    time_zone = models.CharField(max_length=64, default=DEFAULT_TIME_ZONE, validators=[validate_time_zone])

    class Meta:
        verbose_name = "dashboard preference"

    def __str__(self) -> str:
        return f"{self.user} ({self.time_zone})"
