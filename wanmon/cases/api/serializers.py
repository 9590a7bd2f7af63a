"""Serializers of the case memory's API: the resolve and note inputs, the outputs of cases, notes and similar cases."""

from __future__ import annotations

from rest_framework import serializers

from wanmon.cases.constants import CAUSE_MAX_CHARS, CONFIRM_BY_MAX_CHARS, NOTE_MAX_CHARS, TICKET_MAX_CHARS
from wanmon.cases.models import Case, IncidentNote
from wanmon.core.api import username_field


class ResolveInput(serializers.Serializer):
    cause = serializers.CharField(max_length=CAUSE_MAX_CHARS, help_text="what caused the problem")
    fix = serializers.CharField(max_length=CAUSE_MAX_CHARS, help_text="what fixed it")
    ticket = serializers.CharField(max_length=TICKET_MAX_CHARS, required=False, allow_blank=True, default="")
    responsible = serializers.CharField(
        max_length=200,
        required=False,
        allow_blank=True,
        default="",
        help_text="site:CODE, carrier:CODE, equipment:NAME or host:NAME (checked against the inventory)",
    )


class NoteInput(serializers.Serializer):
    text = serializers.CharField(max_length=NOTE_MAX_CHARS)
    is_hypothesis = serializers.BooleanField(required=False, default=False)
    confirm_by = serializers.CharField(
        max_length=CONFIRM_BY_MAX_CHARS,
        required=False,
        allow_blank=True,
        default="",
        help_text="a hypothesis: the finding code or the test that would confirm it",
    )


class IncidentNoteSerializer(serializers.ModelSerializer):
    author = username_field("author")

    class Meta:
        model = IncidentNote
        fields = ["id", "incident", "author", "text", "is_hypothesis", "confirm_by", "created_at", "mailed_at"]


class CaseSerializer(serializers.ModelSerializer):
    resolved_by = username_field("resolved_by")
    responsible = serializers.CharField(read_only=True)

    class Meta:
        model = Case
        fields = [
            "id",
            "incident",
            "cause",
            "fix",
            "ticket",
            "responsible",
            "resolved_by",
            "resolved_at",
            "took_s",
            "fingerprint",
        ]


class SimilarCaseSerializer(serializers.Serializer):
    """A solved case the incident resembles: which incident, how much (0..1) and why, and what the people said."""

    incident = serializers.IntegerField()
    score = serializers.FloatField()
    why = serializers.ListField(child=serializers.CharField())
    cause = serializers.CharField()
    fix = serializers.CharField()
    ticket = serializers.CharField()
    case = serializers.IntegerField()
    responsible = serializers.CharField()
    took_s = serializers.FloatField(allow_null=True)
    headline = serializers.CharField()
