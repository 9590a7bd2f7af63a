"""The API's pagination: ?limit= is capped, and values that are not small non-negative integers are a 400."""

from __future__ import annotations

from django.conf import settings
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import LimitOffsetPagination

# An offset beyond this is no page anyone reads; PostgreSQL's OFFSET is a bigint and larger values fail.
MAX_OFFSET = 10**9


class CappedLimitOffsetPagination(LimitOffsetPagination):
    """``?limit=&offset=`` with at most WANMON_API_MAX_LIMIT rows per page (default page: PAGE_SIZE)."""

    @property
    def max_limit(self) -> int:
        return settings.WANMON_API_MAX_LIMIT

    def _param(self, request, name: str, maximum: int) -> None:
        raw = request.query_params.get(name)
        if raw is None or raw == "":
            return
        try:
            value = int(raw)
        except ValueError:
            raise ValidationError({name: [f"must be a whole number, not {raw[:40]!r}"]}) from None
        if not 0 <= value <= maximum:
            raise ValidationError({name: [f"must be between 0 and {maximum}"]})

    def paginate_queryset(self, queryset, request, view=None):
        # limit above max_limit is cut to max_limit (a script asking for "everything" gets pages); only
        # values that cannot be a page at all are refused.
        self._param(request, self.limit_query_param, MAX_OFFSET)
        self._param(request, self.offset_query_param, MAX_OFFSET)
        return super().paginate_queryset(queryset, request, view)
