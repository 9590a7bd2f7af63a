from django.contrib import admin

from wanmon.cases import models


@admin.register(models.Case)
class CaseAdmin(admin.ModelAdmin):
    list_display = ["id", "incident", "cause", "fix", "ticket", "responsible_kind", "responsible_name", "resolved_at"]
    search_fields = ["cause", "fix", "ticket", "responsible_name"]
    readonly_fields = ["incident", "fingerprint", "resolved_by", "resolved_at", "took_s"]


@admin.register(models.IncidentNote)
class IncidentNoteAdmin(admin.ModelAdmin):
    list_display = ["id", "incident", "author", "is_hypothesis", "confirm_by", "created_at", "mailed_at"]
    list_filter = ["is_hypothesis"]
    search_fields = ["text", "confirm_by"]
