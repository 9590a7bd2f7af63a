"""Dashboard writes: the user's preferences."""

from __future__ import annotations

from django.db import transaction

from wanmon.dashboard.models import UserPreference, validate_time_zone


def preference_set_time_zone(*, user, time_zone: str) -> UserPreference:
    """Store the time zone ``user`` wants times shown in (validated IANA name)."""
    validate_time_zone(time_zone)
    with transaction.atomic():
        preference, _ = UserPreference.objects.select_for_update().get_or_create(user=user)
        preference.time_zone = time_zone
        preference.full_clean()
        preference.save(update_fields=["time_zone"])
    return preference


def preference_time_zone(user) -> str:
    """The stored time zone of ``user`` (UTC without a preference)."""
    value = UserPreference.objects.filter(user=user).values_list("time_zone", flat=True).first()
    return value or "UTC"
