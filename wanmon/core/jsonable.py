"""The one conversion of Python values into what a JSONField, the API and the replay JSON store (pure)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import date, datetime
from typing import Any

from collectors.records.types import iso_z


def jsonable(value: Any) -> Any:
    """``value`` as JSON can hold it: times as ISO 8601 in UTC with Z, dates as ISO dates, mappings with text
    keys, sequences and sets as lists, dataclasses as their fields, NaN and infinities as null (JSON has no such
    numbers; PostgreSQL's jsonb refuses them), anything else that JSON cannot hold as its text."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else value
    if isinstance(value, datetime):
        return iso_z(value, utc=True)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [jsonable(v) for v in value]
    if hasattr(value, "__dataclass_fields__"):
        return jsonable(value.__dict__)
    return str(value)
