"""Shapes the apps' admins share (tabular inlines, read-only audit trails, sortable counts of related rows), and the
admin of personal API tokens."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import Count

from wanmon.core.models import ApiToken
from wanmon.core.services import api_tokens_revoke


def tabular_inline(model, **options) -> type[admin.TabularInline]:
    """A tabular inline of ``model`` with no empty extra rows; ``options`` are its other admin attributes."""
    name = f"{model.__name__}Inline"
    attrs = {"__module__": model.__module__, "__qualname__": name, "model": model, "extra": 0, **options}
    return type(name, (admin.TabularInline,), attrs)


def trail_inline(model, fields: list[str]) -> type[admin.TabularInline]:
    """The inline of an audit trail (``model``'s rows): ``fields`` shown read-only, no row deleted."""
    return tabular_inline(model, readonly_fields=fields, can_delete=False)


def _count_column(column: str, description: str):
    @admin.display(description=description, ordering=f"_{column}")
    def show(self, obj) -> int:
        return getattr(obj, f"_{column}")

    return show


class CountsAdmin(admin.ModelAdmin):
    """A model admin whose list shows counts of related rows, sortable.

    ``counts`` maps a column of ``list_display`` to the relation it counts and its heading; the rows are
    counted by the list's own query (one annotation per column), not one query a row.
    """

    counts: dict[str, tuple[str, str]] = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for column, (_relation, description) in cls.counts.items():
            setattr(cls, column, _count_column(column, description))

    def get_queryset(self, request):
        annotations = {f"_{column}": Count(relation, distinct=True) for column, (relation, _) in self.counts.items()}
        return super().get_queryset(request).annotate(**annotations)


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Personal API tokens: who, what for, until when, last used; made by ``manage.py drf_create_token`` (the
    secret is printed there, once), revoked here."""

    list_display = ["user", "name", "token_prefix", "created_at", "expires_at", "last_used_at", "revoked_at"]
    list_filter = [("revoked_at", admin.EmptyFieldListFilter)]
    search_fields = ["user__username", "name", "token_prefix"]
    list_select_related = ["user"]
    readonly_fields = ["user", "token_prefix", "created_at", "expires_at", "last_used_at", "revoked_at"]
    fields = ["user", "name", *readonly_fields[1:]]
    actions = ["revoke"]

    def has_add_permission(self, request) -> bool:
        return False

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request, queryset):
        count = api_tokens_revoke(tokens=queryset)
        self.message_user(request, f"{count} token(s) revoked")
