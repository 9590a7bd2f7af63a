"""Raw SQL reads shared by the apps' selectors (the one place rows become dictionaries)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from wanmon.core.dbrouter import read_connection


def sql_rows(sql: str, params=None) -> list[dict]:
    """Rows of ``sql`` as dictionaries keyed by column name (from the read replica inside a page or API read,
    wanmon/core/dbrouter.py)."""
    with read_connection().cursor() as cursor:
        cursor.execute(sql, params)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def sql_array(values: Iterable[int | datetime]) -> str:
    """A PostgreSQL array literal of integers or aware datetimes, to cast in the SQL (``%s::bigint[]``,
    ``%s::timestamptz[]``). One string parameter instead of a list: psycopg's client-side binding quotes a list
    element by element with regular expressions, 0.3 ms for 200 values each time a statement names it."""
    return "{" + ",".join(v.isoformat() if isinstance(v, datetime) else str(int(v)) for v in values) + "}"
