"""Input and output of the share API."""

from __future__ import annotations

from rest_framework import serializers

from wanmon.inventory.models import Carrier
from wanmon.sharing.constants import SHARE_DAYS_MAX, SHARE_DAYS_MIN


class ShareCreateInput(serializers.Serializer):
    carrier = serializers.SlugRelatedField(slug_field="code", queryset=Carrier.objects.all(),
                                           help_text="the carrier's code")
    days = serializers.IntegerField(min_value=SHARE_DAYS_MIN, max_value=SHARE_DAYS_MAX,
                                    help_text=f"the link's lifetime, {SHARE_DAYS_MIN} to {SHARE_DAYS_MAX} days")


class ShareRevokeInput(serializers.Serializer):
    url = serializers.CharField(max_length=2000, help_text="the URL the share answered")


class ShareCreated(serializers.Serializer):
    url = serializers.CharField()
    expires_at = serializers.DateTimeField()


class ShareAccessSerializer(serializers.Serializer):
    time = serializers.DateTimeField()
    address = serializers.CharField(allow_null=True)
    user_agent = serializers.CharField()
    format = serializers.CharField()
    status = serializers.IntegerField()


class ShareLinkSerializer(serializers.Serializer):
    """A link as operators list it: never its URL (only the token's hash is kept), its first characters instead."""

    id = serializers.IntegerField()
    carrier = serializers.CharField(source="carrier.code")
    token_prefix = serializers.CharField()
    origin = serializers.CharField()
    created_at = serializers.DateTimeField()
    created_by = serializers.CharField(source="created_by.username", default=None, allow_null=True)
    expires_at = serializers.DateTimeField()
    revoked_at = serializers.DateTimeField(allow_null=True)
    last_used_at = serializers.DateTimeField(allow_null=True)
    accesses = ShareAccessSerializer(many=True, source="recent_accesses")
