"""Findings API: list, detail (with history), acknowledge."""

import django_filters
from django.db.models import Q
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from wanmon.core.api import conflict, input_data
from wanmon.core.filters import LifecycleFilterSet
from wanmon.core.permissions import IsOperatorOrReadOnly
from wanmon.diagnosis.api.serializers import AcknowledgeInput, FindingDetailSerializer, FindingListSerializer
from wanmon.diagnosis.models import Finding
from wanmon.diagnosis.services import finding_acknowledge


class FindingFilter(LifecycleFilterSet):
    site = django_filters.CharFilter(method="filter_site", help_text="findings whose subject names this site")
    equipment = django_filters.CharFilter(field_name="subject__equipment")
    since = django_filters.IsoDateTimeFilter(field_name="last_seen_at", lookup_expr="gte")

    class Meta:
        model = Finding
        fields = ["code", "severity", "status"]

    def filter_site(self, queryset, name, value):
        return queryset.filter(Q(subject__src=value) | Q(subject__dst=value) | Q(subject__site=value))


class FindingViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Findings of the diagnosis, newest first; operators acknowledge them."""

    queryset = Finding.objects.select_related("acknowledged_by").prefetch_related("events__user")
    permission_classes = [IsOperatorOrReadOnly]
    filterset_class = FindingFilter

    def get_serializer_class(self):
        return FindingDetailSerializer if self.action == "retrieve" else FindingListSerializer

    @extend_schema(request=AcknowledgeInput, responses={200: FindingDetailSerializer})
    @action(detail=True, methods=["post"])
    def acknowledge(self, request, pk=None):
        note = input_data(AcknowledgeInput, request.data)["note"]
        try:
            finding = finding_acknowledge(finding=self.get_object(), user=request.user, note=note, now=timezone.now())
        except ValueError as exc:
            return conflict(str(exc))
        return Response(FindingDetailSerializer(finding).data)
