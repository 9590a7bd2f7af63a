"""Raw SQL reads shared by the apps' selectors (the one place rows become dictionaries)."""

from __future__ import annotations

from wanmon.core.dbrouter import read_connection


def sql_rows(sql: str, params=None) -> list[dict]:
    """Rows of ``sql`` as dictionaries keyed by column name (from the read replica inside a page or API read,
    wanmon/core/dbrouter.py)."""
    with read_connection().cursor() as cursor:
        cursor.execute(sql, params)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
