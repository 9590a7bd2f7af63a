"""Output and input serializers of the maintenance API (one per purpose; writes go through the services)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from wanmon.core.api import ContactFieldsMixin, username_field
from wanmon.core.permissions import user_is_operator
from wanmon.inventory.models import Carrier, Site
from wanmon.maintenance.choices import Behaviour, Impact, Status
from wanmon.maintenance.fetch import url_redacted
from wanmon.maintenance.models import CarrierNotice, FeedToken, MaintenanceEvent, MaintenanceSource
from wanmon.maintenance.models import MaintenanceWindow as Window
from wanmon.maintenance.parsed import http_url
from wanmon.maintenance.services import AffectSpec


def _operator(context: dict) -> bool:
    request = context.get("request")
    return request is not None and user_is_operator(request.user)


class AffectSerializer(serializers.Serializer):
    label = serializers.CharField()
    impact = serializers.CharField(help_text="own impact (empty: the window's)")
    effective_impact = serializers.CharField()
    object_id = serializers.CharField(help_text="the carrier's identifier it was matched from")
    altrep = serializers.SerializerMethodField(help_text="where the carrier describes the object (http/https only)")

    def get_altrep(self, affect) -> str:
        return http_url(affect.altrep)


def _former_carrier_notice_field() -> serializers.PrimaryKeyRelatedField:
    """``notification``: the carrier notice's id under its former name (as ``carrier_notice``), kept for clients."""
    return serializers.PrimaryKeyRelatedField(
        source="carrier_notice", read_only=True, allow_null=True, help_text="the same as carrier_notice (former name)"
    )


class EventSerializer(serializers.ModelSerializer):
    user = username_field("user")
    notification = _former_carrier_notice_field()

    class Meta:
        model = MaintenanceEvent
        fields = ["time", "kind", "user", "carrier_notice", "notification", "changes", "note"]


class WindowListSerializer(serializers.ModelSerializer):
    carrier = serializers.CharField(source="carrier.code", default=None, read_only=True, allow_null=True)
    affects = AffectSerializer(many=True, read_only=True, source="affects.all")
    page = serializers.SerializerMethodField()

    class Meta:
        model = Window
        fields = ["id", "reference", "aliases", "carrier", "summary", "start", "end", "source_tz", "rrule",
                  "recurrence_end", "status", "impact", "behaviour", "affects", "unmatched_objects", "uid",
                  "sequence", "stamp", "revision", "source", "parser", "created_at", "updated_at", "page", "review",
                  "review_note"]

    def get_page(self, window: Window) -> str:
        return f"/maintenance/{window.pk}/"


class PathTouchSerializer(serializers.Serializer):
    path = serializers.CharField(source="path.key")
    impact = serializers.CharField()
    elements = serializers.ListField(child=serializers.CharField(), source="labels")
    explains = serializers.BooleanField()


class FootprintSerializer(serializers.Serializer):
    paths = PathTouchSerializer(many=True, source="touches")
    sites = serializers.ListField(child=serializers.CharField(), source="site_codes")


class WindowDetailSerializer(ContactFieldsMixin, WindowListSerializer):
    author = username_field("author")
    notification = _former_carrier_notice_field()
    events = EventSerializer(many=True, read_only=True, source="events.all")
    footprint = serializers.SerializerMethodField()

    class Meta(WindowListSerializer.Meta):
        fields = [*WindowListSerializer.Meta.fields, "description", "provider", "account", "organizer", "author",
                  "carrier_notice", "notification", "footprint", "events"]
        contact_fields = ["organizer"]  # the carrier's NOC address

    @extend_schema_field(FootprintSerializer)
    def get_footprint(self, window: Window) -> dict:
        footprint = self.context.get("footprint")
        return FootprintSerializer(footprint).data if footprint is not None else {"paths": [], "sites": []}


@extend_schema_field({"oneOf": [{"type": "string"}, {"type": "object", "properties": {
    "label": {"type": "string"}, "impact": {"type": "string", "enum": Impact.values}}}]})
