from django.contrib import admin

from wanmon.diagnosis.models import Finding, FindingEvent


class FindingEventInline(admin.TabularInline):
    model = FindingEvent
    extra = 0
    readonly_fields = ["time", "kind", "user", "note", "data"]
    can_delete = False


@admin.register(Finding)
class FindingAdmin(admin.ModelAdmin):
    list_display = ["code", "severity", "status", "subject_key", "rank", "last_seen_at"]
    list_filter = ["status", "severity", "code"]
    search_fields = ["subject_key", "summary"]
    readonly_fields = ["first_seen_at", "last_seen_at", "resolved_at", "acknowledged_at"]
    inlines = [FindingEventInline]
