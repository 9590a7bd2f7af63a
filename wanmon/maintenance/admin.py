"""Django admin for maintenance: the raw tool for staff. The calendar pages, imports and the API are the usual way in.

Carrier notices as received and the sent-log of site notices are read-only here: they are evidence.
"""

from django.contrib import admin
from django.core.exceptions import PermissionDenied

from wanmon.core.admin import tabular_inline, trail_inline
from wanmon.core.permissions import user_is_operator
from wanmon.maintenance.models import (
    CarrierNotice,
    FeedToken,
    MaintenanceAffect,
    MaintenanceEvent,
    MaintenanceSource,
    MaintenanceWindow,
    SiteNotice,
)
from wanmon.maintenance.services import maintenance_window_review

AffectInline = tabular_inline(
    MaintenanceAffect, raw_id_fields=["equipment", "interface", "trunk", "circuit", "site", "path"]
)
EventInline = trail_inline(MaintenanceEvent, ["time", "kind", "user", "carrier_notice", "changes", "note"])


@admin.register(MaintenanceWindow)
class MaintenanceWindowAdmin(admin.ModelAdmin):
    list_display = ["reference", "carrier", "start", "end", "status", "impact", "behaviour", "review", "source",
                    "sequence"]
    list_filter = ["review", "status", "impact", "behaviour", "source", "carrier"]
    search_fields = ["reference", "uid", "summary", "aliases"]
    date_hierarchy = "start"
    raw_id_fields = ["carrier_notice", "author", "reviewed_by"]
    readonly_fields = ["review", "review_note", "reviewed_by", "reviewed_at"]
    inlines = [AffectInline, EventInline]
    actions = ["accept_windows", "reject_windows"]

    def _review(self, request, queryset, *, accept: bool) -> None:
        if not user_is_operator(request.user):
            raise PermissionDenied("reviewing maintenance windows needs the operator role")
        for window in queryset:
            maintenance_window_review(window=window, accept=accept, user=request.user, note="admin action")
        self.message_user(request, f"{queryset.count()} window(s) {'accepted' if accept else 'rejected'}.")

    @admin.action(description="Accept the selected windows (they explain and mute from now on)")
    def accept_windows(self, request, queryset):
        self._review(request, queryset, accept=True)

    @admin.action(description="Reject the selected windows (they explain and mute nothing)")
    def reject_windows(self, request, queryset):
        self._review(request, queryset, accept=False)


@admin.register(CarrierNotice)
class CarrierNoticeAdmin(admin.ModelAdmin):
    list_display = ["received_at", "source", "sender", "subject", "parser", "status"]
    list_filter = ["status", "source"]
    search_fields = ["sender", "subject", "origin", "sha256", "message_id"]
    exclude = ["raw"]

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(MaintenanceSource)
class MaintenanceSourceAdmin(admin.ModelAdmin):
    list_display = ["carrier", "parser", "senders", "url", "mailbox", "enabled", "last_polled_at", "last_error"]
    list_filter = ["enabled"]


@admin.register(FeedToken)
class FeedTokenAdmin(admin.ModelAdmin):
    list_display = ["name", "token_prefix", "site", "carrier", "created_at", "last_used_at", "revoked_at"]
    readonly_fields = ["token_hash", "token_prefix", "created_at", "last_used_at"]
    # What the token opens first, then the token itself (read-only), whatever the model's field order.
    fields = ["name", "site", "carrier", "created_by", "revoked_at", *readonly_fields]

    def has_add_permission(self, request):
        return False  # a token is made by the service, which shows its secret once


@admin.register(SiteNotice)
class SiteNoticeAdmin(admin.ModelAdmin):
    list_display = ["window", "kind", "recipient", "occurrence_start", "revision", "sent_at"]
    list_filter = ["kind"]

    def has_change_permission(self, request, obj=None):
        return False