class AffectInputField(serializers.Field):
    """An affected object: a label ('geant-par', 'geant-par:xe-1/0/0', 'circuit:CID', 'site:CERN', a trunk,
    'path:CERN->FZK'), or {label, impact}."""

    # Braces doubled: DRF formats error messages with str.format (a single "{label" was a KeyError, a 500).
    default_error_messages = {"format": "must be a label or {{label, impact}}"}

    def to_internal_value(self, data) -> AffectSpec:
        if isinstance(data, str) and data.strip() and "\x00" not in data:
            return AffectSpec(label=data.strip())
        label = data.get("label") if isinstance(data, dict) else None
        if isinstance(label, str) and label.strip() and "\x00" not in label and "\x00" not in str(data.get("impact")):
            return AffectSpec(label=data["label"].strip(), impact=str(data.get("impact") or ""))
        self.fail("format")

    def to_representation(self, value):
        return {"label": value.label, "impact": value.impact}


class WindowInput(serializers.Serializer):
    reference = serializers.CharField(max_length=200)
    carrier = serializers.SlugRelatedField(slug_field="code", queryset=Carrier.objects.all(), required=False,
                                           allow_null=True)
    summary = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")
    description = serializers.CharField(required=False, allow_blank=True, default="")
    start = serializers.DateTimeField(help_text="ISO 8601 with a zone")
    end = serializers.DateTimeField(help_text="ISO 8601 with a zone")
    source_tz = serializers.CharField(max_length=64, required=False, default="UTC")
    status = serializers.ChoiceField(Status.choices, required=False, default=Status.CONFIRMED)
    impact = serializers.ChoiceField(Impact.choices, required=False, default=Impact.OUTAGE)
    behaviour = serializers.ChoiceField(Behaviour.choices, required=False, default=Behaviour.MUTE)
    rrule = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")
    affects = serializers.ListField(child=AffectInputField(), required=False, default=list)


class WindowUpdateInput(serializers.Serializer):
    reference = serializers.CharField(max_length=200, required=False)
    carrier = serializers.SlugRelatedField(slug_field="code", queryset=Carrier.objects.all(), required=False,
                                           allow_null=True)
    summary = serializers.CharField(max_length=500, required=False, allow_blank=True)
    description = serializers.CharField(required=False, allow_blank=True)
    start = serializers.DateTimeField(required=False)
    end = serializers.DateTimeField(required=False)
    source_tz = serializers.CharField(max_length=64, required=False)
    status = serializers.ChoiceField(Status.choices, required=False)
    impact = serializers.ChoiceField(Impact.choices, required=False)
    behaviour = serializers.ChoiceField(Behaviour.choices, required=False)
    rrule = serializers.CharField(max_length=500, required=False, allow_blank=True)
    affects = serializers.ListField(child=AffectInputField(), required=False)
    note = serializers.CharField(required=False, allow_blank=True, default="")


class NoteInput(serializers.Serializer):
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=5000)


class ReviewInput(serializers.Serializer):
    decision = serializers.ChoiceField(choices=["accept", "reject"])
    note = serializers.CharField(required=False, allow_blank=True, default="")


class CommentInput(serializers.Serializer):
    text = serializers.CharField(max_length=5000)


class ImportOptions(serializers.Serializer):
    carrier = serializers.SlugRelatedField(slug_field="code", queryset=Carrier.objects.all(), required=False,
                                           allow_null=True, help_text="the carrier (default: from the sender or "
                                           "X-MAINTNOTE-PROVIDER)")
    parser = serializers.CharField(required=False, allow_blank=True, default="",
                                   help_text="'bcop' or a circuit-maintenance-parser provider (e.g. 'zayo')")


class FileImportInput(ImportOptions):
    file = serializers.ListField(child=serializers.FileField(), allow_empty=False,
                                 help_text="one or more .ics / .eml files")


class MaildirImportInput(ImportOptions):
    path = serializers.CharField(help_text="a Maildir or a directory of .eml/.ics files on the server, under one "
                                 "of WANMON_MAINTENANCE_MAILDIRS")


class UrlImportInput(ImportOptions):
    url = serializers.URLField(help_text="http(s) URL of an iCalendar feed or file")


class ImportReportSerializer(serializers.Serializer):
    totals = serializers.DictField(child=serializers.IntegerField(),
                                   help_text="counts: notices (also as notifications, the former name), duplicates, "
                                   "failed, held, windows per action, unmatched_objects")
    notices = serializers.ListField(child=serializers.DictField(), help_text="one report per carrier notice")
    notifications = serializers.ListField(child=serializers.DictField(),
                                          help_text="the same as notices (former name, kept for clients)")


