"""Serializers of the alerting API: outputs per purpose, inputs for the services."""

from __future__ import annotations

from copy import copy

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers

from wanmon.alerts import hooks
from wanmon.alerts.choices import SilenceMatcher
from wanmon.alerts.emails import incident_url
from wanmon.alerts.models import (
    Incident,
    IncidentEvent,
    IncidentMember,
    Notification,
    RoutingRule,
    Silence,
    Subscription,
)
from wanmon.core.api import ContactFieldsMixin, username_field
from wanmon.diagnosis.api.serializers import FindingEventSerializer, FindingListSerializer
from wanmon.inventory.api.serializers import CleanModelSerializer


class IncidentListSerializer(serializers.ModelSerializer):
    acknowledged_by = username_field("acknowledged_by")
    page = serializers.SerializerMethodField()

    class Meta:
        model = Incident
        fields = ["id", "key", "kind", "status", "severity", "code", "subject_text", "title", "sites", "paths",
                  "elements", "carriers", "muted", "mute_reason", "opened_at", "changed_at", "cleared_at",
                  "resolved_at", "acknowledged_at", "acknowledged_by", "reopen_count", "notify_seq",
                  "last_notified_at", "merged_into", "page"]

    def get_page(self, obj: Incident) -> str:
        return incident_url(obj.id)


class IncidentMemberSerializer(serializers.ModelSerializer):
    finding = FindingListSerializer(read_only=True)

    class Meta:
        model = IncidentMember
        fields = ["role", "added_at", "finding"]


# An incident's trail reads as a finding's does.
class IncidentEventSerializer(FindingEventSerializer):
    class Meta(FindingEventSerializer.Meta):
        model = IncidentEvent


class NotificationListSerializer(serializers.ModelSerializer):
    class Meta:
        model = Notification
        fields = ["id", "incident", "silence", "kind", "sequence", "recipient", "reason", "subject", "message_id",
                  "status", "created_at", "dispatched_at", "sent_at", "attempts", "last_error"]


class NotificationDetailSerializer(NotificationListSerializer):
    class Meta(NotificationListSerializer.Meta):
        fields = [*NotificationListSerializer.Meta.fields, "body_text", "body_html"]


class IncidentDetailSerializer(ContactFieldsMixin, IncidentListSerializer):
    members = IncidentMemberSerializer(many=True, read_only=True)
    events = IncidentEventSerializer(many=True, read_only=True)
    notifications = NotificationListSerializer(many=True, read_only=True)
    similar_cases = serializers.SerializerMethodField(
        help_text="solved cases it resembles, best first: [{incident, score, why, cause, fix, ticket, ...}]"
    )

    class Meta(IncidentListSerializer.Meta):
        fields = [*IncidentListSerializer.Meta.fields, "members", "events", "notifications", "similar_cases"]
        contact_fields = ["notifications"]  # the sent-log: recipients and what they were sent

    def get_similar_cases(self, obj: Incident) -> list[dict]:
        # The case memory sits above the alerting: it answers through the hook (docs/cases.md).
        keep = ("incident", "score", "why", "cause", "fix", "ticket", "case", "responsible", "took_s", "headline")
        return [{k: row[k] for k in keep} for row in hooks.similar_cases(obj)]


def _validate_matchers(value) -> dict:
    if not isinstance(value, dict) or not value:
        raise serializers.ValidationError("an object with at least one of: " + ", ".join(SilenceMatcher.values))
    unknown = sorted(set(value) - set(SilenceMatcher.values))
    if unknown:
        allowed = ", ".join(SilenceMatcher.values)
        raise serializers.ValidationError(f"unknown matcher(s) {', '.join(unknown)}; use {allowed}")
    return value


class SilenceSerializer(serializers.ModelSerializer):
    author = username_field("author")
    expired_by = username_field("expired_by")
    active = serializers.SerializerMethodField()

    class Meta:
        model = Silence
        fields = ["id", "matchers", "comment", "author", "incident", "starts_at", "ends_at", "created_at",
                  "expired_at", "expired_by", "reminded_at", "active"]

    def get_active(self, obj: Silence) -> bool:
        return obj.is_active_at(self.context["now"]) if "now" in self.context else obj.expired_at is None


# A silence's input names its end: ends_at, or duration_s from its start. (A comment, not a docstring: the OpenAPI
# document would take it as the description of the inputs that have none of their own.)
class _SilenceEnd:
    def validate(self, attrs):
        if not attrs.get("ends_at") and not attrs.get("duration_s"):
            raise serializers.ValidationError({"ends_at": ["give ends_at or duration_s"]})
        return attrs


class SilenceCreateInput(_SilenceEnd, serializers.Serializer):
    matchers = serializers.JSONField(validators=[_validate_matchers])
    comment = serializers.CharField(max_length=5000)
    starts_at = serializers.DateTimeField(required=False)
    ends_at = serializers.DateTimeField(required=False)
    duration_s = serializers.FloatField(required=False, min_value=1)
    incident = serializers.PrimaryKeyRelatedField(queryset=Incident.objects.all(), required=False, allow_null=True)


class IncidentSilenceInput(_SilenceEnd, serializers.Serializer):
    """Silence an incident: its default matchers unless given."""

    matchers = serializers.JSONField(required=False, validators=[_validate_matchers])
    comment = serializers.CharField(max_length=5000)
    ends_at = serializers.DateTimeField(required=False)
    duration_s = serializers.FloatField(required=False, min_value=1)


class SilenceUpdateInput(serializers.Serializer):
    ends_at = serializers.DateTimeField(required=False)
    comment = serializers.CharField(max_length=5000, required=False)


class RoutingRuleSerializer(CleanModelSerializer):
    class Meta:
        model = RoutingRule
        fields = ["id", "name", "sites", "carriers", "codes", "min_severity", "recipients", "replace_defaults",
                  "is_active", "comment"]


class SubscriptionSerializer(serializers.ModelSerializer):
    """The caller's own subscriptions (the user is the caller, never an input)."""

    user = serializers.CharField(source="user.username", read_only=True)

    class Meta:
        model = Subscription
        fields = ["id", "user", "sites", "carriers", "codes", "min_severity", "is_active", "created_at"]
        read_only_fields = ["created_at"]

    def validate(self, attrs):
        instance = copy(self.instance) if self.instance is not None else Subscription()
        for name, value in attrs.items():
            setattr(instance, name, value)
        try:
            instance.full_clean(exclude=["user"])
        except DjangoValidationError as exc:
            raise serializers.ValidationError(serializers.as_serializer_error(exc)) from None
        return attrs
