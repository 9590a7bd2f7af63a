"""Input and output of the tests-on-demand API (docs/ondemand.md)."""

from __future__ import annotations

from rest_framework import serializers

from wanmon.core.api import username_field
from wanmon.ondemand.choices import JobKind, JobProtocol
from wanmon.ondemand.models import Job


class TestRequestInput(serializers.Serializer):
    """POST /api/v1/tests."""

    __test__ = False  # not a pytest test class

    src = serializers.CharField(max_length=32, help_text="site code of the agent that runs the test")
    dst = serializers.CharField(max_length=32, help_text="site code of the far end")
    kind = serializers.ChoiceField(choices=JobKind.choices)
    duration_s = serializers.FloatField(required=False, min_value=0.1, max_value=86400)
    protocol = serializers.ChoiceField(choices=JobProtocol.choices, required=False)
    rate_bps = serializers.FloatField(required=False, min_value=1, max_value=1e13)
    streams = serializers.IntegerField(required=False, min_value=1, max_value=128)
    reverse = serializers.BooleanField(required=False, default=False, help_text="measure dst -> src")
    finding = serializers.IntegerField(required=False, min_value=1, help_text="the finding it is about")
    incident = serializers.IntegerField(required=False, min_value=1, help_text="the incident it is about")


class TestCreatedOutput(serializers.Serializer):
    """201 of POST /api/v1/tests."""

    __test__ = False

    id = serializers.IntegerField()
    status = serializers.CharField()


class TestRefusedOutput(serializers.Serializer):
    """409/422 of POST /api/v1/tests: the rule that refused it and why."""

    __test__ = False

    id = serializers.IntegerField()
    status = serializers.CharField()
    rule = serializers.CharField()
    reason = serializers.CharField()
    errors = serializers.ListField(child=serializers.DictField())


class JobSerializer(serializers.ModelSerializer):
    """GET /api/v1/tests/{id}: the job, its status with the reason, and the record the agent uploaded."""

    src = serializers.CharField(source="src.code")
    dst = serializers.CharField(source="dst.code")
    agent = serializers.CharField(source="agent.name", default=None, allow_null=True)
    requested_by = username_field("requested_by")

    class Meta:
        model = Job
        fields = [
            "id", "status", "reason", "rule", "result", "kind", "src", "dst", "protocol", "duration_s", "rate_bps",
            "streams", "reverse", "dst_host", "agent", "purpose", "finding", "incident", "requested_by",
            "created_at", "picked_at", "finished_at", "result_table", "result_time", "probe", "verdict",
            "verdict_reason",
        ]  # fmt: skip
        read_only_fields = fields


class AgentJobSerializer(serializers.ModelSerializer):
    """One job as the agent gets it: what to run towards which site and host."""

    src = serializers.CharField(source="src.code")
    dst = serializers.CharField(source="dst.code")
    host = serializers.CharField(source="dst_host", help_text="the destination's registered test host ('' if none)")

    class Meta:
        model = Job
        fields = [
            "id", "kind", "src", "dst", "host", "protocol", "duration_s", "rate_bps", "streams", "reverse", "pin_host",
        ]  # fmt: skip
        read_only_fields = fields
