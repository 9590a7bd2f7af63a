from django.contrib import admin

from wanmon.dashboard.models import UserPreference


@admin.register(UserPreference)
class UserPreferenceAdmin(admin.ModelAdmin):
    list_display = ["user", "time_zone"]
    search_fields = ["user__username"]
