"""Alerting API: incidents (list, detail, acknowledge, silence), silences (CRUD; delete = expire), the sent-log,
routing rules and the caller's own subscriptions."""

from __future__ import annotations

import django_filters
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, permissions, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from wanmon.alerts import services, silences
from wanmon.alerts.api import serializers as s
from wanmon.alerts.models import Incident, Notification, RoutingRule, Silence, Subscription
from wanmon.core.api import conflict, input_data, service_refusals
from wanmon.core.filters import LifecycleFilterSet
from wanmon.core.permissions import IsOperator, IsOperatorOrReadOnly
from wanmon.diagnosis.api.serializers import AcknowledgeInput  # the same input as acknowledging a finding


class IncidentFilter(LifecycleFilterSet):
    site = django_filters.CharFilter(method="filter_site", help_text="incidents touching this site")
    since = django_filters.IsoDateTimeFilter(field_name="changed_at", lookup_expr="gte")

    class Meta:
        model = Incident
        fields = ["status", "severity", "kind", "code", "muted"]

    def filter_site(self, queryset, name, value):
        return queryset.filter(sites__contains=[value])


class IncidentViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Incidents, newest first; operators acknowledge and silence them."""

    queryset = Incident.objects.select_related("acknowledged_by").order_by("-opened_at", "-id")
    permission_classes = [IsOperatorOrReadOnly]
    filterset_class = IncidentFilter

    def get_queryset(self):
        qs = super().get_queryset()
        if self.action == "retrieve":
            qs = qs.prefetch_related("members__finding__acknowledged_by", "events__user", "notifications")
        return qs

    def get_serializer_class(self):
        return s.IncidentDetailSerializer if self.action == "retrieve" else s.IncidentListSerializer

    @extend_schema(request=AcknowledgeInput, responses={200: s.IncidentDetailSerializer})
    @action(detail=True, methods=["post"])
    def acknowledge(self, request, pk=None):
        note = input_data(AcknowledgeInput, request.data)["note"]
        try:
            incident = services.incident_acknowledge(incident=self.get_object(), user=request.user, note=note,
                                                     now=timezone.now())
        except ValueError as exc:
            return conflict(str(exc))
        incident = self.get_queryset().get(pk=incident.pk)
        return Response(s.IncidentDetailSerializer(incident, context=self.get_serializer_context()).data)

    @extend_schema(request=s.IncidentSilenceInput, responses={201: s.SilenceSerializer})
    @action(detail=True, methods=["post"])
    def silence(self, request, pk=None):
        incident = self.get_object()
        values = input_data(s.IncidentSilenceInput, request.data)
        now = timezone.now()
        with service_refusals():
            silence = silences.silence_create(
                author=request.user, matchers=values.get("matchers") or silences.incident_default_matchers(incident),
                comment=values["comment"], now=now, ends_at=values.get("ends_at"),
                duration_s=values.get("duration_s"), incident=incident,
            )
        return Response(s.SilenceSerializer(silence, context={"now": now}).data, status=status.HTTP_201_CREATED)


class SilenceFilter(django_filters.FilterSet):
    active = django_filters.BooleanFilter(method="filter_active", help_text="muting now")

    class Meta:
        model = Silence
        fields = ["incident"]

    def filter_active(self, queryset, name, value):
        now = timezone.now()
        active = queryset.filter(starts_at__lte=now, ends_at__gt=now, expired_at__isnull=True)
        return active if value else queryset.exclude(pk__in=active.values("pk"))


class SilenceViewSet(viewsets.ModelViewSet):
    """Silences; DELETE expires a silence at once (the row stays for the audit trail)."""

    queryset = Silence.objects.select_related("author", "expired_by").order_by("-starts_at", "-id")
    permission_classes = [IsOperatorOrReadOnly]
    filterset_class = SilenceFilter
    serializer_class = s.SilenceSerializer

    def get_serializer_context(self):
        return {**super().get_serializer_context(), "now": timezone.now()}

    @extend_schema(request=s.SilenceCreateInput, responses={201: s.SilenceSerializer})
    def create(self, request, *args, **kwargs):
        values = input_data(s.SilenceCreateInput, request.data)
        with service_refusals():
            silence = silences.silence_create(
                author=request.user, matchers=values["matchers"], comment=values["comment"], now=timezone.now(),
                starts_at=values.get("starts_at"), ends_at=values.get("ends_at"),
                duration_s=values.get("duration_s"), incident=values.get("incident"),
            )
        return Response(self.get_serializer(silence).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=s.SilenceUpdateInput, responses={200: s.SilenceSerializer})
    def update(self, request, *args, **kwargs):
        values = input_data(s.SilenceUpdateInput, request.data)
        try:
            with service_refusals():
                silence = silences.silence_update(silence=self.get_object(), now=timezone.now(), **values)
        except ValueError as exc:
            return conflict(str(exc), "ends_at")
        return Response(self.get_serializer(silence).data)

    def destroy(self, request, *args, **kwargs):
        silence = silences.silence_expire(silence=self.get_object(), user=request.user, now=timezone.now())
        return Response(self.get_serializer(silence).data)


class NotificationViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """The sent-log: every e-mail, to whom, what it said, and whether it went out."""

    queryset = Notification.objects.order_by("-created_at", "-id")
    permission_classes = [IsOperator]  # recipients' addresses: operators only (docs/permissions.md)
    filterset_fields = ["incident", "silence", "kind", "status", "recipient"]

    def get_serializer_class(self):
        return s.NotificationDetailSerializer if self.action == "retrieve" else s.NotificationListSerializer


class RoutingRuleViewSet(viewsets.ModelViewSet):
    """Routing rules: extra recipients per site, carrier, code and severity (operators edit)."""

    queryset = RoutingRule.objects.order_by("name")
    permission_classes = [IsOperator]  # its recipients are e-mail addresses: operators only
    serializer_class = s.RoutingRuleSerializer


class SubscriptionViewSet(viewsets.ModelViewSet):
    """The caller's own e-mail subscriptions (any authenticated user)."""

    queryset = Subscription.objects.none()
    permission_classes = [permissions.IsAuthenticated]
    serializer_class = s.SubscriptionSerializer

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # schema generation, no user
            return Subscription.objects.none()
        return Subscription.objects.filter(user=self.request.user).select_related("user").order_by("id")

    def perform_create(self, serializer):
        serializer.save(user=self.request.user)
