"""Output and input serializers of the findings API."""

from rest_framework import serializers

from wanmon.core.api import username_field
from wanmon.diagnosis.models import Finding, FindingEvent


class FindingEventSerializer(serializers.ModelSerializer):
    user = username_field("user")

    class Meta:
        model = FindingEvent
        fields = ["time", "kind", "user", "note", "data"]


class FindingListSerializer(serializers.ModelSerializer):
    acknowledged_by = username_field("acknowledged_by")

    class Meta:
        model = Finding
        fields = ["id", "code", "severity", "status", "subject", "rank", "start", "end", "onset", "summary",
                  "explained_by", "first_seen_at", "last_seen_at", "acknowledged_at", "acknowledged_by",
                  "resolved_at"]


class FindingDetailSerializer(FindingListSerializer):
    events = FindingEventSerializer(many=True, read_only=True)

    class Meta(FindingListSerializer.Meta):
        # tested: the diagnosis-driven tests and their verdicts (docs/diagnosis.md#diagnosis-driven-tests)
        fields = [*FindingListSerializer.Meta.fields, "explanation", "evidence", "actions", "tested", "events"]


class AcknowledgeInput(serializers.Serializer):
    note = serializers.CharField(required=False, allow_blank=True, max_length=2000, default="")
