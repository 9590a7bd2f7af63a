"""Django admin for the inventory: the raw tool for staff. Imports and the API are the usual way in.

Two places go through the services rather than plain model saves: adding an agent (the token is made,
hashed and shown once in a message) and revoking agents (an admin action). Path versions can be
edited here to correct mistakes, but a route change should be made by import or API so that a new
version keeps the history.
"""

from __future__ import annotations

from django.contrib import admin, messages

from wanmon.core.admin import CountsAdmin, tabular_inline
from wanmon.inventory import models, services
from wanmon.inventory.selectors import path_hops_labels

SiteContactInline = tabular_inline(models.SiteContact)
HostInline = tabular_inline(models.Host)
InterfaceInline = tabular_inline(
    models.Interface, fields=["name", "if_index", "speed_mbps", "mtu", "blade", "description"]
)
PathHopInline = tabular_inline(models.PathHop, ordering=["position"], autocomplete_fields=["equipment", "interface"])


@admin.register(models.Carrier)
class CarrierAdmin(CountsAdmin):
    list_display = ["code", "name", "kind", "noc_email", "equipment_count"]
    list_filter = ["kind"]
    search_fields = ["code", "name", "notes"]
    counts = {"equipment_count": ("equipment", "equipment")}


@admin.register(models.Site)
class SiteAdmin(CountsAdmin):
    list_display = ["code", "name", "tier", "lat", "lon", "contact_count"]
    list_filter = ["tier"]
    search_fields = ["code", "name", "notes"]
    inlines = [SiteContactInline, HostInline]
    counts = {"contact_count": ("contacts", "contacts")}


class _AtSiteAdmin(admin.ModelAdmin):
    """Who and what is at a site (contacts, hosts): listed with the site, filtered by role and site."""

    list_filter = ["role", "site"]
    list_select_related = ["site"]


@admin.register(models.SiteContact)
class SiteContactAdmin(_AtSiteAdmin):
    list_display = ["email", "site", "role", "name"]
    search_fields = ["email", "name", "site__code"]


@admin.register(models.Host)
class HostAdmin(_AtSiteAdmin):
    list_display = ["name", "site", "address", "role"]
    search_fields = ["name", "address", "site__code"]


@admin.register(models.Equipment)
class EquipmentAdmin(admin.ModelAdmin):
    list_display = ["name", "owner", "role", "vendor", "model", "os_version", "location", "known_reordering"]
    list_filter = ["role", "vendor", "known_reordering", "carrier", "site"]
    search_fields = ["name", "vendor", "model", "location", "quirks"]
    list_select_related = ["site", "carrier"]
    inlines = [InterfaceInline]
    fieldsets = [
        (None, {"fields": ["name", "site", "carrier", "role"]}),
        ("Hardware", {"fields": ["vendor", "model", "os_version", "location"]}),
        ("Limits and quirks", {"fields": [
            "linecard_capacity_mbps", "backplane_capacity_mbps", "known_reordering", "quirks",
        ]}),
    ]

    @admin.display(description="owner")
    def owner(self, obj: models.Equipment) -> str:
        return obj.owner_code


@admin.register(models.Interface)
class InterfaceAdmin(admin.ModelAdmin):
    list_display = ["__str__", "if_index", "speed_mbps", "mtu", "blade", "description"]
    list_filter = ["speed_mbps", "mtu", "equipment__carrier", "equipment__site"]
    search_fields = ["name", "description", "equipment__name"]
    list_select_related = ["equipment"]
    autocomplete_fields = ["equipment"]


@admin.register(models.Circuit)
class CircuitAdmin(admin.ModelAdmin):
    list_display = ["cid", "carrier", "capacity_mbps", "a_interface", "z_interface", "status"]
    list_filter = ["status", "carrier"]
    search_fields = ["cid", "description"]
    list_select_related = ["carrier", "a_interface__equipment", "z_interface__equipment"]
    autocomplete_fields = ["a_interface", "z_interface"]


@admin.register(models.Trunk)
class TrunkAdmin(admin.ModelAdmin):
    list_display = ["name", "member_list", "description"]
    search_fields = ["name", "description", "members__equipment__name"]
    autocomplete_fields = ["members"]

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("members__equipment")

    @admin.display(description="members")
    def member_list(self, obj: models.Trunk) -> str:
        return ", ".join(sorted(str(m) for m in obj.members.all()))


class CurrentFilter(admin.SimpleListFilter):
    title = "version"
    parameter_name = "current"

    def lookups(self, request, model_admin):
        return [("yes", "in force"), ("no", "ended")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(valid_to__isnull=True)
        if self.value() == "no":
            return queryset.filter(valid_to__isnull=False)
        return queryset


@admin.register(models.Path)
class PathAdmin(admin.ModelAdmin):
    list_display = ["__str__", "capacity_mbps", "rtt_ms", "hop_list", "valid_from", "valid_to"]
    list_filter = [CurrentFilter, "src", "dst"]
    search_fields = ["src__code", "dst__code", "note", "hops__equipment__name"]
    list_select_related = ["src", "dst"]
    date_hierarchy = "valid_from"
    inlines = [PathHopInline]

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("hops__equipment", "hops__interface")

    @admin.display(description="hops")
    def hop_list(self, obj: models.Path) -> str:
        return " > ".join(path_hops_labels(obj))


@admin.register(models.Agent)
class AgentAdmin(admin.ModelAdmin):
    list_display = ["name", "site", "scope", "token_prefix", "is_active", "last_seen_at", "version", "created_at"]
    list_filter = ["site", "scope", ("revoked_at", admin.EmptyFieldListFilter)]
    search_fields = ["name", "site__code", "token_prefix"]
    list_select_related = ["site"]
    autocomplete_fields = ["equipment"]
    actions = ["revoke"]
    readonly_fields = ["token_prefix", "created_at", "revoked_at", "last_seen_at", "version"]

    def get_fields(self, request, obj=None):
        if obj is None:  # adding: the token is made by the service, not typed in
            return ["site", "name", "scope", "equipment"]
        return ["site", "name", "scope", "equipment", *self.readonly_fields]

    def get_form(self, request, obj=None, **kwargs):
        form = super().get_form(request, obj, **kwargs)
        if obj is None:  # empty name: the service picks <site>-agent-<n>
            form.base_fields["name"].required = False
            form.base_fields["name"].help_text = "leave empty for <site code>-agent-<n>"
        return form

    def get_readonly_fields(self, request, obj=None):
        return [*self.readonly_fields, "site", "scope"] if obj is not None else []

    def save_model(self, request, obj: models.Agent, form, change):
        if change:
            super().save_model(request, obj, form, change)
            return
        agent, token = services.agent_create(site=obj.site, name=obj.name or None, scope=obj.scope)
        # Hand the saved row back to the admin, which then saves the many-to-many (equipment) on it.
        obj.pk, obj.name, obj.token_hash, obj.token_prefix, obj.created_at = (
            agent.pk, agent.name, agent.token_hash, agent.token_prefix, agent.created_at,
        )
        obj._state.adding = False
        self.message_user(
            request,
            f"Agent {agent.name} created. Its token, shown this once (only a hash is stored): {token}",
            messages.WARNING,
        )

    @admin.display(boolean=True, description="active")
    def is_active(self, obj: models.Agent) -> bool:
        return obj.is_active

    @admin.action(description="Revoke the selected agents' tokens")
    def revoke(self, request, queryset):
        count = 0
        for agent in queryset.filter(revoked_at__isnull=True):
            services.agent_revoke(agent=agent)
            count += 1
        self.message_user(request, f"{count} agent(s) revoked.", messages.SUCCESS)
