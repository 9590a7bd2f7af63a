"""Query filters the apps' APIs share."""

from __future__ import annotations

import django_filters

from wanmon.core.choices import ACTIVE_LIFECYCLE


class LifecycleFilterSet(django_filters.FilterSet):
    """The filters of a model with the ``Lifecycle`` status (findings, incidents): ``active=true`` keeps the open
    and acknowledged rows, ``active=false`` the resolved ones."""

    active = django_filters.BooleanFilter(method="filter_active", help_text="only open and acknowledged")

    def filter_active(self, queryset, name, value):
        if value:
            return queryset.filter(status__in=ACTIVE_LIFECYCLE)
        return queryset.exclude(status__in=ACTIVE_LIFECYCLE)
