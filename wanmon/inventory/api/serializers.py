"""Serializers of the inventory API.

References are written the way people and topology documents write them: sites and carriers by
code, equipment by name, interfaces as ``equipment:interface`` labels. Plain CRUD serializers run
the model's own validation (field validators, ``clean()``, constraints), so bad input is a 400 with
the reason, never a database error. Paths and agents have separate input serializers: their writes go
through the services (versioning, token hashing).
"""

from __future__ import annotations

from copy import copy

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.settings import api_settings

from wanmon.core.api import ContactFieldsMixin
from wanmon.inventory.choices import AgentScope
from wanmon.inventory.labels import label_join, label_split
from wanmon.inventory.models import Agent, Carrier, Circuit, Equipment, Host, Interface, Path, Site, SiteContact, Trunk
from wanmon.inventory.selectors import path_hops_labels


def _slug(model, field: str, **kwargs) -> serializers.SlugRelatedField:
    return serializers.SlugRelatedField(slug_field=field, queryset=model.objects.all(), **kwargs)


@extend_schema_field(OpenApiTypes.STR)
class InterfaceLabelField(serializers.RelatedField):
    """An interface as ``equipment:interface``."""

    default_error_messages = {
        "format": "must be 'equipment:interface'",
        "unknown": "unknown interface {label!r}",
    }

    def __init__(self, **kwargs):
        kwargs.setdefault("queryset", Interface.objects.select_related("equipment"))
        super().__init__(**kwargs)

    def to_representation(self, value: Interface) -> str:
        return label_join(value.equipment.name, value.name)

    def to_internal_value(self, data) -> Interface:
        if not isinstance(data, str):
            self.fail("format")
        equipment, name = label_split(data)
        if not equipment or not name:
            self.fail("format")
        interface = self.get_queryset().filter(equipment__name=equipment, name=name).first()
        if interface is None:
            self.fail("unknown", label=data)
        return interface


@extend_schema_field(OpenApiTypes.STR)
class HopLabelField(serializers.Field):
    """A path hop as ``equipment`` or ``equipment:interface``; internally ``(Equipment, Interface | None)``."""

    default_error_messages = {
        "format": "must be 'equipment' or 'equipment:interface'",
        "unknown_equipment": "unknown equipment {name!r}",
        "unknown_interface": "unknown interface {label!r}",
    }

    def to_representation(self, value) -> str:
        equipment, interface = value
        return label_join(equipment.name, interface.name if interface else None)

    def to_internal_value(self, data):
        if not isinstance(data, str) or not data or "\x00" in data:  # PostgreSQL text cannot hold NUL
            self.fail("format")
        equipment_name, interface_name = label_split(data)
        if not equipment_name or interface_name == "":
            self.fail("format")
        equipment = Equipment.objects.filter(name=equipment_name).first()
        if equipment is None:
            self.fail("unknown_equipment", name=equipment_name)
        if interface_name is None:
            return equipment, None
        interface = Interface.objects.filter(equipment=equipment, name=interface_name).first()
        if interface is None:
            self.fail("unknown_interface", label=data)
        return equipment, interface


class CleanModelSerializer(serializers.ModelSerializer):
    """A ModelSerializer that also runs ``Model.full_clean()`` (constraints included) before saving."""

    def validate(self, attrs):
        attrs = super().validate(attrs)
        model = self.Meta.model
        many_to_many = {f.name for f in model._meta.many_to_many}
        instance = copy(self.instance) if self.instance is not None else model()
        for name, value in attrs.items():
            if name not in many_to_many:
                setattr(instance, name, value)
        try:
            instance.full_clean()
        except DjangoValidationError as exc:
            detail = serializers.as_serializer_error(exc)
            if "__all__" in detail:
                detail[api_settings.NON_FIELD_ERRORS_KEY] = detail.pop("__all__")
            raise serializers.ValidationError(detail) from None
        return attrs


class CarrierSerializer(ContactFieldsMixin, CleanModelSerializer):
    class Meta:
        model = Carrier
        fields = ["id", "code", "name", "kind", "noc_email", "notes"]
        contact_fields = ["noc_email"]


class ContactSerializer(serializers.ModelSerializer):
    class Meta:
        model = SiteContact
        fields = ["email", "role", "name"]


class SiteSerializer(ContactFieldsMixin, CleanModelSerializer):
    contacts = ContactSerializer(many=True, read_only=True)

    class Meta:
        model = Site
        fields = ["id", "code", "name", "tier", "region", "lat", "lon", "notes", "contacts"]
        contact_fields = ["contacts"]


class SiteContactSerializer(CleanModelSerializer):
    site = _slug(Site, "code")

    class Meta:
        model = SiteContact
        fields = ["id", "site", "email", "role", "name"]


class HostSerializer(CleanModelSerializer):
    site = _slug(Site, "code")

    class Meta:
        model = Host
        fields = ["id", "site", "name", "address", "role"]


