from django.contrib import admin

from wanmon.alerts.models import (
    Incident,
    IncidentEvent,
    IncidentMember,
    Notification,
    RoutingRule,
    Silence,
    Subscription,
)


class IncidentMemberInline(admin.TabularInline):
    model = IncidentMember
    extra = 0
    readonly_fields = ["finding", "role", "added_at"]
    can_delete = False


class IncidentEventInline(admin.TabularInline):
    model = IncidentEvent
    extra = 0
    readonly_fields = ["time", "kind", "user", "note", "data"]
    can_delete = False


@admin.register(Incident)
class IncidentAdmin(admin.ModelAdmin):
    list_display = ["id", "severity", "status", "code", "title", "muted", "opened_at", "last_notified_at"]
    list_filter = ["status", "severity", "kind", "muted"]
    search_fields = ["key", "title"]
    readonly_fields = ["opened_at", "changed_at", "cleared_at", "resolved_at", "notify_seq", "last_notified_at"]
    inlines = [IncidentMemberInline, IncidentEventInline]


@admin.register(Silence)
class SilenceAdmin(admin.ModelAdmin):
    list_display = ["id", "matchers", "author", "starts_at", "ends_at", "expired_at", "comment"]
    list_filter = ["expired_at"]


@admin.register(RoutingRule)
class RoutingRuleAdmin(admin.ModelAdmin):
    list_display = ["name", "sites", "carriers", "codes", "min_severity", "recipients", "replace_defaults", "is_active"]


@admin.register(Subscription)
class SubscriptionAdmin(admin.ModelAdmin):
    list_display = ["user", "sites", "carriers", "codes", "min_severity", "is_active"]


@admin.register(Notification)
class NotificationAdmin(admin.ModelAdmin):
    list_display = ["id", "incident", "kind", "sequence", "recipient", "status", "attempts", "sent_at", "subject"]
    list_filter = ["status", "kind"]
    search_fields = ["recipient", "subject"]
    readonly_fields = [f.name for f in Notification._meta.fields]