class CarrierNoticeSerializer(ContactFieldsMixin, serializers.ModelSerializer):
    uploaded_by = username_field("uploaded_by")
    size_bytes = serializers.SerializerMethodField()

    class Meta:
        model = CarrierNotice
        fields = ["id", "received_at", "source", "origin", "content_type", "message_id", "sender", "subject",
                  "sha256", "size_bytes", "parser", "status", "report", "uploaded_by"]
        contact_fields = ["sender"]

    def get_size_bytes(self, n: CarrierNotice) -> int:
        return len(bytes(n.raw or b""))

    def to_representation(self, instance):
        data = super().to_representation(instance)
        if not _operator(self.context):
            data["origin"] = url_redacted(data["origin"])  # a polled URL may carry a token
        return data


# What a window match says of its window and occurrence; the subclasses add what it touches. (A comment, not a
# docstring: the schema would give it to both match components as their description.)
class _WindowMatchSerializer(serializers.Serializer):
    window = serializers.IntegerField(source="window.pk")
    reference = serializers.CharField(source="window.reference")
    carrier = serializers.CharField(source="window.carrier.code", default=None, allow_null=True)
    status = serializers.CharField(source="window.status")
    behaviour = serializers.CharField(source="window.behaviour")
    start = serializers.DateTimeField()
    end = serializers.DateTimeField()


class PathMatchSerializer(_WindowMatchSerializer):
    path = serializers.CharField()
    elements = serializers.ListField(child=serializers.CharField())
    impact = serializers.CharField()
    explains = serializers.BooleanField()
    mutes = serializers.BooleanField()
    skip_tests = serializers.BooleanField()


class ElementMatchSerializer(_WindowMatchSerializer):
    element = serializers.CharField()
    via = serializers.ListField(child=serializers.CharField())
    impact = serializers.CharField()
    explains = serializers.BooleanField()
    mutes = serializers.BooleanField()


class FeedTokenSerializer(serializers.ModelSerializer):
    site = serializers.CharField(source="site.code", default=None, read_only=True, allow_null=True)
    carrier = serializers.CharField(source="carrier.code", default=None, read_only=True, allow_null=True)
    created_by = username_field("created_by")

    class Meta:
        model = FeedToken
        fields = ["id", "name", "token_prefix", "site", "carrier", "created_by", "created_at", "revoked_at",
                  "last_used_at"]


class FeedTokenInput(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    site = serializers.SlugRelatedField(slug_field="code", queryset=Site.objects.all(), required=False,
                                        allow_null=True)
    carrier = serializers.SlugRelatedField(slug_field="code", queryset=Carrier.objects.all(), required=False,
                                           allow_null=True)


class FeedTokenCreated(FeedTokenSerializer):
    token = serializers.CharField(help_text="shown once")
    urls = serializers.DictField(child=serializers.CharField())

    class Meta(FeedTokenSerializer.Meta):
        fields = [*FeedTokenSerializer.Meta.fields, "token", "urls"]


class SourceSerializer(ContactFieldsMixin, serializers.ModelSerializer):
    carrier = serializers.SlugRelatedField(slug_field="code", queryset=Carrier.objects.all())

    class Meta:
        model = MaintenanceSource
        fields = ["id", "carrier", "parser", "senders", "provider_names", "url", "mailbox", "enabled",
                  "last_polled_at", "last_error"]
        contact_fields = ["senders"]
        read_only_fields = ["last_polled_at", "last_error"]

    def to_representation(self, instance):
        data = super().to_representation(instance)
        if not _operator(self.context):
            # Carrier calendar URLs often carry a token (user part or query): viewers see them without it.
            data["url"] = url_redacted(data["url"])
        return data

    def validate_parser(self, value: str) -> str:
        if not value or value == "bcop":
            return ""
        from wanmon.maintenance.carrier_parser import PROVIDERS

        if value not in PROVIDERS:
            raise serializers.ValidationError(f"unknown parser; known: {', '.join(PROVIDERS)}")
        return value

    def validate_mailbox(self, value: str) -> str:
        if value and not value.startswith("/"):
            raise serializers.ValidationError("an absolute path of a Maildir or directory on the server")
        return value

    def validate_senders(self, value):
        if not isinstance(value, list) or not all(isinstance(v, str) and "@" in v for v in value):
            raise serializers.ValidationError("a list of e-mail addresses or '@domain' strings")
        return [v.strip().lower() for v in value]

    def validate_provider_names(self, value):
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            raise serializers.ValidationError("a list of X-MAINTNOTE-PROVIDER values")
        return [v.strip() for v in value]