class EquipmentSerializer(CleanModelSerializer):
    site = _slug(Site, "code", allow_null=True, required=False)
    carrier = _slug(Carrier, "code", allow_null=True, required=False)

    class Meta:
        model = Equipment
        fields = [
            "id", "name", "site", "carrier", "role", "vendor", "model", "os_version", "location",
            "linecard_capacity_mbps", "backplane_capacity_mbps", "known_reordering", "quirks",
        ]


class InterfaceSerializer(CleanModelSerializer):
    equipment = _slug(Equipment, "name")
    label = serializers.SerializerMethodField()
    trunks = serializers.SlugRelatedField(slug_field="name", many=True, read_only=True)

    class Meta:
        model = Interface
        fields = ["id", "equipment", "name", "label", "if_index", "speed_mbps", "mtu", "blade", "description",
                  "trunks"]

    def get_label(self, obj: Interface) -> str:
        return label_join(obj.equipment.name, obj.name)


class CircuitSerializer(CleanModelSerializer):
    carrier = _slug(Carrier, "code")
    a_interface = InterfaceLabelField(allow_null=True, required=False)
    z_interface = InterfaceLabelField(allow_null=True, required=False)

    class Meta:
        model = Circuit
        fields = ["id", "carrier", "cid", "capacity_mbps", "a_interface", "z_interface", "status", "description"]


class TrunkSerializer(CleanModelSerializer):
    members = InterfaceLabelField(many=True, required=False)

    class Meta:
        model = Trunk
        fields = ["id", "name", "members", "description"]


class PathSerializer(serializers.ModelSerializer):
    """A path version as read: its hops as labels, its validity interval."""

    src = serializers.SlugRelatedField(slug_field="code", read_only=True)
    dst = serializers.SlugRelatedField(slug_field="code", read_only=True)
    hops = serializers.SerializerMethodField()
    is_current = serializers.SerializerMethodField()

    class Meta:
        model = Path
        fields = ["id", "src", "dst", "capacity_mbps", "rtt_ms", "hops", "valid_from", "valid_to", "is_current", "note"]
        read_only_fields = fields

    def get_hops(self, obj: Path) -> list[str]:
        return path_hops_labels(obj)

    def get_is_current(self, obj: Path) -> bool:
        return obj.valid_to is None


class PathInputSerializer(serializers.Serializer):
    """A route to put in force (creates a new version when hops or capacity change)."""

    src = _slug(Site, "code")
    dst = _slug(Site, "code")
    hops = serializers.ListField(child=HopLabelField(), allow_empty=False)
    capacity_mbps = serializers.IntegerField(min_value=1, allow_null=True, required=False)
    rtt_ms = serializers.FloatField(min_value=0, allow_null=True, required=False)
    note = serializers.CharField(max_length=200, allow_blank=True, required=False)
    valid_from = serializers.DateTimeField(required=False, help_text="start of a new version (default: now)")

    def validate(self, attrs):
        if "src" in attrs and "dst" in attrs and attrs["src"] == attrs["dst"]:
            raise serializers.ValidationError({"dst": ["src and dst are the same site"]})
        return attrs


class PathUpdateSerializer(PathInputSerializer):
    """Changing the version in force: src and dst are those of the version."""

    src = None
    dst = None


class AgentSerializer(serializers.ModelSerializer):
    """An agent as read: never its token, only the token's first characters."""

    site = serializers.SlugRelatedField(slug_field="code", read_only=True)
    equipment = serializers.SlugRelatedField(slug_field="name", many=True, read_only=True)
    is_active = serializers.BooleanField(read_only=True)

    class Meta:
        model = Agent
        fields = ["id", "name", "site", "scope", "equipment", "token_prefix", "created_at", "revoked_at",
                  "last_seen_at", "version", "is_active"]
        read_only_fields = fields


class AgentCreateSerializer(serializers.Serializer):
    site = _slug(Site, "code")
    name = serializers.RegexField(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$", required=False)
    equipment = serializers.ListField(child=_slug(Equipment, "name"), required=False)
    scope = serializers.ChoiceField(AgentScope.choices, default=AgentScope.AGENT)

    def validate_name(self, value: str) -> str:
        if Agent.objects.filter(name=value).exists():
            raise serializers.ValidationError(f"an agent named {value!r} already exists")
        return value


class AgentCreatedSerializer(AgentSerializer):
    """The answer to a creation: the agent and, this once, its token."""

    token = serializers.CharField(read_only=True)

    class Meta(AgentSerializer.Meta):
        fields = [*AgentSerializer.Meta.fields, "token"]
        read_only_fields = fields


class AgentUpdateSerializer(serializers.Serializer):
    equipment = serializers.ListField(child=_slug(Equipment, "name"), help_text="replaces the agent's list")


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField(read_only=True)


class SharedElementsParamsSerializer(serializers.Serializer):
    """Query parameters of ``paths/shared-elements`` besides the pairs."""

    at = serializers.DateTimeField(required=False)
    min_paths = serializers.IntegerField(min_value=1, required=False)
    direction_aware = serializers.BooleanField(default=True)
