from django.contrib import admin

from wanmon.alerts import models
from wanmon.core.admin import trail_inline

IncidentMemberInline = trail_inline(models.IncidentMember, ["finding", "role", "added_at"])
IncidentEventInline = trail_inline(models.IncidentEvent, ["time", "kind", "user", "note", "data"])


@admin.register(models.Incident)
class IncidentAdmin(admin.ModelAdmin):
    list_display = ["id", "severity", "status", "code", "title", "muted", "opened_at", "last_notified_at"]
    list_filter = ["status", "severity", "kind", "muted"]
    search_fields = ["key", "title"]
    readonly_fields = ["opened_at", "changed_at", "cleared_at", "resolved_at", "reopen_count", "notify_seq",
                       "last_notified_at"]
    inlines = [IncidentMemberInline, IncidentEventInline]


@admin.register(models.Silence)
class SilenceAdmin(admin.ModelAdmin):
    list_display = ["id", "matchers", "author", "starts_at", "ends_at", "expired_at", "comment"]
    list_filter = ["expired_at"]


@admin.register(models.RoutingRule)
class RoutingRuleAdmin(admin.ModelAdmin):
    list_display = ["name", "sites", "carriers", "codes", "min_severity", "recipients", "replace_defaults", "is_active"]


@admin.register(models.Subscription)
class SubscriptionAdmin(admin.ModelAdmin):
    list_display = ["user", "sites", "carriers", "codes", "min_severity", "is_active"]


@admin.register(models.Notification)
class NotificationAdmin(admin.ModelAdmin):
    list_display = ["id", "incident", "kind", "sequence", "recipient", "status", "attempts", "sent_at", "subject"]
    list_filter = ["status", "kind"]
    search_fields = ["recipient", "subject"]
    readonly_fields = [f.name for f in models.Notification._meta.fields]
