"""Filter sets of the inventory API (django-filter), netbox style: references by code or name,
repeatable (``?site=CERN&site=FZK``), unknown values are a 400 rather than an empty list."""

from __future__ import annotations

import django_filters
from django.db.models import Q
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field

from wanmon.inventory import models
from wanmon.inventory.choices import CarrierKind, CircuitStatus, ContactRole, EquipmentRole, HostRole
from wanmon.inventory.selectors import path_in_force_q


@extend_schema_field(OpenApiTypes.STR)
class CodeFilter(django_filters.ModelMultipleChoiceFilter):
    """A reference by code or name (repeatable); documented in the schema as a string."""


def _by_code(field_name: str, model=models.Site, to_field: str = "code", **kwargs) -> CodeFilter:
    return CodeFilter(field_name=field_name, to_field_name=to_field, queryset=model.objects.all(), **kwargs)


class _SearchMixin(django_filters.FilterSet):
    """``?q=text``: case-insensitive search over the fields listed in ``search_fields``."""

    search_fields: tuple[str, ...] = ()
    q = django_filters.CharFilter(method="_search", label="search")

    def _search(self, queryset, name, value):
        if not value.strip():
            return queryset
        condition = Q()
        for field in self.search_fields:
            condition |= Q(**{f"{field}__icontains": value.strip()})
        return queryset.filter(condition)


class CarrierFilterSet(_SearchMixin):
    search_fields = ("code", "name", "notes")
    code = django_filters.CharFilter()
    kind = django_filters.MultipleChoiceFilter(choices=CarrierKind.choices)

    class Meta:
        model = models.Carrier
        fields = ["code", "kind"]


class SiteFilterSet(_SearchMixin):
    search_fields = ("code", "name", "notes")
    code = django_filters.CharFilter()
    tier = django_filters.NumberFilter()

    class Meta:
        model = models.Site
        fields = ["code", "tier"]


class SiteContactFilterSet(django_filters.FilterSet):
    site = _by_code("site__code")
    role = django_filters.MultipleChoiceFilter(choices=ContactRole.choices)
    email = django_filters.CharFilter(lookup_expr="iexact")

    class Meta:
        model = models.SiteContact
        fields = ["site", "role", "email"]


class HostFilterSet(_SearchMixin):
    search_fields = ("name", "address")
    site = _by_code("site__code")
    role = django_filters.MultipleChoiceFilter(choices=HostRole.choices)
    name = django_filters.CharFilter()

    class Meta:
        model = models.Host
        fields = ["site", "role", "name"]


class EquipmentFilterSet(_SearchMixin):
    search_fields = ("name", "vendor", "model", "location", "quirks")
    site = _by_code("site__code")
    carrier = _by_code("carrier__code", model=models.Carrier)
    role = django_filters.MultipleChoiceFilter(choices=EquipmentRole.choices)
    vendor = django_filters.CharFilter(lookup_expr="iexact")
    model = django_filters.CharFilter(lookup_expr="iexact")
    name = django_filters.CharFilter()
    known_reordering = django_filters.BooleanFilter()

    class Meta:
        model = models.Equipment
        fields = ["site", "carrier", "role", "vendor", "model", "name", "known_reordering"]


class InterfaceFilterSet(_SearchMixin):
    search_fields = ("name", "description", "equipment__name")
    equipment = _by_code("equipment__name", model=models.Equipment, to_field="name")
    site = _by_code("equipment__site__code")
    carrier = _by_code("equipment__carrier__code", model=models.Carrier)
    name = django_filters.CharFilter()
    if_index = django_filters.NumberFilter()

    class Meta:
        model = models.Interface
        fields = ["equipment", "site", "carrier", "name", "if_index"]


class CircuitFilterSet(_SearchMixin):
    search_fields = ("cid", "description")
    carrier = _by_code("carrier__code", model=models.Carrier)
    status = django_filters.MultipleChoiceFilter(choices=CircuitStatus.choices)
    cid = django_filters.CharFilter()
    equipment = django_filters.CharFilter(method="_equipment", label="equipment at either end")

    class Meta:
        model = models.Circuit
        fields = ["carrier", "status", "cid", "equipment"]

    def _equipment(self, queryset, name, value):
        return queryset.filter(Q(a_interface__equipment__name=value) | Q(z_interface__equipment__name=value))


class TrunkFilterSet(_SearchMixin):
    search_fields = ("name", "description")
    name = django_filters.CharFilter()
    equipment = django_filters.CharFilter(method="_equipment", label="equipment holding a member")

    class Meta:
        model = models.Trunk
        fields = ["name", "equipment"]

    def _equipment(self, queryset, name, value):
        return queryset.filter(members__equipment__name=value).distinct()


class PathFilterSet(django_filters.FilterSet):
    src = _by_code("src__code")
    dst = _by_code("dst__code")
    site = django_filters.CharFilter(method="_site", label="site at either end")
    current = django_filters.BooleanFilter(method="_current", label="only versions in force now (or only ended)")
    at = django_filters.IsoDateTimeFilter(method="_at", label="versions in force at this time")
    equipment = django_filters.CharFilter(method="_equipment", label="crossing this equipment")

    class Meta:
        model = models.Path
        fields = ["src", "dst", "site", "current", "at", "equipment"]

    def _site(self, queryset, name, value):
        return queryset.filter(Q(src__code=value) | Q(dst__code=value))

    def _current(self, queryset, name, value):
        in_force = path_in_force_q(timezone.now())
        return queryset.filter(in_force) if value else queryset.exclude(in_force)

    def _at(self, queryset, name, value):
        return queryset.filter(path_in_force_q(value))

    def _equipment(self, queryset, name, value):
        return queryset.filter(pk__in=models.PathHop.objects.filter(equipment__name=value).values("path_id"))


class AgentFilterSet(django_filters.FilterSet):
    site = _by_code("site__code")
    name = django_filters.CharFilter()
    active = django_filters.BooleanFilter(field_name="revoked_at", lookup_expr="isnull")

    class Meta:
        model = models.Agent
        fields = ["site", "name", "active"]
